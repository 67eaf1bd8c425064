//! Reading the machine-readable zone of an identity document from pixels, so the text layer of
//! [`super`] has lines to parse from a photo or scan of a card or passport page.
//!
//! MRZs are printed in OCR-B at a fixed pitch, which makes template matching both simpler and
//! more exact than a general OCR engine (which mistakes fillers `<` for `K`). The steps:
//! binarise ([`binarise`]), find blobs ([`components`]), estimate the skew and chain blobs into
//! lines, group lines into candidate zones of 2 or 3 ([`lines`]), cut each line into 30, 36 or
//! 44 cells as its layout allows ([`segment`]), and name each cell by the OCR-B template that
//! correlates best with it ([`matcher`], [`glyphs`]). Among candidate zones and layouts, the one
//! whose cells match best wins.
//!
//! Work is bounded: large images are shrunk to 2000 px on their long side before any search,
//! and at most a few candidate zones are read.

// The OCR's resolution (`text::resolution`) measures a page's letters with the same blobs of ink.
pub(crate) mod binarise;
pub(crate) mod components;
mod glyphs;
mod lines;
mod matcher;
mod segment;

#[cfg(test)]
mod corpus;

use image::{DynamicImage, GrayImage};

use binarise::Ink;
use glyphs::Templates;

/// The lines of a zone read from an image.
#[derive(Debug, Clone, PartialEq)]
pub struct ZoneRead {
    /// Top to bottom, each as long as its layout's lines (30, 36 or 44 characters).
    pub lines: Vec<String>,
    /// Mean match score 0..1 over the zone's cells (normalised correlation with the OCR-B
    /// templates): 0.95 and more for clean prints, 0.83 to 0.9 for poor photos. Zones scoring
    /// under 0.76 are not returned.
    pub confidence: f32,
}

/// Why no zone was read. Messages describe the image, never the document's contents.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("no machine-readable zone found: {0}")]
    NoZone(String),
    #[error("image of {width}×{height} px is too small to hold a machine-readable zone")]
    TooSmall { width: u32, height: u32 },
    #[error("image of {pixels} px is too large to search for a machine-readable zone (limit {limit})", limit = binarise::MAX_PIXELS)]
    TooLarge { pixels: u64 },
    #[error("the embedded OCR-B font could not be loaded")]
    Font,
}

/// A zone whose cells match worse than this on average is some other text, or too damaged to
/// trust: degraded zones that read exactly score 0.83 and more, lines of OCR-B lower case about
/// 0.7. No zone is better than a wrong one, which would make the text layer report anomalies
/// the document does not have.
const ACCEPTED: f32 = 0.76;
/// A zone matching this well ends the search: no other candidate will do better.
const CONVINCING: f32 = 0.85;

/// Finds and reads the MRZ in `image` (a card's front or back, a passport data page).
///
/// # Errors
/// [`ReadError::NoZone`] when no group of lines reads as an MRZ; [`ReadError::TooSmall`] and
/// [`ReadError::TooLarge`] for images outside the sizes searched.
pub fn read_zone(image: &DynamicImage) -> Result<ZoneRead, ReadError> {
    let templates = glyphs::templates().ok_or(ReadError::Font)?;
    let gray = binarise::prepare(image)?;
    let mut best: Option<ZoneRead> = None;
    let mut candidates = 0;
    for threshold in [binarise::adaptive, binarise::otsu] {
        let ink = threshold(&gray);
        if let Some(read) = best_zone(&gray, &ink, templates, &mut candidates) {
            if best.as_ref().is_none_or(|b| read.confidence > b.confidence) {
                best = Some(read);
            }
        }
        if best.as_ref().is_some_and(|b| b.confidence >= CONVINCING) {
            break;
        }
    }
    match best {
        Some(read) if read.confidence >= ACCEPTED => Ok(read),
        Some(read) => Err(ReadError::NoZone(format!(
            "the closest candidate matches the OCR-B characters poorly (score {:.2})",
            read.confidence
        ))),
        None if candidates == 0 => Err(ReadError::NoZone("no group of 2 or 3 long, aligned text lines".into())),
        None => Err(ReadError::NoZone(
            "no group of text lines has the character spacing of an MRZ layout".into(),
        )),
    }
}

/// The best-matching reading among the candidate zones found on `ink`; counts the candidates.
fn best_zone(gray: &GrayImage, ink: &Ink, templates: &Templates, candidates: &mut usize) -> Option<ZoneRead> {
    let blobs = components::blobs(ink);
    let page_height = ink.height as f32;
    let frame = lines::Frame::new(lines::skew(&blobs, page_height));
    let runs = lines::runs(&blobs, frame, page_height);
    let mut best: Option<ZoneRead> = None;
    for zone in lines::zones(&runs, frame) {
        *candidates += 1;
        for &cells in zone.layouts() {
            let Some(layout) = segment::layout(&zone, cells, templates) else {
                continue;
            };
            let read = read_layout(gray, &layout, templates);
            if best.as_ref().is_none_or(|b| read.confidence > b.confidence) {
                best = Some(read);
            }
        }
        if best.as_ref().is_some_and(|b| b.confidence >= CONVINCING) {
            break;
        }
    }
    best
}

/// Reads `layout` at the font size its print matches best.
fn read_layout(gray: &GrayImage, layout: &segment::Layout, templates: &Templates) -> ZoneRead {
    let em = layout.em * best_size(gray, layout, templates);
    let mut lines = Vec::with_capacity(layout.lines.len());
    let mut scores = Vec::new();
    for line in &layout.lines {
        let strip = segment::strip(gray, layout, line, em, templates);
        let read = matcher::read_line(&strip, templates);
        lines.push(read.text);
        scores.extend(read.scores);
    }
    let confidence = scores.iter().sum::<f32>() / scores.len().max(1) as f32;
    ZoneRead { lines, confidence }
}

/// Font sizes tried, relative to the one the pitch implies: printers do not all space OCR-B at
/// its natural advance, and a size off by 5 % is enough to read `O` as `0`.
const SIZES: [f32; 5] = [0.92, 0.96, 1.0, 1.04, 1.08];

/// The factor on `layout.em` whose resampling the templates match best: the best of [`SIZES`],
/// refined between its neighbours by a parabola through the three scores.
fn best_size(gray: &GrayImage, layout: &segment::Layout, templates: &Templates) -> f32 {
    let scores: Vec<f32> = SIZES
        .iter()
        .map(|&factor| {
            let em = layout.em * factor;
            let total: f32 = layout
                .lines
                .iter()
                .map(|line| matcher::probe(&segment::strip(gray, layout, line, em, templates), templates))
                .sum();
            total / layout.lines.len().max(1) as f32
        })
        .collect();
    let best = (0..SIZES.len()).fold(0, |b, i| if scores[i] > scores[b] { i } else { b });
    if best == 0 || best == SIZES.len() - 1 {
        return SIZES[best];
    }
    let (before, at, after) = (scores[best - 1], scores[best], scores[best + 1]);
    let curvature = before - 2.0 * at + after;
    let step = SIZES[best + 1] - SIZES[best];
    if curvature >= 0.0 {
        return SIZES[best];
    }
    SIZES[best] + step * ((before - after) / (2.0 * curvature)).clamp(-0.5, 0.5)
}

#[cfg(test)]
mod tests {
    use image::{DynamicImage, GrayImage, Luma, Rgb, RgbImage, RgbaImage};

    use super::*;

    /// Deterministic grey noise.
    fn noise(w: u32, h: u32) -> GrayImage {
        let mut seed = 0x9E37_79B9u32;
        GrayImage::from_fn(w, h, |_, _| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            Luma([(seed >> 24) as u8])
        })
    }

    /// Text-like bars: many short dark marks in rows, as a page of prose.
    fn prose(w: u32, h: u32) -> GrayImage {
        GrayImage::from_fn(w, h, |x, y| {
            let in_line = (y % 40) < 18;
            let in_word = (x / 14) % 7 != 6 && (x % 14) < 10;
            Luma([if in_line && in_word && y > 40 { 30 } else { 235 }])
        })
    }

    /// A regular grid of dots: tens of thousands of glyph-sized blobs in long, even rows.
    fn dots(w: u32, h: u32) -> GrayImage {
        GrayImage::from_fn(w, h, |x, y| Luma([if x % 12 < 6 && y % 12 < 6 { 20 } else { 230 }]))
    }

    #[test]
    fn odd_images_are_errors_not_panics() {
        let images = [
            DynamicImage::new_luma8(1, 1),
            DynamicImage::new_rgb8(0, 0),
            DynamicImage::new_luma8(59, 59),
            DynamicImage::ImageLuma8(GrayImage::from_pixel(800, 500, Luma([255]))),
            DynamicImage::ImageLuma8(GrayImage::from_pixel(800, 500, Luma([0]))),
            DynamicImage::ImageRgb8(RgbImage::from_pixel(3000, 2000, Rgb([120, 30, 200]))),
            DynamicImage::ImageRgba8(RgbaImage::new(640, 480)),
            DynamicImage::ImageLuma8(noise(1200, 900)),
            DynamicImage::ImageLuma8(noise(10_000, 30)),
            DynamicImage::ImageLuma8(noise(40, 6_000)),
            DynamicImage::ImageLuma8(prose(1400, 1000)),
            DynamicImage::ImageLuma8(dots(2000, 1500)),
        ];
        for image in &images {
            let outcome = read_zone(image);
            assert!(outcome.is_err(), "{}×{}: {outcome:?}", image.width(), image.height());
        }
    }

    #[test]
    fn errors_do_not_quote_contents() {
        let err = read_zone(&DynamicImage::ImageLuma8(prose(1400, 1000))).expect_err("no zone");
        assert!(matches!(err, ReadError::NoZone(_)), "{err}");
        assert!(err.to_string().starts_with("no machine-readable zone found"), "{err}");
        let small = read_zone(&DynamicImage::new_luma8(10, 10)).expect_err("too small");
        assert_eq!(small.to_string(), "image of 10×10 px is too small to hold a machine-readable zone");
    }
}
