//! Hostile files: small on the wire, ruinous to parse. Each one was, or is shaped like, a file that
//! took a process down; the tests send them to the real service, and `fuzz/bombs/` keeps copies.

use flate2::write::ZlibEncoder;
use flate2::Compression;
use std::io::Write;

/// A one-page PDF whose object stream lists `entries` objects, all at the same offset: a string
/// of `string_len` bytes. A parser that materialises each entry holds `entries × string_len` bytes
/// (20,000 × 1 MB: 20 GB) from a file of a few dozen kilobytes.
pub fn pdf_object_stream_bomb(entries: usize, string_len: usize) -> Vec<u8> {
    object_stream_bomb(entries, string_len, "/ObjStm", "")
}

/// The small bomb with its type name written with an escape (`/Obj#53tm` is `/ObjStm`), as a file
/// would to slip past a search for the plain name.
pub fn pdf_bomb_escaped_name() -> Vec<u8> {
    object_stream_bomb(2_500, 1_000_000, "/Obj#53tm", "")
}

/// The small bomb with decode parameters, which the pre-scan leaves to the parser: only the
/// sandbox stands between it and the process.
pub fn pdf_bomb_past_prescan() -> Vec<u8> {
    object_stream_bomb(2_500, 1_000_000, "/ObjStm", " /DecodeParms << /Predictor 1 >>")
}

/// The slow file of the second audit: 400 entries at increasing offsets into one run of 200 MB of
/// spaces, with `/DecodeParms` Predictor 1, about 200 KB. The parser skips the white space after
/// each entry's offset to the end of the run, 40 GB of reads in all: it held an edge child 7 to
/// 10 s, while the pre-scan left any stream with decode parameters to the parser.
pub fn pdf_slow_page_count() -> Vec<u8> {
    long_run_bomb(b' ', 200 * 1024 * 1024, " /DecodeParms << /Predictor 1 >>")
}

/// [`pdf_slow_page_count`] without its decode parameters: the page-count child of a release build
/// died of SIGSEGV on it within 10 ms in the second audit. Not the file's doing: the allocator had
/// reserved 1 GiB before the child's 1 GiB limit was set, so the stack could not grow when the
/// pre-scan's inflater was made (see `sandbox::environment::MIMALLOC_ARENA_RESERVE`).
pub fn pdf_slow_page_count_plain() -> Vec<u8> {
    long_run_bomb(b' ', 200 * 1024 * 1024, "")
}

/// A file the pre-scan passes (a 48 MB run, offsets in order) that still takes the parser long:
/// 400 entries each lead into an unterminated comment it reads to the end of the run. Only the
/// page count's deadline bounds it.
pub fn pdf_slow_within_prescan() -> Vec<u8> {
    long_run_bomb(b'%', 48 * 1024 * 1024, "")
}

/// 400 entries at increasing offsets into one run of `run_len` bytes `byte`, deflated as it is
/// produced (the run is never held in memory).
fn long_run_bomb(byte: u8, run_len: usize, extra: &str) -> Vec<u8> {
    const ENTRIES: usize = 400;
    let index: String = (0..ENTRIES).map(|i| format!("{} {} ", 10 + i, i * 2)).collect();
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::best());
    let chunk = vec![byte; 1024 * 1024];
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(index.as_bytes());
    for _ in 0..run_len / chunk.len() {
        let _ = encoder.write_all(&chunk);
    }
    let _ = encoder.write_all(&chunk[..run_len % chunk.len()]);
    let stream = encoder.finish().unwrap_or_default();
    pdf_around_deflated(ENTRIES, index.len(), &stream, "/ObjStm", extra)
}

/// A sound one-page PDF with `objects` in an object stream numbered from 10, its data written
/// with PNG predictor `filter` (Predictor 10 + filter, rows of `columns` bytes), as a writer that
/// predicts its object streams would.
pub fn pdf_with_predicted_object_stream(objects: &[&str], filter: u8, columns: usize) -> Vec<u8> {
    let (index, mut content) = object_stream_content(objects);
    // Whole rows, as a predictor writes them: white space after the last object.
    content.resize(content.len().div_ceil(columns) * columns, b' ');
    let mut rows = Vec::new();
    let mut above = vec![0u8; columns];
    for line in content.chunks(columns) {
        rows.push(filter);
        for (i, &byte) in line.iter().enumerate() {
            let left = if i > 0 { line[i - 1] } else { 0 };
            let predicted = match filter {
                1 => left,
                2 => above[i],
                _ => 0,
            };
            rows.push(byte.wrapping_sub(predicted));
        }
        above[..line.len()].copy_from_slice(line);
    }
    let extra = format!(" /DecodeParms << /Predictor {} /Columns {columns} >>", 10 + filter);
    pdf_around_deflated(objects.len(), index.len(), &deflate(&rows), "/ObjStm", &extra)
}

fn object_stream_bomb(entries: usize, string_len: usize, type_name: &str, extra: &str) -> Vec<u8> {
    let index: String = (0..entries).map(|i| format!("{} 0 ", 10 + i)).collect();
    let mut content = index.clone().into_bytes();
    content.push(b'(');
    content.extend(std::iter::repeat_n(b'A', string_len));
    content.push(b')');
    pdf_around_object_stream(entries, &index, &content, type_name, extra)
}

/// A sound one-page PDF with `objects` in an object stream, numbered from 10.
pub fn pdf_with_object_stream(objects: &[&str]) -> Vec<u8> {
    let (index, content) = object_stream_content(objects);
    pdf_around_object_stream(objects.len(), &index, &content, "/ObjStm", "")
}

/// The index of `objects` numbered from 10, and the stream's whole data (index, then objects).
fn object_stream_content(objects: &[&str]) -> (String, Vec<u8>) {
    let mut index = String::new();
    let mut body = String::new();
    for (i, object) in objects.iter().enumerate() {
        index.push_str(&format!("{} {} ", 10 + i, body.len()));
        body.push_str(object);
        body.push(' ');
    }
    let content = format!("{index}{body}").into_bytes();
    (index, content)
}

fn pdf_around_object_stream(entries: usize, index: &str, content: &[u8], type_name: &str, extra: &str) -> Vec<u8> {
    pdf_around_deflated(entries, index.len(), &deflate(content), type_name, extra)
}

fn pdf_around_deflated(entries: usize, first: usize, stream: &[u8], type_name: &str, extra: &str) -> Vec<u8> {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>".to_owned(),
    ];
    let mut pdf = b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (number, body) in (1..).zip(&objects) {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{number} 0 obj\n{body}\nendobj\n").as_bytes());
    }
    offsets.push(pdf.len());
    pdf.extend_from_slice(
        format!(
            "4 0 obj\n<< /Type {type_name} /N {entries} /First {first} /Length {} /Filter /FlateDecode{extra} >>\nstream\n",
            stream.len()
        )
        .as_bytes(),
    );
    pdf.extend_from_slice(stream);
    pdf.extend_from_slice(b"\nendstream\nendobj\n");
    let xref = pdf.len();
    pdf.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1).as_bytes());
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(format!("trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes());
    pdf
}

/// The bomb of the report: 20,000 entries at the same offset of a 1 MB string, about 46 KB.
pub fn pdf_bomb_20k() -> Vec<u8> {
    pdf_object_stream_bomb(20_000, 1_000_000)
}

/// A smaller cousin: 2,500 entries of 1 MB in under 10 KB; 2.5 GB once materialised.
pub fn pdf_bomb_small() -> Vec<u8> {
    pdf_object_stream_bomb(2_500, 1_000_000)
}

/// A PNG of `side` × `side` pixels in a one-pixel checkerboard: a few kilobytes that decode within
/// the pixel limits, but give the MRZ and seal searches millions of tiny shapes to look at.
pub fn checkerboard_png(side: u32) -> Vec<u8> {
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    use image::ImageEncoder as _;
    let image = image::GrayImage::from_fn(side, side, |x, y| image::Luma([if (x + y) % 2 == 0 { 0 } else { 255 }]));
    let mut out = Vec::new();
    // The Sub filter turns each row into one repeated byte, which deflate shrinks to almost nothing.
    let encoder = PngEncoder::new_with_quality(&mut out, CompressionType::Best, FilterType::Sub);
    // Encoding a valid image into memory cannot fail.
    let _ = encoder.write_image(image.as_raw(), side, side, image::ExtendedColorType::L8);
    out
}

fn deflate(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::best());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bombs_are_small_on_the_wire() {
        let bomb = pdf_bomb_20k();
        assert!(bomb.len() < 60_000, "{} bytes", bomb.len());
        assert!(bomb.starts_with(b"%PDF-1.5"));
        assert!(pdf_bomb_small().len() < 12_000);
        let png = checkerboard_png(6000);
        eprintln!("checkerboard 6000: {} bytes", png.len());
        assert!(png.len() < 10_000_000);
    }

    /// Regenerates `fuzz/bombs/` (run by hand after changing a bomb).
    #[test]
    #[ignore]
    fn write_bombs() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/bombs");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("objstm-20k-entries-1mb.pdf"), pdf_bomb_20k()).unwrap();
        std::fs::write(dir.join("objstm-2500-entries-1mb.pdf"), pdf_bomb_small()).unwrap();
        std::fs::write(dir.join("objstm-escaped-name.pdf"), pdf_bomb_escaped_name()).unwrap();
        std::fs::write(dir.join("objstm-decode-parms.pdf"), pdf_bomb_past_prescan()).unwrap();
    }
}
