//! French company identifiers as printed on documents: SIREN (9 digits), SIRET (SIREN + 5-digit
//! NIC) and intra-community VAT numbers (FR + key + SIREN), found in the visible text and checked
//! against their check digits. They name the issuer a register can confirm; one that fails its
//! check digit was mistyped or invented.

use std::collections::HashSet;
use std::fmt;

/// La Poste's SIREN: its thousands of establishments outgrew the NIC's Luhn key, so its SIRETs
/// follow another rule (the sum of the 14 digits is a multiple of 5).
const LA_POSTE: &str = "356000000";
/// Characters before a number searched for a label ("SIRET : …", "RCS Paris B …").
const LABEL_BEFORE: usize = 40;
/// Characters after a number searched for a trailing label ("552 081 317 R.C.S. Paris").
const LABEL_AFTER: usize = 16;
/// Longest text searched; a page's text is a few kilobytes.
const MAX_TEXT_CHARS: usize = 1_000_000;

/// A SIREN, validated: nine ASCII digits passing the Luhn check (also when read back from a
/// sandbox child, which the worker does not trust).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Siren(String);

impl From<Siren> for String {
    fn from(siren: Siren) -> String {
        siren.0
    }
}

impl TryFrom<String> for Siren {
    type Error = SirenError;

    fn try_from(text: String) -> Result<Self, SirenError> {
        Siren::parse(&text)
    }
}

/// Why a string is not a SIREN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SirenError {
    #[error("a SIREN has exactly nine digits")]
    NotNineDigits,
    #[error("the SIREN fails its check digit")]
    CheckDigit,
}

impl Siren {
    pub fn parse(text: &str) -> Result<Self, SirenError> {
        let digits = text.as_bytes();
        if digits.len() != 9 || !digits.iter().all(u8::is_ascii_digit) {
            return Err(SirenError::NotNineDigits);
        }
        if !luhn_valid(digits) {
            return Err(SirenError::CheckDigit);
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key of the French VAT number built on this SIREN: (12 + 3 × (SIREN mod 97)) mod 97.
    pub fn vat_key(&self) -> u32 {
        let number: u64 = self.0.bytes().fold(0, |n, d| n * 10 + u64::from(d - b'0'));
        // The remainder is below 97, so the cast cannot truncate.
        ((12 + 3 * (number % 97)) % 97) as u32
    }

    /// The intra-community VAT number, e.g. `FR03552081317`.
    pub fn vat_number(&self) -> String {
        format!("FR{:02}{}", self.vat_key(), self.0)
    }
}

impl fmt::Display for Siren {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for Siren {
    type Err = SirenError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

/// Luhn check on ASCII digits: doubling every second digit from the right, the sum is a multiple
/// of ten.
pub fn luhn_valid(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            let value = u32::from(d.wrapping_sub(b'0'));
            if i % 2 == 1 {
                let doubled = value * 2;
                if doubled > 9 {
                    doubled - 9
                } else {
                    doubled
                }
            } else {
                value
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// A SIRET's own check: Luhn on the 14 digits, except for La Poste's establishments.
pub fn siret_valid(digits: &[u8]) -> bool {
    if digits.len() != 14 || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    if !luhn_valid(&digits[..9]) {
        return false;
    }
    if &digits[..9] == LA_POSTE.as_bytes() {
        return digits.iter().map(|d| u32::from(d - b'0')).sum::<u32>().is_multiple_of(5);
    }
    luhn_valid(digits)
}

/// How an identifier was written on the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdentifierKind {
    Siren,
    Siret,
    Vat,
}

impl fmt::Display for IdentifierKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Siren => "SIREN",
            Self::Siret => "SIRET",
            Self::Vat => "TVA",
        })
    }
}

/// A valid SIREN found in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSiren {
    pub siren: Siren,
    /// Written next to a label (SIREN, SIRET, RCS, TVA) or as a VAT number: the document itself
    /// says this is a company number, not any nine digits.
    pub labelled: bool,
    pub kind: IdentifierKind,
}

/// What the text holds: the valid SIRENs (labelled ones first, each once) and, for each distinct
/// labelled number failing its check, the kind it was written as.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identifiers {
    pub found: Vec<FoundSiren>,
    pub invalid: Vec<IdentifierKind>,
}

/// Finds SIRENs, SIRETs and French VAT numbers in `text`, written plain ("552081317") or grouped
/// by spaces or dots ("552 081 317", "552.081.317 00010", "FR 03 552 081 317").
pub fn find_identifiers(text: &str) -> Identifiers {
    let chars: Vec<char> = text.chars().take(MAX_TEXT_CHARS).collect();
    let mut finder = Finder::default();
    let vat_spans = finder.scan_vat(&chars);
    finder.scan_numbers(&chars, &vat_spans);
    finder.finish()
}

#[derive(Default)]
struct Finder {
    found: Vec<FoundSiren>,
    invalid: Vec<IdentifierKind>,
    invalid_seen: HashSet<String>,
}

/// A run of digit groups separated by single spaces or dots.
struct Groups {
    digits: String,
    lengths: Vec<usize>,
    end: usize,
}

fn is_separator(c: char) -> bool {
    matches!(c, ' ' | '.' | '\u{a0}' | '\u{202f}' | '\u{2009}')
}

/// The digit groups starting at `start` (which must be a digit).
fn groups_at(chars: &[char], start: usize) -> Groups {
    let mut digits = String::new();
    let mut lengths = Vec::new();
    let mut at = start;
    loop {
        let from = at;
        while at < chars.len() && chars[at].is_ascii_digit() {
            digits.push(chars[at]);
            at += 1;
        }
        lengths.push(at - from);
        let continues = at + 1 < chars.len() && is_separator(chars[at]) && chars[at + 1].is_ascii_digit();
        if !continues || lengths.len() >= 8 {
            break;
        }
        at += 1;
    }
    Groups { digits, lengths, end: at }
}

/// The number of digits of the first layout in `layouts` that starts the group run.
fn leading_layout(lengths: &[usize], layouts: &[&[usize]]) -> Option<usize> {
    layouts
        .iter()
        .find(|layout| lengths.starts_with(layout))
        .map(|layout| layout.iter().sum())
}

const SIRET_LAYOUTS: &[&[usize]] = &[&[14], &[9, 5], &[3, 3, 3, 5]];
const SIREN_LAYOUTS: &[&[usize]] = &[&[9], &[3, 3, 3]];
/// After "FR": the 2-digit key and the SIREN.
const VAT_LAYOUTS: &[&[usize]] = &[&[11], &[2, 9], &[2, 3, 3, 3]];

fn lowercase_window(chars: &[char], from: usize, to: usize) -> String {
    chars[from.min(chars.len())..to.min(chars.len())]
        .iter()
        .collect::<String>()
        .to_lowercase()
}

fn labelled_before(chars: &[char], start: usize) -> bool {
    let window = lowercase_window(chars, start.saturating_sub(LABEL_BEFORE), start);
    ["siren", "siret", "rcs", "r.c.s", "tva", "vat", "immatricul"]
        .iter()
        .any(|label| window.contains(label))
}

/// "552 081 317 RCS Paris": the label must follow at once, or it may belong to the next number.
fn labelled_after(chars: &[char], end: usize) -> bool {
    let mut at = end;
    while at < chars.len() && at < end + 3 && chars[at].is_whitespace() {
        at += 1;
    }
    let window = lowercase_window(chars, at, at + LABEL_AFTER);
    window.starts_with("rcs") || window.starts_with("r.c.s")
}

fn vat_labelled(chars: &[char], start: usize) -> bool {
    let window = lowercase_window(chars, start.saturating_sub(LABEL_BEFORE), start);
    window.contains("tva") || window.contains("vat")
}

impl Finder {
    /// "FR" + key + SIREN; returns the spans consumed so the digits are not read again as a bare
    /// SIREN.
    fn scan_vat(&mut self, chars: &[char]) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        let mut at = 0;
        while at + 2 < chars.len() {
            let starts = chars[at] == 'F' && chars[at + 1] == 'R' && (at == 0 || !chars[at - 1].is_alphanumeric());
            if !starts {
                at += 1;
                continue;
            }
            let mut digit_at = at + 2;
            if digit_at < chars.len() && is_separator(chars[digit_at]) {
                digit_at += 1;
            }
            if digit_at >= chars.len() || !chars[digit_at].is_ascii_digit() {
                at += 1;
                continue;
            }
            let groups = groups_at(chars, digit_at);
            let glued = chars.get(groups.end).is_some_and(|c| c.is_alphanumeric());
            match leading_layout(&groups.lengths, VAT_LAYOUTS) {
                Some(11) if !glued || groups.lengths.len() > 1 => {
                    let digits = &groups.digits[..11];
                    let key: u32 = digits[..2].parse().unwrap_or(u32::MAX);
                    match Siren::parse(&digits[2..]) {
                        Ok(siren) if siren.vat_key() == key => self.add(siren, true, IdentifierKind::Vat),
                        _ if vat_labelled(chars, at) => self.add_invalid(IdentifierKind::Vat, digits),
                        _ => {}
                    }
                    spans.push((at, groups.end));
                }
                _ => {}
            }
            at = groups.end.max(at + 1);
        }
        spans
    }

    fn scan_numbers(&mut self, chars: &[char], skip: &[(usize, usize)]) {
        let mut at = 0;
        while at < chars.len() {
            let c = chars[at];
            let starts = c.is_ascii_digit() && (at == 0 || !chars[at - 1].is_alphanumeric());
            if !starts || skip.iter().any(|&(from, to)| at >= from && at < to) {
                at += 1;
                continue;
            }
            let groups = groups_at(chars, at);
            let glued = chars.get(groups.end).is_some_and(|c| c.is_alphanumeric());
            let whole = groups.lengths.len() == 1;
            // A single unbroken run must stand alone: 13 digits are not a SIREN plus noise.
            let usable = |layout_digits: usize| !(whole && (glued || groups.digits.len() != layout_digits));
            let labelled = labelled_before(chars, at) || labelled_after(chars, groups.end);
            if let Some(n) = leading_layout(&groups.lengths, SIRET_LAYOUTS).filter(|&n| usable(n)) {
                let digits = &groups.digits[..n];
                match Siren::parse(&digits[..9]) {
                    Ok(siren) if siret_valid(digits.as_bytes()) => self.add(siren, labelled, IdentifierKind::Siret),
                    _ if labelled => self.add_invalid(IdentifierKind::Siret, digits),
                    _ => {}
                }
            } else if let Some(n) = leading_layout(&groups.lengths, SIREN_LAYOUTS).filter(|&n| usable(n)) {
                let digits = &groups.digits[..n];
                match Siren::parse(digits) {
                    Ok(siren) => self.add(siren, labelled, IdentifierKind::Siren),
                    Err(_) if labelled => self.add_invalid(IdentifierKind::Siren, digits),
                    Err(_) => {}
                }
            }
            at = groups.end.max(at + 1);
        }
    }

    fn add(&mut self, siren: Siren, labelled: bool, kind: IdentifierKind) {
        if let Some(existing) = self.found.iter_mut().find(|f| f.siren == siren) {
            existing.labelled |= labelled;
            return;
        }
        self.found.push(FoundSiren { siren, labelled, kind });
    }

    fn add_invalid(&mut self, kind: IdentifierKind, digits: &str) {
        // The digits only serve to count each number once; they are not kept.
        if self.invalid_seen.insert(digits.to_owned()) {
            self.invalid.push(kind);
        }
    }

    fn finish(mut self) -> Identifiers {
        // Labelled first, text order otherwise (the sort is stable).
        self.found.sort_by_key(|f| !f.labelled);
        Identifiers {
            found: self.found,
            invalid: self.invalid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sirens(text: &str) -> Vec<(String, bool)> {
        find_identifiers(text)
            .found
            .into_iter()
            .map(|f| (f.siren.to_string(), f.labelled))
            .collect()
    }

    #[test]
    fn parses_and_checks_sirens() {
        for valid in ["552081317", "542107651", "380129866", "356000000", "732829320"] {
            assert_eq!(Siren::parse(valid).map(|s| s.to_string()), Ok(valid.to_owned()));
        }
        assert_eq!(Siren::parse("552081318"), Err(SirenError::CheckDigit));
        assert_eq!(Siren::parse("55208131"), Err(SirenError::NotNineDigits));
        assert_eq!(Siren::parse("5520813170"), Err(SirenError::NotNineDigits));
        assert_eq!(Siren::parse("55208131a"), Err(SirenError::NotNineDigits));
        assert_eq!(Siren::parse("５52081317"), Err(SirenError::NotNineDigits));
        assert_eq!("552081317".parse::<Siren>().unwrap().as_str(), "552081317");
    }

    #[test]
    fn sirets_and_la_poste() {
        assert!(siret_valid(b"55208131766522"));
        assert!(!siret_valid(b"55208131766523"));
        // La Poste's establishments: the digit sum rule, not Luhn.
        assert!(siret_valid(b"35600000000010"));
        assert!(!luhn_valid(b"35600000000010"));
        assert!(
            !siret_valid(b"35600000000048"),
            "Luhn-valid but its digit sum is not a multiple of 5"
        );
        assert!(!siret_valid(b"5520813176652"));
    }

    #[test]
    fn vat_keys() {
        assert_eq!(Siren::parse("552081317").unwrap().vat_number(), "FR03552081317");
        assert_eq!(Siren::parse("552120222").unwrap().vat_key(), 27);
        assert_eq!(Siren::parse("421100645").unwrap().vat_key(), 40);
    }

    #[test]
    fn the_demo_sirets_of_the_samples_pass_their_check() {
        // Fictitious, but well-formed: they must be found (and then not confirmed by the shipped
        // register).
        for siret in ["78901234100010", "89012345800014", "90123456700013"] {
            assert!(siret_valid(siret.as_bytes()), "{siret}");
        }
        assert_eq!(sirens("Régie - SIRET 78901234100010"), [("789012341".to_owned(), true)]);
        assert_eq!(
            sirens("Employeur : DEMO CONSEIL SAS - SIRET 89012345800014"),
            [("890123458".to_owned(), true)]
        );
    }

    #[test]
    fn finds_grouped_and_labelled_numbers() {
        assert_eq!(sirens("EDF SA 552 081 317 R.C.S. Paris"), [("552081317".to_owned(), true)]);
        assert_eq!(sirens("SIRET : 552 081 317 66522"), [("552081317".to_owned(), true)]);
        assert_eq!(sirens("SIREN 552.081.317"), [("552081317".to_owned(), true)]);
        assert_eq!(
            sirens("siret 552\u{a0}081\u{a0}317\u{a0}66522 - APE 3511Z"),
            [("552081317".to_owned(), true)]
        );
        assert_eq!(sirens("ref 552081317 /"), [("552081317".to_owned(), false)]);
        // Labelled first.
        assert_eq!(
            sirens("client 380129866, émetteur RCS Paris 552 081 317"),
            [("552081317".to_owned(), true), ("380129866".to_owned(), false)]
        );
        // The label of the next number is not this one's.
        assert_eq!(sirens("client 380129866, RCS 552 081 317")[1], ("380129866".to_owned(), false));
        // Same SIREN as SIREN and SIRET: once.
        assert_eq!(sirens("SIREN 552081317 SIRET 55208131766522").len(), 1);
    }

    #[test]
    fn vat_numbers_give_the_siren_when_their_key_matches() {
        assert_eq!(
            sirens("N° TVA intracommunautaire : FR03552081317"),
            [("552081317".to_owned(), true)]
        );
        assert_eq!(sirens("VAT No: FR 27 552 120 222"), [("552120222".to_owned(), true)]);
        assert_eq!(sirens("TVA FR40 421100645"), [("421100645".to_owned(), true)]);
        let wrong_key = find_identifiers("N° TVA FR04552081317");
        assert!(wrong_key.found.is_empty());
        assert_eq!(wrong_key.invalid, [IdentifierKind::Vat]);
        // An IBAN is not a VAT number.
        assert!(find_identifiers("IBAN FR76 3000 6000 0112 3456 7890 189").found.is_empty());
        assert!(find_identifiers("FR7630006000011234567890189").found.is_empty());
    }

    #[test]
    fn counts_labelled_numbers_failing_their_check() {
        let found = find_identifiers("SIRET 552 081 317 66523 — SIREN 552081318 — SIRET 55208131766523");
        assert!(found.found.is_empty());
        assert_eq!(found.invalid, [IdentifierKind::Siret, IdentifierKind::Siren]);
        // Unlabelled numbers failing Luhn are just numbers.
        assert_eq!(find_identifiers("Commande 552081318").invalid, []);
    }

    #[test]
    fn ignores_other_numbers() {
        for text in [
            "Numéro fiscal 3123456789012",
            "Tél. 01 23 45 67 89",
            "Total 1 552 081,17 €",
            "Référence E2026110077",
            "AB552081317",
            "552081317AB",
            "55208131766522123",
            "",
            "FR",
            "SIRET",
        ] {
            assert_eq!(find_identifiers(text), Identifiers::default(), "{text}");
        }
    }
}
