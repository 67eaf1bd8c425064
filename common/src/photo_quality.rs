//! The quick look at a journey's photo as soon as it is uploaded: enough pixels, sharp, no burnt
//! out patch. What it finds are warnings the customer may ignore (`domain::journey::UploadWarning`);
//! the analysis decides later. The image is a client's file: it is decoded in a sandbox child
//! ([`QualityTask`]), like every client file, where the engine adds what it sees of faces and
//! sides.

use domain::journey::{JourneySide, UploadWarning};
use image::imageops::FilterType;
use image::GrayImage;
use serde::{Deserialize, Serialize};

/// A document photo whose longer side has fewer pixels than this cannot be read reliably (an ID
/// card's MRZ characters are then about 10 px high).
const MIN_DOCUMENT_LONG_SIDE: u32 = 1000;
/// A selfie needs less: the face is large in the frame.
const MIN_SELFIE_LONG_SIDE: u32 = 480;
/// The long side the sharpness and glare are measured at, whatever the photo's size, so the
/// thresholds mean the same for a 12 and a 48 megapixel phone.
const MEASURE_LONG_SIDE: u32 = 800;
/// Below this variance of the Laplacian (at [`MEASURE_LONG_SIDE`]) a document photo is blurred.
const MIN_DOCUMENT_SHARPNESS: f64 = 60.0;
/// Faces have fewer edges than print.
const MIN_SELFIE_SHARPNESS: f64 = 12.0;
/// A pixel this bright (0–255) is burnt out: the sensor clipped it (a white page or the MRZ
/// band of a card stays a few levels below).
const CLIPPED: u8 = 253;
/// A burnt-out patch inside the frame (not touching its edges, where a white table or a scan's
/// margin would be) covering this share of the photo is glare.
const MIN_GLARE_SHARE: f64 = 0.004;

/// The quick look at one photo, run in a sandbox child: the file is the photo's bytes. The child
/// answers with these pixel checks and the engine's own (`worker::analysis::quick_look`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct QualityTask {
    pub side: JourneySide,
    /// Whether the selfie is compared with the document's portrait: then it must show a face.
    pub face_match: bool,
}

impl crate::sandbox::Task for QualityTask {
    const NAME: &'static str = "photo-quality";
    /// The warnings, or why the bytes could not be looked at (then there is nothing to say).
    type Output = Result<Vec<UploadWarning>, String>;
}

/// The warnings for a photo of `side`, from its grey pixels.
pub fn look(side: JourneySide, grey: &GrayImage) -> Vec<UploadWarning> {
    let selfie = side == JourneySide::Selfie;
    let mut warnings = Vec::new();
    let long_side = grey.width().max(grey.height());
    if long_side < if selfie { MIN_SELFIE_LONG_SIDE } else { MIN_DOCUMENT_LONG_SIDE } {
        warnings.push(UploadWarning::LowResolution);
    }
    let measured = at_measure_size(grey);
    if sharpness(&measured) < if selfie { MIN_SELFIE_SHARPNESS } else { MIN_DOCUMENT_SHARPNESS } {
        warnings.push(UploadWarning::Blurry);
    }
    if !selfie && glare_share(&measured) >= MIN_GLARE_SHARE {
        warnings.push(UploadWarning::Glare);
    }
    warnings
}

fn at_measure_size(grey: &GrayImage) -> GrayImage {
    let (w, h) = grey.dimensions();
    let long_side = w.max(h).max(1);
    let scale = f64::from(MEASURE_LONG_SIDE) / f64::from(long_side);
    let (nw, nh) = (
        ((f64::from(w) * scale).round() as u32).max(1),
        ((f64::from(h) * scale).round() as u32).max(1),
    );
    image::imageops::resize(grey, nw, nh, FilterType::Triangle)
}

/// The variance of the 4-neighbour Laplacian: high where print and edges are crisp.
pub fn sharpness(grey: &GrayImage) -> f64 {
    let (w, h) = grey.dimensions();
    if w < 3 || h < 3 {
        return 0.0;
    }
    let px = |x: u32, y: u32| f64::from(grey.get_pixel(x, y).0[0]);
    let (mut sum, mut sum_sq, mut n) = (0.0, 0.0, 0.0);
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let l = px(x - 1, y) + px(x + 1, y) + px(x, y - 1) + px(x, y + 1) - 4.0 * px(x, y);
            sum += l;
            sum_sq += l * l;
            n += 1.0;
        }
    }
    let mean = sum / n;
    sum_sq / n - mean * mean
}

/// The share of the photo covered by its largest burnt-out patch that does not touch the edges.
pub fn glare_share(grey: &GrayImage) -> f64 {
    let (w, h) = (grey.width() as usize, grey.height() as usize);
    let clipped: Vec<bool> = grey.pixels().map(|p| p.0[0] >= CLIPPED).collect();
    let mut seen = vec![false; w * h];
    let mut largest = 0usize;
    let mut stack = Vec::new();
    for start in 0..w * h {
        if !clipped[start] || seen[start] {
            continue;
        }
        let (mut size, mut touches_edge) = (0usize, false);
        seen[start] = true;
        stack.push(start);
        while let Some(i) = stack.pop() {
            size += 1;
            let (x, y) = (i % w, i / w);
            touches_edge |= x == 0 || y == 0 || x == w - 1 || y == h - 1;
            let mut visit = |j: usize| {
                if clipped[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(i - 1);
            }
            if x + 1 < w {
                visit(i + 1);
            }
            if y > 0 {
                visit(i - w);
            }
            if y + 1 < h {
                visit(i + w);
            }
        }
        if !touches_edge {
            largest = largest.max(size);
        }
    }
    largest as f64 / (w * h).max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document;
    use std::path::Path;

    const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/samples/identite");

    fn sample(name: &str) -> GrayImage {
        let bytes = std::fs::read(Path::new(SAMPLES).join(name)).unwrap();
        let kind = document::sniff(&bytes).unwrap();
        document::decode_image_checked(kind, &bytes).unwrap().to_luma8()
    }

    /// Every sample of the shared set is a usable photo: none draws a warning. Blurred, shrunk and
    /// with a patch of light, the same photo draws each.
    #[test]
    fn usable_photos_pass_and_each_fault_is_told() {
        for name in [
            "sample-cni-td1-valide.png",
            "sample-passeport-td3-valide.jpg",
            "sample-id-td1-bel-expiree.jpg",
        ] {
            let grey = sample(name);
            let measured = at_measure_size(&grey);
            eprintln!(
                "{name}: {}×{}, sharpness {:.1}, glare {:.4}",
                grey.width(),
                grey.height(),
                sharpness(&measured),
                glare_share(&measured)
            );
            assert_eq!(look(JourneySide::Front, &grey), [], "{name}");

            let blurred = image::imageops::blur(&grey, 4.0);
            eprintln!("{name} blurred: sharpness {:.1}", sharpness(&at_measure_size(&blurred)));
            assert!(look(JourneySide::Front, &blurred).contains(&UploadWarning::Blurry), "{name}");

            let small = image::imageops::resize(&grey, 600, 600 * grey.height() / grey.width(), FilterType::Triangle);
            assert!(look(JourneySide::Front, &small).contains(&UploadWarning::LowResolution), "{name}");

            let mut lit = grey.clone();
            let (cx, cy, r) = (grey.width() / 2, grey.height() / 2, grey.width() / 12);
            for (x, y, p) in lit.enumerate_pixels_mut() {
                if (x as i64 - cx as i64).pow(2) + (y as i64 - cy as i64).pow(2) < (r as i64).pow(2) {
                    p.0[0] = 255;
                }
            }
            assert_eq!(look(JourneySide::Front, &lit), [UploadWarning::Glare], "{name}");
        }
    }

    /// The face-match test set's photos (cards photographed at an angle, selfies) are usable too.
    #[test]
    fn the_test_sets_photos_draw_no_warning() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/faces");
        for (dir, side) in [("cards", JourneySide::Front), ("selfies", JourneySide::Selfie)] {
            let mut entries: Vec<_> = std::fs::read_dir(root.join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
            entries.sort();
            for path in entries {
                let bytes = std::fs::read(&path).unwrap();
                let Some(kind) = document::sniff(&bytes) else { continue };
                let grey = document::decode_image_checked(kind, &bytes).unwrap().to_luma8();
                let measured = at_measure_size(&grey);
                eprintln!(
                    "{}: {}×{}, sharpness {:.1}, glare {:.4}",
                    path.display(),
                    grey.width(),
                    grey.height(),
                    sharpness(&measured),
                    glare_share(&measured)
                );
                assert_eq!(look(side, &grey), [], "{}", path.display());
            }
        }
    }

    #[test]
    fn a_white_margin_is_not_glare() {
        let mut scan = GrayImage::from_pixel(800, 500, image::Luma([255]));
        for (x, y, p) in scan.enumerate_pixels_mut() {
            if (100..700).contains(&x) && (100..400).contains(&y) {
                p.0[0] = if (x / 3 + y / 5) % 2 == 0 { 20 } else { 200 };
            }
        }
        assert_eq!(glare_share(&scan), 0.0);
    }
}
