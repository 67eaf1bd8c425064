//! Where each field lies in each layout (ICAO 9303 parts 4–6 and the French legacy identity
//! card) and which check digits cover what: the only file that knows column numbers.

use chrono::NaiveDate;

use super::fields::{name_text, normalise_line, split_icao_name, Century, Zone};
use super::{Mrz, MrzError, MrzField, MrzFormat};

/// Detects the layout from the number and lengths of the non-blank lines and reads it.
pub(super) fn parse(input: &[&str], today: NaiveDate) -> Result<Mrz, MrzError> {
    // OCR output may come as one string with line breaks, or with blank lines around the zone.
    let lines: Vec<Vec<u8>> = input
        .iter()
        .flat_map(|s| s.lines())
        .map(normalise_line)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return Err(MrzError::Empty);
    }
    let format = detect(&lines).ok_or_else(|| MrzError::UnknownLayout {
        lengths: lines.iter().map(Vec::len).collect(),
    })?;
    let mut zone = Zone::new(lines, today);
    let parsed = match format {
        MrzFormat::Td1 => td1(&mut zone),
        MrzFormat::Td2 => td2(&mut zone),
        MrzFormat::Td3 => td3(&mut zone),
        MrzFormat::FrenchIdLegacy => french_legacy(&mut zone),
    };
    Ok(Mrz {
        format,
        lines: zone.lines(),
        checks: std::mem::take(&mut zone.checks),
        corrections: std::mem::take(&mut zone.corrections),
        unreadable: std::mem::take(&mut zone.unreadable),
        ..parsed
    })
}

fn detect(lines: &[Vec<u8>]) -> Option<MrzFormat> {
    let lengths: Vec<usize> = lines.iter().map(Vec::len).collect();
    match lengths.as_slice() {
        [30, 30, 30] => Some(MrzFormat::Td1),
        [44, 44] => Some(MrzFormat::Td3),
        [36, 36] if is_french_legacy(&lines[0], &lines[1]) => Some(MrzFormat::FrenchIdLegacy),
        [36, 36] => Some(MrzFormat::Td2),
        _ => None,
    }
}

/// Both the French legacy card and a TD2 document may start `IDFRA`; only TD2 has the holder's
/// nationality (letters) where the legacy card has digits of its card number (columns 10–12).
fn is_french_legacy(first: &[u8], second: &[u8]) -> bool {
    let looks_like = |read: u8, expected: u8| read == expected || (expected == b'I' && read == b'1');
    let prefix = first.len() >= 5 && first.iter().zip(b"IDFRA").all(|(&r, &e)| looks_like(r, e));
    prefix && second.get(10..13).is_some_and(|s| s.iter().any(u8::is_ascii_digit))
}

/// The fields common to every layout, before their layout-specific placement is read.
fn empty(format: MrzFormat) -> Mrz {
    Mrz {
        format,
        lines: Vec::new(),
        document_code: String::new(),
        issuing_state: String::new(),
        surname: String::new(),
        given_names: String::new(),
        document_number: String::new(),
        nationality: String::new(),
        birth_date: None,
        sex: None,
        expiry_date: None,
        issue_month: None,
        optional_data: String::new(),
        optional_data_2: String::new(),
        checks: Vec::new(),
        corrections: Vec::new(),
        unreadable: Vec::new(),
    }
}

/// Document code (2) and issuing state (3) open the first line of every ICAO layout. Only the
/// code's first character is surely a letter: some states put a digit second (`C1`).
fn header(zone: &mut Zone, mrz: &mut Mrz) {
    zone.alpha(MrzField::DocumentCode, 0, 0..1);
    zone.alphanumeric(MrzField::DocumentCode, 0, 1..2);
    zone.alpha(MrzField::IssuingState, 0, 2..5);
    mrz.document_code = zone.text(0, 0..2);
    mrz.issuing_state = zone.text(0, 2..5);
}

/// The ICAO name field: corrections before the first `<<` belong to the surname, after it to the
/// given names, so a reviewer sees which was touched.
fn icao_names(zone: &mut Zone, mrz: &mut Mrz, line: usize, range: std::ops::Range<usize>) {
    let split = zone
        .bytes(line, range.clone())
        .windows(2)
        .position(|w| w == b"<<")
        .map_or(range.end, |at| range.start + at);
    zone.alpha(MrzField::Surname, line, range.start..split);
    zone.alpha(MrzField::GivenNames, line, split..range.end);
    (mrz.surname, mrz.given_names) = split_icao_name(&zone.text(line, range));
}

/// Visas (code `V…`) share the TD2/TD3 geometry but have neither composite nor personal number
/// check digit.
fn is_visa(mrz: &Mrz) -> bool {
    mrz.document_code.starts_with('V')
}

/// The block shared by TD1 line 2 and TD2/TD3 line 2 after the document number: birth date and
/// its check, sex, expiry and its check, nationality. `at` is where the birth date starts.
struct PersonBlock {
    line: usize,
    birth: usize,
    sex: usize,
    expiry: usize,
    nationality: usize,
}

fn person(zone: &mut Zone, mrz: &mut Mrz, at: PersonBlock) {
    zone.numeric(MrzField::BirthDate, at.line, at.birth..at.birth + 7);
    zone.numeric(MrzField::ExpiryDate, at.line, at.expiry..at.expiry + 7);
    zone.alpha(MrzField::Nationality, at.line, at.nationality..at.nationality + 3);
    mrz.birth_date = zone.date(MrzField::BirthDate, at.line, at.birth, Century::Past);
    mrz.sex = zone.sex(at.line, at.sex);
    mrz.expiry_date = zone.date(MrzField::ExpiryDate, at.line, at.expiry, Century::Expiry);
    mrz.nationality = zone.text(at.line, at.nationality..at.nationality + 3);
    zone.check(MrzField::BirthDate, &[(at.line, at.birth..at.birth + 6)], (at.line, at.birth + 6));
    zone.check(
        MrzField::ExpiryDate,
        &[(at.line, at.expiry..at.expiry + 6)],
        (at.line, at.expiry + 6),
    );
}

/// A document number of 9 characters, or longer when its check digit place holds a filler: the
/// rest then opens the optional data field, its check digit last, then a filler (ICAO 9303
/// parts 5 and 6). The check digit covers the whole number. Returns the number and what is left
/// of the optional data.
fn document_number(zone: &mut Zone, line: usize, start: usize, optional: std::ops::Range<usize>) -> (String, String) {
    zone.alphanumeric(MrzField::DocumentNumber, line, start..start + 9);
    zone.numeric(MrzField::DocumentNumber, line, start + 9..start + 10);
    zone.alphanumeric(MrzField::OptionalData, line, optional.clone());
    let first = zone.bytes(line, start..start + 9).to_vec();
    let digit = zone.byte(line, start + 9);
    let rest = zone.bytes(line, optional.clone()).to_vec();
    let overflow_len = rest.iter().position(|&c| c == b'<').unwrap_or(rest.len());
    if digit != b'<' || overflow_len == 0 {
        zone.check_bytes(MrzField::DocumentNumber, &first, digit);
        return (text(&first), text(&rest));
    }
    let (overflow, remaining) = rest.split_at(overflow_len);
    let (extra, check) = overflow.split_at(overflow_len - 1);
    let number = [first.as_slice(), extra].concat();
    zone.check_bytes(MrzField::DocumentNumber, &number, check.first().copied().unwrap_or(b'?'));
    // Skip the filler that ends the overflow.
    (text(&number), text(remaining.get(1..).unwrap_or(&[])))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim_end_matches('<').to_owned()
}

/// TD1: line 1 code, state, number, check, optional; line 2 birth, sex, expiry, nationality,
/// optional, composite; line 3 name.
fn td1(zone: &mut Zone) -> Mrz {
    let mut mrz = empty(MrzFormat::Td1);
    header(zone, &mut mrz);
    (mrz.document_number, mrz.optional_data) = document_number(zone, 0, 5, 15..30);
    person(
        zone,
        &mut mrz,
        PersonBlock {
            line: 1,
            birth: 0,
            sex: 7,
            expiry: 8,
            nationality: 15,
        },
    );
    zone.alphanumeric(MrzField::OptionalData, 1, 18..29);
    mrz.optional_data_2 = zone.text(1, 18..29);
    icao_names(zone, &mut mrz, 2, 0..30);
    zone.numeric(MrzField::Composite, 1, 29..30);
    zone.check(MrzField::Composite, &[(0, 5..30), (1, 0..7), (1, 8..15), (1, 18..29)], (1, 29));
    mrz
}

/// TD2: line 1 code, state, name; line 2 number, check, nationality, birth, sex, expiry,
/// optional, composite.
fn td2(zone: &mut Zone) -> Mrz {
    let mut mrz = empty(MrzFormat::Td2);
    header(zone, &mut mrz);
    icao_names(zone, &mut mrz, 0, 5..36);
    // MRV-B visas have no composite: their optional data takes its place.
    let optional = if is_visa(&mrz) { 28..36 } else { 28..35 };
    (mrz.document_number, mrz.optional_data) = document_number(zone, 1, 0, optional);
    person(
        zone,
        &mut mrz,
        PersonBlock {
            line: 1,
            birth: 13,
            sex: 20,
            expiry: 21,
            nationality: 10,
        },
    );
    if !is_visa(&mrz) {
        zone.numeric(MrzField::Composite, 1, 35..36);
        zone.check(MrzField::Composite, &[(1, 0..10), (1, 13..20), (1, 21..35)], (1, 35));
    }
    mrz
}

/// TD3: line 1 code, state, name; line 2 number, check, nationality, birth, sex, expiry,
/// personal number and its check, composite.
fn td3(zone: &mut Zone) -> Mrz {
    let mut mrz = empty(MrzFormat::Td3);
    header(zone, &mut mrz);
    icao_names(zone, &mut mrz, 0, 5..44);
    zone.alphanumeric(MrzField::DocumentNumber, 1, 0..9);
    zone.numeric(MrzField::DocumentNumber, 1, 9..10);
    mrz.document_number = zone.text(1, 0..9);
    zone.check(MrzField::DocumentNumber, &[(1, 0..9)], (1, 9));
    person(
        zone,
        &mut mrz,
        PersonBlock {
            line: 1,
            birth: 13,
            sex: 20,
            expiry: 21,
            nationality: 10,
        },
    );
    if is_visa(&mrz) {
        // MRV-A: the optional data runs to the end of the line, unchecked.
        zone.alphanumeric(MrzField::OptionalData, 1, 28..44);
        mrz.optional_data = zone.text(1, 28..44);
        return mrz;
    }
    zone.alphanumeric(MrzField::PersonalNumber, 1, 28..42);
    zone.numeric(MrzField::PersonalNumber, 1, 42..43);
    zone.numeric(MrzField::Composite, 1, 43..44);
    mrz.optional_data = zone.text(1, 28..42);
    zone.check(MrzField::PersonalNumber, &[(1, 28..42)], (1, 42));
    zone.check(MrzField::Composite, &[(1, 0..10), (1, 13..20), (1, 21..43)], (1, 43));
    mrz
}

/// French identity card 1988–2021. Line 1: `ID`, `FRA`, surname (25), department (3) and office
/// (3) of issue. Line 2: card number (12: issue year and month, department, 5-digit sequence),
/// its check, given names (14, separated by `<<`), birth date and its check, sex, and a
/// composite over everything before it on both lines. No expiry date, no nationality (the card
/// is only issued to French nationals).
fn french_legacy(zone: &mut Zone) -> Mrz {
    let mut mrz = empty(MrzFormat::FrenchIdLegacy);
    header(zone, &mut mrz);
    zone.alpha(MrzField::Surname, 0, 5..30);
    mrz.surname = name_text(&zone.text(0, 5..30));
    // Departments are digits except Corsica's 2A/2B; offices are digits.
    zone.alphanumeric(MrzField::AdministrativeCode, 0, 30..33);
    zone.numeric(MrzField::AdministrativeCode, 0, 33..36);
    mrz.optional_data = zone.text(0, 30..36);
    zone.numeric(MrzField::IssueDate, 1, 0..4);
    zone.alphanumeric(MrzField::DocumentNumber, 1, 4..7);
    zone.numeric(MrzField::DocumentNumber, 1, 7..13);
    mrz.document_number = zone.text(1, 0..12);
    mrz.issue_month = zone.year_month(MrzField::IssueDate, 1, 0);
    zone.alpha(MrzField::GivenNames, 1, 13..27);
    mrz.given_names = name_text(&zone.text(1, 13..27));
    zone.numeric(MrzField::BirthDate, 1, 27..34);
    mrz.birth_date = zone.date(MrzField::BirthDate, 1, 27, Century::Past);
    mrz.sex = zone.sex(1, 34);
    mrz.nationality = "FRA".to_owned();
    zone.numeric(MrzField::Composite, 1, 35..36);
    zone.check(MrzField::DocumentNumber, &[(1, 0..12)], (1, 12));
    zone.check(MrzField::BirthDate, &[(1, 27..33)], (1, 33));
    zone.check(MrzField::Composite, &[(0, 0..36), (1, 0..35)], (1, 35));
    mrz
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_told_apart_by_shape() {
        let line = |n: usize, start: &str| format!("{start}{}", "<".repeat(n - start.len())).into_bytes();
        assert_eq!(detect(&[line(30, "I"), line(30, ""), line(30, "")]), Some(MrzFormat::Td1));
        assert_eq!(detect(&[line(44, "P"), line(44, "")]), Some(MrzFormat::Td3));
        assert_eq!(detect(&[line(36, "I<UTO"), line(36, "D231458907UTO")]), Some(MrzFormat::Td2));
        assert_eq!(
            detect(&[line(36, "IDFRA"), line(36, "1809131055122")]),
            Some(MrzFormat::FrenchIdLegacy)
        );
        assert_eq!(
            detect(&[line(36, "1DFRA"), line(36, "1809131055122")]),
            Some(MrzFormat::FrenchIdLegacy)
        );
        assert_eq!(detect(&[line(36, "IDFRA"), line(36, "X12345678<FRA")]), Some(MrzFormat::Td2));
        assert_eq!(detect(&[line(44, ""), line(43, "")]), None);
        assert_eq!(detect(&[line(30, "")]), None);
    }

    #[test]
    fn unknown_shapes_and_empty_input_are_errors() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
        assert_eq!(parse(&[], today), Err(MrzError::Empty));
        assert_eq!(parse(&["  ", ""], today), Err(MrzError::Empty));
        assert_eq!(parse(&["ABC", "DEF"], today), Err(MrzError::UnknownLayout { lengths: vec![3, 3] }));
    }
}
