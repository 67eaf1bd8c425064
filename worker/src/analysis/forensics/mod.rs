//! File and image forensics: what the file itself says about how it was made and whether its
//! pixels can carry the other checks, so a retouched, rewritten or unusable file is reported even
//! when its content looks right.
//!
//! Images are measured (size, blur, burnt-out areas) and their metadata (EXIF `Software`, XMP
//! packets) searched for editing software; PDFs have their Info dictionary, XMP metadata and
//! revision history read. Every finding is an anomaly of the catalogue; messages never quote the
//! file (the software names found are kept only in [`PdfInspection`], for the certificate and logs).

mod image_quality;
mod metadata;
mod pdf;
mod software;
#[cfg(test)]
mod tests;

use common::document::FileKind;
use domain::vocabulary::{Anomaly, AnomalyCode};
use image::DynamicImage;

pub use image_quality::{unusable, ImageMeasures, Thresholds, Unusable, THRESHOLDS};
pub use pdf::{parse_pdf_date, PdfInspection};

/// Why a PDF could not be inspected. Messages are one sentence and never quote the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForensicsError {
    #[error("the PDF is corrupt, encrypted or not a PDF")]
    UnreadablePdf,
}

/// Findings on an image file: `bytes` are the raw file, `image` its decoded pixels (already decoded
/// within limits by `common::document::decode_image_checked`).
pub fn inspect_image(kind: FileKind, bytes: &[u8], image: &DynamicImage) -> Vec<Anomaly> {
    let measures = image_quality::measure(image);
    let mut codes = measures.findings(&THRESHOLDS);
    let software = metadata::image_software(kind, bytes);
    if software.iter().any(|name| software::is_image_editor(name)) {
        codes.push(AnomalyCode::EditedWithSoftware);
    }
    anomalies(&codes)
}

/// Findings on a PDF, with the facts kept for the certificate and logs.
pub fn inspect_pdf(bytes: &[u8]) -> Result<PdfInspection, ForensicsError> {
    pdf::inspect(bytes)
}

/// The catalogue's anomalies for `codes`, each once, in order.
fn anomalies(codes: &[AnomalyCode]) -> Vec<Anomaly> {
    let mut out: Vec<Anomaly> = Vec::with_capacity(codes.len());
    for code in codes {
        if out.iter().any(|a| a.code == *code) {
            continue;
        }
        out.push(Anomaly::new(*code));
    }
    out
}
