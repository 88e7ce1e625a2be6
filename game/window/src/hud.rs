//! The on-screen text: a status line at the top and, when a unit is
//! selected, a panel of its components, drawn in font8x8's 8x8 bitmap font.

use font8x8::{BASIC_FONTS, UnicodeFonts};

use crate::draw::Framebuffer;

/// The text colour.
pub const TEXT: u32 = 0x00F0_F0E8;
/// Behind the text.
pub const PANEL: u32 = 0x0008_0A0C;

/// What the HUD shows: a service the app fills between frames and the
/// commit draws on top of the frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hud {
    /// The status line (top left).
    pub status: String,
    /// The selected unit's components, a line each (top right); empty
    /// when nothing is selected.
    pub panel: Vec<String>,
}

/// Pixels per font pixel.
const SCALE: i64 = 2;
/// A glyph's advance and a line's height, in pixels.
const GLYPH: i64 = 8 * SCALE;

/// Draws `text` with its top left at `(x, y)`; characters the font lacks
/// show as blanks.
pub fn draw_text(frame: &mut Framebuffer, x: i64, y: i64, text: &str, colour: u32) {
    for (index, character) in text.chars().enumerate() {
        let Some(rows) = BASIC_FONTS.get(character) else {
            continue;
        };
        let left = x + index as i64 * GLYPH;
        for (row, bits) in rows.iter().enumerate() {
            for column in 0..8 {
                if bits & (1 << column) != 0 {
                    let px = left + column * SCALE;
                    let py = y + row as i64 * SCALE;
                    frame.fill_rect(px, py, px + SCALE, py + SCALE, colour);
                }
            }
        }
    }
}

/// Draws the status line and the panel of `hud` over `frame`.
pub fn draw_hud(frame: &mut Framebuffer, hud: &Hud) {
    const MARGIN: i64 = 6;
    if !hud.status.is_empty() {
        let width = hud.status.chars().count() as i64 * GLYPH;
        frame.fill_rect(0, 0, width + 2 * MARGIN, GLYPH + 2 * MARGIN, PANEL);
        draw_text(frame, MARGIN, MARGIN, &hud.status, TEXT);
    }
    if !hud.panel.is_empty() {
        let columns = hud.panel.iter().map(|line| line.chars().count()).max();
        let width = columns.unwrap_or(0) as i64 * GLYPH + 2 * MARGIN;
        let height = hud.panel.len() as i64 * (GLYPH + 2) + 2 * MARGIN;
        let left = i64::from(frame.width()) - width;
        let top = GLYPH + 3 * MARGIN;
        frame.fill_rect(left, top, left + width, top + height, PANEL);
        for (index, line) in hud.panel.iter().enumerate() {
            let y = top + MARGIN + index as i64 * (GLYPH + 2);
            draw_text(frame, left + MARGIN, y, line, TEXT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::BACKGROUND;

    #[test]
    fn text_sets_pixels_in_its_box_only() {
        let mut frame = Framebuffer::new(64, 32);
        draw_text(&mut frame, 0, 0, "A", TEXT);
        let lit: Vec<(u32, u32)> = (0..32)
            .flat_map(|y| (0..64).map(move |x| (x, y)))
            .filter(|&(x, y)| frame.pixel(x, y) == Some(TEXT))
            .collect();
        assert!(lit.len() > 20, "an A has pixels");
        assert!(lit.iter().all(|&(x, y)| x < 16 && y < 16));
        // Off the edge and unknown characters draw nothing and do not panic.
        draw_text(&mut frame, -100, 500, "off ✓", TEXT);
    }

    #[test]
    fn the_panel_sits_at_the_right_edge() {
        let mut frame = Framebuffer::new(400, 200);
        let hud = Hud {
            status: String::new(),
            panel: vec!["Pos(1, 2)".into()],
        };
        draw_hud(&mut frame, &hud);
        assert_eq!(frame.pixel(399, 40), Some(PANEL));
        assert_eq!(frame.pixel(0, 40), Some(BACKGROUND));
    }
}
