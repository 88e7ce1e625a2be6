//! SVG export of a plan: lanes and gates (the picture of reference 003).
//!
//! One column per service, its *lane*; one row per node, rows in bands by
//! stage (the stage view), top to bottom. On its row a node marks every lane
//! it touches: a dot for a shared access (the shared accessors of one stage
//! sit side by side in the lane, passing each other), a bar across the lane
//! for a gate, a triangle for a produced service, with an arrow to each
//! consumer. An exclusive node is a bar across every lane. Groups are
//! dashed frames around their members' rows in each stage, nested frames
//! inset. The text is written here, with nothing but `std`: same plans,
//! same bytes.

use std::fmt::{self, Write};

use crate::access::{AccessKind, ServiceId};
use crate::plan::{GraphView, GroupIndex, NodeIndex, Plan, TreeItem};

/// Longest node name shown whole; longer ones are cut with `…` (the whole
/// name is the row's tooltip).
const NAME_CAP: usize = 32;
/// Longest service name shown whole in a lane's header.
const SERVICE_CAP: usize = 24;
/// Longest group caption shown whole.
const GROUP_CAP: usize = 40;
/// The advance of one character of the monospace names (11px).
const CHAR: f64 = 6.7;
/// The (estimated) advance of one character of the sans-serif captions.
const SANS: f64 = 6.4;
const MARGIN: f64 = 16.0;
const ROW: f64 = 20.0;
const BAND_PAD: f64 = 5.0;
const STAGE_COLUMN: f64 = 44.0;
const LANE_MIN: f64 = 26.0;
const LANE_MAX: f64 = 96.0;
const DOT_STEP: f64 = 9.0;
const DOT: f64 = 4.0;
const BAR: f64 = 7.0;
/// How far a nested group frame sits inside its parent's; deeper frames
/// than `FRAME_DEPTHS` share the innermost inset.
const FRAME_INSET: f64 = 5.0;
const FRAME_DEPTHS: usize = 3;
/// The lane headers' slant: `sin` and `cos` of 55 degrees.
const SLANT_SIN: f64 = 0.819;
const SLANT_COS: f64 = 0.574;
/// Past this many rows the lane headers are repeated under the picture.
const FOOTER_ROWS: usize = 30;

const INK: &str = "#1c2833";
const MUTED: &str = "#717d7e";
const RULE: &str = "#d5d8dc";
const LANE_LINE: &str = "#aab7b8";
const LANE_FILL: &str = "#f2f4f4";
const SHARED: &str = "#2471a3";
const GATE: &str = "#c0392b";
const PRODUCE: &str = "#1e8449";
const EXCLUSIVE: &str = "#6c3483";
const FRAME: &str = "#ca6f1e";
const MONO: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";
const SANS_FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";

impl Plan {
    /// The plan as an SVG picture of lanes and gates: one column per service
    /// its nodes touch (the service's lane), one row per node, rows grouped
    /// by stage. A shared access is a dot on the lane (shared accessors of
    /// one stage side by side), a gate a bar across it, a produced service a
    /// triangle with an arrow to each consumer, an exclusive node a bar
    /// across every lane; groups are dashed frames around their members.
    /// Names are cut at 32 characters (the whole name is the row's
    /// tooltip), the canvas grows with the plan, and the same plan always
    /// gives the same bytes.
    ///
    /// `graph` is what the plan was built from: the plan keeps its gates,
    /// the graph's node descriptors say who reads what.
    ///
    /// ```
    /// use sluice::{Graph, NodeBuilder, PlanOptions};
    ///
    /// let mut graph = Graph::new();
    /// graph.add_node(NodeBuilder::new("health").reads_named("Armor").gates_named("Hp"));
    /// graph.add_node(NodeBuilder::new("hud").reads_named("Hp").reads_named("Armor"));
    /// let plan = graph.build(&PlanOptions::default()).expect("no cycle");
    ///
    /// let svg = plan.to_svg(graph.view());
    /// assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    /// assert_eq!(svg.matches("class=\"lane\"").count(), 2); // Armor, Hp
    /// assert_eq!(svg.matches("class=\"gate\"").count(), 1); // health gates Hp
    /// assert_eq!(svg.matches("class=\"shared\"").count(), 3);
    /// assert_eq!(svg, plan.to_svg(graph.view()));
    /// ```
    pub fn to_svg(&self, graph: GraphView<'_>) -> String {
        to_svg(graph, &[("", self)])
    }
}

/// Several plans of one graph (the cadences of a world, say) in one
/// picture: one panel each, top to bottom, under its title (none when
/// empty), all on the same lanes. [`Plan::to_svg`] is one untitled panel.
pub fn to_svg(graph: GraphView<'_>, panels: &[(&str, &Plan)]) -> String {
    Picture::new(graph, panels).render()
}

/// A number as SVG wants it: at most one decimal, no `-0`.
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = (self.0 * 10.0).round() as i64;
        let (sign, tenths) = if tenths < 0 {
            ("-", -tenths)
        } else {
            ("", tenths)
        };
        match tenths % 10 {
            0 => write!(f, "{sign}{}", tenths / 10),
            d => write!(f, "{sign}{}.{d}", tenths / 10),
        }
    }
}

/// `text` as XML character data or attribute value: markup escaped, and
/// characters XML 1.0 cannot hold replaced by U+FFFD.
struct Xml<'t>(&'t str);

impl fmt::Display for Xml<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '&' => f.write_str("&amp;")?,
                '<' => f.write_str("&lt;")?,
                '>' => f.write_str("&gt;")?,
                '"' => f.write_str("&quot;")?,
                '\'' => f.write_str("&apos;")?,
                '\t' | '\n' | '\r' => f.write_char(c)?,
                c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                    f.write_char('\u{FFFD}')?
                }
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// `text` cut to `cap` characters, the last one `…` when cut.
fn capped(text: &str, cap: usize) -> String {
    if text.chars().count() <= cap {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(cap - 1).collect();
        cut.push('…');
        cut
    }
}

/// A type name without its module paths (`a::b::Messages<c::Damage>` is
/// `Messages<Damage>`): lanes are named by the type, the full path is in
/// the lane's `data-service`.
fn short_type_name(name: &str) -> String {
    let mut short = String::with_capacity(name.len());
    let mut segment = 0;
    for (at, c) in name.char_indices() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            if c == ':' && name[at..].starts_with("::") {
                short.truncate(segment);
            } else if c != ':' {
                short.push(c);
            }
        } else {
            short.push(c);
            segment = short.len();
        }
    }
    short
}

/// Whether marks of this kind share a band's lane side by side (readers and
/// appenders run together).
fn side_by_side(kind: AccessKind) -> bool {
    matches!(kind, AccessKind::Shared | AccessKind::Appended)
}

fn chars(text: &str, cap: usize) -> usize {
    text.chars().count().min(cap)
}

/// One node touching one lane.
struct Mark {
    lane: usize,
    kind: AccessKind,
    produces: bool,
    consumes: bool,
    /// For a shared access: its place among the shared accesses of its
    /// band on this lane, and how many there are.
    slot: u32,
    of: u32,
}

struct Row {
    node: NodeIndex,
    position: usize,
    y: f64,
    marks: Vec<Mark>,
    exclusive: bool,
    /// The node's groups, outermost first.
    groups: Vec<GroupIndex>,
}

struct Band {
    stage: usize,
    first: usize,
    end: usize,
    top: f64,
}

struct Panel<'p> {
    title: &'p str,
    plan: &'p Plan,
    rows: Vec<Row>,
    bands: Vec<Band>,
    title_y: f64,
    /// Where the "no nodes" line goes when there are no rows.
    empty_y: f64,
}

/// A group frame: the rows `first..end` of a band, at a depth.
struct Frame {
    group: GroupIndex,
    depth: usize,
    first: usize,
    end: usize,
}

struct Picture<'p> {
    panels: Vec<Panel<'p>>,
    /// Per lane: its service's name, left edge and width.
    lanes: Vec<(&'p str, f64, f64)>,
    lanes_left: f64,
    lanes_right: f64,
    label_right: f64,
    frame_right: f64,
    width: f64,
    height: f64,
    header_bottom: f64,
    content_top: f64,
    content_bottom: f64,
    /// Where the repeated lane headers start, when the plan is long.
    footer: Option<f64>,
    /// Per panel: its frames; per frame start row (panel, row): the
    /// caption of the frames starting there.
    frames: Vec<Vec<Frame>>,
    captions: Vec<(usize, usize, String)>,
}

impl<'p> Picture<'p> {
    fn new(graph: GraphView<'p>, plans: &[(&'p str, &'p Plan)]) -> Self {
        let mut lane_of: Vec<usize> = Vec::new();
        let mut services: Vec<ServiceId> = Vec::new();
        let mut widest: Vec<u32> = Vec::new();
        let mut panels = Vec::with_capacity(plans.len());
        let mut touched: Vec<ServiceId> = Vec::new();
        let mut counts: Vec<u32> = Vec::new();
        for &(title, plan) in plans {
            // Within a stage, rows follow the group tree, so that a group's
            // members in one stage are one run.
            let mut rank = vec![u32::MAX; plan.registered()];
            let mut next = 0;
            for (_, item) in plan.tree() {
                if let TreeItem::Node(node) = item
                    && let Some(slot) = rank.get_mut(node.index())
                {
                    *slot = next;
                    next += 1;
                }
            }
            let mut rows = Vec::with_capacity(plan.len());
            let mut bands = Vec::with_capacity(plan.stage_count());
            for (stage, members) in plan.stages().enumerate() {
                let mut members = members.to_vec();
                members.sort_by_key(|node| (rank.get(node.index()).copied(), node.0));
                let first = rows.len();
                for node in members {
                    let access = graph.nodes().get(node.index()).map(|n| n.access());
                    touched.clear();
                    if let Some(access) = access {
                        touched.extend(access.shared().chain(access.gated()));
                        touched.extend(access.produced());
                    }
                    touched.sort_unstable();
                    touched.dedup();
                    let mut marks = Vec::with_capacity(touched.len());
                    for &service in &touched {
                        let Some(access) = access else { break };
                        let Some(kind) = access.access_to(service) else {
                            continue;
                        };
                        if lane_of.len() <= service.index() {
                            lane_of.resize(service.index() + 1, usize::MAX);
                        }
                        if lane_of[service.index()] == usize::MAX {
                            lane_of[service.index()] = services.len();
                            services.push(service);
                            widest.push(0);
                        }
                        marks.push(Mark {
                            lane: lane_of[service.index()],
                            kind,
                            produces: access.produced().any(|s| s == service),
                            consumes: access.consumes(service),
                            slot: 0,
                            of: 0,
                        });
                    }
                    let mut groups = Vec::new();
                    let mut group = plan.hierarchy().group_of(node);
                    while let Some(g) = group {
                        groups.push(g);
                        group = plan.hierarchy().parent(g);
                    }
                    groups.reverse();
                    rows.push(Row {
                        node,
                        position: plan.position(node),
                        y: 0.0,
                        marks,
                        exclusive: access.is_some_and(|a| a.is_exclusive()),
                        groups,
                    });
                }
                // The shared accesses of one band on one lane, side by side.
                counts.resize(services.len(), 0);
                for row in &mut rows[first..] {
                    for mark in &mut row.marks {
                        if side_by_side(mark.kind) {
                            mark.slot = counts[mark.lane];
                            counts[mark.lane] += 1;
                        }
                    }
                }
                for row in &mut rows[first..] {
                    for mark in &mut row.marks {
                        if side_by_side(mark.kind) {
                            mark.of = counts[mark.lane];
                            widest[mark.lane] = widest[mark.lane].max(mark.of);
                        }
                    }
                }
                for row in &rows[first..] {
                    for mark in &row.marks {
                        counts[mark.lane] = 0;
                    }
                }
                bands.push(Band {
                    stage,
                    first,
                    end: rows.len(),
                    top: 0.0,
                });
            }
            panels.push(Panel {
                title,
                plan,
                rows,
                bands,
                title_y: 0.0,
                empty_y: 0.0,
            });
        }

        // Across: stage numbers, names, lanes, group captions.
        let name_chars = panels
            .iter()
            .flat_map(|p| {
                p.rows
                    .iter()
                    .map(|r| chars(p.plan.node_name(r.node), NAME_CAP))
            })
            .max()
            .unwrap_or(0);
        let label_left = MARGIN + STAGE_COLUMN;
        let label_right = label_left + (name_chars as f64 * CHAR + 16.0).max(60.0);
        let lanes_left = label_right;
        let mut x = lanes_left;
        let mut lanes = Vec::with_capacity(services.len());
        for (lane, &service) in services.iter().enumerate() {
            let width = (widest[lane] as f64 * DOT_STEP + 12.0).clamp(LANE_MIN, LANE_MAX);
            lanes.push((graph.table().name(service), x, width));
            x += width;
        }
        let lanes_right = x.max(lanes_left + 40.0);
        let header_chars = lanes
            .iter()
            .map(|&(name, _, _)| chars(name, SERVICE_CAP))
            .max()
            .unwrap_or(0);
        let header_height = (header_chars as f64 * CHAR * SLANT_SIN + 18.0).max(34.0);
        let header_reach = lanes
            .iter()
            .map(|&(name, left, width)| {
                left + width / 2.0 + chars(name, SERVICE_CAP) as f64 * CHAR * SLANT_COS
            })
            .fold(lanes_right, f64::max);

        let mut frames = Vec::with_capacity(panels.len());
        let mut captions = Vec::new();
        for (p, panel) in panels.iter().enumerate() {
            let (panel_frames, panel_captions) = runs(panel);
            frames.push(panel_frames);
            captions.extend(
                panel_captions
                    .into_iter()
                    .map(|(row, caption)| (p, row, caption)),
            );
        }
        let caption_chars = captions
            .iter()
            .map(|(_, _, c)| chars(c, GROUP_CAP))
            .max()
            .unwrap_or(0);
        let gutter = if captions.is_empty() {
            0.0
        } else {
            caption_chars as f64 * CHAR + FRAME_DEPTHS as f64 * FRAME_INSET + 14.0
        };
        let frame_right = lanes_right + gutter;
        let legend_right = MARGIN + legend_width();

        // Down: title, legend, lane headers, panels, repeated headers.
        let header_top = MARGIN + 24.0 + 30.0;
        let header_bottom = header_top + header_height;
        let content_top = header_bottom + 4.0;
        let mut y = content_top;
        let mut row_total = 0;
        for panel in &mut panels {
            if !panel.title.is_empty() {
                panel.title_y = y + 16.0;
                y += 24.0;
            }
            if panel.rows.is_empty() {
                panel.empty_y = y + 14.0;
                y += ROW;
            }
            for band in &mut panel.bands {
                band.top = y;
                y += BAND_PAD;
                for row in &mut panel.rows[band.first..band.end] {
                    row.y = y + ROW / 2.0;
                    y += ROW;
                }
                y += BAND_PAD;
            }
            row_total += panel.rows.len();
            y += 8.0;
        }
        let content_bottom = y;
        let footer = (row_total > FOOTER_ROWS).then_some(content_bottom + 4.0);
        if footer.is_some() {
            y += header_height + 4.0;
        }

        Self {
            panels,
            lanes,
            lanes_left,
            lanes_right,
            label_right,
            frame_right,
            width: (frame_right.max(header_reach + 8.0).max(legend_right)) + MARGIN,
            height: y + MARGIN,
            header_bottom,
            content_top,
            content_bottom,
            footer,
            frames,
            captions,
        }
    }

    /// The centre of a mark.
    fn mark_x(&self, mark: &Mark) -> f64 {
        let (_, left, width) = self.lanes[mark.lane];
        let centre = left + width / 2.0;
        if !side_by_side(mark.kind) || mark.of <= 1 {
            return centre;
        }
        let step = DOT_STEP.min((width - 2.0 * DOT - 4.0) / f64::from(mark.of - 1));
        centre + (f64::from(mark.slot) - f64::from(mark.of - 1) / 2.0) * step
    }

    fn render(&self) -> String {
        let mut out = String::with_capacity(
            4096 + self.panels.iter().map(|p| p.rows.len()).sum::<usize>() * 600,
        );
        let _ = self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) -> fmt::Result {
        let (w, h) = (Num(self.width), Num(self.height));
        writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"{SANS_FONT}\" font-size=\"11\">"
        )?;
        let nodes: usize = self.panels.iter().map(|p| p.rows.len()).sum();
        let stages: usize = self.panels.iter().map(|p| p.bands.len()).sum();
        let summary = format!(
            "{nodes} node{} · {stages} stage{} · {} lane{}",
            plural(nodes),
            plural(stages),
            self.lanes.len(),
            plural(self.lanes.len())
        );
        writeln!(out, "<title>sluice plan: {summary}</title>")?;
        writeln!(
            out,
            "<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" \
             markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">\
             <path d=\"M0,0 L8,4 L0,8 z\" fill=\"{PRODUCE}\"/></marker></defs>"
        )?;
        writeln!(
            out,
            "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>"
        )?;
        writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\" fill=\"{INK}\">\
             sluice plan <tspan font-weight=\"normal\" fill=\"{MUTED}\">{summary}</tspan></text>",
            Num(MARGIN),
            Num(MARGIN + 12.0)
        )?;
        self.write_legend(out, MARGIN + 30.0)?;
        self.write_lanes(out)?;
        writeln!(
            out,
            "<g fill=\"{MUTED}\"><text x=\"{}\" y=\"{}\">stage</text>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">node</text></g>",
            Num(MARGIN),
            Num(self.header_bottom - 4.0),
            Num(self.label_right - 8.0),
            Num(self.header_bottom - 4.0)
        )?;
        for (p, panel) in self.panels.iter().enumerate() {
            self.write_panel(out, p, panel)?;
        }
        out.push_str("</svg>\n");
        Ok(())
    }

    fn write_legend(&self, out: &mut String, y: f64) -> fmt::Result {
        out.push_str("<g class=\"legend\" fill=\"");
        out.push_str(INK);
        out.push_str("\">\n");
        let mut x = MARGIN;
        for (item, text) in LEGEND.iter().enumerate() {
            let (sx, sy) = (Num(x), Num(y));
            match item {
                0 => writeln!(
                    out,
                    "<circle cx=\"{}\" cy=\"{sy}\" r=\"{}\" fill=\"{SHARED}\"/>",
                    Num(x + 7.0),
                    Num(DOT)
                )?,
                1 => writeln!(
                    out,
                    "<rect x=\"{sx}\" y=\"{}\" width=\"16\" height=\"{}\" rx=\"1.5\" fill=\"{GATE}\"/>",
                    Num(y - BAR / 2.0),
                    Num(BAR)
                )?,
                2 => writeln!(
                    out,
                    "<path d=\"{}\" fill=\"{PRODUCE}\"/>",
                    triangle(x + 8.0, y)
                )?,
                3 => writeln!(
                    out,
                    "<line x1=\"{sx}\" y1=\"{sy}\" x2=\"{}\" y2=\"{sy}\" stroke=\"{PRODUCE}\" \
                     stroke-width=\"1.2\" marker-end=\"url(#arrow)\"/>",
                    Num(x + 16.0)
                )?,
                4 => writeln!(
                    out,
                    "<rect x=\"{sx}\" y=\"{}\" width=\"16\" height=\"{}\" fill=\"{EXCLUSIVE}\" \
                     fill-opacity=\"0.8\"/>",
                    Num(y - BAR / 2.0 + 1.0),
                    Num(BAR - 2.0)
                )?,
                5 => writeln!(
                    out,
                    "<rect x=\"{sx}\" y=\"{}\" width=\"16\" height=\"12\" rx=\"3\" fill=\"none\" \
                     stroke=\"{FRAME}\" stroke-dasharray=\"3 2\"/>",
                    Num(y - 6.0)
                )?,
                _ => writeln!(
                    out,
                    "<circle cx=\"{}\" cy=\"{sy}\" r=\"{}\" fill=\"none\" stroke=\"{SHARED}\" \
                     stroke-width=\"2\"/>",
                    Num(x + 7.0),
                    Num(DOT - 1.0)
                )?,
            }
            writeln!(
                out,
                "<text x=\"{}\" y=\"{}\">{text}</text>",
                Num(x + 22.0),
                Num(y + 4.0)
            )?;
            x += 22.0 + text_width(text) + 18.0;
        }
        out.push_str("</g>\n");
        Ok(())
    }

    fn write_lanes(&self, out: &mut String) -> fmt::Result {
        for (lane, &(name, left, width)) in self.lanes.iter().enumerate() {
            let centre = left + width / 2.0;
            writeln!(out, "<g class=\"lane\" data-service=\"{}\">", Xml(name))?;
            if lane % 2 == 0 {
                writeln!(
                    out,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{LANE_FILL}\"/>",
                    Num(left),
                    Num(self.content_top),
                    Num(width),
                    Num(self.content_bottom - self.content_top)
                )?;
            }
            writeln!(
                out,
                "<line x1=\"{c}\" y1=\"{}\" x2=\"{c}\" y2=\"{}\" stroke=\"{LANE_LINE}\"/>",
                Num(self.content_top),
                Num(self.content_bottom),
                c = Num(centre)
            )?;
            let shown = capped(&short_type_name(name), SERVICE_CAP);
            writeln!(
                out,
                "<text transform=\"translate({},{}) rotate(-55)\" font-family=\"{MONO}\" \
                 fill=\"{INK}\"><title>{}</title>{}</text>",
                Num(centre + 3.0),
                Num(self.header_bottom - 6.0),
                Xml(name),
                Xml(&shown)
            )?;
            if let Some(top) = self.footer {
                writeln!(
                    out,
                    "<text transform=\"translate({},{}) rotate(55)\" font-family=\"{MONO}\" \
                     fill=\"{INK}\">{}</text>",
                    Num(centre - 3.0),
                    Num(top + 6.0),
                    Xml(&shown)
                )?;
            }
            out.push_str("</g>\n");
        }
        Ok(())
    }

    fn write_panel(&self, out: &mut String, p: usize, panel: &Panel<'_>) -> fmt::Result {
        let plan = panel.plan;
        writeln!(out, "<g class=\"panel\">")?;
        if !panel.title.is_empty() {
            writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" font-size=\"13\" font-weight=\"bold\" fill=\"{INK}\">{}</text>",
                Num(MARGIN),
                Num(panel.title_y),
                Xml(panel.title)
            )?;
        }
        if panel.rows.is_empty() {
            writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" font-style=\"italic\" fill=\"{MUTED}\">no nodes</text>",
                Num(self.label_right - 8.0),
                Num(panel.empty_y),
            )?;
        }
        // Stage bands: a rule above each, its number by its first row.
        for band in &panel.bands {
            writeln!(
                out,
                "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{RULE}\"/>\
                 <text x=\"{}\" y=\"{}\" fill=\"{MUTED}\">{}</text>",
                Num(MARGIN),
                Num(self.frame_right),
                Num(MARGIN + 4.0),
                Num(panel.rows[band.first].y + 4.0),
                band.stage,
                y = Num(band.top)
            )?;
        }
        // Group frames under everything else, captions in the gutter.
        for frame in &self.frames[p] {
            let depth = frame.depth.min(FRAME_DEPTHS) as f64;
            let inset = depth * FRAME_INSET;
            let left = MARGIN + STAGE_COLUMN - 6.0 + inset;
            let top = panel.rows[frame.first].y - ROW / 2.0 + 1.0 + depth * 1.5;
            let bottom = panel.rows[frame.end - 1].y + ROW / 2.0 - 1.0 - depth * 1.5;
            writeln!(
                out,
                "<rect class=\"group\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" \
                 fill=\"none\" stroke=\"{FRAME}\" stroke-dasharray=\"4 3\"><title>{}</title></rect>",
                Num(left),
                Num(top),
                Num(self.frame_right - inset - left),
                Num(bottom - top),
                Xml(plan.hierarchy().group_name(frame.group))
            )?;
        }
        for (_, row, caption) in self.captions.iter().filter(|(q, _, _)| *q == p) {
            writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-style=\"italic\" \
                 font-family=\"{MONO}\" fill=\"{FRAME}\">{}</text>",
                Num(self.frame_right - FRAME_DEPTHS as f64 * FRAME_INSET - 4.0),
                Num(panel.rows[*row].y + 4.0),
                Xml(&capped(caption, GROUP_CAP))
            )?;
        }
        // Guides from each name to its last mark.
        for row in &panel.rows {
            let reach = row
                .marks
                .iter()
                .map(|m| self.mark_x(m))
                .fold(if row.exclusive { self.lanes_right } else { 0.0 }, f64::max);
            if reach > 0.0 {
                writeln!(
                    out,
                    "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{RULE}\"/>",
                    Num(self.label_right - 4.0),
                    Num(reach),
                    y = Num(row.y)
                )?;
            }
        }
        // Produce arrows: each producer to every later consumer on its lane.
        for (i, producer) in panel.rows.iter().enumerate() {
            for made in producer.marks.iter().filter(|m| m.produces) {
                let from = self.lanes[made.lane].1 + self.lanes[made.lane].2 / 2.0;
                for consumer in &panel.rows[i + 1..] {
                    let Some(used) = consumer
                        .marks
                        .iter()
                        .find(|m| m.lane == made.lane && m.consumes)
                    else {
                        continue;
                    };
                    if consumer.position <= producer.position {
                        continue;
                    }
                    let to = self.mark_x(used);
                    let (y1, y2) = (producer.y + 5.0, consumer.y - 5.5);
                    let bulge = self.lanes[made.lane].2 * 0.45;
                    writeln!(
                        out,
                        "<path class=\"arrow\" d=\"M{},{} Q{},{} {},{}\" fill=\"none\" \
                         stroke=\"{PRODUCE}\" stroke-width=\"1.2\" stroke-opacity=\"0.8\" \
                         marker-end=\"url(#arrow)\"/>",
                        Num(from),
                        Num(y1),
                        Num(from.max(to) + bulge),
                        Num((y1 + y2) / 2.0),
                        Num(to),
                        Num(y2)
                    )?;
                }
            }
        }
        // The rows: name, exclusive bar, marks.
        for row in &panel.rows {
            let name = plan.node_name(row.node);
            writeln!(
                out,
                "<g class=\"node\"><title>{} (stage {})</title>",
                Xml(name),
                plan.stage_of(row.node)
            )?;
            writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-family=\"{MONO}\" fill=\"{INK}\">{}</text>",
                Num(self.label_right - 8.0),
                Num(row.y + 4.0),
                Xml(&capped(name, NAME_CAP))
            )?;
            if row.exclusive {
                writeln!(
                    out,
                    "<rect class=\"exclusive\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
                     fill=\"{EXCLUSIVE}\" fill-opacity=\"0.8\"/>",
                    Num(self.lanes_left + 2.0),
                    Num(row.y - BAR / 2.0 + 1.0),
                    Num(self.lanes_right - self.lanes_left - 4.0),
                    Num(BAR - 2.0)
                )?;
            }
            for mark in &row.marks {
                let (_, left, width) = self.lanes[mark.lane];
                match mark.kind {
                    AccessKind::Shared => writeln!(
                        out,
                        "<circle class=\"shared\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{SHARED}\"/>",
                        Num(self.mark_x(mark)),
                        Num(row.y),
                        Num(DOT)
                    )?,
                    AccessKind::Gated => writeln!(
                        out,
                        "<rect class=\"gate\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
                         rx=\"1.5\" fill=\"{GATE}\"/>",
                        Num(left + 3.0),
                        Num(row.y - BAR / 2.0),
                        Num(width - 6.0),
                        Num(BAR)
                    )?,
                    AccessKind::Produced => writeln!(
                        out,
                        "<path class=\"produce\" d=\"{}\" fill=\"{PRODUCE}\"/>",
                        triangle(left + width / 2.0, row.y)
                    )?,
                    // A ring: a shared accessor of the lane that the lane's
                    // next gate commits.
                    AccessKind::Appended => writeln!(
                        out,
                        "<circle class=\"append\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"none\" \
                         stroke=\"{SHARED}\" stroke-width=\"2\"/>",
                        Num(self.mark_x(mark)),
                        Num(row.y),
                        Num(DOT - 1.0)
                    )?,
                }
            }
            out.push_str("</g>\n");
        }
        out.push_str("</g>\n");
        Ok(())
    }
}

const LEGEND: [&str; 7] = [
    "shared access (&amp;T)",
    "gate (&amp;mut T)",
    "produces",
    "to each consumer",
    "exclusive",
    "group",
    "appends (Append&lt;T&gt;)",
];

fn text_width(escaped: &str) -> f64 {
    escaped
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .chars()
        .count() as f64
        * SANS
}

fn legend_width() -> f64 {
    LEGEND
        .iter()
        .map(|text| 22.0 + text_width(text) + 18.0)
        .sum()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A triangle pointing down, centred on (`x`, `y`).
fn triangle(x: f64, y: f64) -> String {
    format!(
        "M{},{} L{},{} L{},{} z",
        Num(x - 5.5),
        Num(y - 4.5),
        Num(x + 5.5),
        Num(y - 4.5),
        Num(x),
        Num(y + 5.0)
    )
}

/// The group frames of a panel (rows of one band that share a group at one
/// depth), and per row
/// where frames start, their names joined outermost first.
fn runs(panel: &Panel<'_>) -> (Vec<Frame>, Vec<(usize, String)>) {
    let hierarchy = panel.plan.hierarchy();
    let mut frames = Vec::new();
    let mut starts: Vec<(usize, usize, GroupIndex)> = Vec::new();
    for band in &panel.bands {
        let rows = &panel.rows[band.first..band.end];
        let depth = rows.iter().map(|r| r.groups.len()).max().unwrap_or(0);
        for d in 0..depth {
            let mut i = 0;
            while i < rows.len() {
                let Some(&group) = rows[i].groups.get(d) else {
                    i += 1;
                    continue;
                };
                let mut end = i + 1;
                while end < rows.len() && rows[end].groups.get(d) == Some(&group) {
                    end += 1;
                }
                frames.push(Frame {
                    group,
                    depth: d,
                    first: band.first + i,
                    end: band.first + end,
                });
                starts.push((band.first + i, d, group));
                i = end;
            }
        }
    }
    starts.sort_unstable_by_key(|&(row, depth, _)| (row, depth));
    let mut captions: Vec<(usize, String)> = Vec::new();
    for (row, _, group) in starts {
        let name = hierarchy.group_name(group);
        match captions.last_mut() {
            Some((last, caption)) if *last == row => {
                caption.push_str(" › ");
                caption.push_str(name);
            }
            _ => captions.push((row, name.to_owned())),
        }
    }
    (frames, captions)
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_type_names() {
        assert_eq!(short_type_name("Hp"), "Hp");
        assert_eq!(short_type_name("game::combat::Score"), "Score");
        assert_eq!(
            short_type_name("sluice::message::Messages<game::Damage>"),
            "Messages<Damage>"
        );
        assert_eq!(
            short_type_name("a::B<c::D, (e::F, [g::H; 2])>"),
            "B<D, (F, [H; 2])>"
        );
    }
}
