//! The raster images of a PDF's first page (image XObjects, also inside form XObjects), decoded into
//! [`image::DynamicImage`]s and searched for DataMatrix symbols; and, for a seal drawn with vector paths,
//! the same search on the page rendered by [`super::render`] when the embedded images hold none.

use std::collections::HashSet;
use std::io::Cursor;

use image::{DynamicImage, GrayImage, Luma, Rgb, RgbImage};
use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId, Stream};

use super::decode::decode_in_render;
use super::render::{self, RenderError, RenderOptions};
use super::{decode_in_image, DatamatrixError, DecodedCode, MAX_PIXELS};
use crate::analysis::pdf_tree::inherited_media_box;

/// At most this many images of the first page are examined.
pub const MAX_IMAGES: usize = 20;
/// How deep form XObjects are followed.
const MAX_FORM_DEPTH: usize = 3;
/// Ceiling on any single decompressed stream while loading.
const MAX_STREAM_BYTES: usize = 128 * 1024 * 1024;

/// Every DataMatrix symbol found in the images embedded in the first page of the PDF `bytes`.
pub fn decode_in_pdf(bytes: &[u8]) -> Result<Vec<DecodedCode>, DatamatrixError> {
    Ok(search(first_page_images(bytes)?))
}

/// Every DataMatrix symbol of the first page of the PDF `bytes`: those of its embedded images, or when
/// they hold none, those found on the page rendered with pdftoppm (a seal drawn with vector paths).
/// Blocking: call it from a blocking thread.
///
/// A render that cannot happen (pdftoppm missing, killed at `options.timeout`, failing on the file) leaves
/// the embedded images' result, logged but not an error: the document is then judged as before rendering
/// existed. Errors are those of reading the PDF's structure, as for [`decode_in_pdf`].
pub fn decode_in_pdf_rendered(bytes: &[u8], options: &RenderOptions) -> Result<Vec<DecodedCode>, DatamatrixError> {
    // One parse for both passes; the document is dropped before the render.
    let (embedded, page_size) = {
        let doc = load(bytes)?;
        let page_id = first_page_id(&doc)?;
        (search(page_images(&doc, page_id)?), media_box_size(&doc, page_id))
    };
    if !embedded.is_empty() {
        return Ok(embedded);
    }
    match render::render_with_page_size(bytes, page_size, options) {
        Ok(page) => Ok(decode_in_render(&page)),
        Err(RenderError::Unavailable(reason)) => {
            tracing::debug!(%reason, "page rendering unavailable: vector-drawn DataMatrix codes are not searched");
            Ok(embedded)
        }
        Err(error) => {
            tracing::warn!(%error, "the first page could not be rendered: vector-drawn DataMatrix codes are not searched");
            Ok(embedded)
        }
    }
}

/// The distinct codes of `images`, in order of discovery.
fn search(images: Vec<DynamicImage>) -> Vec<DecodedCode> {
    let mut out: Vec<DecodedCode> = Vec::new();
    for img in images {
        for code in decode_in_image(&img) {
            if !out.contains(&code) {
                out.push(code);
            }
        }
    }
    out
}

fn load(bytes: &[u8]) -> Result<Document, DatamatrixError> {
    let options = LoadOptions {
        max_decompressed_size: Some(MAX_STREAM_BYTES),
        ..LoadOptions::default()
    };
    Document::load_mem_with_options(bytes, options).map_err(|e| DatamatrixError::Pdf(e.to_string()))
}

fn first_page_id(doc: &Document) -> Result<ObjectId, DatamatrixError> {
    doc.get_pages().values().next().copied().ok_or(DatamatrixError::NoPage)
}

/// Width and height in points of the first page's MediaBox, `None` if the PDF or the box cannot be read.
#[cfg(test)]
pub(super) fn first_page_size(bytes: &[u8]) -> Option<(f64, f64)> {
    let doc = load(bytes).ok()?;
    media_box_size(&doc, first_page_id(&doc).ok()?)
}

/// Width and height in points of a page's MediaBox, its own or inherited from the page tree; `None` when
/// missing, malformed or empty.
fn media_box_size(doc: &Document, page_id: ObjectId) -> Option<(f64, f64)> {
    let corners = inherited_media_box(doc, page_id)?;
    if corners.len() != 4 {
        return None;
    }
    let mut v = [0f64; 4];
    for (slot, corner) in v.iter_mut().zip(corners) {
        let (_, corner) = doc.dereference(corner).ok()?;
        *slot = f64::from(corner.as_float().ok()?);
    }
    // Corners may come in any order.
    let (w, h) = ((v[2] - v[0]).abs(), (v[3] - v[1]).abs());
    (w.is_finite() && h.is_finite() && w > 0.0 && h > 0.0).then_some((w, h))
}

/// The decodable raster images of the first page, at most [`MAX_IMAGES`]; unsupported encodings
/// (JPX, JBIG2, CCITT, indexed colour…) are skipped.
pub fn first_page_images(bytes: &[u8]) -> Result<Vec<DynamicImage>, DatamatrixError> {
    let doc = load(bytes)?;
    page_images(&doc, first_page_id(&doc)?)
}

fn page_images(doc: &Document, page_id: ObjectId) -> Result<Vec<DynamicImage>, DatamatrixError> {
    let (own, inherited) = doc.get_page_resources(page_id).map_err(|e| DatamatrixError::Pdf(e.to_string()))?;
    let mut resources: Vec<(&Dictionary, usize)> = own.into_iter().map(|d| (d, 0)).collect();
    resources.extend(inherited.into_iter().filter_map(|id| doc.get_dictionary(id).ok()).map(|d| (d, 0)));

    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut images = Vec::new();
    let mut visited_streams = 0usize;
    while let Some((res, depth)) = resources.pop() {
        let Some(xobjects) = res
            .get(b"XObject")
            .ok()
            .and_then(|o| doc.dereference(o).ok())
            .and_then(|(_, o)| o.as_dict().ok())
        else {
            continue;
        };
        for (_, value) in xobjects.iter() {
            if images.len() >= MAX_IMAGES || visited_streams >= 4 * MAX_IMAGES {
                return Ok(images);
            }
            let Ok((id, object)) = doc.dereference(value) else { continue };
            if let Some(id) = id {
                if !seen.insert(id) {
                    continue;
                }
            }
            let Ok(stream) = object.as_stream() else { continue };
            visited_streams += 1;
            match stream.dict.get(b"Subtype").and_then(Object::as_name) {
                Ok(b"Image") => match stream_to_image(doc, stream) {
                    Some(img) => images.push(img),
                    None => tracing::debug!("embedded image skipped (unsupported encoding)"),
                },
                Ok(b"Form") if depth < MAX_FORM_DEPTH => {
                    if let Some(r) = stream
                        .dict
                        .get(b"Resources")
                        .ok()
                        .and_then(|o| doc.dereference(o).ok())
                        .and_then(|(_, o)| o.as_dict().ok())
                    {
                        resources.push((r, depth + 1));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(images)
}

fn int(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<i64> {
    let (_, o) = doc.dereference(dict.get(key).ok()?).ok()?;
    o.as_i64().ok()
}

/// Number of colour components of a colour space, `None` if unsupported.
fn components(doc: &Document, cs: &Object) -> Option<usize> {
    let (_, cs) = doc.dereference(cs).ok()?;
    match cs {
        Object::Name(n) => match n.as_slice() {
            b"DeviceGray" | b"CalGray" | b"G" => Some(1),
            b"DeviceRGB" | b"CalRGB" | b"RGB" => Some(3),
            b"DeviceCMYK" | b"CMYK" => Some(4),
            _ => None,
        },
        Object::Array(a) => match a.first().and_then(|o| o.as_name().ok())? {
            b"ICCBased" => {
                let (_, s) = doc.dereference(a.get(1)?).ok()?;
                let n = int(doc, &s.as_stream().ok()?.dict, b"N")?;
                matches!(n, 1 | 3 | 4).then_some(n as usize)
            }
            b"CalGray" => Some(1),
            b"CalRGB" => Some(3),
            _ => None,
        },
        _ => None,
    }
}

fn stream_to_image(doc: &Document, stream: &Stream) -> Option<DynamicImage> {
    let dict = &stream.dict;
    let width = u32::try_from(int(doc, dict, b"Width")?).ok()?;
    let height = u32::try_from(int(doc, dict, b"Height")?).ok()?;
    if width == 0 || height == 0 || u64::from(width) * u64::from(height) > MAX_PIXELS {
        return None;
    }
    let filters: Vec<Vec<u8>> = stream.filters().ok().unwrap_or_default().into_iter().map(<[u8]>::to_vec).collect();
    if filters.last().map(Vec::as_slice) == Some(b"DCTDecode".as_slice()) {
        if filters.len() != 1 {
            return None;
        }
        return decode_jpeg(&stream.content);
    }
    if filters
        .iter()
        .any(|f| matches!(f.as_slice(), b"JPXDecode" | b"JBIG2Decode" | b"CCITTFaxDecode"))
    {
        return None;
    }

    let is_mask = matches!(dict.get(b"ImageMask"), Ok(Object::Boolean(true)));
    let (comps, bpc) = if is_mask {
        (1usize, 1u32)
    } else {
        let cs = dict.get(b"ColorSpace").ok()?;
        (components(doc, cs)?, u32::try_from(int(doc, dict, b"BitsPerComponent")?).ok()?)
    };
    if bpc != 8 && bpc != 1 {
        return None;
    }
    let row_bytes = (width as usize * comps * bpc as usize).div_ceil(8);
    let needed = row_bytes.checked_mul(height as usize)?;
    let data = stream.get_plain_content_with_limit(needed + 1024).ok()?;
    if data.len() < needed {
        return None;
    }
    // A Decode array [1 0] (or a mask's default) inverts the samples.
    let inverted = match dict.get(b"Decode").ok().and_then(|o| o.as_array().ok()) {
        Some(a) => a
            .first()
            .and_then(|o| o.as_float().ok().or_else(|| o.as_i64().ok().map(|v| v as f32)))
            .is_some_and(|v| v > 0.5),
        None => false,
    };
    if bpc == 1 {
        // Gray 1-bit: 0 is black; for an image mask, 0 is painted (black) too.
        let img = GrayImage::from_fn(width, height, |x, y| {
            let byte = data[y as usize * row_bytes + x as usize / 8];
            let bit = (byte >> (7 - (x % 8))) & 1 == 1;
            Luma([if bit != inverted { 255 } else { 0 }])
        });
        return Some(DynamicImage::ImageLuma8(img));
    }
    let px = |x: u32, y: u32, c: usize| -> u8 {
        let v = data[y as usize * row_bytes + x as usize * comps + c];
        if inverted {
            255 - v
        } else {
            v
        }
    };
    match comps {
        1 => Some(DynamicImage::ImageLuma8(GrayImage::from_fn(width, height, |x, y| {
            Luma([px(x, y, 0)])
        }))),
        3 => Some(DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
            Rgb([px(x, y, 0), px(x, y, 1), px(x, y, 2)])
        }))),
        4 => Some(DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
            let k = u16::from(px(x, y, 3));
            let ch = |c: usize| ((255 - u16::from(px(x, y, c))) * (255 - k) / 255) as u8;
            Rgb([ch(0), ch(1), ch(2)])
        }))),
        _ => None,
    }
}

fn decode_jpeg(data: &[u8]) -> Option<DynamicImage> {
    let mut reader = image::ImageReader::with_format(Cursor::new(data), image::ImageFormat::Jpeg);
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(20_000);
    limits.max_image_height = Some(20_000);
    limits.max_alloc = Some(MAX_PIXELS * 4);
    reader.limits(limits);
    let img = reader.decode().ok()?;
    (u64::from(img.width()) * u64::from(img.height()) <= MAX_PIXELS).then_some(img)
}

#[cfg(test)]
mod tests {
    use super::super::render::tests::{require_pdftoppm, vector_symbol_pdf};
    use super::super::testutil::{symbol, PAYLOAD};
    use super::*;
    use lopdf::{dictionary, Stream};

    /// A one-page PDF drawing `image_stream` as its only XObject, optionally wrapped in a form XObject.
    fn pdf_with_image(image_stream: Stream, in_form: bool) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let img_id = doc.add_object(image_stream);
        let (xobject_name, xobject_id) = if in_form {
            let form = Stream::new(
                dictionary! {
                    "Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 1.into(), 1.into()],
                    "Resources" => dictionary! { "XObject" => dictionary! { "Im0" => img_id } },
                },
                b"q 1 0 0 1 0 0 cm /Im0 Do Q".to_vec(),
            );
            ("Fm0", doc.add_object(form))
        } else {
            ("Im0", img_id)
        };
        let content = format!("q 150 0 0 150 400 650 cm /{xobject_name} Do Q");
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "Resources" => dictionary! { "XObject" => dictionary! { xobject_name => xobject_id } },
        });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
                "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            }),
        );
        let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog_id);
        let mut out = Vec::new();
        doc.save_to(&mut out).expect("save pdf");
        out
    }

    fn expected() -> Vec<DecodedCode> {
        vec![DecodedCode {
            payload: PAYLOAD.as_bytes().to_vec(),
            turn: crate::analysis::orientation::Turn::Upright,
        }]
    }

    #[test]
    fn flate_gray_image_xobject() {
        let sym = symbol(PAYLOAD, 4);
        let mut stream = Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => sym.width() as i64, "Height" => sym.height() as i64,
                "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
            },
            sym.into_raw(),
        );
        stream.compress().expect("compress");
        assert!(stream.dict.get(b"Filter").is_ok());
        assert_eq!(decode_in_pdf(&pdf_with_image(stream, false)).expect("pdf"), expected());
    }

    #[test]
    fn dct_rgb_image_inside_a_form() {
        let sym = DynamicImage::ImageLuma8(symbol(PAYLOAD, 4)).to_rgb8();
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 70)
            .encode_image(&sym)
            .expect("jpeg");
        let stream = Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => sym.width() as i64, "Height" => sym.height() as i64,
                "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "DCTDecode",
            },
            jpeg,
        );
        assert_eq!(decode_in_pdf(&pdf_with_image(stream, true)).expect("pdf"), expected());
    }

    #[test]
    fn one_bit_image_mask() {
        let sym = symbol(PAYLOAD, 4);
        let (w, h) = (sym.width(), sym.height());
        let row = (w as usize).div_ceil(8);
        let mut bits = vec![0u8; row * h as usize];
        for (x, y, p) in sym.enumerate_pixels() {
            // Mask: sample 0 is painted; set 1 where the symbol is white.
            if p.0[0] > 127 {
                bits[y as usize * row + x as usize / 8] |= 0x80 >> (x % 8);
            }
        }
        let stream = Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Image", "Width" => w as i64, "Height" => h as i64, "ImageMask" => true },
            bits,
        );
        assert_eq!(decode_in_pdf(&pdf_with_image(stream, false)).expect("pdf"), expected());
    }

    #[test]
    fn not_a_pdf_is_an_error() {
        assert!(decode_in_pdf(b"hello").is_err());
        assert!(matches!(
            decode_in_pdf_rendered(b"hello", &RenderOptions::default()),
            Err(DatamatrixError::Pdf(_))
        ));
    }

    #[test]
    fn a_vector_drawn_symbol_is_found_by_rendering_only() {
        require_pdftoppm();
        // 1.5 pt modules (0.53 mm, 4.2 px at 200 dpi) and 1.2 pt (0.42 mm, 3.3 px: the small end of real seals).
        for module in [1.5, 1.2] {
            let pdf = vector_symbol_pdf(PAYLOAD, module);
            assert!(decode_in_pdf(&pdf).expect("pdf").is_empty(), "no embedded image to find it in");
            let started = std::time::Instant::now();
            let found = decode_in_pdf_rendered(&pdf, &RenderOptions::default()).expect("pdf");
            eprintln!(
                "vector-drawn symbol ({module} pt modules): decode_in_pdf_rendered took {:?}",
                started.elapsed()
            );
            assert_eq!(found, expected(), "{module} pt modules");
        }
    }

    #[test]
    fn a_render_that_cannot_happen_leaves_the_embedded_result() {
        let pdf = vector_symbol_pdf(PAYLOAD, 1.5);
        let missing = RenderOptions {
            program: "/nonexistent/pdftoppm".into(),
            ..RenderOptions::default()
        };
        assert_eq!(decode_in_pdf_rendered(&pdf, &missing).expect("pdf"), Vec::new());
        require_pdftoppm();
        let hurried = RenderOptions {
            timeout: std::time::Duration::from_millis(1),
            ..RenderOptions::default()
        };
        // Killed (nothing found) or, on a very fast machine, done in time (found): never an error or a panic.
        let found = decode_in_pdf_rendered(&pdf, &hurried).expect("pdf");
        assert!(found.is_empty() || found == expected(), "{found:?}");
    }

    /// The reference samples carry their seal as an embedded image: found without rendering (the program is
    /// missing); the invoice without a seal is rendered and searched in vain, the worst case for time.
    #[test]
    fn shared_samples_with_rendering() {
        const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/samples/administratif/");
        let read = |file: &str| {
            std::fs::read(format!("{DIR}{file}"))
                .unwrap_or_else(|e| panic!("{DIR}{file}: {e} (the reference data must sit beside the project)"))
        };
        let no_renderer = RenderOptions {
            program: "/nonexistent/pdftoppm".into(),
            ..RenderOptions::default()
        };
        for (file, header) in [
            ("sample-avis-impot-v04-rfr-modifie.pdf", "DC04FR000001"),
            ("sample-bulletin-v03-montant-different.pdf", "DC03FR000001"),
            ("sample-facture-v04.pdf", "DC04FR000001"),
            ("sample-facture-deux-pages.pdf", "DC04FR000001"),
        ] {
            let codes = decode_in_pdf_rendered(&read(file), &no_renderer).expect(file);
            assert_eq!(codes.len(), 1, "{file}: {codes:?}");
            assert!(codes[0].payload.starts_with(header.as_bytes()), "{file}");
        }
        require_pdftoppm();
        let bytes = read("sample-facture-sans-2ddoc.pdf");
        let started = std::time::Instant::now();
        let found = decode_in_pdf_rendered(&bytes, &RenderOptions::default()).expect("sans 2ddoc");
        eprintln!("sample-facture-sans-2ddoc.pdf: decode_in_pdf_rendered took {:?}", started.elapsed());
        assert!(found.is_empty(), "{found:?}");
    }
}
