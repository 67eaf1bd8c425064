//! Writing a zone from its fields with fresh check digits: the inverse of the parser, so tests
//! (and the corpus of rendered MRZs) can produce valid zones and then break exactly one digit.

use chrono::NaiveDate;

use super::check_digit;
use super::{Mrz, MrzFormat, Sex};

/// The lines of `mrz`'s layout holding its fields, every check digit computed (the `checks`,
/// `corrections`, `unreadable` and `lines` of `mrz` are ignored). Fields too long for their
/// place are truncated, as issuers do; characters outside the MRZ set become fillers.
pub fn encode(mrz: &Mrz) -> Vec<String> {
    match mrz.format {
        MrzFormat::Td1 => td1(mrz),
        MrzFormat::Td2 => td2(mrz),
        MrzFormat::Td3 => td3(mrz),
        MrzFormat::FrenchIdLegacy => french_legacy(mrz),
    }
}

/// `value` in MRZ characters, padded with fillers or truncated to `width`.
fn fit(value: &str, width: usize) -> String {
    let mut out: String = value
        .chars()
        .map(|c| c.to_ascii_uppercase())
        .map(|c| if c.is_ascii_uppercase() || c.is_ascii_digit() { c } else { '<' })
        .take(width)
        .collect();
    while out.len() < width {
        out.push('<');
    }
    out
}

fn digit(data: &str) -> char {
    // `fit` only produces MRZ characters, which all have a value.
    check_digit::digit_char(data.as_bytes()).unwrap_or('<')
}

fn date(value: Option<NaiveDate>) -> String {
    value.map_or_else(|| "<<<<<<".to_owned(), |d| d.format("%y%m%d").to_string())
}

fn dated(value: Option<NaiveDate>) -> String {
    let text = date(value);
    format!("{text}{}", digit(&text))
}

fn sex(value: Option<Sex>) -> char {
    value.map_or('<', Sex::as_char)
}

fn icao_name(mrz: &Mrz, width: usize) -> String {
    let name = if mrz.given_names.is_empty() {
        mrz.surname.clone()
    } else {
        format!("{}<<{}", mrz.surname, mrz.given_names)
    };
    fit(&name, width)
}

/// The document number, its check digit, and the optional data of a TD1 line 1 or TD2 line 2:
/// a number longer than 9 characters continues in the optional data (filler in the check digit
/// place, then the rest, its check digit and a filler).
fn number_and_optional(mrz: &Mrz, optional_width: usize) -> String {
    let number = fit(&mrz.document_number, mrz.document_number.len());
    if number.len() <= 9 {
        let number = fit(&number, 9);
        return format!("{number}{}{}", digit(&number), fit(&mrz.optional_data, optional_width));
    }
    let (first, rest) = number.split_at(9);
    let optional = format!("{rest}{}<{}", digit(&number), mrz.optional_data);
    format!("{first}<{}", fit(&optional, optional_width))
}

fn header(mrz: &Mrz) -> String {
    format!("{}{}", fit(&mrz.document_code, 2), fit(&mrz.issuing_state, 3))
}

fn is_visa(mrz: &Mrz) -> bool {
    mrz.document_code.starts_with('V')
}

fn td1(mrz: &Mrz) -> Vec<String> {
    let line1 = format!("{}{}", header(mrz), number_and_optional(mrz, 15));
    let middle = format!(
        "{}{}{}{}{}",
        dated(mrz.birth_date),
        sex(mrz.sex),
        dated(mrz.expiry_date),
        fit(&mrz.nationality, 3),
        fit(&mrz.optional_data_2, 11)
    );
    let composite = format!("{}{}{}{}", &line1[5..30], &middle[0..7], &middle[8..15], &middle[18..29]);
    vec![line1, format!("{middle}{}", digit(&composite)), icao_name(mrz, 30)]
}

fn td2(mrz: &Mrz) -> Vec<String> {
    let line1 = format!("{}{}", header(mrz), icao_name(mrz, 31));
    // MRV-B visas have no composite: their optional data takes its place.
    let number = number_and_optional(mrz, if is_visa(mrz) { 8 } else { 7 });
    let (number, optional) = number.split_at(10);
    let line2 = format!(
        "{number}{}{}{}{}{optional}",
        fit(&mrz.nationality, 3),
        dated(mrz.birth_date),
        sex(mrz.sex),
        dated(mrz.expiry_date)
    );
    if is_visa(mrz) {
        return vec![line1, line2];
    }
    let composite = format!("{}{}{}", &line2[0..10], &line2[13..20], &line2[21..35]);
    vec![line1, format!("{line2}{}", digit(&composite))]
}

fn td3(mrz: &Mrz) -> Vec<String> {
    let line1 = format!("{}{}", header(mrz), icao_name(mrz, 39));
    let number = fit(&mrz.document_number, 9);
    let start = format!(
        "{number}{}{}{}{}{}",
        digit(&number),
        fit(&mrz.nationality, 3),
        dated(mrz.birth_date),
        sex(mrz.sex),
        dated(mrz.expiry_date)
    );
    if is_visa(mrz) {
        return vec![line1, format!("{start}{}", fit(&mrz.optional_data, 16))];
    }
    // An empty personal number gets 0, not the filler ICAO also allows, as the samples do.
    let personal = fit(&mrz.optional_data, 14);
    let line2 = format!("{start}{personal}{}", digit(&personal));
    let composite = format!("{}{}{}", &line2[0..10], &line2[13..20], &line2[21..43]);
    vec![line1, format!("{line2}{}", digit(&composite))]
}

fn french_legacy(mrz: &Mrz) -> Vec<String> {
    let line1 = format!("IDFRA{}{}", fit(&mrz.surname, 25), fit(&mrz.optional_data, 6));
    let number = fit(&mrz.document_number, 12);
    // The card separates given names with a double filler.
    let given = mrz.given_names.split_whitespace().collect::<Vec<_>>().join("<<");
    let line2 = format!(
        "{number}{}{}{}{}",
        digit(&number),
        fit(&given, 14),
        dated(mrz.birth_date),
        sex(mrz.sex)
    );
    let composite = format!("{line1}{line2}");
    vec![line1, format!("{line2}{}", digit(&composite))]
}
