//! A minimal page writer over lopdf: lines of text top to bottom in the standard Helvetica fonts,
//! wrapping and page breaks, and the document's fixed metadata. Kept apart from the certificate's
//! wording so the wording reads as a list of lines.

use super::CertificateError;
use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream, StringFormat};

pub const PAGE_WIDTH: f32 = 595.0;
pub const PAGE_HEIGHT: f32 = 842.0;
pub const MARGIN: f32 = 56.0;
const BOTTOM: f32 = 64.0;

/// Text in WinAnsiEncoding, so French accents print with the standard fonts (no embedded font).
pub fn win_ansi(text: &str) -> Object {
    let bytes = text
        .chars()
        .map(|c| match c {
            '\u{20}'..='\u{7e}' | '\u{a0}'..='\u{ff}' => c as u32 as u8,
            '€' => 0x80,
            '…' => 0x85,
            '•' => 0x95,
            '‘' => 0x91,
            '’' => 0x92,
            '“' => 0x93,
            '”' => 0x94,
            '–' => 0x96,
            '—' => 0x97,
            'Œ' => 0x8c,
            'œ' => 0x9c,
            _ => b'?',
        })
        .collect();
    Object::String(bytes, StringFormat::Literal)
}

/// Splits `text` into lines of at most `width` characters, on spaces (a longer word stays whole).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(last) if last.chars().count() + word.chars().count() < width => {
                last.push(' ');
                last.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

#[derive(Clone, Copy)]
pub enum Font {
    Regular,
    Bold,
}

impl Font {
    fn resource(self) -> &'static str {
        match self {
            Font::Regular => "F1",
            Font::Bold => "F2",
        }
    }
}

/// Pages being written, top to bottom.
pub struct Pages {
    pages: Vec<Vec<Operation>>,
    y: f32,
}

impl Pages {
    pub fn new() -> Self {
        Self {
            pages: vec![Vec::new()],
            y: PAGE_HEIGHT - MARGIN,
        }
    }

    /// The current page's operations (for drawings placed by the caller).
    pub fn current(&mut self) -> &mut Vec<Operation> {
        self.pages.last_mut().expect("a layout starts with a page and never drops one")
    }

    /// Moves down by `points`, starting a page when the bottom margin is reached.
    pub fn space(&mut self, points: f32) {
        self.y -= points;
        if self.y < BOTTOM {
            self.pages.push(Vec::new());
            self.y = PAGE_HEIGHT - MARGIN;
        }
    }

    /// One line of text at `indent` from the left margin, then down by its leading.
    pub fn line(&mut self, font: Font, size: f32, indent: f32, text: &str) {
        self.space(size * 1.45);
        let y = self.y;
        self.current().extend([
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec![font.resource().into(), size.into()]),
            Operation::new("Td", vec![(MARGIN + indent).into(), y.into()]),
            Operation::new("Tj", vec![win_ansi(text)]),
            Operation::new("ET", vec![]),
        ]);
    }

    /// A paragraph wrapped to `width` characters (Helvetica averages about half its size per
    /// character, so `width` follows from the size and the room left).
    pub fn paragraph(&mut self, font: Font, size: f32, indent: f32, width: usize, text: &str) {
        for line in wrap(text, width) {
            self.line(font, size, indent, &line);
        }
    }

    /// A thin rule across the text width, to separate sections.
    pub fn rule(&mut self) {
        self.space(8.0);
        let y = self.y;
        self.current().extend([
            Operation::new("q", vec![]),
            Operation::new("G", vec![0.6.into()]),
            Operation::new("w", vec![0.5.into()]),
            Operation::new("m", vec![MARGIN.into(), y.into()]),
            Operation::new("l", vec![(PAGE_WIDTH - MARGIN).into(), y.into()]),
            Operation::new("S", vec![]),
            Operation::new("Q", vec![]),
        ]);
    }

    pub fn y(&self) -> f32 {
        self.y
    }

    pub fn set_y(&mut self, y: f32) {
        self.y = y;
    }

    /// The PDF. `info` becomes the Info dictionary and `file_id` the trailer's ID: both come from
    /// the consultation, so the same consultation gives the same bytes.
    pub fn finish(mut self, footer: &str, info: lopdf::Dictionary, file_id: [u8; 16]) -> Result<Vec<u8>, CertificateError> {
        let mut doc = Document::with_version("1.7");
        let pages_id = doc.new_object_id();
        let font = |name: &str| {
            dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => name.to_owned(), "Encoding" => "WinAnsiEncoding" }
        };
        let regular = doc.add_object(font("Helvetica"));
        let bold = doc.add_object(font("Helvetica-Bold"));
        let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => regular, "F2" => bold } });
        let count = self.pages.len();
        let mut kids = Vec::with_capacity(count);
        for (i, mut ops) in std::mem::take(&mut self.pages).into_iter().enumerate() {
            let text = format!("{footer} — {}/{count}", i + 1);
            ops.extend([
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 8.into()]),
                Operation::new("Td", vec![MARGIN.into(), 36.into()]),
                Operation::new("Tj", vec![win_ansi(&text)]),
                Operation::new("ET", vec![]),
            ]);
            let content = Content { operations: ops }.encode().map_err(|e| CertificateError(e.to_string()))?;
            let content_id = doc.add_object(Stream::new(dictionary! {}, content));
            let page = doc.add_object(dictionary! {
                "Type" => "Page",
                "Parent" => pages_id,
                "MediaBox" => vec![0.into(), 0.into(), PAGE_WIDTH.into(), PAGE_HEIGHT.into()],
                "Contents" => content_id,
                "Resources" => resources,
            });
            kids.push(page.into());
        }
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count as i64 }),
        );
        let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id, "Lang" => Object::string_literal("fr-FR") });
        let info = doc.add_object(info);
        doc.trailer.set("Root", catalog);
        doc.trailer.set("Info", info);
        let id = Object::String(file_id.to_vec(), StringFormat::Hexadecimal);
        doc.trailer.set("ID", vec![id.clone(), id]);
        let mut out = Vec::new();
        doc.save_to(&mut out).map_err(|e| CertificateError(e.to_string()))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accents_are_win_ansi() {
        let Object::String(bytes, _) = win_ansi("Vérifié — œuvre • ✓") else {
            panic!("a string")
        };
        assert_eq!(bytes, b"V\xe9rifi\xe9 \x97 \x9cuvre \x95 ?");
    }

    #[test]
    fn wrap_keeps_words_whole() {
        assert_eq!(wrap("un deux trois quatre", 10), ["un deux", "trois", "quatre"]);
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("anticonstitutionnellement", 5), ["anticonstitutionnellement"]);
    }
}
