//! The stable SA codes: one table for the per-function rules of this crate and
//! the whole-tree checks of `sluice-analyzers`, so a code is never reused.

use std::fmt;

/// How serious a finding is. `sluice check` exits 1 when any finding is an
/// [`Level::Error`]; warnings are printed and do not fail the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// The code is wrong: the macros refuse it, `sluice check` fails.
    Error,
    /// The code is probably not what was meant; reported, not refused.
    Warning,
}

impl Level {
    /// `"error"` or `"warning"`, as rustc prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stable diagnostic code. Codes `SA0001`..=`SA0007` need only one
/// function's tokens and are checked here (and so by the macros at expansion
/// time); the others need the whole source tree and are checked by
/// `sluice-analyzers`.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    /// SA0001: a service parameter that is not a reference (`time: Time`), or
    /// an `Out<T>` parameter outside a factory. A node borrows what it
    /// declares; it never owns it.
    ByValueParam,
    /// SA0002: the same service twice with conflicting access (`&A` and
    /// `&mut A`, `&mut A` twice, `&A` and `Out<A>`, two `Out<A>`, or a factory
    /// that consumes what it produces). The macros compare types by their
    /// token string (the compiler checks other spellings of one type);
    /// `sluice check` compares them by resolved last path segment, through
    /// the aliases and imports of the tree, so `&Hp` beside `&mut m::Hp` or
    /// `&mut Health` (`type Health = Hp;`) and `Out<Next<A>>` beside
    /// `&mut NextValue<A>` are found too (see [`crate::TypeAliases`]).
    ConflictingAccess,
    /// SA0003: a `&mut` parameter (or `&mut self`) in a run condition; a run
    /// condition is read-only.
    MutInRunCondition,
    /// SA0004: a service type that is not `'static`: a reference with a named
    /// lifetime (`&'a Foo`), or a type carrying a lifetime other than
    /// `'static` (`&Foo<'a>`, `&Foo<'_>`).
    NonStaticService,
    /// SA0005: a node body that reaches for shared state behind the graph's
    /// back: `static mut`, `thread_local!`, or a `Mutex`/`RwLock`. Opt out
    /// with `allow_locks = "reason"`.
    LockInBody,
    /// SA0006: an error in the attribute's own arguments: an unknown key, a
    /// value of the wrong form, a repeated key, an empty `allow_locks` reason.
    InvalidAttribute,
    /// SA0007: a node function of the wrong shape: a run condition that does
    /// not return `bool`, or a factory that produces nothing.
    InvalidNodeShape,
    /// SA0008: a source file that does not parse (reported by the analyzers).
    UnparsableFile,
    /// SA0009: a system or factory that is declared but never registered
    /// anywhere in the tree (reported by the analyzers).
    NeverRegistered,
    /// SA0010: a `process_batch` that allocates; a tick that runs thousands
    /// of batches must allocate nothing (reported by the analyzers).
    AllocationInBatch,
    /// SA0011: an `after`/`before` that names a system or marker that exists
    /// nowhere in the tree (reported by the analyzers).
    UnknownOrderTarget,
    /// SA0012: a `&mut` service, or a component a query names `&mut`, that
    /// the body only ever reads; `&` would let it run alongside the other
    /// readers (reported by the analyzers).
    MutOnlyRead,
}

impl Code {
    /// Every code, in order.
    pub const ALL: [Code; 12] = [
        Code::ByValueParam,
        Code::ConflictingAccess,
        Code::MutInRunCondition,
        Code::NonStaticService,
        Code::LockInBody,
        Code::InvalidAttribute,
        Code::InvalidNodeShape,
        Code::UnparsableFile,
        Code::NeverRegistered,
        Code::AllocationInBatch,
        Code::UnknownOrderTarget,
        Code::MutOnlyRead,
    ];

    /// The code as printed: `"SA0003"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::ByValueParam => "SA0001",
            Code::ConflictingAccess => "SA0002",
            Code::MutInRunCondition => "SA0003",
            Code::NonStaticService => "SA0004",
            Code::LockInBody => "SA0005",
            Code::InvalidAttribute => "SA0006",
            Code::InvalidNodeShape => "SA0007",
            Code::UnparsableFile => "SA0008",
            Code::NeverRegistered => "SA0009",
            Code::AllocationInBatch => "SA0010",
            Code::UnknownOrderTarget => "SA0011",
            Code::MutOnlyRead => "SA0012",
        }
    }

    /// The code whose [`Code::as_str`] is `s`.
    pub fn from_str_code(s: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// How serious a finding with this code is.
    pub fn level(self) -> Level {
        match self {
            Code::NeverRegistered | Code::AllocationInBatch | Code::MutOnlyRead => Level::Warning,
            _ => Level::Error,
        }
    }

    /// Whether the check needs only one function's tokens (and so runs in the
    /// macros too), as opposed to the whole source tree.
    pub fn is_per_function(self) -> bool {
        self <= Code::InvalidNodeShape
    }

    /// A one-line summary of the rule, for tables and `--explain`-style help.
    pub fn summary(self) -> &'static str {
        match self {
            Code::ByValueParam => "service parameter taken by value",
            Code::ConflictingAccess => "the same service twice with conflicting access",
            Code::MutInRunCondition => "`&mut` parameter in a run condition",
            Code::NonStaticService => "service type is not 'static",
            Code::LockInBody => "static mut, thread_local! or a lock in a node body",
            Code::InvalidAttribute => "invalid attribute arguments",
            Code::InvalidNodeShape => "node function of the wrong shape",
            Code::UnparsableFile => "source file does not parse",
            Code::NeverRegistered => "node declared but never registered",
            Code::AllocationInBatch => "process_batch allocates",
            Code::UnknownOrderTarget => "after/before names nothing in the tree",
            Code::MutOnlyRead => "`&mut` service or queried component only ever read",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
