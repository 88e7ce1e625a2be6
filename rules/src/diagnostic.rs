//! One finding: a code, a message, a help line and the span of the offending
//! token.

use std::fmt;

use proc_macro2::Span;

use crate::code::{Code, Level};

/// A finding of a rule. The span points at the offending token so a macro can
/// report it with [`Diagnostic::to_syn_error`] and an analyzer can turn it into
/// a file position (with `proc-macro2`'s `span-locations` feature).
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// The rule that fired.
    pub code: Code,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What to do about it, in one sentence.
    pub help: String,
    /// The offending token (or tokens).
    pub span: Span,
    /// Other places the finding is about, each with what it is (SA0002: the
    /// earlier declaration of the same service). The macros' compile errors
    /// show only [`Diagnostic::span`]; `sluice check` shows these too.
    pub notes: Vec<(Span, String)>,
}

impl Diagnostic {
    /// A finding of `code` at `span`.
    pub fn new(
        code: Code,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            message: message.into(),
            help: help.into(),
            span,
            notes: Vec::new(),
        }
    }

    /// The same finding with a note at `span`.
    pub fn with_note(mut self, span: Span, note: impl Into<String>) -> Self {
        self.notes.push((span, note.into()));
        self
    }

    /// The level of the code.
    pub fn level(&self) -> Level {
        self.code.level()
    }

    /// `"SA0003: message"`, the text a macro reports.
    pub fn headline(&self) -> String {
        format!("{}: {}", self.code, self.message)
    }

    /// A `syn::Error` at the span whose message is the code, the message and
    /// the help, for a macro's `to_compile_error()`.
    pub fn to_syn_error(&self) -> syn::Error {
        syn::Error::new(
            self.span,
            format!("{}\n  = help: {}", self.headline(), self.help),
        )
    }

    /// All `diagnostics` combined into one `syn::Error` (one
    /// `compile_error!` each), or `None` when there are none.
    pub fn combine(diagnostics: &[Diagnostic]) -> Option<syn::Error> {
        let mut iter = diagnostics.iter();
        let mut error = iter.next()?.to_syn_error();
        for d in iter {
            error.combine(d.to_syn_error());
        }
        Some(error)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.level(), self.code, self.message)
    }
}
