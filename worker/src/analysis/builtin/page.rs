//! What the engine reads off a page besides its codes: the visible text (a PDF's text layer, or OCR
//! of the pixels) and the forensic findings on the file. Failures here are logged without content and
//! leave the text unknown; they never fail the analysis.

use common::domain::Anomaly;

use super::file::OpenedFile;
use crate::analysis::datamatrix;
use crate::analysis::forensics;
use crate::analysis::orientation::Turn;
use crate::analysis::text::ocr::{Ocr, OcrError};
use crate::analysis::text::{pdf, TextSource, VisibleText};

/// Below this many letters a PDF's text layer is taken for a scan's and the page is read by OCR.
const MIN_TEXT_LAYER_LETTERS: usize = 40;

/// The page's visible text and where it comes from, `None` when it cannot be read. An image is
/// read straightened by `turn` when something on the page said how it is turned (its seal's
/// symbol), else OCR finds the orientation from the letters; a PDF's page is upright as its text
/// layer or renderer gives it.
pub fn visible_text(file: &OpenedFile<'_>, ocr: &Ocr, turn: Option<Turn>) -> Option<VisibleText> {
    let text = match (&file.image, turn) {
        (Some(image), Some(turn)) => ocr_text(ocr.image_text(&turn.straighten(image))),
        (Some(image), None) => ocr_text(ocr.image_text_any_turn(image)),
        (None, _) => pdf_text(file.bytes, ocr),
    };
    text.filter(|t| !t.text.trim().is_empty())
}

fn pdf_text(bytes: &[u8], ocr: &Ocr) -> Option<VisibleText> {
    match pdf::first_page_text(bytes) {
        Ok(text) if text.chars().filter(|c| c.is_alphabetic()).count() >= MIN_TEXT_LAYER_LETTERS => Some(VisibleText {
            text,
            source: TextSource::PdfTextLayer,
        }),
        Ok(_) => scanned_pdf_text(bytes, ocr),
        Err(error) => {
            tracing::warn!(%error, "the PDF text layer could not be read");
            scanned_pdf_text(bytes, ocr)
        }
    }
}

/// A scanned PDF: its largest page image is the page.
fn scanned_pdf_text(bytes: &[u8], ocr: &Ocr) -> Option<VisibleText> {
    let images = datamatrix::pdf::first_page_images(bytes).ok()?;
    let largest = images
        .iter()
        .max_by_key(|image| u64::from(image.width()) * u64::from(image.height()))?;
    ocr_text(ocr.image_text_any_turn(largest))
}

fn ocr_text(read: Result<String, OcrError>) -> Option<VisibleText> {
    match read {
        Ok(text) => Some(VisibleText {
            text,
            source: TextSource::Ocr,
        }),
        Err(error) => {
            tracing::warn!(%error, "the page could not be read by OCR");
            None
        }
    }
}

/// The forensic anomalies of the file.
pub fn forensic_findings(file: &OpenedFile<'_>) -> Vec<Anomaly> {
    match &file.image {
        Some(image) => forensics::inspect_image(file.kind, file.bytes, image),
        None => match forensics::inspect_pdf(file.bytes) {
            Ok(inspection) => inspection.anomalies,
            Err(error) => {
                tracing::warn!(%error, "the PDF could not be inspected");
                Vec::new()
            }
        },
    }
}
