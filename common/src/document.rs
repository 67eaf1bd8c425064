//! Deposited files, shared by the gateway (deposit validation) and the workers (analysis): what kind
//! of file the bytes are, how many pages they hold, and decoding them within bounds, so a hostile
//! file can neither lie about its type nor exhaust memory.

pub use domain::file_kind::{accept_attribute, accepted, describe_accepted, AcceptedWords, FileKind};
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Cursor;

/// Widest or tallest image decoded, in pixels.
pub const MAX_IMAGE_SIDE: u32 = 20_000;
/// Most pixels decoded in one image: a 600 dpi A4 scan is about 35 million.
pub const MAX_IMAGE_PIXELS: u64 = 40_000_000;
/// Most bytes a decoder may hold at once.
pub const MAX_DECODE_ALLOC: u64 = 512 * 1024 * 1024;
/// Most IFDs walked in a TIFF: far above any real document, low enough to stay instant.
const MAX_TIFF_IFDS: u32 = 1000;

/// Why a deposited file cannot be used. Messages are one sentence and never quote the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum DocumentError {
    #[error("the document is not valid base64")]
    InvalidBase64,
    #[error("the document is empty")]
    Empty,
    #[error("{0}")]
    Unreadable(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{0}")]
    Unsupported(String),
}

/// The decoder of an image kind; `None` for a PDF.
fn image_format(kind: FileKind) -> Option<ImageFormat> {
    match kind {
        FileKind::Jpeg => Some(ImageFormat::Jpeg),
        FileKind::Png => Some(ImageFormat::Png),
        FileKind::Webp => Some(ImageFormat::WebP),
        FileKind::Tiff => Some(ImageFormat::Tiff),
        FileKind::Pdf => None,
    }
}

/// The file kind from its magic bytes; names and declared types are never trusted.
pub fn sniff(bytes: &[u8]) -> Option<FileKind> {
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
    let kind = if bytes.starts_with(b"\xff\xd8\xff") {
        FileKind::Jpeg
    } else if bytes.starts_with(PNG) {
        FileKind::Png
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        FileKind::Webp
    } else if bytes.starts_with(b"%PDF-") {
        FileKind::Pdf
    } else if is_tiff_magic(bytes) {
        FileKind::Tiff
    } else {
        return None;
    };
    Some(kind)
}

/// Classic TIFF (`*`) and BigTIFF (`+`) in both byte orders; BigTIFF is refused later, by name.
fn is_tiff_magic(bytes: &[u8]) -> bool {
    [b"II*\0", b"MM\0*", b"II+\0", b"MM\0+"]
        .iter()
        .any(|magic| bytes.starts_with(*magic))
}

/// Decodes a base64 document as clients send it: plain, or as a `data:<mime>;base64,` URL, with
/// any line breaks or spaces inside, padded or not.
pub fn decode_base64_document(input: &str) -> Result<Vec<u8>, DocumentError> {
    let payload = strip_data_url(input.trim_start())?;
    // WHATWG's forgiving base64: ASCII whitespace anywhere, padding or not. An unbroken line is
    // decoded where it lies; only a broken one is compacted first.
    let bytes = base64_simd::forgiving_decode_to_vec(payload.as_bytes()).map_err(|_| DocumentError::InvalidBase64)?;
    if bytes.is_empty() {
        return Err(DocumentError::Empty);
    }
    Ok(bytes)
}

/// The payload of a data URL, or the input itself; a data URL that is not base64 is refused.
fn strip_data_url(input: &str) -> Result<&str, DocumentError> {
    let Some(prefix) = input.get(..5) else {
        return Ok(input);
    };
    if !prefix.eq_ignore_ascii_case("data:") {
        return Ok(input);
    }
    let (header, payload) = input.split_once(',').ok_or(DocumentError::InvalidBase64)?;
    let is_base64 = header.len() >= 7 && header[header.len() - 7..].eq_ignore_ascii_case(";base64");
    if is_base64 {
        Ok(payload)
    } else {
        Err(DocumentError::InvalidBase64)
    }
}

/// Pages in the file: 1 for an image (its header is checked, not its pixels), the page tree of a
/// PDF, the IFD chain of a TIFF. Errors when the bytes do not parse as `kind`. Images whose header
/// claims more pixels than the decoder accepts are refused here too, so they are caught at deposit.
pub fn page_count(kind: FileKind, bytes: &[u8]) -> Result<u32, DocumentError> {
    match kind {
        FileKind::Pdf => pdf_page_count(bytes),
        FileKind::Tiff => tiff_page_count(bytes),
        FileKind::Jpeg | FileKind::Png | FileKind::Webp => {
            let decoder = bounded_decoder(kind, bytes)?;
            check_pixel_budget(kind, &decoder)?;
            Ok(1)
        }
    }
}

/// [`page_count`] run in a sandbox child (see [`crate::sandbox`]): how the gateway counts a PDF's
/// pages without parsing it in its own process.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct PageCountTask {
    pub kind: FileKind,
}

impl crate::sandbox::Task for PageCountTask {
    const NAME: &'static str = "page-count";
    type Output = Result<u32, DocumentError>;
}

/// Decodes an image (the first page of a TIFF) within the limits above. Oversized images are
/// refused from their header, before any pixel buffer is allocated.
pub fn decode_image_checked(kind: FileKind, bytes: &[u8]) -> Result<DynamicImage, DocumentError> {
    let mut decoder = bounded_decoder(kind, bytes)?;
    check_pixel_budget(kind, &decoder)?;
    // Phones store a photo sideways and say so in EXIF: turn it the way the customer saw it.
    let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut decoded = DynamicImage::from_decoder(decoder).map_err(|error| image_error(kind, &error))?;
    decoded.apply_orientation(orientation);
    Ok(decoded)
}

fn decode_limits() -> Limits {
    // `Limits` is non-exhaustive: start from the defaults and tighten.
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    limits
}

/// A decoder that has read the header and accepted the side limits.
fn bounded_decoder<'a>(kind: FileKind, bytes: &'a [u8]) -> Result<impl ImageDecoder + 'a, DocumentError> {
    let format = image_format(kind).ok_or_else(|| DocumentError::Unsupported(format!("a {} file is not an image", kind.label())))?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(decode_limits());
    reader.into_decoder().map_err(|error| image_error(kind, &error))
}

/// The side limits alone allow 400 million pixels; this caps the area and the output buffer.
fn check_pixel_budget(kind: FileKind, decoder: &impl ImageDecoder) -> Result<(), DocumentError> {
    let (width, height) = decoder.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    if pixels > MAX_IMAGE_PIXELS || decoder.total_bytes() > MAX_DECODE_ALLOC {
        return Err(too_large(kind));
    }
    Ok(())
}

fn too_large(kind: FileKind) -> DocumentError {
    DocumentError::TooLarge(format!(
        "the {} image is larger than {MAX_IMAGE_PIXELS} pixels or {MAX_IMAGE_SIDE} pixels on a side",
        kind.label()
    ))
}

/// Decoder messages may quote chunk names or values from the file: only the category is kept.
fn image_error(kind: FileKind, error: &image::ImageError) -> DocumentError {
    match error {
        image::ImageError::Limits(_) => too_large(kind),
        image::ImageError::Unsupported(_) => {
            DocumentError::Unsupported(format!("the {} image uses a variant this service cannot decode", kind.label()))
        }
        _ => DocumentError::Unreadable(format!("the {} image is corrupt or truncated", kind.label())),
    }
}

fn pdf_page_count(bytes: &[u8]) -> Result<u32, DocumentError> {
    crate::pdf_prescan::check_object_streams(bytes).map_err(|e| DocumentError::TooLarge(e.to_string()))?;
    let unreadable = || DocumentError::Unreadable("the PDF is corrupt or encrypted".to_owned());
    // lopdf is not hardened against every malformed file; a panic there must not take the caller
    // (a request handler or a worker slot) with it.
    let parsed = std::panic::catch_unwind(|| lopdf::Document::load_mem(bytes).map(|document| document.get_pages().len()));
    let pages = match parsed {
        Ok(Ok(pages)) => pages,
        Ok(Err(_)) | Err(_) => return Err(unreadable()),
    };
    match u32::try_from(pages) {
        Ok(0) => Err(DocumentError::Unreadable("the PDF has no page".to_owned())),
        Ok(pages) => Ok(pages),
        Err(_) => Err(unreadable()),
    }
}

/// Byte order of a TIFF file.
#[derive(Clone, Copy)]
enum Endian {
    Little,
    Big,
}

impl Endian {
    fn u16_at(self, bytes: &[u8], offset: usize) -> Option<u16> {
        let raw: [u8; 2] = bytes.get(offset..offset.checked_add(2)?)?.try_into().ok()?;
        Some(match self {
            Self::Little => u16::from_le_bytes(raw),
            Self::Big => u16::from_be_bytes(raw),
        })
    }

    fn u32_at(self, bytes: &[u8], offset: usize) -> Option<u32> {
        let raw: [u8; 4] = bytes.get(offset..offset.checked_add(4)?)?.try_into().ok()?;
        Some(match self {
            Self::Little => u32::from_le_bytes(raw),
            Self::Big => u32::from_be_bytes(raw),
        })
    }
}

/// Counts the IFDs of the main chain (one per page); sub-IFDs such as thumbnails are not pages.
fn tiff_page_count(bytes: &[u8]) -> Result<u32, DocumentError> {
    let endian = tiff_byte_order(bytes)?;
    let mut next = endian.u32_at(bytes, 4).ok_or_else(tiff_unreadable)?;
    let mut seen = HashSet::new();
    let mut pages = 0;
    while next != 0 {
        if !seen.insert(next) {
            return Err(DocumentError::Unreadable("the TIFF's page chain loops back on itself".to_owned()));
        }
        pages += 1;
        if pages > MAX_TIFF_IFDS {
            return Err(DocumentError::TooLarge(format!("the TIFF has more than {MAX_TIFF_IFDS} pages")));
        }
        next = next_ifd_offset(endian, bytes, next).ok_or_else(tiff_unreadable)?;
    }
    if pages == 0 {
        return Err(DocumentError::Unreadable("the TIFF has no page".to_owned()));
    }
    Ok(pages)
}

fn tiff_byte_order(bytes: &[u8]) -> Result<Endian, DocumentError> {
    let endian = match bytes.get(..2) {
        Some(b"II") => Endian::Little,
        Some(b"MM") => Endian::Big,
        _ => return Err(tiff_unreadable()),
    };
    match endian.u16_at(bytes, 2) {
        Some(42) => Ok(endian),
        Some(43) => Err(DocumentError::Unsupported("BigTIFF files are not supported".to_owned())),
        _ => Err(tiff_unreadable()),
    }
}

/// An IFD is a 2-byte entry count, 12 bytes per entry, then the 4-byte offset of the next IFD.
fn next_ifd_offset(endian: Endian, bytes: &[u8], ifd: u32) -> Option<u32> {
    let start = usize::try_from(ifd).ok()?;
    let entries = usize::from(endian.u16_at(bytes, start)?);
    let next_at = start.checked_add(2)?.checked_add(entries.checked_mul(12)?)?;
    endian.u32_at(bytes, next_at)
}

fn tiff_unreadable() -> DocumentError {
    DocumentError::Unreadable("the TIFF is corrupt or truncated".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures::{blank_pdf, png_claiming};
    use base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT;
    use base64::Engine as _;

    fn encoded(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, format).unwrap();
        out.into_inner()
    }

    fn small_image() -> DynamicImage {
        DynamicImage::ImageRgb8(image::RgbImage::from_fn(8, 6, |x, y| image::Rgb([x as u8 * 30, y as u8 * 40, 90])))
    }

    /// A real one-page TIFF turned into a two-page one: its IFD is copied at the end of the file
    /// and chained after the original (the copy's pointers into the file stay valid).
    fn two_page_tiff() -> Vec<u8> {
        let mut tiff = encoded(&small_image(), ImageFormat::Tiff);
        assert_eq!(&tiff[..2], b"II");
        let ifd = u32::from_le_bytes(tiff[4..8].try_into().unwrap()) as usize;
        let entries = u16::from_le_bytes(tiff[ifd..ifd + 2].try_into().unwrap()) as usize;
        let next_at = ifd + 2 + entries * 12;
        let mut copy = tiff[ifd..next_at + 4].to_vec();
        copy[2 + entries * 12..].copy_from_slice(&0u32.to_le_bytes());
        if tiff.len() % 2 == 1 {
            tiff.push(0);
        }
        let copy_at = tiff.len() as u32;
        tiff.extend_from_slice(&copy);
        tiff[next_at..next_at + 4].copy_from_slice(&copy_at.to_le_bytes());
        tiff
    }

    #[test]
    fn sniffs_each_kind_from_magic_bytes() {
        let image = small_image();
        assert_eq!(sniff(&encoded(&image, ImageFormat::Jpeg)), Some(FileKind::Jpeg));
        assert_eq!(sniff(&encoded(&image, ImageFormat::Png)), Some(FileKind::Png));
        assert_eq!(sniff(&encoded(&image, ImageFormat::WebP)), Some(FileKind::Webp));
        assert_eq!(sniff(&encoded(&image, ImageFormat::Tiff)), Some(FileKind::Tiff));
        assert_eq!(sniff(b"MM\0*\0\0\0\x08"), Some(FileKind::Tiff));
        assert_eq!(sniff(&blank_pdf(1)), Some(FileKind::Pdf));
        assert_eq!(sniff(b"hello, I am a .jpg"), None);
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVE"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn base64_plain_data_url_and_wrapped() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let plain = STANDARD_PAD_INDIFFERENT.encode(&bytes);
        assert_eq!(decode_base64_document(&plain).unwrap(), bytes);

        let wrapped: Vec<String> = plain
            .as_bytes()
            .chunks(76)
            .map(|line| String::from_utf8(line.to_vec()).unwrap())
            .collect();
        let data_url = format!("data:image/png;base64,{}\r\n", wrapped.join("\r\n"));
        assert_eq!(decode_base64_document(&data_url).unwrap(), bytes);
        assert_eq!(decode_base64_document(&format!("DATA:;BASE64,{plain}")).unwrap(), bytes);
        assert_eq!(decode_base64_document(plain.trim_end_matches('=')).unwrap(), bytes);
    }

    #[test]
    fn base64_refusals() {
        assert_eq!(decode_base64_document("not base64!"), Err(DocumentError::InvalidBase64));
        assert_eq!(decode_base64_document("QUJD-_"), Err(DocumentError::InvalidBase64));
        assert_eq!(decode_base64_document("data:text/plain,hello"), Err(DocumentError::InvalidBase64));
        assert_eq!(decode_base64_document("data:image/png;base64"), Err(DocumentError::InvalidBase64));
        assert_eq!(decode_base64_document(""), Err(DocumentError::Empty));
        assert_eq!(decode_base64_document(" \r\n "), Err(DocumentError::Empty));
        assert_eq!(decode_base64_document("data:image/png;base64,"), Err(DocumentError::Empty));
    }

    #[test]
    fn base64_ten_megabytes_wrapped_in_lines_decodes_whole() {
        let bytes = vec![0xa5u8; 10_000_000];
        let encoded = STANDARD_PAD_INDIFFERENT.encode(&bytes);
        let wrapped: String = encoded
            .as_bytes()
            .chunks(76)
            .flat_map(|line| line.iter().copied().chain(*b"\r\n"))
            .map(char::from)
            .collect();
        assert_eq!(decode_base64_document(&wrapped).unwrap(), bytes);
    }

    #[test]
    fn pdf_page_counts() {
        assert_eq!(page_count(FileKind::Pdf, &blank_pdf(1)), Ok(1));
        assert_eq!(page_count(FileKind::Pdf, &blank_pdf(2)), Ok(2));
        assert!(matches!(
            page_count(FileKind::Pdf, b"%PDF-1.7\nnothing else"),
            Err(DocumentError::Unreadable(_))
        ));
    }

    #[test]
    fn a_pdf_bomb_is_refused_before_lopdf_sees_it() {
        let bomb = crate::test_fixtures::bombs::pdf_bomb_20k();
        assert!(matches!(page_count(FileKind::Pdf, &bomb), Err(DocumentError::TooLarge(_))));
    }

    #[test]
    fn image_page_count_checks_the_header() {
        let png = encoded(&small_image(), ImageFormat::Png);
        assert_eq!(page_count(FileKind::Png, &png), Ok(1));
        let webp = encoded(&small_image(), ImageFormat::WebP);
        assert_eq!(page_count(FileKind::Webp, &webp), Ok(1));
        assert!(matches!(
            page_count(FileKind::Jpeg, b"\xff\xd8\xffgarbage"),
            Err(DocumentError::Unreadable(_))
        ));
    }

    #[test]
    fn tiff_page_counts() {
        let single = encoded(&small_image(), ImageFormat::Tiff);
        assert_eq!(page_count(FileKind::Tiff, &single), Ok(1));
        let double = two_page_tiff();
        assert_eq!(page_count(FileKind::Tiff, &double), Ok(2));
        // The image crate still decodes the first page of the two-page file.
        assert_eq!(decode_image_checked(FileKind::Tiff, &double).unwrap().width(), 8);
    }

    #[test]
    fn tiff_big_endian_loops_and_truncation() {
        // Big-endian header, then one IFD with no entry at offset 8 whose next pointer is 0.
        let big_endian = b"MM\0*\0\0\0\x08\0\0\0\0\0\0";
        assert_eq!(page_count(FileKind::Tiff, big_endian), Ok(1));
        let looping = b"II*\0\x08\0\0\0\0\0\x08\0\0\0";
        assert!(matches!(page_count(FileKind::Tiff, looping), Err(DocumentError::Unreadable(_))));
        let truncated = b"II*\0\x08\0\0\0\x05\0";
        assert!(matches!(page_count(FileKind::Tiff, truncated), Err(DocumentError::Unreadable(_))));
        let no_page = b"II*\0\0\0\0\0";
        assert!(matches!(page_count(FileKind::Tiff, no_page), Err(DocumentError::Unreadable(_))));
        assert!(matches!(
            page_count(FileKind::Tiff, b"II+\0\x08\0\0\0\0\0\0\0\x10\0\0\0"),
            Err(DocumentError::Unsupported(_))
        ));
    }

    #[test]
    fn decodes_real_images() {
        for format in [ImageFormat::Jpeg, ImageFormat::Png, ImageFormat::WebP, ImageFormat::Tiff] {
            let bytes = encoded(&small_image(), format);
            let kind = sniff(&bytes).unwrap();
            let image = decode_image_checked(kind, &bytes).unwrap();
            assert_eq!((image.width(), image.height()), (8, 6));
        }
        assert!(matches!(
            decode_image_checked(FileKind::Pdf, &blank_pdf(1)),
            Err(DocumentError::Unsupported(_))
        ));
    }

    /// The refusal comes from the header's claimed size (`TooLarge`), before any pixel is decoded.
    #[test]
    fn refuses_a_huge_header_without_allocating() {
        let bomb = png_claiming(60_000, 60_000);
        assert!(matches!(
            decode_image_checked(FileKind::Png, &bomb),
            Err(DocumentError::TooLarge(_))
        ));
        assert!(matches!(page_count(FileKind::Png, &bomb), Err(DocumentError::TooLarge(_))));
        // Within the side limit but over the pixel budget.
        let wide = png_claiming(20_000, 19_000);
        assert!(matches!(
            decode_image_checked(FileKind::Png, &wide),
            Err(DocumentError::TooLarge(_))
        ));
    }

    #[test]
    fn messages_are_one_sentence_without_file_content() {
        let error = decode_image_checked(FileKind::Jpeg, b"\xff\xd8\xffSECRET-CONTENT").unwrap_err();
        let message = error.to_string();
        assert!(!message.contains("SECRET"));
        assert!(message.starts_with("the JPEG image"));
    }
}
