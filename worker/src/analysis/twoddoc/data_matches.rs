//! `dataMatches`: whether the data signed in a 2D-Doc seal are the data printed on the page. A valid seal on a
//! page whose amount or name was edited afterwards is the fraud this catches, so every value a fraudster would
//! edit (names, address, amounts, references, key dates) is looked for on the page, each in the way it is
//! printed: names in any order with or without civility, amounts whatever their grouping, dates with separators.
//!
//! Numbers must match exactly after normalisation: a changed digit is the fraud. Only long words may differ by a
//! letter or two, and only in OCR'd text ([`Tolerance::Ocr`]), where such slips are the reader's, not the page's.

use std::collections::HashSet;

use chrono::{NaiveDate, Timelike};

use super::TwoDDocFinding;
use crate::analysis::text::normalise::{self, Amount};
use crate::analysis::text::{TextSource, VisibleText};

/// The outcome of comparing a seal's fields with the page.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataComparison {
    /// True iff at least one field was compared and none is missing from the page.
    pub matches: bool,
    /// Identifiers compared, in identifier order.
    pub compared: Vec<String>,
    /// Identifiers whose value is not on the page.
    pub mismatched: Vec<String>,
}

/// How forgiving word comparisons are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tolerance {
    /// Text from a PDF text layer: the issuer's own characters, so words must be equal once normalised.
    Exact,
    /// OCR'd text: long words may differ by one edit per 8 characters, and digits misread as look-alike letters
    /// (O for 0, I for 1) are read back as digits. Numbers still match exactly.
    Ocr,
}

/// How a value is looked for on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A person's name: its parts in any order, close together; a leading civility is optional.
    Name,
    /// An address line, a city or a company name: its words close together, in any order.
    Text,
    /// A postcode: the exact five digits.
    Postcode,
    /// An amount or a decimal count, compared as a number.
    Amount,
    /// An identifier (invoice, customer, tax number, SIRET, IBAN): its letters and digits exactly, possibly
    /// printed in groups.
    Reference,
    /// A year: the four digits.
    Year,
    /// A date encoded DDMMYYYY in the seal.
    DateDmy,
    /// A date encoded as four hex digits counting days since 2000-01-01 in the seal.
    DateHex,
    /// A date encoded YYYYMMDD in the seal (customs documents).
    DateYmd,
    /// A date and time encoded DDMMYYYYHHmm in the seal: the date, and the time as printed ("14:30", "14h30").
    DateTimeDmy,
}

/// The identifiers compared (spec v3.2.6 §7, perimeter 01), and how: every value the document types of §8 print as
/// a name, an address, a number, an amount or a date. Those not listed are not compared, because they are not
/// printed as such on the documents they belong to or say nothing a fraudster would change:
/// - 01–0C: technical data of the seal (document id, composing application, association date, page count, URL);
/// - 11, 15, 1J, 1N, 6H, 76, B6, C0, C5, F3: civility, title or sex alone, printed in many forms ("M.", "Monsieur");
/// - 1E, 1F: telephone numbers, seldom printed and written in many groupings;
/// - 1G, 1H, 5T, 65, 68, 7C–7J, 7O, AT, F5, LA: flags and codes whose printed form is a word ("Oui", "Négatif");
/// - 26, 2D, 34, 5J, 6I, 6Y, 67, 6C, A0, B5, B9, H1, H3: country codes, printed as country names if at all;
/// - 42 (household situation), 51, 52 (hours worked, fixed-width encodings), 5K, 5U, 6J, 6M, 6P, A5, A6, A8, A9,
///   AB, AM, AF, AG, BA, BD, BG, E0, E4–E6, F4, G0, G1, L4, L7, L8: codes from the specification's tables, printed
///   as their labels;
/// - AE (a time alone), BE, BF, D8, DY, H7–HB: counts, weights and values in fixed-width encodings whose printed
///   units the specification leaves to the issuer.
///
/// Identity-document identifiers beyond names and numbers are left to the MRZ checks.
const COMPARED: &[(&str, Kind)] = &[
    // Beneficiary and invoice recipient (families 1 and 2).
    ("10", Kind::Name),
    ("12", Kind::Name),
    ("13", Kind::Name),
    ("14", Kind::Name),
    ("16", Kind::Name),
    ("17", Kind::Name),
    ("18", Kind::Reference),
    ("19", Kind::Reference),
    ("1A", Kind::Reference),
    ("1B", Kind::Reference),
    ("1C", Kind::DateDmy),
    ("1D", Kind::Amount),
    ("1I", Kind::Name),
    ("1K", Kind::Name),
    ("1L", Kind::Name),
    ("1M", Kind::Name),
    ("1O", Kind::Name),
    ("1P", Kind::Name),
    ("20", Kind::Text),
    ("21", Kind::Text),
    ("22", Kind::Text),
    ("23", Kind::Text),
    ("24", Kind::Postcode),
    // The TSV says "Numérique" for the localities 25 and 2C: an extraction slip, they are place names.
    ("25", Kind::Text),
    ("27", Kind::Text),
    ("28", Kind::Text),
    ("29", Kind::Text),
    ("2A", Kind::Text),
    ("2B", Kind::Postcode),
    ("2C", Kind::Text),
    // Bank details.
    ("30", Kind::Name),
    ("31", Kind::Reference),
    ("32", Kind::Reference),
    ("33", Kind::Reference),
    ("35", Kind::Reference),
    ("36", Kind::DateHex),
    ("37", Kind::DateHex),
    ("38", Kind::Amount),
    ("39", Kind::Amount),
    // Tax notices.
    ("40", Kind::Reference),
    ("41", Kind::Amount),
    // "1,5" parts: a decimal number, compared as one.
    ("43", Kind::Amount),
    ("44", Kind::Reference),
    ("45", Kind::Year),
    ("46", Kind::Name),
    ("47", Kind::Reference),
    ("48", Kind::Name),
    ("49", Kind::Reference),
    ("4A", Kind::DateDmy),
    ("4B", Kind::DateDmy),
    // Payslips and employment.
    ("50", Kind::Reference),
    ("53", Kind::DateHex),
    ("54", Kind::DateHex),
    ("55", Kind::DateDmy),
    ("56", Kind::DateHex),
    ("57", Kind::DateDmy),
    ("58", Kind::Amount),
    ("59", Kind::Amount),
    ("5A", Kind::Amount),
    ("5B", Kind::Amount),
    ("5C", Kind::Amount),
    ("5D", Kind::Text),
    ("5E", Kind::Text),
    ("5F", Kind::Text),
    ("5G", Kind::Text),
    ("5H", Kind::Postcode),
    ("5I", Kind::Text),
    ("5L", Kind::Reference),
    ("5M", Kind::Text),
    ("5O", Kind::Name),
    ("5P", Kind::Name),
    ("5Q", Kind::Name),
    ("5R", Kind::Name),
    // Identity data printed on residence permits and certificates.
    ("60", Kind::Name),
    ("61", Kind::Name),
    ("62", Kind::Name),
    ("63", Kind::Name),
    ("64", Kind::Name),
    ("66", Kind::Reference),
    ("69", Kind::DateDmy),
    ("6G", Kind::Name),
    ("6S", Kind::Text),
    ("6T", Kind::Text),
    ("6U", Kind::Text),
    ("6V", Kind::Text),
    ("6W", Kind::Postcode),
    ("6X", Kind::Text),
    // Employment authorisations and foreigners' documents.
    ("5N", Kind::Reference),
    ("5Q", Kind::Name),
    ("5R", Kind::Name),
    ("5S", Kind::Text),
    ("6A", Kind::Text),
    ("6K", Kind::Reference),
    ("6L", Kind::DateDmy),
    ("6N", Kind::DateDmy),
    ("6O", Kind::DateDmy),
    ("6Q", Kind::Reference),
    ("6R", Kind::Reference),
    ("6Z", Kind::Reference),
    // Death certificates.
    ("70", Kind::DateTimeDmy),
    ("71", Kind::DateTimeDmy),
    ("72", Kind::Name),
    ("73", Kind::Name),
    ("74", Kind::Name),
    ("75", Kind::DateDmy),
    ("77", Kind::Text),
    ("78", Kind::Postcode),
    ("79", Kind::Text),
    ("7A", Kind::Postcode),
    ("7B", Kind::Text),
    ("7K", Kind::Reference),
    ("7L", Kind::Reference),
    ("7M", Kind::Text),
    ("7N", Kind::Text),
    // Professional cards and licences.
    ("80", Kind::Name),
    ("81", Kind::Name),
    ("82", Kind::Reference),
    ("83", Kind::Text),
    ("84", Kind::Text),
    ("85", Kind::Reference),
    ("86", Kind::Reference),
    // Bailiffs' deeds.
    ("90", Kind::Text),
    ("91", Kind::Text),
    ("92", Kind::Text),
    ("93", Kind::Text),
    ("94", Kind::Text),
    ("95", Kind::Reference),
    ("96", Kind::DateDmy),
    // Vehicles and driving licences.
    ("A1", Kind::Reference),
    ("A2", Kind::Text),
    ("A3", Kind::Text),
    ("A4", Kind::Reference),
    ("A7", Kind::Amount),
    ("AA", Kind::DateDmy),
    ("AC", Kind::Reference),
    ("AD", Kind::DateHex),
    ("AH", Kind::Reference),
    ("AI", Kind::DateDmy),
    ("AJ", Kind::Reference),
    ("AK", Kind::Reference),
    ("AL", Kind::Reference),
    ("AN", Kind::Amount),
    ("AO", Kind::Reference),
    ("AP", Kind::Text),
    ("AQ", Kind::Reference),
    ("AR", Kind::Text),
    ("AS", Kind::Text),
    ("AU", Kind::Text),
    ("AV", Kind::Text),
    ("AW", Kind::Text),
    ("AX", Kind::Text),
    ("AY", Kind::Postcode),
    ("AZ", Kind::Text),
    // Diplomas and student records.
    ("B0", Kind::Name),
    ("B1", Kind::Name),
    ("B2", Kind::Name),
    ("B3", Kind::Name),
    ("B4", Kind::Name),
    ("B7", Kind::DateDmy),
    ("B8", Kind::Text),
    ("BB", Kind::Reference),
    ("BC", Kind::Reference),
    ("BH", Kind::Text),
    ("BI", Kind::Text),
    ("BJ", Kind::Text),
    ("BK", Kind::Reference),
    // Electronic transfer of a vehicle.
    ("C1", Kind::Name),
    ("C2", Kind::Name),
    ("C3", Kind::DateTimeDmy),
    ("C4", Kind::DateDmy),
    ("C6", Kind::Name),
    ("C7", Kind::Name),
    ("C8", Kind::Text),
    ("C9", Kind::Postcode),
    ("CA", Kind::Text),
    ("CB", Kind::Reference),
    ("CC", Kind::DateTimeDmy),
    // Customs documents.
    ("D0", Kind::Reference),
    ("D1", Kind::Text),
    ("D2", Kind::Reference),
    ("D3", Kind::DateYmd),
    ("D4", Kind::DateYmd),
    ("D5", Kind::Reference),
    ("D6", Kind::Reference),
    ("D7", Kind::DateDmy),
    ("D9", Kind::DateDmy),
    ("DA", Kind::Reference),
    ("DB", Kind::Name),
    ("DC", Kind::Name),
    ("DD", Kind::DateDmy),
    ("DE", Kind::Text),
    ("DF", Kind::Reference),
    ("DG", Kind::Reference),
    ("DH", Kind::Reference),
    ("DI", Kind::Reference),
    ("DJ", Kind::Name),
    ("DK", Kind::Name),
    ("DL", Kind::DateDmy),
    ("DM", Kind::Text),
    ("DN", Kind::Reference),
    ("DO", Kind::Reference),
    ("DP", Kind::Reference),
    ("DQ", Kind::Name),
    ("DR", Kind::Name),
    ("DS", Kind::DateDmy),
    ("DT", Kind::Text),
    ("DU", Kind::Reference),
    ("DV", Kind::Reference),
    ("DW", Kind::Reference),
    ("DX", Kind::Reference),
    ("DZ", Kind::Reference),
    ("H0", Kind::Text),
    ("H2", Kind::Text),
    ("H4", Kind::DateDmy),
    ("H5", Kind::DateDmy),
    ("H6", Kind::Reference),
    ("HC", Kind::Text),
    ("HD", Kind::Text),
    ("HE", Kind::Text),
    ("HF", Kind::Text),
    ("HG", Kind::Text),
    ("HH", Kind::Reference),
    // Driving licence orders and records.
    ("E1", Kind::DateHex),
    ("E2", Kind::DateHex),
    ("E3", Kind::DateHex),
    ("E7", Kind::Reference),
    ("E8", Kind::DateTimeDmy),
    // Virological tests.
    ("F0", Kind::Name),
    ("F1", Kind::Name),
    ("F2", Kind::DateDmy),
    ("F6", Kind::DateTimeDmy),
    // Vaccination certificates.
    ("L0", Kind::Name),
    ("L1", Kind::Name),
    ("L2", Kind::DateDmy),
    ("L3", Kind::Text),
    ("L5", Kind::Text),
    ("L6", Kind::Text),
    ("L9", Kind::DateDmy),
    // Asylum seekers.
    ("G2", Kind::Reference),
    ("G3", Kind::DateDmy),
    ("G4", Kind::Amount),
    ("G5", Kind::Text),
];

/// Civilities a name line may start with; optional on the page.
const CIVILITIES: &[&str] = &[
    "M",
    "MR",
    "MM",
    "MME",
    "MMES",
    "MLLE",
    "MELLE",
    "MONSIEUR",
    "MADAME",
    "MADEMOISELLE",
    "MRS",
    "MS",
    "MISS",
    "DR",
    "ME",
    "MAITRE",
];

/// Longest run of page words an identifier may be printed across ("30 12 345 678 901" for a tax number).
const MAX_REFERENCE_GROUPS: usize = 8;
/// Extra words allowed between the words of a name or an address line on the page.
const WINDOW_SLACK: usize = 3;

/// Compares the seal's fields with the page text, with the tolerance OCR'd text needs (see [`Tolerance::Ocr`]).
/// [`compare_visible`] chooses the tolerance from the text's source.
pub fn compare(finding: &TwoDDocFinding, visible: &str) -> DataComparison {
    compare_with(finding, visible, Tolerance::Ocr)
}

/// Compares the seal's fields with the page's visible text, exactly for a PDF text layer and with OCR's
/// tolerance for OCR'd text.
pub fn compare_visible(finding: &TwoDDocFinding, visible: &VisibleText) -> DataComparison {
    let tolerance = match visible.source {
        TextSource::PdfTextLayer => Tolerance::Exact,
        TextSource::Ocr => Tolerance::Ocr,
    };
    compare_with(finding, &visible.text, tolerance)
}

/// Compares the seal's fields with `visible` under `tolerance`.
pub fn compare_with(finding: &TwoDDocFinding, visible: &str, tolerance: Tolerance) -> DataComparison {
    let page = Page::new(visible, tolerance);
    let mut result = DataComparison::default();
    for (id, value) in &finding.fields {
        let Some(kind) = COMPARED.iter().find(|(known, _)| known == id).map(|(_, kind)| *kind) else {
            continue;
        };
        let truncated = finding.message.iter().any(|f| &f.id == id && f.truncated);
        let Some(found) = page.contains(kind, value, truncated) else {
            continue;
        };
        result.compared.push(id.clone());
        if !found {
            result.mismatched.push(id.clone());
        }
    }
    result.matches = !result.compared.is_empty() && result.mismatched.is_empty();
    result
}

/// The page, read once into the forms values are compared in.
struct Page {
    tokens: Vec<String>,
    /// The tokens with OCR's digit look-alikes read as digits, for numeric identifiers (OCR only).
    digit_tokens: Option<Vec<String>>,
    /// OCR's readings the comparison forgives, prepared once (OCR only).
    ocr: Option<OcrReadings>,
    amounts: HashSet<Amount>,
    dates: HashSet<NaiveDate>,
    tolerance: Tolerance,
}

impl Page {
    fn new(text: &str, tolerance: Tolerance) -> Page {
        let tokens = normalise::tokens(text);
        let digit_tokens = (tolerance == Tolerance::Ocr).then(|| tokens.iter().map(|t| ocr_digits(t)).collect());
        let ocr = (tolerance == Tolerance::Ocr).then(|| OcrReadings::of(&tokens));
        Page {
            amounts: normalise::amounts_in(text).into_iter().collect(),
            dates: normalise::dates_in(text).into_iter().collect(),
            tokens,
            digit_tokens,
            ocr,
            tolerance,
        }
    }

    /// Whether the page shows `value`; `None` when the value cannot be compared (empty, unreadable as its kind,
    /// or truncated where only an exact comparison would do).
    fn contains(&self, kind: Kind, value: &str, truncated: bool) -> Option<bool> {
        if value.trim().is_empty() {
            return None;
        }
        match kind {
            Kind::Name => {
                let words = name_words(value, truncated);
                (!words.is_empty()).then(|| self.has_words(&words))
            }
            Kind::Text => {
                let words = text_words(value, truncated);
                (!words.is_empty()).then(|| self.has_words(&words))
            }
            _ if truncated => None,
            Kind::Postcode | Kind::Year => {
                let digits: String = value.chars().filter(|c| !c.is_whitespace()).collect();
                (!digits.is_empty()).then(|| self.has_reference(&digits))
            }
            Kind::Amount => match normalise::parse_amount(value) {
                Some(amount) => Some(self.amounts.contains(&amount)),
                // A value the seal encodes oddly is still a string of digits that must be printed.
                None => self.reference(value),
            },
            Kind::Reference => self.reference(value),
            Kind::DateDmy => normalise::parse_seal_date_dmy(value).map(|d| self.dates.contains(&d) || self.has_reference(value)),
            Kind::DateHex => normalise::parse_seal_date_hex(value).map(|d| self.dates.contains(&d)),
            Kind::DateYmd => normalise::parse_seal_date_ymd(value).map(|d| self.dates.contains(&d)),
            Kind::DateTimeDmy => {
                normalise::parse_seal_datetime_dmy(value).map(|at| self.dates.contains(&at.date()) && self.has_time(at.hour(), at.minute()))
            }
        }
    }

    /// Whether the page shows the time `hour`:`minute`, as "14:30", "14 h 30", "14h30" or "9h05".
    fn has_time(&self, hour: u32, minute: u32) -> bool {
        let number = |token: &str| {
            token
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| token.parse::<u32>().ok())
                .flatten()
        };
        let glued = |token: &str| {
            let (h, m) = token.split_once('H')?;
            Some((number(h)?, number(m)?))
        };
        self.tokens.iter().enumerate().any(|(i, token)| {
            let next = |k: usize| self.tokens.get(i + k).map(String::as_str);
            let minute_token = |t: Option<&str>| t.filter(|t| t.len() == 2).and_then(number) == Some(minute);
            glued(token) == Some((hour, minute))
                || (number(token) == Some(hour) && (minute_token(next(1)) || (next(1) == Some("H") && minute_token(next(2)))))
        })
    }

    fn reference(&self, value: &str) -> Option<bool> {
        let compact: String = normalise::tokens(value).concat();
        (!compact.is_empty()).then(|| self.has_reference(&compact))
    }

    /// Whether a run of consecutive page words spells `compact` exactly (an identifier printed in groups). In
    /// OCR'd text, a mixed identifier may also be spelt with look-alikes ("EVTCO75" for "EVTC075").
    fn has_reference(&self, compact: &str) -> bool {
        let numeric = compact.bytes().all(|b| b.is_ascii_digit());
        let tokens = match (&self.digit_tokens, numeric) {
            (Some(digits), true) => digits,
            _ => &self.tokens,
        };
        if spelt_in(tokens, compact) {
            return true;
        }
        match &self.ocr {
            Some(ocr) if !numeric => spelt_in(&ocr.look_alikes, &look_alike(compact)),
            _ => false,
        }
    }

    /// Whether every word of `words` is on the page within a short window, in any order, each on its own page
    /// word; in OCR'd text, also where OCR cut a word after its first letter ("J ulie").
    fn has_words(&self, words: &[String]) -> bool {
        self.has_words_in(&self.tokens, words) || self.ocr.as_ref().is_some_and(|ocr| self.has_words_in(&ocr.glued, words))
    }

    fn has_words_in(&self, tokens: &[String], words: &[String]) -> bool {
        let window = words.len() + WINDOW_SLACK;
        (0..tokens.len()).any(|start| {
            if !words.iter().any(|w| self.word_matches(w, &tokens[start])) {
                return false;
            }
            let end = (start + window).min(tokens.len());
            let mut used = vec![false; end - start];
            words.iter().all(|word| {
                let slot = (start..end).find(|&i| !used[i - start] && self.word_matches(word, &tokens[i]));
                match slot {
                    Some(i) => {
                        used[i - start] = true;
                        true
                    }
                    None => false,
                }
            })
        })
    }

    fn word_matches(&self, expected: &str, seen: &str) -> bool {
        if expected == seen {
            return true;
        }
        // Digits never tolerate a difference: "15 RUE" is not "16 RUE".
        if self.tolerance == Tolerance::Exact || expected.chars().any(|c| c.is_ascii_digit()) || seen.chars().any(|c| c.is_ascii_digit()) {
            return false;
        }
        let allowed = expected.chars().count() / 8;
        allowed > 0 && strsim::levenshtein(expected, seen) <= allowed
    }
}

/// Whether a run of consecutive `tokens` spells `compact` exactly (an identifier printed in groups).
fn spelt_in(tokens: &[String], compact: &str) -> bool {
    (0..tokens.len()).any(|start| {
        let mut joined = String::new();
        for token in tokens.iter().skip(start).take(MAX_REFERENCE_GROUPS) {
            joined.push_str(token);
            if joined.len() >= compact.len() {
                return joined == compact;
            }
            if !compact.starts_with(joined.as_str()) {
                return false;
            }
        }
        false
    })
}

/// The page's tokens as OCR may have mangled them, prepared for the comparisons that forgive it.
struct OcrReadings {
    /// Every token with look-alike characters merged ([`look_alike`]), for mixed identifiers.
    look_alikes: Vec<String>,
    /// The tokens with a lone leading letter joined to the word after it: OCR often cuts a narrow first
    /// letter off ("J ulie", "J ean").
    glued: Vec<String>,
}

impl OcrReadings {
    fn of(tokens: &[String]) -> OcrReadings {
        let lone_letter = |t: &str| t.len() == 1 && t.bytes().all(|b| b.is_ascii_alphabetic());
        let word_rest = |t: &str| t.len() > 1 && t.bytes().all(|b| b.is_ascii_alphabetic());
        let mut glued: Vec<String> = Vec::with_capacity(tokens.len());
        let mut i = 0;
        while i < tokens.len() {
            match tokens.get(i + 1) {
                Some(next) if lone_letter(&tokens[i]) && word_rest(next) => {
                    glued.push(format!("{}{next}", tokens[i]));
                    i += 2;
                }
                _ => {
                    glued.push(tokens[i].clone());
                    i += 1;
                }
            }
        }
        OcrReadings {
            look_alikes: tokens.iter().map(|t| look_alike(t)).collect(),
            glued,
        }
    }
}

/// `text` with the characters OCR confuses merged into one (O, Q, D and 0; I, L and 1; S and 5; B and 8; Z and
/// 2; E and F, which a blurred photo's bottom stroke tells apart), so a mixed identifier read with a look-alike
/// still spells itself. Other characters stay distinct: a changed digit is still a change.
fn look_alike(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'E' => 'F',
            other => digit_read_as(other),
        })
        .collect()
}

/// The digit OCR may have read as the letter `c` (O for 0, I for 1…), or `c` itself.
fn digit_read_as(c: char) -> char {
    match c {
        'O' | 'Q' | 'D' => '0',
        'I' | 'L' => '1',
        'S' => '5',
        'B' => '8',
        'Z' => '2',
        other => other,
    }
}

/// The words of a name field: `CIVILITE/NOM/PRENOM` or free text, without the leading civility.
fn name_words(value: &str, truncated: bool) -> Vec<String> {
    let mut words = text_words(value, truncated);
    if words.len() > 1 && CIVILITIES.contains(&words[0].as_str()) {
        words.remove(0);
    }
    words
}

/// The folded words of a value; a truncated value's last word is partial, so it is left out.
fn text_words(value: &str, truncated: bool) -> Vec<String> {
    let mut words = normalise::tokens(value);
    if truncated {
        words.pop();
    }
    words
}

/// A token as digits when OCR may have read some of its digits as look-alike letters; other tokens unchanged.
fn ocr_digits(token: &str) -> String {
    let digits = token.chars().filter(char::is_ascii_digit).count();
    // Only tokens that are mostly digits: "CLO011" stays a word, "75O11" becomes a postcode.
    if digits * 2 <= token.chars().count() {
        return token.to_owned();
    }
    token.chars().map(digit_read_as).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::datamatrix;
    use crate::analysis::text::{first_page_text, Ocr, OcrOptions};
    use crate::analysis::twoddoc::{analyse_payload, Field, TrustOptions, TrustStore};
    use std::collections::BTreeMap;
    use std::path::PathBuf;
    use std::sync::LazyLock;

    fn samples() -> PathBuf {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/samples/administratif"));
        assert!(dir.is_dir(), "reference data missing at {}", dir.display());
        dir
    }

    static TRUST: LazyLock<TrustStore> = LazyLock::new(|| {
        TrustStore::build(&TrustOptions {
            accept_test_ca: true,
            extra_dir: None,
        })
        .unwrap()
    });

    /// The seal of a sample, decoded from its pixels like the engine does.
    fn seal_of(name: &str) -> TwoDDocFinding {
        let bytes = std::fs::read(samples().join(name)).unwrap();
        let codes = if name.ends_with(".pdf") {
            datamatrix::decode_in_pdf(&bytes).unwrap()
        } else {
            datamatrix::decode_in_image(&image::load_from_memory(&bytes).unwrap())
        };
        let code = codes.first().unwrap_or_else(|| panic!("no seal decoded in {name}"));
        analyse_payload(&code.payload, &TRUST).unwrap()
    }

    fn pdf_visible(name: &str) -> VisibleText {
        let bytes = std::fs::read(samples().join(name)).unwrap();
        VisibleText {
            text: first_page_text(&bytes).unwrap(),
            source: TextSource::PdfTextLayer,
        }
    }

    #[test]
    fn the_edited_payslip_mismatches_on_its_net_taxable_pay() {
        let name = "sample-bulletin-v03-montant-different.pdf";
        let finding = seal_of(name);
        assert_eq!(finding.fields.get("58").map(String::as_str), Some("2210,05"));
        let visible = pdf_visible(name);
        for result in [compare_visible(&finding, &visible), compare(&finding, &visible.text)] {
            assert!(!result.matches);
            assert_eq!(result.mismatched, vec!["58"], "{result:?}");
            for id in ["10", "50", "53", "54", "55", "59", "5A", "5M"] {
                assert!(result.compared.iter().any(|c| c == id), "{id} not compared: {result:?}");
            }
        }
    }

    #[test]
    fn the_untouched_pdfs_match() {
        for (name, ids) in [
            (
                "sample-avis-impot-v04-rfr-modifie.pdf",
                &["41", "43", "44", "45", "46", "47", "4A"][..],
            ),
            ("sample-facture-v04.pdf", &["10", "18", "19", "1D", "22", "24", "25"][..]),
            ("sample-facture-deux-pages.pdf", &["10", "18", "19", "1D", "22", "24", "25"][..]),
        ] {
            let finding = seal_of(name);
            let visible = pdf_visible(name);
            let result = compare_visible(&finding, &visible);
            assert!(result.matches, "{name}: {result:?}");
            assert_eq!(result.compared, ids, "{name}");
            assert!(compare(&finding, &visible.text).matches, "{name}");
        }
    }

    #[test]
    fn the_photographed_attestation_matches_through_ocr() {
        let name = "sample-domicile-v03-photo.jpg";
        let finding = seal_of(name);
        let ocr = Ocr::new(OcrOptions::default());
        ocr.probe()
            .expect("tesseract with fra is required (apt-get install tesseract-ocr tesseract-ocr-fra)");
        let image = image::open(samples().join(name)).unwrap();
        let started = std::time::Instant::now();
        let text = ocr.image_text(&image).unwrap();
        eprintln!("OCR of {name}: {:?}", started.elapsed());
        let visible = VisibleText {
            text,
            source: TextSource::Ocr,
        };
        let result = compare_visible(&finding, &visible);
        assert!(result.matches, "{result:?}");
        assert_eq!(result.compared, vec!["10", "22", "24", "25"]);
    }

    static INVOICE_SEAL: LazyLock<TwoDDocFinding> = LazyLock::new(|| seal_of("sample-facture-v04.pdf"));

    /// A real seal with the given fields instead of its own.
    fn finding_with(fields: &[(&str, &str)]) -> TwoDDocFinding {
        let mut finding = INVOICE_SEAL.clone();
        finding.fields = fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>();
        finding.message = fields
            .iter()
            .map(|(k, v)| Field {
                id: k.to_string(),
                value: v.to_string(),
                truncated: false,
                separator_missing: false,
            })
            .collect();
        finding
    }

    const PAGE: &str = "SOCIÉTÉ DÉMO — SIRET 123 456 789 00012\n\
        Madame Élodie de la FONTAINE-ÉTIENNE\n12 bis, rue de l'Église\n75011 Paris\n\
        Référence : AB-1234-567 Date d'échéance : 05/03/2027 Période : 1er février 2027\n\
        Montant TTC 1 234,50 € Nombre de parts 2,5 Revenus 2026 RFR 45 678 €\n";

    const FIELDS: &[(&str, &str)] = &[
        ("10", "MME/DE LA FONTAINE ETIENNE/ELODIE"),
        ("22", "12 BIS RUE DE L EGLISE"),
        ("24", "75011"),
        ("25", "PARIS"),
        ("1A", "AB1234567"),
        ("50", "12345678900012"),
        ("1D", "1234.5"),
        ("43", "2,5"),
        ("45", "2026"),
        ("41", "45678"),
        ("4A", "05032027"),
        ("53", "26A5"),
        ("26", "FR"),
        ("20", ""),
    ];

    #[test]
    fn a_page_with_every_field_matches() {
        assert_eq!(normalise::parse_seal_date_hex("26A5"), NaiveDate::from_ymd_opt(2027, 2, 1));
        let result = compare_with(&finding_with(FIELDS), PAGE, Tolerance::Exact);
        assert!(result.matches, "{result:?}");
        // Empty values and country codes are not compared.
        assert_eq!(result.compared.len(), FIELDS.len() - 2);
        assert!(!result.compared.iter().any(|c| c == "26" || c == "20"));
    }

    #[test]
    fn a_changed_digit_or_name_mismatches() {
        const BOTH: &[Tolerance] = &[Tolerance::Exact, Tolerance::Ocr];
        // (identifier, as printed on PAGE, as edited, tolerances under which the edit must be caught)
        let cases: &[(&str, &str, &str, &[Tolerance])] = &[
            ("1D", "1 234,50 €", "1 234,59 €", BOTH),
            ("1D", "1 234,50 €", "1 284,50 €", BOTH),
            ("41", "45 678 €", "45 679 €", BOTH),
            ("43", "2,5", "2,0", BOTH),
            ("24", "75011", "75012", BOTH),
            ("50", "123 456 789 00012", "123 456 789 00013", BOTH),
            ("1A", "AB-1234-567", "AB-1234-561", BOTH),
            ("4A", "05/03/2027", "06/03/2027", BOTH),
            ("53", "1er février 2027", "2 février 2027", BOTH),
            ("45", "Revenus 2026", "Revenus 2025", BOTH),
            ("10", "Madame Élodie", "Madame Mélanie", BOTH),
            // One letter in an 8-letter word: a slip OCR is allowed, an edit a text layer is not.
            ("10", "FONTAINE-ÉTIENNE", "FONTAIME-ÉTIENNE", &[Tolerance::Exact]),
            ("22", "12 bis, rue", "13 bis, rue", BOTH),
            ("25", "Paris", "Lyon", BOTH),
        ];
        for (id, original, edited, tolerances) in cases {
            let page = PAGE.replacen(original, edited, 1);
            assert_ne!(page, PAGE, "{id}: {original:?} is not on the page");
            for tolerance in *tolerances {
                let result = compare_with(&finding_with(FIELDS), &page, *tolerance);
                assert!(!result.matches, "{id} {edited:?} {tolerance:?}: {result:?}");
                assert_eq!(result.mismatched, vec![id.to_string()], "{id} {edited:?} {tolerance:?}");
            }
        }
    }

    #[test]
    fn accents_case_spacing_and_order_do_not_matter() {
        let fields = [
            ("10", "M/TESTE/NOE"),
            ("22", "1 RUE DU PILOTE"),
            ("25", "SAINT ETIENNE"),
            ("58", "2910,05"),
            ("44", "2675C01112223"),
        ];
        for page in [
            "Monsieur Noé Teste\n1, rue du Pilote\nSaint-Étienne\nNet imposable 2 910,05 €\nRéf. 2675 C011 12223",
            "TESTE NOE 1 RUE DU PILOTE SAINT ETIENNE net 2910.05 EUR ref 2675C01112223",
            "M. Noe TESTE\n\n1   RUE   DU   PILOTE\nsaint etienne\n2\u{202f}910,05\u{a0}€\n2675c01112223",
        ] {
            let result = compare_with(&finding_with(&fields), page, Tolerance::Exact);
            assert!(result.matches, "{page:?}: {result:?}");
        }
        // Words far apart on the page are not the same name.
        let scattered = "Monsieur Noe DURAND et son voisin Pierre Jean Paul Louis Marc TESTE";
        let result = compare_with(&finding_with(&[("10", "M/TESTE/NOE")]), scattered, Tolerance::Exact);
        assert_eq!(result.mismatched, vec!["10"]);
    }

    #[test]
    fn ocr_slips_are_tolerated_only_in_long_words_and_never_in_numbers() {
        let fields = [("10", "MME/DEMONSTRATION/INES"), ("24", "75011"), ("5M", "DEMO CONSEIL SAS")];
        let ocr_page = "Madame Ines DEMONSTRATlON\n75O11 PARIS\nDEMO CONSEIL SAS";
        assert!(compare(&finding_with(&fields), ocr_page).matches);
        assert!(!compare_with(&finding_with(&fields), ocr_page, Tolerance::Exact).matches);
        // Two slips in a 13-letter word, or one in a short word, are too many.
        let too_noisy = "Madame Ines DEMONSTRATlOM\n75011\nDEMO CONSEIL SAS";
        assert_eq!(compare(&finding_with(&fields), too_noisy).mismatched, vec!["10"]);
        let short = "Madame Ines DEMONSTRATION\n75011\nDEMA CONSEIL SAS";
        assert_eq!(compare(&finding_with(&fields), short).mismatched, vec!["5M"]);
        // A changed digit stays a changed digit.
        assert_eq!(
            compare(&finding_with(&fields), "Madame Ines DEMONSTRATION 75012 DEMO CONSEIL SAS").mismatched,
            vec!["24"]
        );
    }

    #[test]
    fn ocr_may_cut_a_first_letter_off_or_read_look_alikes_in_mixed_identifiers() {
        let fields = [("81", "JULIE"), ("AJ", "EVTC075260042"), ("35", "DEMOFRPPXXX0001234567")];
        let page = "Prénoms : J ulie\nInscription : EVTCO75260042\nQXBAN : DEMO FRPP XXXO 0012 34567";
        assert!(compare(&finding_with(&fields), page).matches);
        // A text layer is the issuer's own characters: no forgiveness there.
        let exact = compare_with(&finding_with(&fields), page, Tolerance::Exact);
        assert_eq!(exact.mismatched, vec!["35", "81", "AJ"]);
        // A changed character that is not a look-alike is still a change.
        let changed = "Prénoms : J ulie\nInscription : EVTCO75260048\nQXBAN : DEMO FRPP XXXO 0012 34567";
        assert_eq!(compare(&finding_with(&fields), changed).mismatched, vec!["AJ"]);
        let other_name = "Prénoms : J ulia\nInscription : EVTC075260042\nQXBAN : DEMOFRPPXXX0001234567";
        assert_eq!(compare(&finding_with(&fields), other_name).mismatched, vec!["81"]);
    }

    #[test]
    fn dates_with_times_and_year_first_dates() {
        let fields = [("70", "021120260815"), ("D3", "20260601"), ("38", "-1523,40")];
        let page = "Décès le 02/11/2026 à 08h15\nValide du 01/06/2026\nAncien solde : -1 523,40 €";
        assert!(compare_with(&finding_with(&fields), page, Tolerance::Exact).matches);
        for (edited, id) in [("08h15", "70"), ("01/06/2026", "D3"), ("-1 523,40", "38")] {
            let replacement = match id {
                "70" => "08h45",
                "D3" => "01/07/2026",
                _ => "1 523,40",
            };
            let result = compare_with(&finding_with(&fields), &page.replacen(edited, replacement, 1), Tolerance::Exact);
            assert_eq!(result.mismatched, vec![id.to_string()], "{edited}");
        }
    }

    #[test]
    fn nothing_comparable_is_not_a_match() {
        let result = compare(&finding_with(&[("26", "FR"), ("20", ""), ("01", "X")]), "anything");
        assert_eq!(result, DataComparison::default());
        assert!(!compare(&finding_with(&[("10", "M/TESTE/NOE")]), "").matches);
    }

    #[test]
    fn truncated_values_compare_what_is_whole() {
        let mut finding = finding_with(&[("10", "M/DEMONSTRATION/JEAN-CHARLES-AUGUST"), ("18", "E20261")]);
        for field in &mut finding.message {
            field.truncated = true;
        }
        let result = compare(&finding, "Monsieur Jean Charles Augustin DEMONSTRATION");
        // The name's last, cut word is not required; a cut reference cannot be compared exactly.
        assert_eq!(
            (result.compared.clone(), result.matches),
            (vec!["10".to_string()], true),
            "{result:?}"
        );
    }
}
