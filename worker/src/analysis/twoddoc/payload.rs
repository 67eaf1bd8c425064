//! Splits a decoded payload into its zones (spec §3.2): header, message, signature and annex, keeping the exact
//! bytes the signature covers: everything before US in C40 (the erratum of the README: not the "Données
//! signées" rows of the spec), everything before the 0xFF signature block in binary.

use std::sync::LazyLock;

use super::doctypes::{self, DocumentType};
use super::error::Malformation;
use super::header::{self, Header, HeaderEncoding};
use super::message::{self, Field, BINARY_SIGNATURE_ID, GS, US};

/// A 2D-Doc spans at most 16 DataMatrix codes (spec §3.8) of at most 1558 bytes each, up to 1.5 characters per
/// byte in C40: anything longer is not a seal, and refusing it bounds the parser's work.
pub const MAX_PAYLOAD_LEN: usize = 64 * 1024;

/// A payload read into its zones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zones<'a> {
    pub header: Header,
    pub document_type: &'static DocumentType,
    /// Header and message: the bytes the signature covers.
    pub signed: &'a [u8],
    pub message: Vec<Field>,
    /// Departures of the message zone from the specification that left it readable (see
    /// [`message::parse_c40_message`]); the signature is checked all the same.
    pub departures: Vec<Malformation>,
    /// As carried, whatever its length: whether that length fits the signer's key is the verification's call.
    pub signature: Vec<u8>,
    /// Unsigned data after the signature (spec §3.6), not to be relied upon.
    pub annex: Vec<Field>,
}

/// Reads a payload that starts with a 2D-Doc marker.
pub fn read(payload: &[u8]) -> Result<Zones<'_>, Malformation> {
    if payload.len() > MAX_PAYLOAD_LEN {
        return Err(Malformation::TooLong {
            len: payload.len(),
            max: MAX_PAYLOAD_LEN,
        });
    }
    let (header, header_len) = header::parse(payload)?;
    let document_type = document_type(&header)?;
    match header.encoding {
        HeaderEncoding::C40 => read_c40(trim_line_end(payload), header, header_len, document_type),
        HeaderEncoding::Binary => read_binary(payload, header, header_len, document_type),
    }
}

/// The perimeter and type give the message its definition (spec §5.1 step 1); the specification forbids
/// perimeters and types it does not define.
fn document_type(header: &Header) -> Result<&'static DocumentType, Malformation> {
    let perimeter = header.effective_perimeter();
    let expected = match header.encoding {
        HeaderEncoding::C40 => "01",
        HeaderEncoding::Binary => "0001",
    };
    if perimeter != expected || doctypes::perimeter(perimeter).is_none() {
        return Err(Malformation::UnknownPerimeter(perimeter.to_string()));
    }
    doctypes::lookup(perimeter, &header.document_type).ok_or_else(|| Malformation::UnknownDocumentType {
        perimeter: perimeter.into(),
        doc_type: header.document_type.clone(),
    })
}

/// Readers in keyboard mode end the text with a line break, which is never part of a seal.
fn trim_line_end(payload: &[u8]) -> &[u8] {
    let end = payload.iter().rposition(|b| !matches!(b, b'\r' | b'\n')).map_or(0, |i| i + 1);
    &payload[..end]
}

fn read_c40<'a>(
    payload: &'a [u8],
    header: Header,
    header_len: usize,
    document_type: &'static DocumentType,
) -> Result<Zones<'a>, Malformation> {
    let us = payload.iter().position(|b| *b == US).ok_or(Malformation::MissingSignature)?;
    let (message, departures) = message::parse_c40_message(&payload[header_len..us], header_len)?;
    if message.is_empty() {
        return Err(Malformation::EmptyMessage);
    }
    // After US: the Base32 signature, then, if an annex follows, GS and the annex (spec §3.6).
    let rest = &payload[us + 1..];
    let (signature_text, annex) = match rest.iter().position(|b| *b == GS) {
        Some(gs) => (&rest[..gs], Some((&rest[gs + 1..], us + 2 + gs))),
        None => (rest, None),
    };
    let annex = match annex {
        Some((zone, offset)) => message::parse_c40_zone(zone, offset)?,
        None => Vec::new(),
    };
    let signature = decode_base32(signature_text)?;
    Ok(Zones {
        header,
        document_type,
        signed: &payload[..us],
        message,
        departures,
        signature,
        annex,
    })
}

/// RFC 4648 Base32 without padding, ignoring the unused low bits of the last character: a seal cut inside its
/// signature is then reported by the signature's length rather than by an encoding detail.
static BASE32: LazyLock<data_encoding::Encoding> = LazyLock::new(|| {
    let mut spec = data_encoding::BASE32_NOPAD.specification();
    spec.check_trailing_bits = false;
    spec.encoding().unwrap_or_else(|_| data_encoding::BASE32_NOPAD.clone())
});

/// Base32 of RFC 4648; seals leave the padding out (spec §3.5.2) but a padded one is read too. A text cut
/// where no Base32 text can end (an incomplete last group) is read up to its last whole byte: the signature
/// is then shorter than its key needs, which the verification reports.
fn decode_base32(text: &[u8]) -> Result<Vec<u8>, Malformation> {
    let unpadded = &text[..text.iter().rposition(|b| *b != b'=').map_or(0, |i| i + 1)];
    if unpadded.is_empty() {
        return Err(Malformation::MissingSignature);
    }
    if let Some(bad) = unpadded.iter().find(|b| !matches!(b, b'A'..=b'Z' | b'2'..=b'7')) {
        let shown = [*bad].escape_ascii().to_string();
        return Err(Malformation::InvalidSignatureEncoding(format!(
            "'{shown}' is not a Base32 character"
        )));
    }
    let whole = (0..=unpadded.len()).rev().find(|n| matches!(n % 8, 0 | 2 | 4 | 5 | 7)).unwrap_or(0);
    BASE32
        .decode(&unpadded[..whole])
        .map_err(|e| Malformation::InvalidSignatureEncoding(e.to_string()))
        .and_then(|signature| match signature.is_empty() {
            true => Err(Malformation::MissingSignature),
            false => Ok(signature),
        })
}

fn read_binary<'a>(
    payload: &'a [u8],
    header: Header,
    header_len: usize,
    document_type: &'static DocumentType,
) -> Result<Zones<'a>, Malformation> {
    let (message, stop) = message::parse_binary_zone(&payload[header_len..], header_len)?;
    let signature_at = header_len + stop;
    if signature_at >= payload.len() {
        return Err(Malformation::MissingSignature);
    }
    if message.is_empty() {
        return Err(Malformation::EmptyMessage);
    }
    // 0xFF, one length byte, the signature (spec §3.5.2, "Format de signature Binaire").
    let truncated = Malformation::TruncatedBlock { offset: signature_at };
    let len = usize::from(*payload.get(signature_at + 1).ok_or(truncated.clone())?);
    let signature = payload.get(signature_at + 2..signature_at + 2 + len).ok_or(truncated)?.to_vec();
    let annex_at = signature_at + 2 + len;
    let (annex, annex_stop) = message::parse_binary_zone(&payload[annex_at..], annex_at)?;
    if annex_at + annex_stop < payload.len() {
        let id = format!("{BINARY_SIGNATURE_ID:02X}");
        return Err(Malformation::UnknownIdentifier {
            id,
            offset: annex_at + annex_stop,
        });
    }
    if signature.is_empty() {
        return Err(Malformation::MissingSignature);
    }
    Ok(Zones {
        header,
        document_type,
        signed: &payload[..signature_at],
        message,
        departures: Vec::new(),
        signature,
        annex,
    })
}
