//! Finding and decoding DataMatrix symbols in a raster image, with a bounded list of retries on
//! transformed versions (rescaled, binarised, sharpened, slightly rotated) for photos of pages.

use std::collections::HashSet;

use image::{imageops, DynamicImage, GrayImage, Luma};
use rxing::common::HybridBinarizer;
use rxing::datamatrix::DataMatrixReader;
use rxing::{BarcodeFormat, BinaryBitmap, DecodeHints, Luma8LuminanceSource, Reader};

use super::{DecodedCode, MAX_PIXELS};
use crate::analysis::grey;
use crate::analysis::orientation::Turn;

/// At most this many image variants are handed to the reader.
pub const MAX_ATTEMPTS: usize = 10;
/// At most this many symbols are read from one image.
pub const MAX_CODES: usize = 4;
/// Longest side of the working image; larger inputs are downscaled first.
const MAX_SIDE: u32 = 3000;
/// Below this longest side an extra ×2 upscaled variant is tried.
const SMALL_SIDE: u32 = 1000;

/// Every DataMatrix symbol found in `img` (empty if none, or if the image exceeds [`MAX_PIXELS`]).
pub fn decode_in_image(img: &DynamicImage) -> Vec<DecodedCode> {
    decode_in_image_until(img, |_| false)
}

/// The DataMatrix symbols found in `img`, as [`decode_in_image`], up to the first one `wanted`
/// accepts, which ends the list: once a page's seal is read, the image is not searched again for
/// more symbols (another pass of the reader over the whole image, a third of the search on a
/// photographed page: 42 -> 28 ms).
pub fn decode_in_image_until(img: &DynamicImage, wanted: impl Fn(&DecodedCode) -> bool) -> Vec<DecodedCode> {
    let Some(base) = working_image(img) else {
        return Vec::new();
    };

    let mut attempts = 0usize;
    let mut try_variant = |v: &GrayImage| -> Vec<DecodedCode> {
        if attempts >= MAX_ATTEMPTS {
            return Vec::new();
        }
        attempts += 1;
        read_all(v, &wanted)
    };

    let found = try_variant(&base);
    if !found.is_empty() {
        return found;
    }
    let long = base.width().max(base.height());
    if long > 1600 {
        let found = try_variant(&scale_to_side(&base, long / 2));
        if !found.is_empty() {
            return found;
        }
    }
    if long < SMALL_SIDE {
        let found = try_variant(&imageops::resize(
            &base,
            base.width() * 2,
            base.height() * 2,
            imageops::FilterType::Triangle,
        ));
        if !found.is_empty() {
            return found;
        }
    }
    let binarised = binarise(&base);
    let found = try_variant(&binarised);
    if !found.is_empty() {
        return found;
    }
    // Out-of-focus photos: sharpen, then also binarise the sharpened image.
    let sharpened = imageops::unsharpen(&base, 2.0, 0);
    let found = try_variant(&sharpened);
    if !found.is_empty() {
        return found;
    }
    let found = try_variant(&binarise(&sharpened));
    if !found.is_empty() {
        return found;
    }
    // The detector copes with any rotation of a clean symbol; resampling helps a degraded one.
    for deg in [3.0f32, -3.0, 6.0, -6.0] {
        let found = try_variant(&rotate(&base, deg));
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// Every DataMatrix symbol of a page rendered from a PDF. A render is sharp, straight and evenly lit, so
/// the retries meant for photos (binarising, sharpening, turning) cannot find what the page as it is and
/// its half-size copy do not; skipping them halves the cost of a PDF that carries no seal.
pub fn decode_in_render(img: &DynamicImage) -> Vec<DecodedCode> {
    let Some(base) = working_image(img) else {
        return Vec::new();
    };
    let found = read_all(&base, &|_| false);
    let long = base.width().max(base.height());
    if found.is_empty() && long > 1600 {
        return read_all(&scale_to_side(&base, long / 2), &|_| false);
    }
    found
}

/// `img` in grey on white, at most [`MAX_SIDE`] on its longest side; `None` (logged) when it is empty or
/// larger than [`MAX_PIXELS`].
fn working_image(img: &DynamicImage) -> Option<GrayImage> {
    let (w, h) = (img.width(), img.height());
    if w == 0 || h == 0 || u64::from(w) * u64::from(h) > MAX_PIXELS {
        tracing::warn!(width = w, height = h, "image refused for DataMatrix search");
        return None;
    }
    let base = to_luma_on_white(img);
    if base.width().max(base.height()) > MAX_SIDE {
        return Some(scale_to_side(&base, MAX_SIDE));
    }
    Some(base)
}

/// Reads up to [`MAX_CODES`] symbols: after each hit, its area is painted white and the reader runs again,
/// unless the symbol is the one `wanted`.
fn read_all(img: &GrayImage, wanted: &dyn Fn(&DecodedCode) -> bool) -> Vec<DecodedCode> {
    let mut work = img.clone();
    let mut out: Vec<DecodedCode> = Vec::new();
    let mut seen = HashSet::new();
    for _ in 0..MAX_CODES {
        let Some((payload, points)) = read_one(&work) else { break };
        if seen.insert(payload.clone()) {
            let code = DecodedCode {
                payload,
                turn: turn_of(&points),
            };
            let enough = wanted(&code);
            out.push(code);
            if enough {
                break;
            }
        }
        if !blank_region(&mut work, &points) {
            break;
        }
    }
    out
}

/// A payload and the corners of its symbol, in the image's coordinates.
type Hit = (Vec<u8>, Vec<(f32, f32)>);

fn read_one(img: &GrayImage) -> Option<Hit> {
    let source = Luma8LuminanceSource::new(img.as_raw().clone(), img.width(), img.height()).ok()?;
    let mut bitmap = BinaryBitmap::new(HybridBinarizer::new(source));
    let hints = DecodeHints {
        TryHarder: Some(true),
        PureBarcode: Some(false),
        PossibleFormats: Some(HashSet::from([BarcodeFormat::DATA_MATRIX])),
        ..DecodeHints::default()
    };
    let result = DataMatrixReader.decode_with_hints(&mut bitmap, &hints).ok()?;
    let points = result.getPoints().iter().map(|p| (p.x, p.y)).collect();
    Some((text_to_bytes(result.getText()), points))
}

/// The reader gives the symbol's corners clockwise from its top-left one, as the symbol reads:
/// its top edge, from the first corner to the second, is a left-to-right line of the page.
fn turn_of(points: &[(f32, f32)]) -> Turn {
    match points {
        [top_left, top_right, ..] => Turn::of_baseline(*top_left, *top_right),
        _ => Turn::Upright,
    }
}

/// The decoder yields text: code points up to 0xFF are the encoded bytes (ASCII and Latin-1);
/// anything beyond can only come from a charset-converted segment and is kept as UTF-8.
fn text_to_bytes(text: &str) -> Vec<u8> {
    if text.chars().all(|c| u32::from(c) <= 0xFF) {
        text.chars().map(|c| u32::from(c) as u8).collect()
    } else {
        text.as_bytes().to_vec()
    }
}

/// Paints the bounding box of `points` (grown by a quarter on each side) white; false if it is empty.
fn blank_region(img: &mut GrayImage, points: &[(f32, f32)]) -> bool {
    if points.is_empty() {
        return false;
    }
    let (mut x0, mut y0, mut x1, mut y1) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        y0 = y0.min(y);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    let (mx, my) = ((x1 - x0) * 0.25 + 4.0, (y1 - y0) * 0.25 + 4.0);
    let clamp = |v: f32, max: u32| v.max(0.0).min(max as f32) as u32;
    let (ax, ay) = (clamp(x0 - mx, img.width()), clamp(y0 - my, img.height()));
    let (bx, by) = (clamp(x1 + mx, img.width()), clamp(y1 + my, img.height()));
    if ax >= bx || ay >= by {
        return false;
    }
    for y in ay..by {
        for x in ax..bx {
            img.put_pixel(x, y, Luma([255]));
        }
    }
    true
}

/// Grey levels, with any transparency composited onto white.
fn to_luma_on_white(img: &DynamicImage) -> GrayImage {
    if img.color().has_alpha() {
        let la = img.to_luma_alpha8();
        GrayImage::from_fn(la.width(), la.height(), |x, y| {
            let p = la.get_pixel(x, y).0;
            let (v, a) = (u32::from(p[0]), u32::from(p[1]));
            Luma([((v * a + 255 * (255 - a)) / 255) as u8])
        })
    } else {
        grey::levels(img)
    }
}

fn scale_to_side(img: &GrayImage, side: u32) -> GrayImage {
    let long = img.width().max(img.height()).max(1);
    let w = (u64::from(img.width()) * u64::from(side) / u64::from(long)).max(1) as u32;
    let h = (u64::from(img.height()) * u64::from(side) / u64::from(long)).max(1) as u32;
    imageops::resize(img, w, h, imageops::FilterType::Triangle)
}

/// Global Otsu threshold.
fn binarise(img: &GrayImage) -> GrayImage {
    let mut hist = [0u64; 256];
    for p in img.pixels() {
        hist[usize::from(p.0[0])] += 1;
    }
    let total: u64 = hist.iter().sum();
    let sum_all: f64 = hist.iter().enumerate().map(|(i, &c)| i as f64 * c as f64).sum();
    let (mut w_b, mut sum_b, mut best, mut threshold) = (0u64, 0f64, -1f64, 128u8);
    for (t, &c) in hist.iter().enumerate() {
        w_b += c;
        if w_b == 0 {
            continue;
        }
        let w_f = total - w_b;
        if w_f == 0 {
            break;
        }
        sum_b += t as f64 * c as f64;
        let m_b = sum_b / w_b as f64;
        let m_f = (sum_all - sum_b) / w_f as f64;
        let between = w_b as f64 * w_f as f64 * (m_b - m_f) * (m_b - m_f);
        if between > best {
            best = between;
            threshold = t as u8;
        }
    }
    GrayImage::from_fn(img.width(), img.height(), |x, y| {
        Luma([if img.get_pixel(x, y).0[0] > threshold { 255 } else { 0 }])
    })
}

/// Rotation by `degrees` about the centre, same canvas, bilinear, white outside.
pub(crate) fn rotate(img: &GrayImage, degrees: f32) -> GrayImage {
    let (w, h) = (img.width(), img.height());
    let (s, c) = degrees.to_radians().sin_cos();
    let (cx, cy) = (w as f32 / 2.0, h as f32 / 2.0);
    let sample = |x: i64, y: i64| -> f32 {
        if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
            255.0
        } else {
            f32::from(img.get_pixel(x as u32, y as u32).0[0])
        }
    };
    GrayImage::from_fn(w, h, |x, y| {
        let (dx, dy) = (x as f32 + 0.5 - cx, y as f32 + 0.5 - cy);
        // Inverse mapping: source = R(-θ) · destination.
        let sx = c * dx + s * dy + cx - 0.5;
        let sy = -s * dx + c * dy + cy - 0.5;
        let (fx, fy) = (sx.floor(), sy.floor());
        let (ax, ay) = (sx - fx, sy - fy);
        let (ix, iy) = (fx as i64, fy as i64);
        let top = sample(ix, iy) * (1.0 - ax) + sample(ix + 1, iy) * ax;
        let bottom = sample(ix, iy + 1) * (1.0 - ax) + sample(ix + 1, iy + 1) * ax;
        Luma([(top * (1.0 - ay) + bottom * ay).round().clamp(0.0, 255.0) as u8])
    })
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{page, symbol, PAYLOAD};
    use super::*;
    use image::RgbImage;

    fn decodes(img: DynamicImage) -> bool {
        let found = decode_in_image(&img);
        found.iter().any(|c| c.payload == PAYLOAD.as_bytes())
    }

    /// An A4 page at 150 dpi with a symbol of 3 px per module.
    fn a4_150() -> RgbImage {
        page(1240, 1754, &symbol(PAYLOAD, 3), 900, 120)
    }

    fn reencode_jpeg(img: &RgbImage, quality: u8) -> DynamicImage {
        let mut buf = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut buf, quality)
            .encode_image(img)
            .expect("jpeg");
        image::load_from_memory(&buf).expect("decode jpeg")
    }

    #[test]
    fn blurred_photo_needs_sharpening() {
        let base = DynamicImage::ImageRgb8(a4_150()).to_luma8();
        assert!(
            read_all(&imageops::blur(&base, 1.5), &|_| false).is_empty(),
            "no longer a fallback case"
        );
        assert!(decodes(DynamicImage::ImageLuma8(imageops::blur(&base, 1.5))));
    }

    #[test]
    fn tiny_symbol_needs_upscale() {
        let base = DynamicImage::ImageRgb8(a4_150()).to_luma8();
        let small = imageops::resize(&base, 620, 877, imageops::FilterType::Triangle);
        assert!(read_all(&small, &|_| false).is_empty(), "no longer a fallback case");
        assert!(decodes(DynamicImage::ImageLuma8(small)));
    }

    #[test]
    fn low_contrast_uneven_light_needs_binarisation() {
        let base = DynamicImage::ImageRgb8(a4_150()).to_luma8();
        let dim = GrayImage::from_fn(1240, 1754, |x, y| {
            Luma([(120 + u32::from(base.get_pixel(x, y).0[0]) * 60 / 255 + x * 40 / 1240) as u8])
        });
        assert!(read_all(&dim, &|_| false).is_empty(), "no longer a fallback case");
        assert!(decodes(DynamicImage::ImageLuma8(dim)));
    }

    #[test]
    fn payload_has_separators() {
        for b in [0x1d, 0x1e, 0x1f] {
            assert!(PAYLOAD.as_bytes().contains(&b));
        }
    }

    #[test]
    fn plain_png_page() {
        let mut buf = Vec::new();
        a4_150()
            .write_to(&mut std::io::Cursor::new(&mut buf), image::ImageFormat::Png)
            .expect("png");
        let img = image::load_from_memory(&buf).expect("load png");
        let found = decode_in_image(&img);
        assert_eq!(
            found,
            vec![DecodedCode {
                payload: PAYLOAD.as_bytes().to_vec(),
                turn: Turn::Upright,
            }]
        );
    }

    #[test]
    fn a_symbol_tells_how_its_page_is_turned() {
        let upright = DynamicImage::ImageRgb8(a4_150());
        for turn in Turn::ALL {
            let found = decode_in_image(&turn.apply(&upright));
            assert_eq!(found.iter().map(|c| c.turn).collect::<Vec<_>>(), vec![turn], "{turn:?}");
        }
    }

    #[test]
    fn jpeg_quality_60() {
        assert!(decodes(reencode_jpeg(&a4_150(), 60)));
    }

    #[test]
    fn rotated_3_degrees() {
        let gray = DynamicImage::ImageRgb8(a4_150()).to_luma8();
        assert!(decodes(DynamicImage::ImageLuma8(rotate(&gray, 3.0))));
    }

    #[test]
    fn rotated_6_degrees_jpeg() {
        let gray = DynamicImage::ImageRgb8(a4_150()).to_luma8();
        let rotated = DynamicImage::ImageLuma8(rotate(&gray, -6.0)).to_rgb8();
        assert!(decodes(reencode_jpeg(&rotated, 75)));
    }

    #[test]
    fn scaled_from_300_to_150_dpi() {
        let big = page(2480, 3508, &symbol(PAYLOAD, 6), 1800, 240);
        let small = imageops::resize(&big, 1240, 1754, imageops::FilterType::Triangle);
        assert!(decodes(DynamicImage::ImageRgb8(small)));
    }

    #[test]
    fn mild_noise() {
        let mut img = a4_150();
        let mut state: u32 = 0x1234_5678;
        for p in img.pixels_mut() {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let n = ((state >> 24) as i32 % 61) - 30;
            for ch in p.0.iter_mut() {
                *ch = (i32::from(*ch) + n).clamp(0, 255) as u8;
            }
        }
        assert!(decodes(DynamicImage::ImageRgb8(img)));
    }

    #[test]
    fn two_codes_on_one_page() {
        let other = "DC03FR000001125E125E01AUTRE\u{1d}\u{1f}QWERTYUIOP234567";
        let mut p = a4_150();
        let sym2 = DynamicImage::ImageLuma8(symbol(other, 3)).to_rgb8();
        imageops::overlay(&mut p, &sym2, 100, 1300);
        let found = decode_in_image(&DynamicImage::ImageRgb8(p));
        let payloads: Vec<&[u8]> = found.iter().map(|c| c.payload.as_slice()).collect();
        assert!(payloads.contains(&PAYLOAD.as_bytes()), "{payloads:?}");
        assert!(payloads.contains(&other.as_bytes()), "{payloads:?}");
    }

    #[test]
    fn the_search_ends_at_the_symbol_wanted() {
        let other = "DC03FR000001125E125E01AUTRE\u{1d}\u{1f}QWERTYUIOP234567";
        let mut p = a4_150();
        let sym2 = DynamicImage::ImageLuma8(symbol(other, 3)).to_rgb8();
        imageops::overlay(&mut p, &sym2, 100, 1300);
        let page = DynamicImage::ImageRgb8(p);
        let all = decode_in_image(&page);
        assert_eq!(all.len(), 2, "{all:?}");
        let first = decode_in_image_until(&page, |_| true);
        assert_eq!(first, all[..1].to_vec());
        // A symbol not wanted does not end the search.
        let second = decode_in_image_until(&page, |code| code.payload == all[1].payload);
        assert_eq!(second, all);
    }

    #[test]
    fn blank_page_finds_nothing_and_huge_is_refused() {
        assert!(decode_in_image(&DynamicImage::ImageLuma8(GrayImage::from_pixel(600, 800, Luma([255])))).is_empty());
        assert!(decode_in_image(&DynamicImage::ImageLuma8(GrayImage::new(1, 1))).is_empty());
    }

    #[test]
    fn latin1_text_maps_back_to_bytes() {
        assert_eq!(text_to_bytes("A\u{1d}\u{e9}"), vec![0x41, 0x1d, 0xe9]);
    }
}
