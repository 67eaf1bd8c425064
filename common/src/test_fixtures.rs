//! Files the tests of every crate build for themselves: small PDFs page by page, and PNG chunks
//! (for headers that lie about their size, or metadata an editor leaves). One builder here, so the
//! tests of the document, text, forensics and engine modules do not each carry their own.
//!
//! Compiled for this crate's tests and, through the `test-fixtures` feature, for the tests of the
//! crates that list it in their dev-dependencies; never in the service.

pub mod bombs;
pub mod two_d_doc;

use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream};

/// An A4 page: 595 × 842 points.
const A4: [i64; 4] = [0, 0, 595, 842];

/// A PDF built page by page. Objects the pages refer to (fonts, images, forms) are added to
/// [`PdfFixture::document`] first, and named in the page's resources.
pub struct PdfFixture {
    document: Document,
    pages_id: ObjectId,
    kids: Vec<Object>,
}

impl Default for PdfFixture {
    fn default() -> Self {
        Self::new()
    }
}

impl PdfFixture {
    pub fn new() -> Self {
        let mut document = Document::with_version("1.5");
        let pages_id = document.new_object_id();
        Self {
            document,
            pages_id,
            kids: Vec::new(),
        }
    }

    /// The document, to add the objects a page will refer to.
    pub fn document(&mut self) -> &mut Document {
        &mut self.document
    }

    /// Adds an A4 page drawing `content` with `resources`.
    pub fn page(mut self, resources: Dictionary, content: impl Into<Vec<u8>>) -> Self {
        let contents = self.document.add_object(Stream::new(dictionary! {}, content.into()));
        let resources = self.document.add_object(resources);
        self.add_page(dictionary! { "Contents" => contents, "Resources" => resources })
    }

    /// Adds `count` empty A4 pages.
    pub fn blank_pages(mut self, count: usize) -> Self {
        for _ in 0..count {
            self = self.add_page(dictionary! {});
        }
        self
    }

    /// Sets the document information dictionary (Producer, Creator, dates…).
    pub fn info(mut self, info: Dictionary) -> Self {
        let info = self.document.add_object(info);
        self.document.trailer.set("Info", info);
        self
    }

    /// The saved file.
    pub fn bytes(mut self) -> Vec<u8> {
        let count = self.kids.len() as i64;
        let pages = dictionary! { "Type" => "Pages", "Kids" => self.kids, "Count" => count };
        self.document.objects.insert(self.pages_id, Object::Dictionary(pages));
        let catalog = self
            .document
            .add_object(dictionary! { "Type" => "Catalog", "Pages" => self.pages_id });
        self.document.trailer.set("Root", catalog);
        let mut out = Vec::new();
        self.document.save_to(&mut out).expect("save the test PDF");
        out
    }

    fn add_page(mut self, mut page: Dictionary) -> Self {
        page.set("Type", "Page");
        page.set("Parent", self.pages_id);
        page.set("MediaBox", A4.iter().map(|&v| Object::Integer(v)).collect::<Vec<_>>());
        self.kids.push(self.document.add_object(page).into());
        self
    }
}

/// A PDF of `count` empty A4 pages.
pub fn blank_pdf(count: usize) -> Vec<u8> {
    PdfFixture::new().blank_pages(count).bytes()
}

/// A one-page PDF drawing `content` with `resources`.
pub fn one_page_pdf(resources: Dictionary, content: impl Into<Vec<u8>>) -> Vec<u8> {
    PdfFixture::new().page(resources, content).bytes()
}

/// Font resources naming Helvetica (WinAnsi) `F1`.
pub fn helvetica() -> Dictionary {
    dictionary! { "F1" => dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding",
    } }
}

/// One PNG chunk: length, type, data and CRC.
pub fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
    chunk.extend_from_slice(kind);
    chunk.extend_from_slice(data);
    let mut crc_input = kind.to_vec();
    crc_input.extend_from_slice(data);
    chunk.extend_from_slice(&crc32(&crc_input).to_be_bytes());
    chunk
}

/// A well-formed PNG header claiming `width` × `height` RGBA pixels, with a token IDAT: what a
/// decompression bomb looks like before anything is decoded.
pub fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(png_chunk(b"IHDR", &ihdr));
    png.extend(png_chunk(b"IDAT", &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]));
    png.extend(png_chunk(b"IEND", &[]));
    png
}

/// CRC-32 (ISO 3309), as PNG chunks carry it.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// Every file under `dir`, at any depth (the blob store's encrypted files, say); none when `dir`
/// does not exist.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_pdfs_lopdf_reads_back() {
        let doc = Document::load_mem(&blank_pdf(3)).expect("a PDF");
        assert_eq!(doc.get_pages().len(), 3);
        let pdf = PdfFixture::new()
            .page(helvetica(), "BT /F1 12 Tf 50 700 Td (bonjour) Tj ET")
            .info(dictionary! { "Producer" => Object::string_literal("fixture") })
            .bytes();
        let doc = Document::load_mem(&pdf).expect("a PDF");
        assert_eq!(doc.get_pages().len(), 1);
        assert!(doc.trailer.get(b"Info").is_ok());
    }

    #[test]
    fn png_chunks_carry_the_crc_of_their_type_and_data() {
        // The IEND chunk of every PNG: its CRC is AE 42 60 82.
        assert_eq!(
            png_chunk(b"IEND", &[]),
            [0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]
        );
    }
}
