//! The 37 characters an MRZ may hold, drawn from the OCR-B font shipped with the project
//! (`worker/data/ocrb`), as the templates every cell is compared with. They are rasterised
//! once, at one size: the reader resamples each zone to that size rather than scaling them.

use std::sync::LazyLock;

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};

/// OCR-B, public domain (Matthew Skala, after Norbert Schwarz): see `worker/data/ocrb/README.md`.
static OCRB: &[u8] = include_bytes!("../../../../data/ocrb/OCRB.otf");

/// The characters of ICAO 9303 zones.
pub(super) const ALPHABET: &[u8; 37] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<";

/// The font size (ascent − descent, in pixels) templates are drawn at: capitals are then about
/// 22 px high, enough to tell `O` from `0` and `8` from `B`, small enough to match quickly.
pub(super) const EM: f32 = 40.0;

static FONT: LazyLock<Option<FontRef<'static>>> = LazyLock::new(|| FontRef::try_from_slice(OCRB).ok());

static TEMPLATES: LazyLock<Option<Templates>> = LazyLock::new(|| font().and_then(Templates::draw));

/// The embedded OCR-B font; `None` only if the embedded file were corrupt.
pub(super) fn font() -> Option<&'static FontRef<'static>> {
    FONT.as_ref()
}

/// The templates, drawn on first use.
pub(super) fn templates() -> Option<&'static Templates> {
    TEMPLATES.as_ref()
}

/// One character's template: ink coverage with its mean removed, so a correlation with it
/// ignores the patch's brightness.
#[derive(Debug, Clone)]
pub(super) struct Template {
    pub values: Vec<f32>,
    pub norm: f32,
}

/// Templates are scored together: per pixel, one value per character (the last lanes empty),
/// so a single pass over a patch scores all 37 in vector registers.
pub(super) const LANES: usize = 40;
const _: () = assert!(ALPHABET.len() <= LANES);

/// All templates, in a box one character cell wide.
#[derive(Debug, Clone)]
pub(super) struct Templates {
    pub width: usize,
    pub height: usize,
    /// Where, from the box's top, the centre of a capital letter lies: lines are aligned on it.
    pub centre_y: f32,
    /// The cell pitch of the font at [`EM`], and the same per unit of font size.
    pub advance: f32,
    pub advance_per_em: f32,
    /// Capital height per unit of font size, for sizing zones from their glyph heights.
    pub cap_per_em: f32,
    /// Half the width of `<` per unit of font size, to place the first and last cell of a line
    /// whose fillers have merged into one blob.
    pub half_chevron_per_em: f32,
    pub glyphs: Vec<Template>,
    /// `glyphs`' values pixel by pixel, `LANES` per pixel.
    pub interleaved: Vec<f32>,
}

impl Templates {
    fn draw(font: &FontRef<'static>) -> Option<Self> {
        let scaled = font.as_scaled(PxScale::from(EM));
        let advance = scaled.h_advance(font.glyph_id('H'));
        let bounds = |c: char| {
            let glyph = font.glyph_id(c).with_scale_and_position(EM, point(0.0, 0.0));
            font.outline_glyph(glyph).map(|o| o.px_bounds())
        };
        let cap = bounds('H')?;
        let chevron = bounds('<')?;
        let cap_height = -cap.min.y;
        // Digits rise a little above capitals and `Q`, `J` dip below the baseline: margins keep
        // them whole. Rows a multiple of 4 wide vectorise without remainder.
        let width = (advance.round() as usize).next_multiple_of(4);
        let top = (cap_height * 1.18).ceil();
        let height = (top + cap_height * 0.14).ceil() as usize;
        let mut glyphs = Vec::with_capacity(ALPHABET.len());
        for &c in ALPHABET {
            let coverage = rasterise(font, char::from(c), width, height, top)?;
            glyphs.push(normalise(coverage));
        }
        let mut interleaved = vec![0f32; width * height * LANES];
        for (lane, glyph) in glyphs.iter().enumerate() {
            for (pixel, &value) in glyph.values.iter().enumerate() {
                interleaved[pixel * LANES + lane] = value;
            }
        }
        Some(Self {
            width,
            height,
            centre_y: top - cap_height / 2.0,
            advance,
            advance_per_em: advance / EM,
            cap_per_em: cap_height / EM,
            half_chevron_per_em: chevron.width() / 2.0 / EM,
            glyphs,
            interleaved,
        })
    }
}

/// The character's coverage (0–1) in a `width` × `height` box, its baseline `baseline` pixels
/// from the top, placed in its cell as the font places it.
fn rasterise(font: &FontRef<'static>, c: char, width: usize, height: usize, baseline: f32) -> Option<Vec<f32>> {
    let advance = font.as_scaled(PxScale::from(EM)).h_advance(font.glyph_id(c));
    let left = (width as f32 - advance) / 2.0;
    let glyph = font.glyph_id(c).with_scale_and_position(EM, point(left, baseline));
    let outline = font.outline_glyph(glyph)?;
    let bounds = outline.px_bounds();
    let mut coverage = vec![0f32; width * height];
    outline.draw(|x, y, c| {
        let (px, py) = (bounds.min.x as i64 + i64::from(x), bounds.min.y as i64 + i64::from(y));
        if (0..width as i64).contains(&px) && (0..height as i64).contains(&py) {
            coverage[py as usize * width + px as usize] = c.clamp(0.0, 1.0);
        }
    });
    Some(coverage)
}

fn normalise(coverage: Vec<f32>) -> Template {
    let mean = coverage.iter().sum::<f32>() / coverage.len().max(1) as f32;
    let values: Vec<f32> = coverage.into_iter().map(|v| v - mean).collect();
    let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
    Template { values, norm }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mrz_character_has_a_distinct_template() {
        let t = templates().expect("templates");
        assert_eq!(t.glyphs.len(), 37);
        assert_eq!(t.width, 24);
        assert!(ALPHABET.len() <= LANES);
        assert!(t.height > t.width);
        let name = |i: usize| char::from(ALPHABET[i]);
        for (i, a) in t.glyphs.iter().enumerate() {
            assert!(a.norm > 1.0, "{} is empty", name(i));
            for (j, b) in t.glyphs.iter().enumerate().skip(i + 1) {
                let similarity: f32 = a.values.iter().zip(&b.values).map(|(x, y)| x * y).sum::<f32>() / (a.norm * b.norm);
                assert!(similarity < 0.95, "{} and {} look alike: {similarity}", name(i), name(j));
            }
        }
    }

    #[test]
    fn glyphs_sit_inside_the_box() {
        let t = templates().expect("templates");
        for (i, g) in t.glyphs.iter().enumerate() {
            let max = g.values.iter().copied().fold(f32::MIN, f32::max);
            let edge_rows = [0, t.height - 1];
            for row in edge_rows {
                let line = &g.values[row * t.width..(row + 1) * t.width];
                assert!(line.iter().all(|&v| v < max * 0.5), "{} touches row {row}", char::from(ALPHABET[i]));
            }
        }
        assert!((0.55..0.6).contains(&t.advance_per_em), "{}", t.advance_per_em);
        assert!(t.centre_y > t.height as f32 * 0.35 && t.centre_y < t.height as f32 * 0.65);
    }
}
