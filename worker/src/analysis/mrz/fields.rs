//! Reading typed fields out of a zone: each layout says where a field is and what it may contain,
//! and this file undoes the OCR confusions that type makes unambiguous, decodes dates and names,
//! and records what it corrected or could not read, so layouts stay declarative.

use std::ops::Range;

use chrono::{Datelike, NaiveDate};

use super::{check_digit, CheckResult, Correction, MrzField, Sex};

/// A letter OCR engines return for a digit; only applied where a digit is the only valid reading.
fn letter_to_digit(c: u8) -> Option<u8> {
    match c {
        b'O' | b'Q' | b'D' => Some(b'0'),
        b'I' | b'L' => Some(b'1'),
        b'Z' => Some(b'2'),
        b'S' => Some(b'5'),
        b'G' => Some(b'6'),
        b'B' => Some(b'8'),
        _ => None,
    }
}

/// A digit OCR engines return for a letter; only applied where a digit cannot occur (names,
/// country codes, document codes).
fn digit_to_letter(c: u8) -> Option<u8> {
    match c {
        b'0' => Some(b'O'),
        b'1' => Some(b'I'),
        b'2' => Some(b'Z'),
        b'5' => Some(b'S'),
        b'6' => Some(b'G'),
        b'8' => Some(b'B'),
        _ => None,
    }
}

fn is_mrz_char(c: u8) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'<'
}

/// One line as bytes: upper-cased, and any character that is not ASCII replaced by `?` so that
/// columns stay columns and the field holding it is reported unreadable instead of mis-sliced.
pub(super) fn normalise_line(line: &str) -> Vec<u8> {
    line.trim()
        .chars()
        .map(|c| if c.is_ascii() { c.to_ascii_uppercase() as u8 } else { b'?' })
        .collect()
}

/// How a two-digit year is given its century.
#[derive(Debug, Clone, Copy)]
pub(super) enum Century {
    /// Birth and issue dates are in the past: the latest century that does not put them after
    /// today.
    Past,
    /// Expiry dates are 20xx, unless that is more than 50 years away (no document is valid that
    /// long), which only a 19xx document expired long ago can mean.
    Expiry,
}

/// The zone being read, with what reading it found.
pub(super) struct Zone {
    lines: Vec<Vec<u8>>,
    today: NaiveDate,
    pub corrections: Vec<Correction>,
    pub unreadable: Vec<MrzField>,
    pub checks: Vec<CheckResult>,
}

impl Zone {
    pub fn new(lines: Vec<Vec<u8>>, today: NaiveDate) -> Self {
        Self {
            lines,
            today,
            corrections: Vec::new(),
            unreadable: Vec::new(),
            checks: Vec::new(),
        }
    }

    /// The zone's text with the corrections applied so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect()
    }

    /// The bytes of a field; layouts only pass ranges inside their line length.
    pub fn bytes(&self, line: usize, range: Range<usize>) -> &[u8] {
        self.lines.get(line).and_then(|l| l.get(range)).unwrap_or(&[])
    }

    /// A field as text, fillers at the end removed.
    pub fn text(&self, line: usize, range: Range<usize>) -> String {
        String::from_utf8_lossy(self.bytes(line, range)).trim_end_matches('<').to_owned()
    }

    pub fn byte(&self, line: usize, column: usize) -> u8 {
        self.bytes(line, column..column + 1).first().copied().unwrap_or(b'?')
    }

    pub fn mark_unreadable(&mut self, field: MrzField) {
        if !self.unreadable.contains(&field) {
            self.unreadable.push(field);
        }
    }

    /// Digits (and fillers) only: letters that look like digits are turned into them.
    pub fn numeric(&mut self, field: MrzField, line: usize, range: Range<usize>) {
        self.correct(field, line, range, |c| c.is_ascii_digit() || c == b'<', letter_to_digit);
    }

    /// Letters (and fillers) only: digits that look like letters are turned into them.
    pub fn alpha(&mut self, field: MrzField, line: usize, range: Range<usize>) {
        self.correct(field, line, range, |c| c.is_ascii_uppercase() || c == b'<', digit_to_letter);
    }

    /// Letters and digits both valid: nothing can be corrected, only invalid characters flagged.
    pub fn alphanumeric(&mut self, field: MrzField, line: usize, range: Range<usize>) {
        self.correct(field, line, range, is_mrz_char, |_| None);
    }

    fn correct(&mut self, field: MrzField, line: usize, range: Range<usize>, valid: impl Fn(u8) -> bool, fix: impl Fn(u8) -> Option<u8>) {
        let Some(bytes) = self.lines.get_mut(line) else { return };
        let mut unreadable = false;
        for column in range {
            let Some(c) = bytes.get_mut(column) else {
                unreadable = true;
                continue;
            };
            if valid(*c) {
                continue;
            }
            match fix(*c) {
                Some(fixed) => {
                    self.corrections.push(Correction {
                        field,
                        line,
                        column,
                        read: char::from(*c),
                        corrected: char::from(fixed),
                    });
                    *c = fixed;
                }
                None => unreadable = true,
            }
        }
        if unreadable {
            self.mark_unreadable(field);
        }
    }

    /// A YYMMDD date; `None`, and the field unreadable, when it is not a date (fillers for an
    /// unknown part included: nothing can be concluded from a partial date).
    pub fn date(&mut self, field: MrzField, line: usize, start: usize, century: Century) -> Option<NaiveDate> {
        let date = self
            .yymmdd(line, start)
            .and_then(|(yy, mm, dd)| resolve_century(yy, mm, dd, century, self.today));
        if date.is_none() {
            self.mark_unreadable(field);
        }
        date
    }

    fn yymmdd(&self, line: usize, start: usize) -> Option<(i32, u32, u32)> {
        let pair = |at: usize| two_digits(self.bytes(line, at..at + 2));
        Some((i32::try_from(pair(start)?).ok()?, pair(start + 2)?, pair(start + 4)?))
    }

    /// A YYMM month (the French legacy card's issue), as its first day.
    pub fn year_month(&mut self, field: MrzField, line: usize, start: usize) -> Option<NaiveDate> {
        let yy = two_digits(self.bytes(line, start..start + 2)).and_then(|y| i32::try_from(y).ok());
        let mm = two_digits(self.bytes(line, start + 2..start + 4));
        let date = yy
            .zip(mm)
            .and_then(|(yy, mm)| resolve_century(yy, mm, 1, Century::Past, self.today));
        if date.is_none() {
            self.mark_unreadable(field);
        }
        date
    }

    pub fn sex(&mut self, line: usize, column: usize) -> Option<Sex> {
        let sex = match self.byte(line, column) {
            b'F' => Some(Sex::Female),
            b'M' => Some(Sex::Male),
            b'<' | b'X' => Some(Sex::Unspecified),
            _ => None,
        };
        if sex.is_none() {
            self.mark_unreadable(MrzField::Sex);
        }
        sex
    }

    /// Verifies the check digit at `digit` over the concatenation of `data`, recording the
    /// outcome, or the field as unreadable when a character makes it undecidable.
    pub fn check(&mut self, field: MrzField, data: &[(usize, Range<usize>)], digit: (usize, usize)) {
        let text: Vec<u8> = data
            .iter()
            .flat_map(|(line, range)| self.bytes(*line, range.clone()).iter().copied())
            .collect();
        self.check_bytes(field, &text, self.byte(digit.0, digit.1));
    }

    pub fn check_bytes(&mut self, field: MrzField, data: &[u8], digit: u8) {
        match check_digit::verify(data, digit) {
            Some(ok) => self.checks.push(CheckResult { field, ok }),
            None => self.mark_unreadable(field),
        }
    }
}

fn two_digits(bytes: &[u8]) -> Option<u32> {
    match bytes {
        [a, b] if a.is_ascii_digit() && b.is_ascii_digit() => Some(u32::from(a - b'0') * 10 + u32::from(b - b'0')),
        _ => None,
    }
}

fn resolve_century(yy: i32, month: u32, day: u32, century: Century, today: NaiveDate) -> Option<NaiveDate> {
    let recent = NaiveDate::from_ymd_opt(2000 + yy, month, day);
    let older = NaiveDate::from_ymd_opt(1900 + yy, month, day);
    match century {
        Century::Past => match recent {
            Some(date) if date <= today => Some(date),
            // 29 February of a year that was not leap in one century may be in the other.
            _ => older,
        },
        Century::Expiry => match recent {
            Some(date) if date.year() <= today.year() + 50 => Some(date),
            Some(_) => older,
            None => None,
        },
    }
}

/// A name field with fillers turned into single spaces: `DE<LA<CRUZ` is `DE LA CRUZ`, and the
/// French legacy card's `JEAN<<PAUL` (its given-name separator) is `JEAN PAUL`.
pub(super) fn name_text(raw: &str) -> String {
    raw.split('<').filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ")
}

/// An ICAO name field: the primary identifier, then `<<`, then the secondary identifier.
pub(super) fn split_icao_name(raw: &str) -> (String, String) {
    match raw.split_once("<<") {
        Some((surname, given)) => (name_text(surname), name_text(given)),
        None => (name_text(raw), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 22).unwrap()
    }

    #[test]
    fn birth_years_pivot_on_today() {
        assert_eq!(
            resolve_century(12, 5, 1, Century::Past, today()),
            NaiveDate::from_ymd_opt(2012, 5, 1)
        );
        assert_eq!(
            resolve_century(26, 11, 22, Century::Past, today()),
            NaiveDate::from_ymd_opt(2026, 11, 22)
        );
        assert_eq!(
            resolve_century(26, 11, 23, Century::Past, today()),
            NaiveDate::from_ymd_opt(1926, 11, 23)
        );
        assert_eq!(
            resolve_century(85, 7, 7, Century::Past, today()),
            NaiveDate::from_ymd_opt(1985, 7, 7)
        );
        assert_eq!(
            resolve_century(0, 2, 29, Century::Past, today()),
            NaiveDate::from_ymd_opt(2000, 2, 29)
        );
        assert_eq!(resolve_century(12, 13, 1, Century::Past, today()), None);
    }

    #[test]
    fn expiry_years_are_this_century_unless_absurdly_far() {
        assert_eq!(
            resolve_century(25, 9, 1, Century::Expiry, today()),
            NaiveDate::from_ymd_opt(2025, 9, 1)
        );
        assert_eq!(
            resolve_century(76, 1, 1, Century::Expiry, today()),
            NaiveDate::from_ymd_opt(2076, 1, 1)
        );
        assert_eq!(
            resolve_century(98, 1, 1, Century::Expiry, today()),
            NaiveDate::from_ymd_opt(1998, 1, 1)
        );
    }

    #[test]
    fn numeric_fields_undo_letter_confusions_and_record_them() {
        let mut zone = Zone::new(vec![normalise_line("  85O7O7x ")], today());
        zone.numeric(MrzField::BirthDate, 0, 0..7);
        assert_eq!(zone.lines(), vec!["850707X".to_owned()]);
        assert_eq!(zone.corrections.len(), 2);
        assert_eq!(
            (zone.corrections[0].column, zone.corrections[0].read, zone.corrections[0].corrected),
            (2, 'O', '0')
        );
        assert_eq!(
            zone.unreadable,
            vec![MrzField::BirthDate],
            "X is no digit and no digit looks like it"
        );
    }

    #[test]
    fn alpha_fields_undo_digit_confusions_and_flag_the_rest() {
        let mut zone = Zone::new(vec![normalise_line("3R1K0<é")], today());
        zone.alpha(MrzField::Surname, 0, 0..7);
        assert_eq!(zone.lines(), vec!["3RIKO<?".to_owned()]);
        assert_eq!(zone.corrections.len(), 2);
        assert_eq!(zone.unreadable, vec![MrzField::Surname]);
    }

    #[test]
    fn dates_with_fillers_or_impossible_days_are_unreadable() {
        let mut zone = Zone::new(vec![b"74<<<<".to_vec(), b"740231".to_vec()], today());
        assert_eq!(zone.date(MrzField::BirthDate, 0, 0, Century::Past), None);
        assert_eq!(zone.date(MrzField::ExpiryDate, 1, 0, Century::Expiry), None);
        assert_eq!(zone.unreadable, vec![MrzField::BirthDate, MrzField::ExpiryDate]);
    }

    #[test]
    fn names_split_on_the_double_filler() {
        assert_eq!(
            split_icao_name("ERIKSSON<<ANNA<MARIA<<<<<"),
            ("ERIKSSON".into(), "ANNA MARIA".into())
        );
        assert_eq!(split_icao_name("DE<LA<CRUZ<<JOSE"), ("DE LA CRUZ".into(), "JOSE".into()));
        assert_eq!(split_icao_name("MONONYM<<<<<<"), ("MONONYM".into(), String::new()));
        assert_eq!(
            split_icao_name("TRUNCATEDSURNAMEWITHOUTFILLER"),
            ("TRUNCATEDSURNAMEWITHOUTFILLER".into(), String::new())
        );
        assert_eq!(name_text("JEAN<<PAUL<<<<"), "JEAN PAUL");
    }
}
