//! Draws a share card: 1200x630 RGB, the question and up to four outcomes with their prices,
//! in DejaVu Sans Bold (built in), rasterised by ab_glyph; then written as a PNG.

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};

pub(crate) const WIDTH: usize = 1200;
pub(crate) const HEIGHT: usize = 630;

static FONT_BYTES: &[u8] = include_bytes!("DejaVuSans-Bold.ttf");

const BACKGROUND: [u8; 3] = [0xf6, 0xf7, 0xfb];
const INK: [u8; 3] = [0x1d, 0x23, 0x30];
const MUTED: [u8; 3] = [0x5a, 0x64, 0x78];
const BAND: [u8; 3] = [0x1d, 0x23, 0x30];
const WHITE: [u8; 3] = [0xff, 0xff, 0xff];
const TRACK: [u8; 3] = [0xdd, 0xe1, 0xea];
const BAR: [u8; 3] = [0x2c, 0x5f, 0xb3];
const MARGIN: usize = 60;

/// What a card shows.
pub(crate) struct Card<'a> {
    pub(crate) question: &'a str,
    /// The status line in the top band (e.g. "Open", "Resolved: Yes").
    pub(crate) status: &'a str,
    /// (title, price as the API writes it, e.g. "0.625").
    pub(crate) outcomes: Vec<(&'a str, &'a str)>,
}

struct Canvas {
    pixels: Vec<u8>,
    font: FontRef<'static>,
}

impl Canvas {
    fn new() -> Canvas {
        let mut pixels = Vec::with_capacity(WIDTH * HEIGHT * 3);
        for _ in 0..WIDTH * HEIGHT {
            pixels.extend_from_slice(&BACKGROUND);
        }
        Canvas { pixels, font: FontRef::try_from_slice(FONT_BYTES).expect("the built-in font parses") }
    }

    fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, color: [u8; 3]) {
        for row in y..(y + h).min(HEIGHT) {
            for col in x..(x + w).min(WIDTH) {
                let i = (row * WIDTH + col) * 3;
                self.pixels[i..i + 3].copy_from_slice(&color);
            }
        }
    }

    fn text_width(&self, text: &str, size: f32) -> f32 {
        let font = self.font.as_scaled(PxScale::from(size));
        let mut width = 0.0;
        let mut last = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(previous) = last {
                width += font.kern(previous, id);
            }
            width += font.h_advance(id);
            last = Some(id);
        }
        width
    }

    /// Draws `text` with its baseline at `baseline`, from `x`; returns where it ends.
    fn text(&mut self, text: &str, x: f32, baseline: f32, size: f32, color: [u8; 3]) -> f32 {
        let scale = PxScale::from(size);
        let font = self.font.clone();
        let scaled = font.as_scaled(scale);
        let mut caret = x;
        let mut last = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(previous) = last {
                caret += scaled.kern(previous, id);
            }
            let glyph = id.with_scale_and_position(scale, point(caret, baseline));
            caret += scaled.h_advance(id);
            last = Some(id);
            let Some(outlined) = font.outline_glyph(glyph) else { continue };
            let bounds = outlined.px_bounds();
            outlined.draw(|gx, gy, coverage| {
                let (px, py) = (bounds.min.x as i64 + i64::from(gx), bounds.min.y as i64 + i64::from(gy));
                if px < 0 || py < 0 || px >= WIDTH as i64 || py >= HEIGHT as i64 {
                    return;
                }
                let i = (py as usize * WIDTH + px as usize) * 3;
                let alpha = coverage.clamp(0.0, 1.0);
                for (pixel, ink) in self.pixels[i..i + 3].iter_mut().zip(color) {
                    let under = f32::from(*pixel);
                    *pixel = (under + (f32::from(ink) - under) * alpha).round() as u8;
                }
            });
        }
        caret
    }

    /// `text` cut to fit `width` at `size`, with an ellipsis if cut.
    fn fit(&self, text: &str, size: f32, width: f32) -> String {
        if self.text_width(text, size) <= width {
            return text.to_string();
        }
        let mut cut: String = text.to_string();
        while !cut.is_empty() && self.text_width(&format!("{cut}…"), size) > width {
            cut.pop();
        }
        format!("{}…", cut.trim_end())
    }

    /// Words wrapped into at most `max_lines` lines of `width`; the last one ellipsised if
    /// the text goes on.
    fn wrap(&self, text: &str, size: f32, width: f32, max_lines: usize) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        let mut current = String::new();
        let mut words = text.split_whitespace().peekable();
        while let Some(word) = words.next() {
            let candidate = if current.is_empty() { word.to_string() } else { format!("{current} {word}") };
            if self.text_width(&candidate, size) <= width || current.is_empty() {
                current = candidate;
                continue;
            }
            lines.push(std::mem::take(&mut current));
            current = word.to_string();
            if lines.len() == max_lines {
                let rest: Vec<&str> = std::iter::once(word).chain(words.by_ref()).collect();
                let last = lines.pop().unwrap_or_default();
                lines.push(self.fit(&format!("{last} {}", rest.join(" ")), size, width));
                return lines;
            }
        }
        if !current.is_empty() {
            lines.push(current);
        }
        lines.into_iter().map(|line| self.fit(&line, size, width)).collect()
    }
}

/// A price string of the API ("0.625", "1", "0") in tenths of a percent, rounded half up.
pub(crate) fn per_mille(price: &str) -> u32 {
    let (whole, fraction) = price.split_once('.').unwrap_or((price, ""));
    let digits: Vec<u32> = fraction.chars().filter_map(|c| c.to_digit(10)).chain(std::iter::repeat(0)).take(4).collect();
    let mut tenths = whole.parse::<u32>().unwrap_or(0).min(1) * 1000 + digits[0] * 100 + digits[1] * 10 + digits[2];
    if digits[3] >= 5 {
        tenths += 1;
    }
    tenths.min(1000)
}

fn percent_text(per_mille: u32) -> String {
    format!("{}.{}%", per_mille / 10, per_mille % 10)
}

/// The card's pixels, RGB rows top to bottom.
pub(crate) fn pixels(card: &Card<'_>) -> Vec<u8> {
    let mut canvas = Canvas::new();
    let inner = (WIDTH - 2 * MARGIN) as f32;
    canvas.rect(0, 0, WIDTH, 88, BAND);
    canvas.text("Hanson", MARGIN as f32, 58.0, 36.0, WHITE);
    let status_width = canvas.text_width(card.status, 28.0);
    canvas.text(card.status, WIDTH as f32 - MARGIN as f32 - status_width, 56.0, 28.0, [0xc9, 0xd3, 0xe6]);

    let shown = card.outcomes.len().min(4);
    let question_lines = if shown > 2 { 2 } else { 3 };
    let mut baseline = 160.0;
    for line in canvas.wrap(card.question, 50.0, inner, question_lines) {
        canvas.text(&line, MARGIN as f32, baseline, 50.0, INK);
        baseline += 62.0;
    }
    let row_height = 78.0;
    let mut top = (baseline - 10.0).max(250.0);
    for (title, price) in card.outcomes.iter().take(shown) {
        let tenths = per_mille(price);
        let percent = percent_text(tenths);
        let percent_width = canvas.text_width(&percent, 34.0);
        let title = canvas.fit(title, 32.0, inner - percent_width - 30.0);
        canvas.text(&title, MARGIN as f32, top + 34.0, 32.0, INK);
        canvas.text(&percent, WIDTH as f32 - MARGIN as f32 - percent_width, top + 34.0, 34.0, INK);
        let track = WIDTH - 2 * MARGIN;
        canvas.rect(MARGIN, (top + 48.0) as usize, track, 14, TRACK);
        canvas.rect(MARGIN, (top + 48.0) as usize, track * tenths as usize / 1000, 14, BAR);
        top += row_height;
    }
    if card.outcomes.len() > shown {
        let more = format!("and {} more outcomes", card.outcomes.len() - shown);
        canvas.text(&more, MARGIN as f32, (top + 26.0).min(HEIGHT as f32 - 20.0), 26.0, MUTED);
    }
    canvas.pixels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_become_rounded_percentages() {
        assert_eq!(per_mille("0.625"), 625);
        assert_eq!(per_mille("0.33335"), 333);
        assert_eq!(per_mille("0.33350"), 334);
        assert_eq!(per_mille("0.9996"), 1000);
        assert_eq!(per_mille("1"), 1000);
        assert_eq!(per_mille("0"), 0);
        assert_eq!(percent_text(per_mille("0.5")), "50.0%");
    }

    #[test]
    fn a_card_draws_its_text_and_bars() {
        let card = Card { question: "Will it rain?", status: "Open", outcomes: vec![("Yes", "0.75"), ("No", "0.25")] };
        let pixels = pixels(&card);
        assert_eq!(pixels.len(), WIDTH * HEIGHT * 3);
        let at = |x: usize, y: usize| &pixels[(y * WIDTH + x) * 3..(y * WIDTH + x) * 3 + 3];
        assert_eq!(at(5, 5), BAND);
        assert_eq!(at(5, 620), BACKGROUND);
        // The first bar: filled to 75 % of the track, the track after it.
        let bar_y = pixels.chunks(3).position(|p| p == BAR).map(|i| i / WIDTH).expect("a bar");
        assert_eq!(at(MARGIN, bar_y + 2), BAR);
        assert_eq!(at(MARGIN + (WIDTH - 2 * MARGIN) * 3 / 4 - 1, bar_y + 2), BAR);
        assert_eq!(at(MARGIN + (WIDTH - 2 * MARGIN) * 3 / 4 + 1, bar_y + 2), TRACK);
        // Text is drawn: some pixels are in ink.
        assert!(pixels.chunks(3).any(|p| p == INK));
    }
}
