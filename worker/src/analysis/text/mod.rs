//! The document's visible text (PDF text layer or OCR), so the seal's data can be compared with what a reader sees.

pub mod normalise;
pub mod ocr;
pub mod pdf;
