//! The names of the programs a file's metadata says wrote it: EXIF `Software` and the XMP
//! packet's creator tool, history agents and Photoshop history. Editors record themselves there
//! on every save, which is the cheapest trace a retouched document leaves.
//!
//! Everything here reads untrusted bytes: sizes and counts are bounded, and no failure is more than
//! "nothing found".

use std::io::Cursor;

use common::document::FileKind;

/// Longest XMP packet parsed; real packets are a few kilobytes (Photoshop's history: tens).
const MAX_XMP_PACKET: usize = 1024 * 1024;
/// Most XMP packets read from one file (a JPEG may carry a main and an extended one).
const MAX_XMP_PACKETS: usize = 4;
/// Most software names kept from one file, and the longest name kept.
const MAX_NAMES: usize = 64;
const MAX_NAME_CHARS: usize = 200;

const XMP_NS: &str = "http://ns.adobe.com/xap/1.0/";
const RESOURCE_EVENT_NS: &str = "http://ns.adobe.com/xap/1.0/sType/ResourceEvent#";
const PHOTOSHOP_NS: &str = "http://ns.adobe.com/photoshop/1.0/";
const PDF_NS: &str = "http://ns.adobe.com/pdf/1.3/";

/// Software names found in an image file's EXIF and XMP metadata.
pub fn image_software(kind: FileKind, bytes: &[u8]) -> Vec<String> {
    let mut names = exif_software(kind, bytes);
    for packet in xmp_packets(bytes) {
        names.extend(xmp_software(packet));
    }
    names.truncate(MAX_NAMES);
    names
}

/// EXIF `Software` (0x0131) and `ProcessingSoftware` (0x000b) of every IFD.
fn exif_software(kind: FileKind, bytes: &[u8]) -> Vec<String> {
    if matches!(kind, FileKind::Pdf) {
        return Vec::new();
    }
    let mut reader = exif::Reader::new();
    // A damaged IFD after the one holding `Software` must not hide it.
    reader.continue_on_error(true);
    // The parser is not known to panic, but it reads hostile bytes: a bug there must cost the
    // finding, not the worker slot.
    let parsed = std::panic::catch_unwind(|| reader.read_from_container(&mut Cursor::new(bytes)));
    let exif = match parsed {
        Ok(Ok(exif)) => exif,
        Ok(Err(exif::Error::PartialResult(partial))) => partial.into_inner().0,
        Ok(Err(_)) | Err(_) => return Vec::new(),
    };
    let processing_software = exif::Tag(exif::Context::Tiff, 0x000b);
    exif.fields()
        .filter(|field| field.tag == exif::Tag::Software || field.tag == processing_software)
        .filter_map(|field| match &field.value {
            exif::Value::Ascii(parts) => Some(parts.iter().map(|p| String::from_utf8_lossy(p).into_owned()).collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .filter_map(clean_name)
        .take(MAX_NAMES)
        .collect()
}

/// The XMP packets (`<x:xmpmeta …</x:xmpmeta>`) found in the raw bytes, whatever the container:
/// JPEG APP1, PNG iTXt, WebP `XMP ` chunk and TIFF tag 700 all store the packet as plain UTF-8.
pub fn xmp_packets(bytes: &[u8]) -> Vec<&str> {
    const OPEN: &[u8] = b"<x:xmpmeta";
    const CLOSE: &[u8] = b"</x:xmpmeta>";
    let mut packets = Vec::new();
    let mut from = 0;
    while packets.len() < MAX_XMP_PACKETS {
        let Some(start) = find(&bytes[from..], OPEN).map(|i| from + i) else {
            break;
        };
        let window_end = start.saturating_add(MAX_XMP_PACKET).min(bytes.len());
        let Some(end) = find(&bytes[start..window_end], CLOSE).map(|i| start + i + CLOSE.len()) else {
            // Unterminated or oversized: skip this opening and look for another packet.
            from = start + OPEN.len();
            continue;
        };
        if let Ok(text) = std::str::from_utf8(&bytes[start..end]) {
            packets.push(text);
        }
        from = end;
    }
    packets
}

/// Software names an XMP packet records: `xmp:CreatorTool`, `pdf:Producer`, every
/// `stEvt:softwareAgent` of `xmpMM:History`, and Photoshop when `photoshop:History` is filled.
/// A packet that is not well-formed XML is searched as text instead.
pub fn xmp_software(packet: &str) -> Vec<String> {
    match roxmltree::Document::parse(packet) {
        Ok(document) => parsed_xmp_software(&document),
        Err(_) => scanned_xmp_software(packet),
    }
}

fn parsed_xmp_software(document: &roxmltree::Document<'_>) -> Vec<String> {
    let wanted = |ns: Option<&str>, name: &str| -> bool {
        matches!(
            (ns, name),
            (Some(XMP_NS), "CreatorTool") | (Some(RESOURCE_EVENT_NS), "softwareAgent") | (Some(PDF_NS), "Producer")
        )
    };
    let mut names = Vec::new();
    for node in document.descendants().filter(|n| n.is_element()) {
        for attribute in node.attributes() {
            if wanted(attribute.namespace(), attribute.name()) {
                names.extend(clean_name(attribute.value().to_owned()));
            }
        }
        let tag = node.tag_name();
        if wanted(tag.namespace(), tag.name()) {
            // The value may be plain text or wrapped in rdf:Alt/rdf:li.
            let text: String = node.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).collect();
            names.extend(clean_name(text));
        }
        if tag.namespace() == Some(PHOTOSHOP_NS) && tag.name() == "History" {
            let filled = node
                .descendants()
                .any(|n| n.is_text() && n.text().is_some_and(|t| !t.trim().is_empty()));
            if filled {
                names.push("Adobe Photoshop (history)".to_owned());
            }
        }
        if names.len() >= MAX_NAMES {
            break;
        }
    }
    names.truncate(MAX_NAMES);
    names
}

/// Best effort on a broken packet: the values after the known property names.
fn scanned_xmp_software(packet: &str) -> Vec<String> {
    let mut names = Vec::new();
    for key in ["xmp:CreatorTool", "stEvt:softwareAgent", "pdf:Producer"] {
        let mut rest = packet;
        while let Some(at) = rest.find(key) {
            rest = &rest[at + key.len()..];
            let value = if let Some(attr) = rest.strip_prefix("=\"") {
                attr.split('"').next()
            } else if let Some(element) = rest.strip_prefix('>') {
                element.split('<').next()
            } else {
                None
            };
            names.extend(value.and_then(|v| clean_name(v.to_owned())));
            if names.len() >= MAX_NAMES {
                return names;
            }
        }
    }
    if packet.contains("<photoshop:History>") && !packet.contains("<photoshop:History></photoshop:History>") {
        names.push("Adobe Photoshop (history)".to_owned());
    }
    names
}

/// Trimmed, control characters removed, bounded; `None` when nothing is left.
pub fn clean_name(raw: String) -> Option<String> {
    let cleaned: String = raw
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME_CHARS)
        .collect::<String>()
        .trim()
        .to_owned();
    (!cleaned.is_empty()).then_some(cleaned)
}

/// First position of `needle` in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    let first = needle[0];
    let mut from = 0;
    while let Some(offset) = haystack[from..=haystack.len() - needle.len()].iter().position(|&b| b == first) {
        let at = from + offset;
        if &haystack[at..at + needle.len()] == needle {
            return Some(at);
        }
        from = at + 1;
    }
    None
}
