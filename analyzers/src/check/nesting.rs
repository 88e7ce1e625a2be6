//! How deep a file nests, estimated from its tokens before syn parses it.
//!
//! syn's parser, its visitors and the drop of its syntax trees recurse once
//! per level of nesting, so a file of 3,000 nested parentheses overflows any
//! ordinary stack (and a stack overflow aborts the process: it cannot be
//! caught). Lexing is not recursive (`proc-macro2` keeps its own stack), so
//! the tokens are walked first, without recursion, and a file whose estimate
//! exceeds [`MAX_NESTING`] is refused with a finding at the token where the
//! limit is crossed.
//!
//! The estimate at a token is the sum, over the token's enclosing groups and
//! its own level, of:
//!
//! - one per delimited group (`(..)`, `[..]`, `{..}`);
//! - the length of the run of consecutive prefix tokens it ends (`-`, `!`,
//!   `*`, `&` and the keywords `mut`, `const`, `dyn`, `impl`, `return`,
//!   `break`, `yield`, `move`, `box`, `ref`, `let`, `static`, `unsafe`,
//!   `async`): `- - - x` and `&&&&T` recurse without a group;
//! - the generic arguments still open at its level (`<` not followed by `=`,
//!   less `>` not part of `->` or `=>`), reset by `;` and by a `{..}` group:
//!   `Vec<Vec<Vec<u8>>>` recurses without a group. A comparison counts as an
//!   opened `<` until the statement ends, which only overestimates.
//!
//! What the estimate does not count (right-nested chains with a token or
//! more between levels: `a = b = c`, `|a| |b| x`, `fn() -> fn() -> T`,
//! `if .. else if ..`) is left to the large stack `sluice check` parses on
//! ([`super::PARSE_STACK`]): measured in a debug build, the costliest of
//! those takes about 37 KiB a level, so the stack holds about 7,000 levels of
//! it (release builds: tens of thousands).

use proc_macro2::{Delimiter, Spacing, Span, TokenStream, TokenTree};

/// The deepest estimated nesting `sluice check` parses. Real code rarely
/// nests more than a few dozen levels; syn's costliest construct (generic
/// arguments) takes about 52 KiB of stack a level in a debug build, so 256
/// levels stay far below the parse stack.
pub const MAX_NESTING: usize = 256;

/// Where a file first nests deeper than the limit.
#[derive(Clone, Copy, Debug)]
pub struct TooDeep {
    /// The token at which the estimate crossed the limit.
    pub span: Span,
    /// The estimate there.
    pub depth: usize,
}

const PREFIX_KEYWORDS: [&str; 14] = [
    "mut", "const", "dyn", "impl", "return", "break", "yield", "move", "box", "ref", "let",
    "static", "unsafe", "async",
];

struct Level {
    tokens: std::iter::Peekable<proc_macro2::token_stream::IntoIter>,
    /// The estimate of the group this level is the inside of.
    base: usize,
    /// Consecutive prefix tokens just seen.
    run: usize,
    /// Generic arguments open.
    angle: usize,
    /// The previous token, when it was a punctuation joined to this one.
    joint: Option<char>,
}

impl Level {
    fn new(stream: TokenStream, base: usize) -> Self {
        Level {
            tokens: stream.into_iter().peekable(),
            base,
            run: 0,
            angle: 0,
            joint: None,
        }
    }

    fn depth(&self) -> usize {
        self.base + self.run + self.angle
    }
}

/// The first place where `tokens` nest deeper than `limit`, if any. Never
/// recurses: safe on any input and any stack.
pub fn too_deep(tokens: TokenStream, limit: usize) -> Option<TooDeep> {
    let mut stack = vec![Level::new(tokens, 0)];
    while let Some(level) = stack.last_mut() {
        let Some(token) = level.tokens.next() else {
            stack.pop();
            continue;
        };
        let joint = level.joint.take();
        let span = token.span();
        match token {
            TokenTree::Group(group) => {
                let depth = level.depth() + 1;
                level.run = 0;
                if group.delimiter() == Delimiter::Brace {
                    level.angle = 0;
                }
                if depth > limit {
                    return Some(TooDeep {
                        span: group.span_open(),
                        depth,
                    });
                }
                stack.push(Level::new(group.stream(), depth));
                continue;
            }
            TokenTree::Punct(punct) => {
                let c = punct.as_char();
                let next_is = |want: char, tokens: &mut std::iter::Peekable<_>| {
                    punct.spacing() == Spacing::Joint
                        && matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == want)
                };
                match c {
                    '-' | '!' | '*' | '&' => level.run += 1,
                    '<' => {
                        level.run = 0;
                        if !next_is('=', &mut level.tokens) {
                            level.angle += 1;
                        }
                    }
                    '>' => {
                        level.run = 0;
                        if !matches!(joint, Some('-' | '=')) {
                            level.angle = level.angle.saturating_sub(1);
                        }
                    }
                    ';' => {
                        level.run = 0;
                        level.angle = 0;
                    }
                    _ => level.run = 0,
                }
                if punct.spacing() == Spacing::Joint {
                    level.joint = Some(c);
                }
            }
            TokenTree::Ident(ident) => {
                let word = ident.to_string();
                if PREFIX_KEYWORDS.contains(&word.as_str()) {
                    level.run += 1;
                } else {
                    level.run = 0;
                }
            }
            TokenTree::Literal(_) => level.run = 0,
        }
        let depth = level.depth();
        if depth > limit {
            return Some(TooDeep { span, depth });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimate's maximum over `text`: the smallest limit it stays within.
    fn depth_of(text: &str) -> usize {
        let tokens = || text.parse::<TokenStream>().unwrap();
        (0..)
            .find(|&limit| too_deep(tokens(), limit).is_none())
            .unwrap()
    }

    #[test]
    fn groups_runs_and_generics_count() {
        assert_eq!(depth_of("fn f() { ((1)) }"), 3);
        assert_eq!(depth_of("- - - - x"), 4);
        assert_eq!(depth_of("&&&mut T"), 4);
        assert_eq!(depth_of("type T = Vec<Vec<Vec<u8>>>;"), 3);
        // arrows, `=>` and `<=` are not generics
        assert_eq!(depth_of("fn f() -> u8 { match x { a if a <= b => 1 } }"), 2);
        // a statement ends the unmatched `<` of a comparison
        assert_eq!(depth_of("fn f() { a < b; c < d; e < f; }"), 2);
        // binary operators between operands do not add up
        assert_eq!(depth_of("a - b - c - d - e - f"), 1);
    }

    #[test]
    fn the_first_token_past_the_limit_is_reported() {
        let text = format!("fn f() {{ {}1{} }}", "(".repeat(300), ")".repeat(300));
        let tokens: TokenStream = text.parse().unwrap();
        let found = too_deep(tokens, MAX_NESTING).unwrap();
        assert_eq!(found.depth, MAX_NESTING + 1);
        // `fn f() {` then 255 parentheses: the 256th crosses the limit
        assert_eq!(found.span.start().column, "fn f() { ".len() + 255);
    }

    #[test]
    fn a_million_levels_do_not_recurse() {
        let text = "(".repeat(1_000_000) + &")".repeat(1_000_000);
        let tokens: TokenStream = text.parse().unwrap();
        assert!(too_deep(tokens, MAX_NESTING).is_some());
    }
}
