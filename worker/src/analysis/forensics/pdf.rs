//! What a PDF says about its own history: which program produced it, when it was created and last
//! modified, and whether revisions were appended after the first save. Issuers generate their
//! bills in one go; a PDF reworked afterwards shows it in these places, whatever its pages look
//! like.

use chrono::{DateTime, FixedOffset, NaiveDate, TimeZone};
use domain::vocabulary::Anomaly;
use lopdf::{Document, Object};

use super::metadata::{self, clean_name, find};
use super::software;
use super::{anomalies, ForensicsError};
use domain::vocabulary::AnomalyCode;

/// A ModDate later than the CreationDate by more than this is a later modification; below it,
/// the two stamps of one generation run (some generators take the second one at the end).
const MODIFICATION_TOLERANCE_SECONDS: i64 = 5 * 60;
/// Longest metadata stream read; real XMP packets are a few kilobytes.
const MAX_METADATA_STREAM: usize = 1024 * 1024;
/// Most cross-reference sections followed through `/Prev`.
const MAX_XREF_CHAIN: usize = 1000;
/// Linearised files announce it in their first object, within the first kilobyte.
const LINEARIZATION_WINDOW: usize = 1024;

/// Facts about a PDF, kept for the certificate and logs, and the anomalies they call for.
#[derive(Debug, Clone, PartialEq)]
pub struct PdfInspection {
    pub producer: Option<String>,
    pub creator: Option<String>,
    pub created: Option<DateTime<FixedOffset>>,
    pub modified: Option<DateTime<FixedOffset>>,
    /// Revisions appended after the first save (a linearised file's two sections count as one).
    pub incremental_updates: u32,
    /// Of those, the ones that only add a digital signature or timestamp: signing a PDF appends a
    /// revision without changing what it shows, so they are not modifications.
    pub signature_updates: u32,
    pub linearized: bool,
    pub pages: u32,
    pub anomalies: Vec<Anomaly>,
}

pub fn inspect(bytes: &[u8]) -> Result<PdfInspection, ForensicsError> {
    // lopdf is not hardened against every malformed file; a panic there must cost the inspection,
    // not the worker slot.
    let document = std::panic::catch_unwind(|| Document::load_mem(bytes))
        .map_err(|_| ForensicsError::UnreadablePdf)?
        .map_err(|_| ForensicsError::UnreadablePdf)?;
    let info = InfoFields::read(&document);
    let xmp_names = document_xmp_software(&document);
    let revisions = Revisions::scan(bytes);
    let pages = u32::try_from(document.get_pages().len()).unwrap_or(u32::MAX);

    let mut codes = Vec::new();
    let edited = revisions.edits() > 0;
    let redated = match (info.created, info.modified) {
        (Some(created), Some(modified)) => (modified - created).num_seconds() > MODIFICATION_TOLERANCE_SECONDS,
        _ => false,
    };
    if edited || redated {
        codes.push(AnomalyCode::PdfModifiedAfterCreation);
    }
    let names = info.producer.iter().chain(info.creator.iter()).chain(xmp_names.iter());
    if names.into_iter().any(|name| software::is_pdf_editor(name)) {
        codes.push(AnomalyCode::EditedWithSoftware);
    }

    Ok(PdfInspection {
        producer: info.producer,
        creator: info.creator,
        created: info.created,
        modified: info.modified,
        incremental_updates: saturating_u32(revisions.updates()),
        signature_updates: saturating_u32(revisions.signature_sections.min(revisions.updates())),
        linearized: revisions.linearized,
        pages,
        anomalies: anomalies(&codes),
    })
}

fn saturating_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The Info dictionary's fields this module uses.
struct InfoFields {
    producer: Option<String>,
    creator: Option<String>,
    created: Option<DateTime<FixedOffset>>,
    modified: Option<DateTime<FixedOffset>>,
}

impl InfoFields {
    fn read(document: &Document) -> Self {
        let info = document
            .trailer
            .get(b"Info")
            .ok()
            .and_then(|object| document.dereference(object).ok())
            .and_then(|(_, object)| object.as_dict().ok());
        let text = |key: &[u8]| -> Option<String> {
            let object = info?.get(key).ok()?;
            let (_, object) = document.dereference(object).ok()?;
            match object {
                Object::String(raw, _) => Some(decode_text_string(raw)),
                _ => None,
            }
        };
        Self {
            producer: text(b"Producer").and_then(clean_name),
            creator: text(b"Creator").and_then(clean_name),
            created: text(b"CreationDate").as_deref().and_then(parse_pdf_date),
            modified: text(b"ModDate").as_deref().and_then(parse_pdf_date),
        }
    }
}

/// Software named by the document's own XMP metadata (the catalog's `/Metadata`), not by the
/// metadata of images placed on the pages: a genuine bill may well hold a logo saved by Photoshop.
fn document_xmp_software(document: &Document) -> Vec<String> {
    let Ok(catalog) = document.catalog() else {
        return Vec::new();
    };
    let Ok(object) = catalog.get(b"Metadata") else {
        return Vec::new();
    };
    let Ok((_, Object::Stream(stream))) = document.dereference(object) else {
        return Vec::new();
    };
    let Ok(content) = stream.get_plain_content_with_limit(MAX_METADATA_STREAM) else {
        return Vec::new();
    };
    let packets = metadata::xmp_packets(&content);
    if let Some(packet) = packets.first() {
        return metadata::xmp_software(packet);
    }
    std::str::from_utf8(&content).map(metadata::xmp_software).unwrap_or_default()
}

/// Decodes a PDF text string (PDF 32000-1 §7.9.2.2): UTF-16BE with its byte order mark, UTF-8 with
/// its BOM (PDF 2.0), UTF-16LE with its mark (not standard, written by some tools), otherwise
/// PDFDocEncoding.
pub fn decode_text_string(raw: &[u8]) -> String {
    if let Some(body) = raw.strip_prefix(&[0xfe, 0xff]) {
        let units = body.chunks_exact(2).map(|pair| u16::from_be_bytes([pair[0], pair[1]]));
        return char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect();
    }
    if let Some(body) = raw.strip_prefix(&[0xff, 0xfe]) {
        let units = body.chunks_exact(2).map(|pair| u16::from_le_bytes([pair[0], pair[1]]));
        return char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect();
    }
    if let Some(body) = raw.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        return String::from_utf8_lossy(body).into_owned();
    }
    raw.iter().map(|&byte| pdf_doc_char(byte)).collect()
}

/// PDFDocEncoding (PDF 32000-1 Annex D.2): Latin-1 but for a few rows of typographic characters.
fn pdf_doc_char(byte: u8) -> char {
    const LOW: [char; 8] = [
        '\u{02d8}', '\u{02c7}', '\u{02c6}', '\u{02d9}', '\u{02dd}', '\u{02db}', '\u{02da}', '\u{02dc}',
    ];
    const HIGH: [char; 33] = [
        '\u{2022}', '\u{2020}', '\u{2021}', '\u{2026}', '\u{2014}', '\u{2013}', '\u{0192}', '\u{2044}', '\u{2039}', '\u{203a}', '\u{2212}',
        '\u{2030}', '\u{201e}', '\u{201c}', '\u{201d}', '\u{2018}', '\u{2019}', '\u{201a}', '\u{2122}', '\u{fb01}', '\u{fb02}', '\u{0141}',
        '\u{0152}', '\u{0160}', '\u{0178}', '\u{017d}', '\u{0131}', '\u{0142}', '\u{0153}', '\u{0161}', '\u{017e}', '\u{fffd}', '\u{20ac}',
    ];
    match byte {
        0x18..=0x1f => LOW[usize::from(byte - 0x18)],
        0x7f | 0xad => char::REPLACEMENT_CHARACTER,
        0x80..=0xa0 => HIGH[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

/// Parses a PDF date (`D:YYYYMMDDHHmmSSOHH'mm'`, PDF 32000-1 §7.9.4): every field after the year
/// is optional, the offset may be `Z`, `+HH'mm'`, `+HHmm` or missing (taken as UTC, as most
/// readers do). `None` for anything out of range.
pub fn parse_pdf_date(text: &str) -> Option<DateTime<FixedOffset>> {
    let text = text.trim();
    let text = text.strip_prefix("D:").unwrap_or(text);
    let digits: String = text.chars().take_while(char::is_ascii_digit).take(14).collect();
    if digits.len() < 4 || !digits.len().is_multiple_of(2) {
        return None;
    }
    let field = |from: usize, default: u32| -> Option<u32> {
        match digits.get(from..from + 2) {
            Some(two) => two.parse().ok(),
            None => Some(default),
        }
    };
    let year: i32 = digits.get(0..4)?.parse().ok()?;
    let (month, day) = (field(4, 1)?, field(6, 1)?);
    let (hour, minute, second) = (field(8, 0)?, field(10, 0)?, field(12, 0)?);
    let naive = NaiveDate::from_ymd_opt(year, month, day)?.and_hms_opt(hour, minute, second)?;
    let offset = parse_offset(&text[digits.len()..])?;
    offset.from_local_datetime(&naive).single()
}

fn parse_offset(rest: &str) -> Option<FixedOffset> {
    let mut chars = rest.chars();
    let sign = match chars.next() {
        None | Some('Z') | Some('z') => return FixedOffset::east_opt(0),
        Some('+') => 1,
        Some('-') => -1,
        Some(_) => return None,
    };
    let digits: String = chars.filter(char::is_ascii_digit).take(4).collect();
    let hours: i32 = digits.get(0..2)?.parse().ok()?;
    let minutes: i32 = match digits.get(2..4) {
        Some(two) => two.parse().ok()?,
        None => 0,
    };
    if hours > 23 || minutes > 59 {
        return None;
    }
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60))
}

/// The revision structure read from the raw bytes: every `startxref N %%EOF` ends one revision,
/// and the trailers' `/Prev` chain counts the cross-reference sections even where a tool left out
/// an end marker.
#[derive(Debug, Default)]
struct Revisions {
    sections: usize,
    chain: usize,
    linearized: bool,
    signature_sections: usize,
}

impl Revisions {
    fn scan(bytes: &[u8]) -> Self {
        let ends = revision_ends(bytes);
        let linearized = find(&bytes[..bytes.len().min(LINEARIZATION_WINDOW)], b"/Linearized").is_some();
        // A linearised file's first two sections (first-page and main) are one original save.
        let original = if linearized { 2 } else { 1 };
        let mut signature_sections = 0;
        let mut start = 0;
        for (index, end) in ends.iter().enumerate() {
            let section = &bytes[start..end.eof_end];
            if index >= original && is_signature_revision(section) {
                signature_sections += 1;
            }
            start = end.eof_end;
        }
        let chain = ends.last().map_or(0, |last| xref_chain_length(bytes, last.xref_offset));
        Self {
            sections: ends.len(),
            chain,
            linearized,
            signature_sections,
        }
    }

    fn updates(&self) -> usize {
        let original = if self.linearized { 2 } else { 1 };
        self.sections.max(self.chain).saturating_sub(original)
    }

    /// Updates that did more than sign.
    fn edits(&self) -> usize {
        self.updates().saturating_sub(self.signature_sections)
    }
}

/// Adding a signature or a document timestamp (and the validation data of long-term signatures)
/// is what signing tools append.
fn is_signature_revision(section: &[u8]) -> bool {
    find(section, b"/ByteRange").is_some() || find(section, b"/DocTimeStamp").is_some() || find(section, b"/DSS").is_some()
}

struct RevisionEnd {
    xref_offset: usize,
    eof_end: usize,
}

fn is_pdf_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0')
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && is_pdf_space(bytes[at]) {
        at += 1;
    }
    at
}

/// Reads the decimal number at `at` (at most 20 digits).
fn number_at(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let digits = bytes.get(at..)?.iter().take(20).take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let text = std::str::from_utf8(&bytes[at..at + digits]).ok()?;
    Some((text.parse().ok()?, at + digits))
}

/// Every `startxref <offset> %%EOF` in the file, in order.
fn revision_ends(bytes: &[u8]) -> Vec<RevisionEnd> {
    const KEYWORD: &[u8] = b"startxref";
    const EOF: &[u8] = b"%%EOF";
    let mut ends = Vec::new();
    let mut from = 0;
    while let Some(found) = find(&bytes[from..], KEYWORD) {
        let after_keyword = from + found + KEYWORD.len();
        from = after_keyword;
        let Some((xref_offset, after_number)) = number_at(bytes, skip_space(bytes, after_keyword)) else {
            continue;
        };
        let eof_at = skip_space(bytes, after_number);
        if bytes.get(eof_at..eof_at + EOF.len()) == Some(EOF) {
            ends.push(RevisionEnd {
                xref_offset,
                eof_end: eof_at + EOF.len(),
            });
            from = eof_at + EOF.len();
        }
    }
    ends
}

/// Cross-reference sections reached from `start` through `/Prev`, loops and bad offsets included
/// (they end the walk).
fn xref_chain_length(bytes: &[u8], start: usize) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut next = Some(start);
    while let Some(offset) = next {
        if offset >= bytes.len() || !seen.insert(offset) || seen.len() > MAX_XREF_CHAIN {
            break;
        }
        next = prev_offset(bytes, offset);
    }
    seen.len()
}

/// The `/Prev` of the cross-reference section at `offset`: in the `trailer` after a classic
/// table, or in the dictionary of a cross-reference stream.
fn prev_offset(bytes: &[u8], offset: usize) -> Option<usize> {
    let rest = &bytes[offset..];
    let dictionary = if rest.starts_with(b"xref") {
        let trailer = find(rest, b"trailer")?;
        let after = &rest[trailer..];
        let end = find(after, b"startxref").unwrap_or(after.len());
        &after[..end]
    } else {
        let window = &rest[..rest.len().min(64 * 1024)];
        let end = find(window, b"stream")?;
        &window[..end]
    };
    let key = find(dictionary, b"/Prev")?;
    let (prev, _) = number_at(dictionary, skip_space(dictionary, key + b"/Prev".len()))?;
    Some(prev)
}

#[cfg(test)]
pub mod tests_support {
    /// (revisions, updates, linearised) as the inspection counts them.
    pub fn revisions(bytes: &[u8]) -> (usize, usize, bool) {
        let revisions = super::Revisions::scan(bytes);
        (revisions.sections.max(revisions.chain), revisions.updates(), revisions.linearized)
    }
}
