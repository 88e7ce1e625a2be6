//! Graphviz export of a plan.

use std::fmt::Write;

use crate::plan::Plan;

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

impl Plan {
    /// The plan in Graphviz DOT: nodes labelled with their name and stage,
    /// grouped by stage into ranks, edges labelled with their reasons.
    pub fn to_dot(&self) -> String {
        let mut out = String::from("digraph plan {\n    rankdir=LR;\n    node [shape=box];\n");
        for (stage, members) in self.stages().enumerate() {
            let _ = writeln!(out, "    subgraph stage_{stage} {{\n        rank=same;");
            for node in members {
                let _ = writeln!(
                    out,
                    "        n{} [label=\"{}\\nstage {stage}\"];",
                    node.0,
                    escape(self.node_name(*node))
                );
            }
            out.push_str("    }\n");
        }
        for edge in self.edges() {
            let _ = writeln!(
                out,
                "    n{} -> n{} [label=\"{}\"];",
                edge.from.0,
                edge.to.0,
                escape(&edge.reasons_text())
            );
        }
        out.push_str("}\n");
        out
    }
}
