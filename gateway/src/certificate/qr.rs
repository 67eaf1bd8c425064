//! The QR code of the authenticity link, drawn as vector squares so it stays sharp at any zoom and
//! costs no image encoder.

use super::CertificateError;
use lopdf::content::Operation;
use qrcode::{EcLevel, QrCode};

/// Drawing operations of the QR code of `data` in the square of side `size` whose top-left corner
/// is (`left`, `top`) in PDF points. The caller leaves a white margin (the quiet zone) around it.
pub fn operations(data: &str, left: f32, top: f32, size: f32) -> Result<Vec<Operation>, CertificateError> {
    // Level M survives a crease or a stain on a printed page while keeping modules large.
    let code = QrCode::with_error_correction_level(data.as_bytes(), EcLevel::M).map_err(|e| CertificateError(format!("QR code: {e}")))?;
    let width = code.width();
    let module = size / width as f32;
    let mut ops = vec![Operation::new("q", vec![]), Operation::new("g", vec![0.into()])];
    for run in common::qr::dark_runs(&code) {
        let x = left + run.start as f32 * module;
        let y = top - (run.row + 1) as f32 * module;
        ops.push(Operation::new(
            "re",
            vec![x.into(), y.into(), (run.len as f32 * module).into(), module.into()],
        ));
    }
    ops.push(Operation::new("f", vec![]));
    ops.push(Operation::new("Q", vec![]));
    Ok(ops)
}
