//! What the engine reads off a page besides its codes: the visible text (a PDF's text layer, or OCR
//! of the pixels) and the forensic findings on the file. Failures here are logged without content and
//! leave the text unknown; they never fail the analysis.

use domain::vocabulary::Anomaly;
use image::imageops::FilterType;
use image::DynamicImage;
use std::borrow::Cow;

use super::file::{OpenedFile, PdfPage};
use crate::analysis::forensics;
use crate::analysis::orientation::Turn;
use crate::analysis::text::ocr::{Ocr, OcrError, MAX_SIDE};
use crate::analysis::text::{TextSource, VisibleText};

/// The page's visible text and where it comes from, `None` when it cannot be read. An image is
/// read straightened by `turn` when something on the page said how it is turned (its seal's
/// symbol), else OCR finds the orientation from the letters; a PDF's page is upright as its text
/// layer or renderer gives it. A PDF whose page is a photo of a document at an angle is read as
/// that photo straightened, without its short text layer.
pub fn visible_text(file: &OpenedFile<'_>, ocr: &Ocr, turn: Option<Turn>) -> Option<VisibleText> {
    let text = match (file.document(), turn, &file.pdf_page) {
        (Some(image), Some(turn), _) => ocr_text(ocr.image_text(&turn.straighten(image))),
        (Some(image), None, _) => ocr_text(ocr.image_text_any_turn(image)),
        (None, _, Some(page)) => pdf_text(page, ocr),
        (None, _, None) => None,
    };
    text.filter(|t| !t.text.trim().is_empty())
}

fn pdf_text(page: &PdfPage, ocr: &Ocr) -> Option<VisibleText> {
    let scanned = || ocr_text(ocr.image_text_any_turn(page.scan.as_ref()?));
    match (&page.text_layer, &page.scan) {
        (Some(text), None) => Some(VisibleText {
            text: text.clone(),
            source: TextSource::PdfTextLayer,
        }),
        // A short text layer (a card, a scan with a typed header) is kept beside the OCR of the page's image.
        (Some(layer), Some(_)) => with_text_layer(scanned(), layer.clone()),
        (None, _) => scanned(),
    }
}

/// The OCR'd text with the page's short text layer before it, or the text layer alone when OCR read nothing.
fn with_text_layer(scanned: Option<VisibleText>, layer: String) -> Option<VisibleText> {
    match scanned {
        Some(scanned) => Some(VisibleText {
            text: format!("{layer}\n{}", scanned.text),
            source: TextSource::Ocr,
        }),
        None => Some(VisibleText {
            text: layer,
            source: TextSource::PdfTextLayer,
        }),
    }
}

/// How a page the first OCR reading did not read well enough is read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecondLook {
    /// At the page's own size, with the English model beside the French: the first reading is
    /// brought down to the size its letters need and uses the French model alone, which confuses
    /// some capitals and digits of identifiers ("X4RTBPFW4" read "XARTBPFWA").
    OwnSize,
    /// Enlarged twice: small print on a low-resolution page (a 150 dpi scan, a photo taken from
    /// afar) loses narrow letters and digits at its own size ("10" read "0", "VF7" read "VE7").
    Enlarged,
}

impl SecondLook {
    /// The looks to take, in order, until the page shows its seal's values.
    pub const ALL: [SecondLook; 2] = [SecondLook::OwnSize, SecondLook::Enlarged];
}

/// The page read again by OCR as `look` says. Asked only when the first reading missed a value of
/// the seal, so a genuine page pays for it only when it needs it. `None` for a page with a text
/// layer, one too large to enlarge, or when OCR fails.
pub fn second_look(file: &OpenedFile<'_>, ocr: &Ocr, turn: Option<Turn>, look: SecondLook) -> Option<VisibleText> {
    let image = file.document().or_else(|| file.pdf_page.as_ref()?.scan.as_ref())?;
    let long_side = image.width().max(image.height());
    let factor = match look {
        SecondLook::OwnSize => 1.0,
        SecondLook::Enlarged => (f64::from(MAX_SIDE) / f64::from(long_side.max(1))).min(ENLARGEMENT),
    };
    if look == SecondLook::Enlarged && factor < MIN_ENLARGEMENT {
        return None;
    }
    let resize = |page| sized(page, look, factor);
    // Read at the size given: OCR would otherwise bring the letters back to the size the first
    // reading had.
    let text = match turn {
        Some(turn) => ocr_text(ocr.image_text_as_given(&resize(turn.straighten(image)), false)),
        None => ocr_text(ocr.image_text_as_given(&resize(Cow::Borrowed(image)), true)),
    };
    text.filter(|t| !t.text.trim().is_empty())
}

/// `page` as `look` reads it: as it is, or enlarged by `factor`.
fn sized(page: Cow<'_, DynamicImage>, look: SecondLook, factor: f64) -> Cow<'_, DynamicImage> {
    match look {
        SecondLook::OwnSize => page,
        SecondLook::Enlarged => {
            let scale = |side: u32| (f64::from(side) * factor).round() as u32;
            Cow::Owned(page.resize_exact(scale(page.width()), scale(page.height()), FilterType::Triangle))
        }
    }
}

/// How much [`SecondLook::Enlarged`] enlarges a page: twice gives 11-point print at 150 dpi the height
/// OCR reads best.
const ENLARGEMENT: f64 = 2.0;
/// Below this enlargement a closer look would read what the first did.
const MIN_ENLARGEMENT: f64 = 1.3;

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

/// The forensic anomalies of the file, judged on its pixels as sent (never on their straightened copy).
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
