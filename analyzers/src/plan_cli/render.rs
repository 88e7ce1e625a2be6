//! Diagnostics for standard error: `error[CODE]: FILE:3, FILE:7: message`,
//! the planner's message with the line of every declaration at fault.

use sluice::{Diagnostic, DiagnosticKind, Level, NodeIndex, NodeRef};

/// The line of each registration, by the index the planner knows it by.
#[derive(Debug, Default)]
pub(super) struct Lines<'t> {
    /// Per node (in registration order): its SYSTEM line and name.
    pub(super) systems: Vec<(usize, &'t str)>,
    /// Per group (in declaration order, placeholders included): its line.
    pub(super) groups: Vec<usize>,
    /// Per stage or set, in `Organisation::ranks` order: its line.
    pub(super) ranks: Vec<usize>,
}

impl Lines<'_> {
    fn of(&self, node: &NodeRef) -> Option<usize> {
        match node {
            NodeRef::Node(index) => self.systems.get(index.index()).map(|&(line, _)| line),
            NodeRef::Group(group) => self.groups.get(group.index()).copied(),
            // The CLI registers no marker.
            NodeRef::Marker(_) => None,
        }
    }

    /// The lines of `nodes`, each once, in the order given.
    fn all<'n>(&self, nodes: impl IntoIterator<Item = &'n NodeRef>) -> Vec<usize> {
        let mut lines: Vec<usize> = Vec::new();
        for line in nodes.into_iter().filter_map(|node| self.of(node)) {
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        lines
    }

    fn line_of_rank(&self, rank: u32) -> Option<usize> {
        self.ranks.get(rank as usize).copied()
    }

    /// The lines a diagnostic is about.
    fn lines(&self, diagnostic: &Diagnostic) -> Vec<usize> {
        match &diagnostic.kind {
            DiagnosticKind::Cycle { path } | DiagnosticKind::OrganisationCycle { path } => {
                self.all(path)
            }
            DiagnosticKind::UnknownTarget { source, .. } => self.all([source]),
            DiagnosticKind::DuplicateKey { first, second, .. } => self.all([first, second]),
            DiagnosticKind::CrossCadence { source, target, .. } => {
                self.all(&[NodeRef::Node(*source), NodeRef::Node(*target)])
            }
            DiagnosticKind::DuplicateRank { first, second, .. } => [*first, *second]
                .into_iter()
                .filter_map(|rank| self.line_of_rank(rank))
                .collect(),
            DiagnosticKind::NoStage { node }
            | DiagnosticKind::UnknownRank { node, .. }
            | DiagnosticKind::DeclaredTwice { node, .. } => self.all(&[NodeRef::Node(*node)]),
            DiagnosticKind::Ambiguity { pairs, .. } => self.pair_lines(pairs.iter().copied()),
            DiagnosticKind::SilencedAmbiguity { pairs, .. } => {
                self.pair_lines(pairs.iter().map(|(a, b, _)| (*a, *b)))
            }
            // Any other kind: the lines of the systems it names.
            _ => self
                .systems
                .iter()
                .filter(|(_, name)| diagnostic.nodes.iter().any(|n| n == name))
                .map(|&(line, _)| line)
                .collect(),
        }
    }

    /// The lines of the nodes of `pairs`, each once, ascending.
    fn pair_lines(&self, pairs: impl Iterator<Item = (NodeIndex, NodeIndex)>) -> Vec<usize> {
        let mut lines: Vec<usize> = pairs
            .flat_map(|(a, b)| [a, b])
            .filter_map(|n| self.of(&NodeRef::Node(n)))
            .collect();
        lines.sort_unstable();
        lines.dedup();
        lines
    }
}

/// `error[SL0004]: FILE:3, FILE:7: message`.
pub(super) fn render(file: &str, lines: &Lines<'_>, diagnostic: &Diagnostic) -> String {
    let level = match diagnostic.level {
        Level::Silenced => "silenced",
        Level::Warning => "warning",
        Level::Error => "error",
    };
    let at: Vec<String> = lines
        .lines(diagnostic)
        .iter()
        .map(|l| format!("{file}:{l}"))
        .collect();
    let at = if at.is_empty() {
        file.to_owned()
    } else {
        at.join(", ")
    };
    format!("{level}[{}]: {at}: {}", diagnostic.code, diagnostic.message)
}
