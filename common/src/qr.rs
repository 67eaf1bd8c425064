//! QR codes drawn as rectangles (the certificate's PDF, the two-factor enrolment's SVG): both
//! draw one rectangle per horizontal run of dark modules, far fewer shapes than one per module.

use qrcode::{Color, EcLevel, QrCode};

/// White modules around the code, as the standard asks, so a reader finds its edges.
pub const QUIET_ZONE: usize = 4;

/// The QR code of `data` as an inline `<svg>` element, `module_px` CSS pixels a module; `None`
/// when `data` is too long for a QR code. Nothing of `data` appears in it as text: it is made only
/// of fixed markup and numbers, so it can be written into a page unescaped, carries no script, and
/// needs no `style` attribute a strict CSP would refuse.
pub fn svg(data: &str, module_px: usize) -> Option<String> {
    // Level M survives a glare or a smudged screen while keeping modules large enough to scan.
    let code = QrCode::with_error_correction_level(data.as_bytes(), EcLevel::M).ok()?;
    let side = code.width() + 2 * QUIET_ZONE;
    let mut path = String::new();
    for run in dark_runs(&code) {
        let (x, y, len) = (run.start + QUIET_ZONE, run.row + QUIET_ZONE, run.len);
        path.push_str(&format!("M{x} {y}h{len}v1h-{len}z"));
    }
    let px = side * module_px;
    Some(format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {side} {side}" width="{px}" height="{px}" shape-rendering="crispEdges"><rect width="{side}" height="{side}" fill="#fff"/><path fill="#000" d="{path}"/></svg>"##
    ))
}

/// A horizontal run of dark modules: its row, first column and length, in modules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub row: usize,
    pub start: usize,
    pub len: usize,
}

/// The code's dark runs, row by row, left to right.
pub fn dark_runs(code: &QrCode) -> Vec<Run> {
    let width = code.width();
    let mut runs = Vec::new();
    for (row, line) in code.to_colors().chunks(width).enumerate() {
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
            runs.push(Run {
                row,
                start,
                len: col - start,
            });
        }
    }
    runs
}
