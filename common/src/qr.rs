//! QR codes drawn as rectangles (the certificate's PDF, the two-factor enrolment's SVG): both
//! draw one rectangle per horizontal run of dark modules, far fewer shapes than one per module.

use qrcode::{Color, QrCode};

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
