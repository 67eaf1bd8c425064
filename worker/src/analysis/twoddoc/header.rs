//! The 2D-Doc header (spec §3.3): it names the authority and certificate that signed the seal, the issue and
//! signature dates the certificate is checked against, and the document type whose definition gives the
//! message its meaning. C40 versions 02, 03 and 04, and the binary version 04.

use chrono::{Days, NaiveDate};
use serde::Serialize;

use super::c40;
use super::error::Malformation;

/// The first byte of a binary 2D-Doc (spec §3.3.4); a C40 one starts with the text "DC".
pub const BINARY_MARKER: u8 = 0xDC;

/// Dates of C40 headers count days from this day (spec §3.3.1).
const EPOCH: NaiveDate = match NaiveDate::from_ymd_opt(2000, 1, 1) {
    Some(d) => d,
    None => panic!("2000-01-01 is a valid date"),
};

/// The "no date" value of a C40 header date.
const NO_DATE_C40: &str = "FFFF";
/// The "no date" value of a binary header date.
const NO_DATE_BINARY: u32 = 0xFF_FFFF;
/// Length of the binary header (spec §3.3.4).
const BINARY_HEADER_LEN: usize = 19;

/// How the header, and so the whole seal, is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeaderEncoding {
    C40,
    Binary,
}

/// A parsed 2D-Doc header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    pub encoding: HeaderEncoding,
    /// 2, 3 or 4.
    pub version: u8,
    /// Certification authority, e.g. `FR03`.
    pub ca_id: String,
    /// Certificate of that authority, e.g. `EDF0` (5 hex digits in binary headers).
    pub cert_id: String,
    /// `None` when the document is undated (`FFFF`).
    pub issue_date: Option<NaiveDate>,
    pub signature_date: NaiveDate,
    /// The dates as written in the header (hex), kept for reports that show the seal as read.
    pub issue_date_raw: String,
    pub signature_date_raw: String,
    /// Document type code, e.g. `01` (two hex digits in binary headers).
    pub document_type: String,
    /// `None` for version 02, whose only perimeter is `01`.
    pub perimeter: Option<String>,
    /// Issuing country: ISO 3166 alpha-2 in C40 version 04, alpha-3 in binary; `None` before version 04.
    pub country: Option<String>,
}

impl Header {
    /// The perimeter the document type is defined in, with version 02's implicit `01`.
    pub fn effective_perimeter(&self) -> &str {
        self.perimeter.as_deref().unwrap_or("01")
    }
}

/// Parses the header at the start of `payload`; returns it with its length in bytes.
pub fn parse(payload: &[u8]) -> Result<(Header, usize), Malformation> {
    match payload.first() {
        Some(&BINARY_MARKER) => parse_binary(payload),
        _ => parse_c40(payload),
    }
}

fn parse_c40(payload: &[u8]) -> Result<(Header, usize), Malformation> {
    if !payload.starts_with(b"DC") {
        let marker = payload.get(..2).unwrap_or(payload).escape_ascii().to_string();
        return Err(Malformation::InvalidHeaderField {
            field: "marker",
            value: marker,
        });
    }
    let version_text = payload.get(2..4).map(|v| v.escape_ascii().to_string()).unwrap_or_default();
    let (version, len) = match version_text.as_str() {
        "02" => (2, 22),
        "03" => (3, 24),
        "04" => (4, 26),
        _ => return Err(Malformation::UnsupportedVersion(version_text)),
    };
    let header = payload.get(..len).ok_or(Malformation::TruncatedHeader {
        version: version_text.clone(),
        expected: len,
        actual: payload.len(),
    })?;
    let issue_date_raw = text_field(header, 12..16, "issue date", is_hex)?;
    let signature_date_raw = text_field(header, 16..20, "signature date", is_hex)?;
    let header = Header {
        encoding: HeaderEncoding::C40,
        version,
        ca_id: text_field(header, 4..8, "certification authority", is_alnum)?,
        cert_id: text_field(header, 8..12, "certificate", is_alnum)?,
        issue_date: hex_days(&issue_date_raw, "issue date")?,
        signature_date: hex_days(&signature_date_raw, "signature date")?.ok_or(Malformation::InvalidDate {
            field: "signature date",
            value: signature_date_raw.clone(),
        })?,
        issue_date_raw,
        signature_date_raw,
        document_type: text_field(header, 20..22, "document type", is_alnum)?,
        perimeter: (version >= 3)
            .then(|| text_field(header, 22..24, "perimeter", is_alnum))
            .transpose()?,
        country: (version >= 4)
            .then(|| text_field(header, 24..26, "country", |b| b.is_ascii_uppercase()))
            .transpose()?,
    };
    Ok((header, len))
}

fn parse_binary(payload: &[u8]) -> Result<(Header, usize), Malformation> {
    let version = payload.get(1).copied().unwrap_or_default();
    if version != 4 {
        return Err(Malformation::UnsupportedVersion(format!("{version:#04x} (binary)")));
    }
    let h = payload.get(..BINARY_HEADER_LEN).ok_or(Malformation::TruncatedHeader {
        version: "04 (binary)".into(),
        expected: BINARY_HEADER_LEN,
        actual: payload.len(),
    })?;
    let country = c40::decode(&h[2..4]).map_err(|source| Malformation::BinaryHeader { field: "country", source })?;
    let signer = c40::decode(&h[4..10]).map_err(|source| Malformation::BinaryHeader { field: "signer", source })?;
    // Nine characters: the authority on four, then the certificate on five hex digits.
    let (ca_id, cert_id) = signer.split_at(4);
    check_text(ca_id, "certification authority", is_alnum)?;
    check_text(cert_id, "certificate", is_hex)?;
    check_text(&country, "country", |b| b.is_ascii_uppercase())?;
    let signature_date = binary_date(&h[13..16], "signature date")?;
    let header = Header {
        encoding: HeaderEncoding::Binary,
        version,
        ca_id: ca_id.to_string(),
        cert_id: cert_id.to_string(),
        issue_date: binary_date(&h[10..13], "issue date")?,
        signature_date: signature_date.ok_or(Malformation::InvalidDate {
            field: "signature date",
            value: hex(&h[13..16]),
        })?,
        issue_date_raw: hex(&h[10..13]),
        signature_date_raw: hex(&h[13..16]),
        document_type: format!("{:02X}", h[16]),
        perimeter: Some(format!("{:04X}", u16::from_be_bytes([h[17], h[18]]))),
        country: Some(country),
    };
    Ok((header, BINARY_HEADER_LEN))
}

/// A C40 header date: days since 2000-01-01 on four hex digits, `FFFF` for none.
pub fn hex_days(raw: &str, field: &'static str) -> Result<Option<NaiveDate>, Malformation> {
    if raw == NO_DATE_C40 {
        return Ok(None);
    }
    let invalid = || Malformation::InvalidDate {
        field,
        value: raw.to_string(),
    };
    if raw.len() != 4 || !raw.bytes().all(is_hex) {
        return Err(invalid());
    }
    let days = u64::from_str_radix(raw, 16).map_err(|_| invalid())?;
    EPOCH.checked_add_days(Days::new(days)).map(Some).ok_or_else(invalid)
}

/// A binary header date: the digits MMDDYYYY read as one unsigned integer on three bytes, `FFFFFF` for none.
fn binary_date(bytes: &[u8], field: &'static str) -> Result<Option<NaiveDate>, Malformation> {
    let value = bytes.iter().fold(0u32, |acc, b| acc << 8 | u32::from(*b));
    if value == NO_DATE_BINARY {
        return Ok(None);
    }
    let digits = format!("{value:08}");
    let parse = |range: std::ops::Range<usize>| digits.get(range).and_then(|d| d.parse::<u32>().ok());
    match (parse(0..2), parse(2..4), parse(4..8)) {
        (Some(month), Some(day), Some(year)) if digits.len() == 8 => {
            let year = i32::try_from(year).ok();
            year.and_then(|y| NaiveDate::from_ymd_opt(y, month, day)).map(Some)
        }
        _ => None,
    }
    .ok_or(Malformation::InvalidDate { field, value: hex(bytes) })
}

fn text_field(header: &[u8], range: std::ops::Range<usize>, field: &'static str, valid: fn(u8) -> bool) -> Result<String, Malformation> {
    let bytes = header.get(range).unwrap_or_default();
    if bytes.is_empty() || !bytes.iter().all(|b| valid(*b)) {
        return Err(Malformation::InvalidHeaderField {
            field,
            value: bytes.escape_ascii().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

fn check_text(text: &str, field: &'static str, valid: fn(u8) -> bool) -> Result<(), Malformation> {
    match text.bytes().all(valid) {
        true => Ok(()),
        false => Err(Malformation::InvalidHeaderField {
            field,
            value: text.to_string(),
        }),
    }
}

/// Header identifiers use `[A-Z0-9]` only (spec §3.3).
fn is_alnum(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'A'..=b'F').contains(&b)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn hex_dates_count_days_from_2000() {
        // Spec §3.3.1: 31 December 2011 is 4382 days, 0x111E; the examples 0E84 / 0E8A are 5 and 11 March 2010.
        assert_eq!(hex_days("111E", "d").unwrap(), Some(date("2011-12-31")));
        assert_eq!(hex_days("0E84", "d").unwrap(), Some(date("2010-03-05")));
        assert_eq!(hex_days("0E8A", "d").unwrap(), Some(date("2010-03-11")));
        assert_eq!(hex_days("0000", "d").unwrap(), Some(date("2000-01-01")));
        assert_eq!(hex_days("FFFF", "d").unwrap(), None);
        assert_eq!(hex_days("FFFE", "d").unwrap(), Some(date("2179-06-05")));
        for bad in ["0e84", "0E8", "0E8G", "+E84", ""] {
            assert!(matches!(hex_days(bad, "d"), Err(Malformation::InvalidDate { .. })), "{bad}");
        }
    }

    #[test]
    fn c40_headers_of_each_version() {
        // The examples of spec §3.3.1 to §3.3.3, followed by some message bytes.
        let (v2, len) = parse(b"DC02FR0AXT4A0E840E8A0124").unwrap();
        assert_eq!(
            (v2.version, len, v2.perimeter.as_deref(), v2.effective_perimeter()),
            (2, 22, None, "01")
        );
        assert_eq!(
            (v2.ca_id.as_str(), v2.cert_id.as_str(), v2.document_type.as_str()),
            ("FR0A", "XT4A", "01")
        );
        assert_eq!((v2.issue_date, v2.signature_date), (Some(date("2010-03-05")), date("2010-03-11")));
        let (v3, len) = parse(b"DC03FR0AXT4A0E840E8A010124").unwrap();
        assert_eq!(
            (v3.version, len, v3.perimeter.as_deref(), v3.country.as_deref()),
            (3, 24, Some("01"), None)
        );
        let (v4, len) = parse(b"DC04FR0AXT4AFFFF0E8A0101FR24").unwrap();
        assert_eq!((v4.version, len, v4.country.as_deref(), v4.issue_date), (4, 26, Some("FR"), None));
        assert_eq!((v4.issue_date_raw.as_str(), v4.signature_date_raw.as_str()), ("FFFF", "0E8A"));
    }

    #[test]
    fn c40_header_faults_are_malformations() {
        let cases: [(&[u8], &str); 8] = [
            (b"DC01FR0AXT4A0E840E8A01", "version 01"),
            (b"DC05FR0AXT4A0E840E8A0101FR", "version 05"),
            (b"DC04FR0AXT4A0E840E8A0101", "truncated"),
            (b"DC04fr0aXT4A0E840E8A0101FR", "lower case authority"),
            (b"DC04FR0AXT4A0E8Z0E8A0101FR", "bad hex date"),
            (b"DC04FR0AXT4A0E84FFFF0101FR", "no signature date"),
            (b"DC04FR0AXT4A0E840E8A0101F1", "numeric country"),
            (b"DC", "marker only"),
        ];
        for (payload, why) in cases {
            assert!(parse(payload).is_err(), "{why}");
        }
    }

    fn binary_header(signer: &str, issue: u32, signature: u32) -> Vec<u8> {
        let mut h = vec![BINARY_MARKER, 0x04];
        h.extend(c40::encode("FRA").unwrap());
        h.extend(c40::encode(signer).unwrap());
        h.extend(&issue.to_be_bytes()[1..]);
        h.extend(&signature.to_be_bytes()[1..]);
        h.extend([0x07, 0x00, 0x01]);
        h
    }

    #[test]
    fn binary_header_of_spec_example() {
        // Spec §3.3.4: 0x5FB3E1 is 27 June 1969 and 0x9961B0 is 5 October 2016.
        let bytes = binary_header("FR0112345", 0x5FB3E1, 0x9961B0);
        let (h, len) = parse(&bytes).unwrap();
        assert_eq!((h.encoding, h.version, len), (HeaderEncoding::Binary, 4, 19));
        assert_eq!(
            (h.ca_id.as_str(), h.cert_id.as_str(), h.country.as_deref()),
            ("FR01", "12345", Some("FRA"))
        );
        assert_eq!((h.issue_date, h.signature_date), (Some(date("1969-06-27")), date("2016-10-05")));
        assert_eq!((h.document_type.as_str(), h.effective_perimeter()), ("07", "0001"));
        let (undated, _) = parse(&binary_header("FR0112345", 0xFF_FFFF, 0x9961B0)).unwrap();
        assert_eq!((undated.issue_date, undated.issue_date_raw.as_str()), (None, "FFFFFF"));
    }

    #[test]
    fn binary_header_faults_are_malformations() {
        assert!(
            parse(&binary_header("FR011234G", 0x5FB3E1, 0x9961B0)).is_err(),
            "non-hex certificate"
        );
        assert!(parse(&binary_header("FR0112345", 13_011_969, 0x9961B0)).is_err(), "month 13");
        assert!(
            parse(&binary_header("FR0112345", 0x5FB3E1, 0xFF_FFFF)).is_err(),
            "no signature date"
        );
        assert!(parse(&binary_header("FR0112345", 0x5FB3E1, 0x9961B0)[..18]).is_err(), "truncated");
        let mut v3 = binary_header("FR0112345", 0x5FB3E1, 0x9961B0);
        v3[1] = 0x03;
        assert!(matches!(parse(&v3), Err(Malformation::UnsupportedVersion(_))));
    }
}
