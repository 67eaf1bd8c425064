//! The message and annex zones (spec §3.4, §3.6): identifier + value blocks, each read with its identifier's
//! length rule, so a value can neither run into the next field nor be cut short unnoticed. C40 zones are
//! the text a barcode reader returns; binary zones (spec §3.4.2) carry their lengths.

use serde::Serialize;

use super::error::Malformation;
use super::identifiers::{self, DataIdentifier};

/// Ends a variable-length value (spec §3.4.1).
pub const GS: u8 = 0x1D;
/// Ends a truncated value.
pub const RS: u8 = 0x1E;
/// Ends the signed data; the signature follows.
pub const US: u8 = 0x1F;
/// In a binary zone, the identifier that opens the signature block.
pub const BINARY_SIGNATURE_ID: u8 = 0xFF;

/// One value of the message or annex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Field {
    /// Data identifier, e.g. `24`; two hex digits in a binary zone.
    pub id: String,
    /// The value as encoded in the seal; hex bytes in a binary zone, whose perimeter defines no text fields.
    pub value: String,
    /// The issuer cut the value to fit (it ended with RS).
    pub truncated: bool,
    /// The value is shorter than its maximum but no GS ended it, against spec §3.4.1 (see [`parse_c40_zone`]).
    pub separator_missing: bool,
}

/// Alternatives tried over a whole zone (see [`parse_c40_zone`]): bounds the work a hostile payload can cause.
const BACKTRACK_BUDGET: usize = 64;

/// Lengths issuers use without GS although the identifier's maximum is larger. EORI numbers have at most 20
/// characters in §7.12 ("fixé à 17 car en France", says D2), and the customs reference codes of §16.2 (types
/// C2 to C6) write 17-character EORIs followed directly by the next field.
const UNTERMINATED_LENGTHS: &[(&str, usize)] = &[("D2", 17), ("DH", 17), ("DP", 17), ("DW", 17)];

/// A variable value that ran to its maximum with the next field right after it, and that could instead have
/// one of the [`UNTERMINATED_LENGTHS`].
struct Choice {
    /// Index of the field in the list being built.
    index: usize,
    def: &'static DataIdentifier,
    start: usize,
    len: usize,
}

/// One field as read: where the next one starts, its definition, whether it is a [`Choice`], and the
/// departure from its length rule, if any (the field then holds what could be delimited).
struct Reading {
    field: Field,
    next: usize,
    def: &'static DataIdentifier,
    at_max: bool,
    fault: Option<Malformation>,
}

/// Parses a C40 zone; `base` is the zone's offset in the payload, for error messages.
///
/// The spec's rules come first: a value at its maximum length needs no separator. Only when that reading fails
/// further on is a value of the identifiers of [`UNTERMINATED_LENGTHS`] read at that length instead, latest
/// first; it is marked [`Field::separator_missing`]. The error reported is the one of the rules' reading.
pub fn parse_c40_zone(zone: &[u8], base: usize) -> Result<Vec<Field>, Malformation> {
    let mut fields = Vec::new();
    let mut choices: Vec<Choice> = Vec::new();
    let mut first_error = None;
    let mut budget = BACKTRACK_BUDGET;
    let mut pos = 0;
    while pos < zone.len() {
        let read = read_field(zone, pos, base).and_then(|r| match r.fault {
            Some(fault) => Err(fault),
            None => Ok(r),
        });
        match read {
            Ok(Reading {
                field, next, def, at_max, ..
            }) => {
                let unterminated = UNTERMINATED_LENGTHS
                    .iter()
                    .find(|(id, len)| *id == def.id && *len < field.value.len());
                if let (true, Some(&(_, len))) = (at_max, unterminated) {
                    choices.push(Choice {
                        index: fields.len(),
                        def,
                        start: pos + 2,
                        len,
                    });
                }
                fields.push(field);
                pos = next;
            }
            Err(error) => {
                let error = first_error.get_or_insert(error).clone();
                pos = backtrack(zone, &mut fields, &mut choices, &mut budget).ok_or(error)?;
            }
        }
    }
    Ok(fields)
}

/// The signed message zone: read by the rules of [`parse_c40_zone`] when it follows them; otherwise read
/// again field by field, keeping each departure the specification forbids but that leaves the zone readable
/// (an identifier §7 does not define, a value of the wrong length, a truncated fixed value), so the seal's
/// signature can still be checked and each departure reported. Other faults (a control character inside a
/// value) still make the zone malformed.
pub fn parse_c40_message(zone: &[u8], base: usize) -> Result<(Vec<Field>, Vec<Malformation>), Malformation> {
    match parse_c40_zone(zone, base) {
        Ok(fields) => Ok((fields, Vec::new())),
        Err(error) if !is_departure(&error) => Err(error),
        Err(_) => parse_keeping_departures(zone, base),
    }
}

/// The faults after which the rest of a zone can still be delimited.
fn is_departure(error: &Malformation) -> bool {
    matches!(
        error,
        Malformation::UnknownIdentifier { .. } | Malformation::WrongLength { .. } | Malformation::TruncatedFixedField { .. }
    )
}

/// One pass without backtracking; an undefined identifier's value is taken to run to the next separator, the
/// only delimiter left when its length rule is unknown.
fn parse_keeping_departures(zone: &[u8], base: usize) -> Result<(Vec<Field>, Vec<Malformation>), Malformation> {
    let (mut fields, mut departures) = (Vec::new(), Vec::new());
    let mut pos = 0;
    while pos < zone.len() {
        match read_field(zone, pos, base) {
            Ok(read) => {
                departures.extend(read.fault);
                fields.push(read.field);
                pos = read.next;
            }
            Err(error @ Malformation::UnknownIdentifier { .. }) => {
                departures.push(error);
                pos = zone[pos..]
                    .iter()
                    .position(|b| is_separator(*b))
                    .map_or(zone.len(), |i| pos + i + 1);
            }
            Err(error) => return Err(error),
        }
    }
    Ok((fields, departures))
}

/// Takes the latest untried [`Choice`]; returns where parsing resumes.
fn backtrack(zone: &[u8], fields: &mut Vec<Field>, choices: &mut Vec<Choice>, budget: &mut usize) -> Option<usize> {
    *budget = budget.checked_sub(1)?;
    let choice = choices.pop()?;
    let value = &zone[choice.start..choice.start + choice.len];
    fields.truncate(choice.index);
    fields.push(Field {
        separator_missing: true,
        ..field(choice.def, value, false)
    });
    Some(choice.start + choice.len)
}

/// One field at `pos`; `Err` only when the identifier is undefined or a value holds a forbidden character.
fn read_field(zone: &[u8], pos: usize, base: usize) -> Result<Reading, Malformation> {
    let def = identifier_at(zone, pos, base)?;
    match def.fixed_len() {
        Some(len) => read_fixed(zone, pos + 2, def, len, base),
        None => read_variable(zone, pos + 2, def, base),
    }
}

fn identifier_at(zone: &[u8], pos: usize, base: usize) -> Result<&'static DataIdentifier, Malformation> {
    let raw = zone.get(pos..pos + 2).unwrap_or(&zone[pos..]);
    let unknown = || Malformation::UnknownIdentifier {
        id: raw.escape_ascii().to_string(),
        offset: base + pos,
    };
    std::str::from_utf8(raw).ok().and_then(identifiers::lookup).ok_or_else(unknown)
}

/// A fixed-length value is exactly its length, with no separator needed (spec §3.4.1, "Règles d'encodage").
/// One cut short by a separator or by the end of the zone is kept up to there, with its fault.
fn read_fixed(zone: &[u8], start: usize, def: &'static DataIdentifier, len: usize, base: usize) -> Result<Reading, Malformation> {
    let start = start.min(zone.len());
    let available = zone.len() - start;
    let value = &zone[start..(start + len).min(zone.len())];
    let short_at = value
        .iter()
        .position(|b| is_separator(*b))
        .or((available < len).then_some(value.len()));
    if let Some(actual) = short_at {
        let value = &value[..actual];
        check_characters(value, start, base)?;
        let end = start + actual;
        let truncated = zone.get(end) == Some(&RS);
        let next = if end < zone.len() { end + 1 } else { end };
        return Ok(Reading {
            field: field(def, value, truncated),
            next,
            def,
            at_max: false,
            fault: Some(wrong_length(def, start, actual, base)),
        });
    }
    check_characters(value, start, base)?;
    let mut next = start + len;
    let mut fault = None;
    match zone.get(next) {
        Some(&RS) => {
            fault = Some(Malformation::TruncatedFixedField {
                id: def.id.clone(),
                offset: base + start - 2,
            });
            next += 1;
        }
        // Not required after a fixed value, but unambiguous (no identifier starts with GS): some issuers write it.
        Some(&GS) => next += 1,
        _ => {}
    }
    Ok(Reading {
        field: field(def, value, fault.is_some()),
        next,
        def,
        at_max: false,
        fault,
    })
}

/// A variable value ends at GS (complete), at RS (truncated), at the end of the zone, or at its maximum length,
/// where no separator is needed (spec §3.4.1) but one may still follow. `at_max` says the value reached its
/// maximum with another field right after it.
fn read_variable(zone: &[u8], start: usize, def: &'static DataIdentifier, base: usize) -> Result<Reading, Malformation> {
    let start = start.min(zone.len());
    let limit = def.max.map_or(zone.len(), |max| (start + max).min(zone.len()));
    let end = zone[start..limit]
        .iter()
        .position(|b| is_separator(*b))
        .map_or(limit, |i| start + i);
    let value = &zone[start..end];
    check_characters(value, start, base)?;
    let (truncated, next, at_max) = match zone.get(end) {
        Some(&GS) => (false, end + 1, false),
        Some(&RS) => (true, end + 1, false),
        Some(_) => (false, end, true),
        None => (false, end, false),
    };
    let fault = (value.len() < def.min).then(|| wrong_length(def, start, value.len(), base));
    Ok(Reading {
        field: field(def, value, truncated),
        next,
        def,
        at_max,
        fault,
    })
}

fn field(def: &DataIdentifier, value: &[u8], truncated: bool) -> Field {
    // Values were checked to be printable ASCII, so the conversion is lossless.
    Field {
        id: def.id.clone(),
        value: String::from_utf8_lossy(value).into_owned(),
        truncated,
        separator_missing: false,
    }
}

fn wrong_length(def: &DataIdentifier, value_start: usize, actual: usize, base: usize) -> Malformation {
    Malformation::WrongLength {
        id: def.id.clone(),
        offset: base + value_start - 2,
        actual,
        allowed: def.allowed(),
    }
}

fn is_separator(b: u8) -> bool {
    b == GS || b == RS
}

/// The signed zone is C40 text (bytes 0x00–0x7F, spec §3.5.2); values are printable.
fn check_characters(value: &[u8], start: usize, base: usize) -> Result<(), Malformation> {
    match value.iter().position(|b| !(0x20..=0x7E).contains(b)) {
        Some(i) => Err(Malformation::InvalidCharacter {
            byte: value[i],
            offset: base + start + i,
        }),
        None => Ok(()),
    }
}

/// Parses binary blocks (spec §3.4.2) up to the signature block or the end; returns the fields and where the
/// parsing stopped (the signature block's offset in `zone`, or its length).
pub fn parse_binary_zone(zone: &[u8], base: usize) -> Result<(Vec<Field>, usize), Malformation> {
    let mut fields = Vec::new();
    let mut pos = 0;
    while let Some(&id) = zone.get(pos) {
        if id == BINARY_SIGNATURE_ID {
            break;
        }
        let (len, header_len) = binary_length(zone, pos + 1).ok_or(Malformation::TruncatedBlock { offset: base + pos })?;
        let start = pos + 1 + header_len;
        let value = zone
            .get(start..start + len)
            .ok_or(Malformation::TruncatedBlock { offset: base + pos })?;
        let value = value.iter().map(|b| format!("{b:02X}")).collect();
        fields.push(Field {
            id: format!("{id:02X}"),
            value,
            truncated: false,
            separator_missing: false,
        });
        pos = start + len;
    }
    Ok((fields, pos))
}

/// A binary length: one byte up to 0xFE, or 0xFF then two bytes. Returns the length and the bytes it took.
fn binary_length(zone: &[u8], at: usize) -> Option<(usize, usize)> {
    match *zone.get(at)? {
        0xFF => Some((usize::from(u16::from_be_bytes([*zone.get(at + 1)?, *zone.get(at + 2)?])), 3)),
        n => Some((usize::from(n), 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(zone: &[u8]) -> Result<Vec<(String, String, bool)>, Malformation> {
        Ok(parse_c40_zone(zone, 0)?.into_iter().map(|f| (f.id, f.value, f.truncated)).collect())
    }

    fn f(id: &str, value: &str, truncated: bool) -> (String, String, bool) {
        (id.into(), value.into(), truncated)
    }

    #[test]
    fn spec_encoding_rules() {
        // Spec §3.4.1: "2435000" (fixed), "2CMARSE<RS>" (truncated), "18134985638" (last), "4114732<GS>".
        assert_eq!(parse(b"2435000").unwrap(), [f("24", "35000", false)]);
        assert_eq!(parse(b"2CMARSE\x1e").unwrap(), [f("2C", "MARSE", true)]);
        assert_eq!(parse(b"18134985638").unwrap(), [f("18", "134985638", false)]);
        assert_eq!(
            parse(b"4114732\x1d2435000").unwrap(),
            [f("41", "14732", false), f("24", "35000", false)]
        );
        assert_eq!(
            parse(b"2435000\x1d").unwrap(),
            [f("24", "35000", false)],
            "tolerated GS after a fixed value"
        );
    }

    #[test]
    fn variable_value_at_its_maximum_needs_no_separator() {
        let name = "A".repeat(38);
        let zone = format!("10{name}2435000");
        assert_eq!(parse(zone.as_bytes()).unwrap(), [f("10", &name, false), f("24", "35000", false)]);
        let zone = format!("10{name}\x1d2435000");
        assert_eq!(parse(zone.as_bytes()).unwrap().len(), 2);
    }

    #[test]
    fn a_missing_separator_is_found_by_backtracking() {
        // Spec §16.2, type C2: a 17-character EORI (maximum 20) followed by DY without GS.
        let fields = parse_c40_zone(b"DWFR345678901234567DY009", 0).unwrap();
        let got: Vec<_> = fields
            .iter()
            .map(|f| (f.id.as_str(), f.value.as_str(), f.separator_missing))
            .collect();
        assert_eq!(got, [("DW", "FR345678901234567", true), ("DY", "009", false)]);
        // A value at its maximum is read by the rule first, without backtracking.
        let twenty = "FR345678901234567890";
        let fields = parse_c40_zone(format!("DW{twenty}DY009").as_bytes(), 0).unwrap();
        assert_eq!((fields[0].value.as_str(), fields[0].separator_missing), (twenty, false));
        // When no shorter reading works either, the error is the one of the rules' reading.
        let err = parse_c40_zone(b"DWFR345678901234567ZZZZ", 0).unwrap_err();
        assert_eq!(
            err,
            Malformation::UnknownIdentifier {
                id: "Z".into(),
                offset: 22
            }
        );
        // No other identifier is shortened: a value that overruns is malformed, not re-split.
        // (12 at its maximum of 38 then ZZ; a re-split after 17 characters would make "DY009" and "BB…" parse.)
        let zone = format!("12{}DY009{}ZZ", "A".repeat(17), "B".repeat(16));
        assert!(matches!(parse_c40_zone(zone.as_bytes(), 0), Err(Malformation::UnknownIdentifier { ref id, .. }) if id == "ZZ"));
    }

    #[test]
    fn backtracking_work_is_bounded() {
        // Thousands of EORI values that could be shortened, then garbage: the budget ends the search.
        let mut zone = String::new();
        for _ in 0..2000 {
            zone.push_str("DWFR3456789012345670DY");
        }
        zone.push_str("ZZ");
        let started = std::time::Instant::now();
        assert!(parse_c40_zone(zone.as_bytes(), 0).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn empty_and_unbounded_values() {
        assert_eq!(
            parse(b"B3\x1dB712071973").unwrap(),
            [f("B3", "", false), f("B7", "12071973", false)]
        );
        let url = "NB2WS43TNFSXELLKOVZXI2LDMUXGM4RPGE4DSNRVGQ3TQNJTIFBA".repeat(3);
        assert_eq!(parse(format!("0C{url}\x1d").as_bytes()).unwrap(), [f("0C", &url, false)]);
    }

    #[test]
    fn unknown_identifiers_are_malformed() {
        assert!(matches!(parse(b"ZZ12"), Err(Malformation::UnknownIdentifier { ref id, offset: 0 }) if id == "ZZ"));
        assert!(matches!(
            parse(b"2435000\x1d\x1d"),
            Err(Malformation::UnknownIdentifier { offset: 8, .. })
        ));
        assert!(matches!(parse(b"24350002"), Err(Malformation::UnknownIdentifier { ref id, .. }) if id == "2"));
        assert!(matches!(parse(b"a1X"), Err(Malformation::UnknownIdentifier { .. })));
    }

    #[test]
    fn wrong_lengths_are_malformed() {
        // A fixed value cut short by a separator or by the end of the zone.
        let short = parse(b"2435\x1d4114732");
        assert!(
            matches!(short, Err(Malformation::WrongLength { ref id, actual: 2, .. }) if id == "24"),
            "{short:?}"
        );
        assert!(matches!(parse(b"24350"), Err(Malformation::WrongLength { actual: 3, .. })));
        // Below a variable minimum: the IBAN needs at least 14 characters.
        assert!(matches!(parse(b"31FR76\x1d"), Err(Malformation::WrongLength { ref id, actual: 4, .. }) if id == "31"));
        // A fixed value may not be truncated.
        assert!(matches!(parse(b"2435000\x1e"), Err(Malformation::TruncatedFixedField { .. })));
    }

    #[test]
    fn the_message_zone_is_read_past_its_departures() {
        // A conforming zone has none.
        assert_eq!(parse_c40_message(b"2435000", 0).unwrap().1, []);
        // Undefined identifier (its value runs to GS), short fixed value, value under its minimum, truncated
        // fixed value: each recorded, the rest read.
        let (fields, departures) = parse_c40_message(b"ZZ12\x1d2435\x1d31FR76\x1d2413001\x1e10AB", 0).unwrap();
        let got: Vec<_> = fields.iter().map(|f| (f.id.as_str(), f.value.as_str(), f.truncated)).collect();
        assert_eq!(
            got,
            [
                ("24", "35", false),
                ("31", "FR76", false),
                ("24", "13001", true),
                ("10", "AB", false)
            ]
        );
        assert!(
            matches!(&departures[..], [
            Malformation::UnknownIdentifier { id, offset: 0 },
            Malformation::WrongLength { offset: 5, actual: 2, .. },
            Malformation::WrongLength { offset: 10, actual: 4, .. },
            Malformation::TruncatedFixedField { offset: 17, .. },
        ] if id == "ZZ"),
            "{departures:?}"
        );
        // A fixed value cut by the end of the zone, and a stray GS.
        let (fields, departures) = parse_c40_message(b"2435000\x1d\x1d2413", 0).unwrap();
        assert_eq!((fields.len(), departures.len()), (2, 2), "{departures:?}");
        // The unterminated EORIs are still read by backtracking, without departure.
        assert_eq!(parse_c40_message(b"DWFR345678901234567DY009", 0).unwrap().1, []);
        // A control character is not a departure the zone can be read past.
        assert!(matches!(
            parse_c40_message(b"ZZ1\x1d10AB\x00", 0),
            Err(Malformation::InvalidCharacter { byte: 0, .. })
        ));
    }

    #[test]
    fn control_characters_inside_values_are_malformed() {
        assert!(matches!(
            parse(b"10AB\x1fCD"),
            Err(Malformation::InvalidCharacter { byte: 0x1F, offset: 4 })
        ));
        assert!(matches!(
            parse(b"10AB\xc3\xa9"),
            Err(Malformation::InvalidCharacter { byte: 0xC3, .. })
        ));
    }

    #[test]
    fn binary_blocks() {
        // Spec §3.4.2 examples: 0x0A 04 5A94B3DE, 0xBA 03 5FB3E1, 0xAF 00, then the signature block.
        let zone = [
            0x0A, 0x04, 0x5A, 0x94, 0xB3, 0xDE, 0xBA, 0x03, 0x5F, 0xB3, 0xE1, 0xAF, 0x00, 0xFF, 0x40,
        ];
        let (fields, stop) = parse_binary_zone(&zone, 0).unwrap();
        let got: Vec<_> = fields.iter().map(|f| (f.id.as_str(), f.value.as_str())).collect();
        assert_eq!(got, [("0A", "5A94B3DE"), ("BA", "5FB3E1"), ("AF", "")]);
        assert_eq!(stop, 13);
        let mut long = vec![0xCC, 0xFF, 0x07, 0x70];
        long.extend(std::iter::repeat_n(0x42, 0x770));
        assert_eq!(parse_binary_zone(&long, 0).unwrap().0[0].value.len(), 2 * 0x770);
        assert!(matches!(
            parse_binary_zone(&[0x0A, 0x04, 0x5A], 0),
            Err(Malformation::TruncatedBlock { offset: 0 })
        ));
        assert!(matches!(
            parse_binary_zone(&[0x0A, 0xFF, 0x07], 0),
            Err(Malformation::TruncatedBlock { .. })
        ));
    }
}
