//! The document's visible text: what a reader sees on the page, taken from a PDF's text layer or, for images and
//! PDFs without one, read by OCR. A seal's signed data are compared with it to catch a page edited after sealing.

pub mod normalise;
pub mod ocr;
pub mod pdf;
pub mod resolution;

pub use ocr::{Ocr, OcrError, OcrOptions};
pub use pdf::{first_page_text, PdfTextError};

/// Where the visible text came from: OCR text is noisy, so comparisons may tolerate small spelling slips in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextSource {
    PdfTextLayer,
    Ocr,
}

/// The text of the document's first page. Never logged: it is the holder's personal data.
#[derive(Clone, PartialEq, Eq)]
pub struct VisibleText {
    pub text: String,
    pub source: TextSource,
}

impl std::fmt::Debug for VisibleText {
    /// The text itself stays out of debug output, which ends up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VisibleText")
            .field("chars", &self.text.chars().count())
            .field("source", &self.source)
            .finish()
    }
}
