//! DataMatrix location and decoding for 2D-Doc seals: in raster images (JPEG/PNG/WebP/TIFF, photos of
//! pages included) and in the images embedded in a PDF's first page.
//!
//! A code drawn with vector paths in a PDF is found by [`pdf::decode_in_pdf_rendered`], which renders the
//! page with poppler's pdftoppm ([`render`]) when the embedded images hold no code.
//! All work is bounded: images over [`MAX_PIXELS`] are refused, at most [`decode::MAX_ATTEMPTS`]
//! image variants are tried, a PDF contributes at most [`pdf::MAX_IMAGES`] images of its first page, and
//! a render is at most [`render::MAX_SIDE`] pixels on its longest side and killed at its timeout.

pub mod decode;
pub mod pdf;
pub mod render;

pub use decode::{decode_in_image, decode_in_image_until};
pub use pdf::decode_in_pdf;

use crate::analysis::orientation::Turn;

/// Largest image (in pixels) this module will look at.
pub const MAX_PIXELS: u64 = 40_000_000;

/// One decoded DataMatrix symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedCode {
    /// The payload exactly as encoded, with GS (0x1D), RS (0x1E) and US (0x1F) preserved.
    pub payload: Vec<u8>,
    /// How the symbol, and so the page that carries it, is turned in the image searched.
    pub turn: Turn,
}

/// Why a document could not be searched for DataMatrix codes.
#[derive(Debug, thiserror::Error)]
pub enum DatamatrixError {
    #[error("PDF could not be read: {0}")]
    Pdf(String),
    #[error("PDF has no page")]
    NoPage,
}

#[cfg(test)]
pub(crate) mod testutil {
    use image::{GrayImage, Luma, RgbImage};
    use rxing::{BarcodeFormat, Writer};

    /// A 2D-Doc-like payload with GS, RS and US separators.
    pub const PAYLOAD: &str = "DC03FR000001125E125E0110MONSIEUR/JEAN DUPONT\u{1d}22RUE DE LA PAIX\u{1d}2475002\u{1d}\
25PARIS\u{1e}1812345678\u{1d}\u{1f}ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRSTUVWXYZ2345";

    /// The symbol at `module` pixels per module, with a 4-module quiet zone, black on white.
    pub fn symbol(payload: &str, module: u32) -> GrayImage {
        let m = rxing::datamatrix::DataMatrixWriter
            .encode(payload, &BarcodeFormat::DATA_MATRIX, 0, 0)
            .expect("encode");
        let quiet = 4;
        let (w, h) = (m.width() + 2 * quiet, m.height() + 2 * quiet);
        GrayImage::from_fn(w * module, h * module, |x, y| {
            let (mx, my) = (x / module, y / module);
            let black = mx >= quiet && my >= quiet && mx < w - quiet && my < h - quiet && m.get(mx - quiet, my - quiet);
            Luma([if black { 0 } else { 255 }])
        })
    }

    /// A white page of `w`×`h` with the symbol pasted at (`x`, `y`) and a little grey text-like clutter.
    pub fn page(w: u32, h: u32, sym: &GrayImage, x: u32, y: u32) -> RgbImage {
        let mut p = RgbImage::from_pixel(w, h, image::Rgb([255, 255, 255]));
        for line in 0..12u32 {
            let yy = 100 + line * 40;
            for xx in (80..w.saturating_sub(80)).step_by(1) {
                if (xx / 9 + line) % 3 != 0 && yy + 12 < h {
                    for dy in 0..10 {
                        p.put_pixel(xx, yy + dy, image::Rgb([60, 60, 60]));
                    }
                }
            }
        }
        image::imageops::overlay(&mut p, &image::DynamicImage::ImageLuma8(sym.clone()).to_rgb8(), x.into(), y.into());
        p
    }
}

/// The reference samples (`shared/` sits beside the project, as on CI): every seal embedded as an
/// image is found, in the PDFs and in the photo of a page.
#[cfg(test)]
mod shared_samples {
    use super::{decode_in_image, decode_in_pdf, DecodedCode};

    const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/samples/administratif/");

    fn well_formed(codes: &[DecodedCode], header: &str) {
        assert_eq!(codes.len(), 1, "{codes:?}");
        let p = &codes[0].payload;
        assert!(p.starts_with(header.as_bytes()), "{}", String::from_utf8_lossy(p));
        let us = p.iter().position(|&b| b == 0x1f).expect("US separator");
        // P-256 signature: 64 bytes in unpadded Base32.
        assert_eq!(p.len() - us - 1, 103);
        assert!(p[us + 1..].iter().all(|b| b.is_ascii_uppercase() || (b'2'..=b'7').contains(b)));
    }

    #[test]
    fn samples_decode() {
        let photo = std::fs::read(format!("{DIR}sample-domicile-v03-photo.jpg"))
            .unwrap_or_else(|e| panic!("{DIR}: {e} (the reference data must sit beside the project)"));
        let img = image::load_from_memory(&photo).expect("photo");
        well_formed(&decode_in_image(&img), "DC03FR000001");
        for (file, header) in [
            ("sample-avis-impot-v04-rfr-modifie.pdf", "DC04FR000001"),
            ("sample-bulletin-v03-montant-different.pdf", "DC03FR000001"),
            ("sample-facture-v04.pdf", "DC04FR000001"),
            ("sample-facture-deux-pages.pdf", "DC04FR000001"),
        ] {
            let bytes = std::fs::read(format!("{DIR}{file}")).expect(file);
            well_formed(&decode_in_pdf(&bytes).expect(file), header);
        }
        let bytes = std::fs::read(format!("{DIR}sample-facture-sans-2ddoc.pdf")).expect("sans 2ddoc");
        assert!(decode_in_pdf(&bytes).expect("sans 2ddoc").is_empty());
    }
}
