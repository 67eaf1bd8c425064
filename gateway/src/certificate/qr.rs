//! The QR code of the authenticity link, drawn as vector squares so it stays sharp at any zoom and
//! costs no image encoder.

use super::CertificateError;
use lopdf::content::Operation;
use qrcode::{Color, EcLevel, QrCode};

/// Drawing operations of the QR code of `data` in the square of side `size` whose top-left corner
/// is (`left`, `top`) in PDF points. The caller leaves a white margin (the quiet zone) around it.
pub fn operations(data: &str, left: f32, top: f32, size: f32) -> Result<Vec<Operation>, CertificateError> {
    // Level M survives a crease or a stain on a printed page while keeping modules large.
    let code = QrCode::with_error_correction_level(data.as_bytes(), EcLevel::M).map_err(|e| CertificateError(format!("QR code: {e}")))?;
    let width = code.width();
    let module = size / width as f32;
    let colors = code.to_colors();
    let mut ops = vec![Operation::new("q", vec![]), Operation::new("g", vec![0.into()])];
    for (row, line) in colors.chunks(width).enumerate() {
        // One rectangle per run of dark modules: far fewer operations than one per module.
        let mut col = 0;
        while col < width {
            if line[col] != Color::Dark {
                col += 1;
                continue;
            }
            let start = col;
            while col < width && line[col] == Color::Dark {
                col += 1;
            }
            let x = left + start as f32 * module;
            let y = top - (row + 1) as f32 * module;
            ops.push(Operation::new(
                "re",
                vec![x.into(), y.into(), ((col - start) as f32 * module).into(), module.into()],
            ));
        }
    }
    ops.push(Operation::new("f", vec![]));
    ops.push(Operation::new("Q", vec![]));
    Ok(ops)
}
