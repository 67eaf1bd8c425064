//! Opening one submitted file for analysis: its kind from its bytes (never from a client's claim),
//! whether the category accepts it, its page count, and its pixels decoded within the limits, with
//! the document straightened when it was photographed at an angle (an image, or the photo a PDF
//! holds as its page); a PDF's first page read once for its text layer and, for a scan, its image.

use common::document::{decode_image_checked, page_count, sniff, DocumentError, FileKind};
use domain::vocabulary::DocumentCategory;
use image::DynamicImage;

use crate::analysis::datamatrix;
use crate::analysis::engine::EngineError;
use crate::analysis::perspective;
use crate::analysis::text::pdf;

/// A file the engine can look at.
pub struct OpenedFile<'a> {
    pub kind: FileKind,
    pub bytes: &'a [u8],
    pub pages: u32,
    /// The decoded pixels of an image file, as sent: what the forensic checks judge. `None` for a PDF.
    pub image: Option<DynamicImage>,
    /// A PDF's page: its text layer and, when the page is a scan, its image. `None` for an image.
    pub pdf_page: Option<PdfPage>,
    /// The document in `image` (or in a PDF's scan) straightened, when it was photographed at an
    /// angle on a table (see `perspective`); `None` when it fills the frame or stands upright already.
    pub straightened: Option<DynamicImage>,
}

impl OpenedFile<'_> {
    /// The pixels the readers (MRZ, seal, OCR) read: the document straightened when it had to be,
    /// else the image as sent; `None` for a PDF, unless its page is a photo of a document at an
    /// angle, then read as that photo straightened.
    pub fn document(&self) -> Option<&DynamicImage> {
        self.straightened.as_ref().or(self.image.as_ref())
    }
}

/// Checks the file's kind against the category and its page count, then decodes an image for real.
pub fn open(category: DocumentCategory, bytes: &[u8]) -> Result<OpenedFile<'_>, EngineError> {
    let kind = recognised_kind(bytes)?;
    if !kind.allowed_for(category) {
        return Err(EngineError::Unsupported(format!(
            "{} files are not accepted for {} documents",
            kind.as_str().to_uppercase(),
            category_label(category)
        )));
    }
    let pages = page_count(kind, bytes).map_err(engine_error)?;
    if pages > 1 {
        return Err(EngineError::Unsupported(format!(
            "the file has {pages} pages, and only single-page documents are analysed"
        )));
    }
    let (image, pdf_page) = if kind.is_image() {
        (Some(decode_image_checked(kind, bytes).map_err(engine_error)?), None)
    } else {
        (None, Some(read_pdf_page(bytes)))
    };
    let photo = image.as_ref().or(pdf_page.as_ref().and_then(|page| page.scan.as_ref()));
    let straightened = photo.and_then(perspective::straighten);
    Ok(OpenedFile {
        kind,
        bytes,
        pages,
        image,
        pdf_page,
        straightened,
    })
}

fn recognised_kind(bytes: &[u8]) -> Result<FileKind, EngineError> {
    if bytes.is_empty() {
        return Err(EngineError::Unreadable("the document is empty".to_owned()));
    }
    sniff(bytes).ok_or_else(|| EngineError::Unsupported("the file is not a JPEG, PNG, WebP, PDF or TIFF document".to_owned()))
}

fn category_label(category: DocumentCategory) -> &'static str {
    match category {
        DocumentCategory::Identite => "identity",
        DocumentCategory::Administratif => "administrative",
    }
}

/// Bytes that do not decode are the document's fault; files beyond the limits are unsupported.
fn engine_error(error: DocumentError) -> EngineError {
    let message = error.to_string();
    match error {
        DocumentError::InvalidBase64 | DocumentError::Empty | DocumentError::Unreadable(_) => EngineError::Unreadable(message),
        DocumentError::TooLarge(_) | DocumentError::Unsupported(_) => EngineError::Unsupported(message),
    }
}

/// Below this many letters a PDF's text layer is taken for a scan's and the page is read by OCR.
const MIN_TEXT_LAYER_LETTERS: usize = 40;

/// A PDF's first page as the readers take it: its text layer and, when that is too short for the
/// page to be anything but a scan (a photo or a scanner's image with at most a typed header), the
/// page's largest image, decoded once for every reader.
pub struct PdfPage {
    /// The text layer; `None` when it could not be read (logged).
    pub(super) text_layer: Option<String>,
    /// The largest image, for a scanned page.
    pub scan: Option<DynamicImage>,
}

/// Reads the text layer of the PDF `bytes` and, for a scan, its image.
fn read_pdf_page(bytes: &[u8]) -> PdfPage {
    let text_layer = match pdf::first_page_text(bytes) {
        Ok(text) => Some(text),
        Err(error) => {
            tracing::warn!(%error, "the PDF text layer could not be read");
            None
        }
    };
    let scanned = text_layer
        .as_ref()
        .is_none_or(|text| text.chars().filter(|c| c.is_alphabetic()).count() < MIN_TEXT_LAYER_LETTERS);
    PdfPage {
        scan: if scanned { largest_scanned_image(bytes) } else { None },
        text_layer,
    }
}

/// The largest image of a PDF's first page, the page itself when the PDF is a scan.
fn largest_scanned_image(bytes: &[u8]) -> Option<DynamicImage> {
    let images = datamatrix::pdf::first_page_images(bytes).ok()?;
    images
        .into_iter()
        .max_by_key(|image| u64::from(image.width()) * u64::from(image.height()))
}
