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
        let mut out = String::new();
        let _ = self.write_dot("plan", &mut out);
        out
    }

    /// [`to_dot`](Plan::to_dot) written into `out` as it goes (no string of
    /// the whole graph), as the graph `name`: `digraph name { ... }`
    /// (`to_dot` names it `plan`). A name that is not a bare DOT identifier
    /// (letters, digits and `_`, not starting with a digit) is quoted.
    ///
    /// # Errors
    /// Whatever `out` returns; writing stops at the first error.
    pub fn write_dot(&self, name: &str, out: &mut dyn Write) -> std::fmt::Result {
        let bare = name.chars().next().is_some_and(|c| !c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if bare {
            write!(out, "digraph {name} {{")?;
        } else {
            write!(out, "digraph \"{}\" {{", escape(name))?;
        }
        out.write_str("\n    rankdir=LR;\n    node [shape=box];\n")?;
        for (stage, members) in self.stages().enumerate() {
            writeln!(out, "    subgraph stage_{stage} {{\n        rank=same;")?;
            for node in members {
                writeln!(
                    out,
                    "        n{} [label=\"{}\\nstage {stage}\"];",
                    node.0,
                    escape(self.node_name(*node))
                )?;
            }
            out.write_str("    }\n")?;
        }
        for edge in self.edges() {
            writeln!(
                out,
                "    n{} -> n{} [label=\"{}\"];",
                edge.from.0,
                edge.to.0,
                escape(&edge.reasons_text())
            )?;
        }
        out.write_str("}\n")
    }
}
