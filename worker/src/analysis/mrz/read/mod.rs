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

mod binarise;
mod components;
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
    /// templates): above 0.9 for clean prints, around 0.7 for poor photos.
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

/// A zone whose cells match worse than this on average is some other text.
const ACCEPTED: f32 = 0.6;
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
        None => Err(ReadError::NoZone("no group of text lines has the character spacing of an MRZ layout".into())),
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
            let Some(layout) = segment::layout(&zone, cells, templates) else { continue };
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

fn read_layout(gray: &GrayImage, layout: &segment::Layout, templates: &Templates) -> ZoneRead {
    let mut lines = Vec::with_capacity(layout.lines.len());
    let mut scores = Vec::new();
    for line in &layout.lines {
        let strip = segment::strip(gray, layout, line, templates);
        let read = matcher::read_line(&strip, templates);
        lines.push(read.text);
        scores.extend(read.scores);
    }
    let confidence = scores.iter().sum::<f32>() / scores.len().max(1) as f32;
    ZoneRead { lines, confidence }
}
