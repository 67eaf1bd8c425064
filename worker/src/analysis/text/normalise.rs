//! Normalisation for comparing a seal's values with a page's text: the two spell the same data differently
//! (accents, case, punctuation, "2 910,05 €" against "2910,05", "31072026" against "31/07/2026"), so both sides
//! are brought to one canonical form before they are compared.

use std::fmt;

use chrono::{Days, NaiveDate, NaiveDateTime};
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Upper-case ASCII-folded text: accents removed, ligatures spelled out, every run of characters that is neither
/// a letter nor a digit (punctuation, symbols, whitespace) turned into one space, no leading or trailing space.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    let push = |out: &mut String, c: char, pending_space: &mut bool| {
        if *pending_space && !out.is_empty() {
            out.push(' ');
        }
        *pending_space = false;
        out.push(c);
    };
    // NFKD splits "é" into "e" + a combining accent (dropped below) and compatibility forms such as "ﬁ" or
    // superscripts into their plain letters.
    for c in text.nfkd() {
        if is_combining_mark(c) {
            continue;
        }
        match ligature(c) {
            Some(spelled) => {
                for l in spelled.chars() {
                    push(&mut out, l, &mut pending_space);
                }
            }
            None if c.is_alphanumeric() => {
                for u in c.to_uppercase() {
                    push(&mut out, u, &mut pending_space);
                }
            }
            None => pending_space = true,
        }
    }
    out
}

/// Letters NFKD leaves whole although a French or German reader spells them with two letters.
fn ligature(c: char) -> Option<&'static str> {
    Some(match c {
        'œ' | 'Œ' => "OE",
        'æ' | 'Æ' => "AE",
        'ß' | 'ẞ' => "SS",
        'ø' | 'Ø' => "O",
        'đ' | 'Đ' => "D",
        'ł' | 'Ł' => "L",
        'ı' => "I",
        _ => return None,
    })
}

/// The words of [`fold`]ed text.
pub fn tokens(text: &str) -> Vec<String> {
    fold(text).split(' ').filter(|t| !t.is_empty()).map(str::to_owned).collect()
}

/// A decimal amount in hundredths, so "12 900 €", "12900" and "12900,00" are the same value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(pub i64);

impl fmt::Display for Amount {
    /// The canonical form: no grouping, a point and two decimals ("2910.05").
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

/// Whitespace that may group the thousands of an amount (space, no-break space, narrow no-break space, thin
/// space), as French typesetting does.
fn is_group_space(c: char) -> bool {
    matches!(c, ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}')
}

/// The longest amount the parser accepts, in digits: more is an identifier, not money.
const MAX_AMOUNT_DIGITS: usize = 15;

/// Reads one amount written in a French or English way: "2 910,05 €", "2910.05", "2,910.05", "12 900 €",
/// "12900", "1,5". A separator followed by exactly three digits is taken for a thousands separator unless the
/// other separator also appears ("12,900" is twelve thousand nine hundred), since amounts on documents carry
/// two decimals at most. `None` when the text is not one amount, or has more than two decimals.
pub fn parse_amount(text: &str) -> Option<Amount> {
    let trimmed = text.trim().trim_end_matches(['€', '$', '£']).trim_end();
    let trimmed = trimmed.strip_suffix("EUR").unwrap_or(trimmed).trim_end();
    let trimmed = trimmed.trim_start_matches(['€', '$', '£']).trim_start();
    let (negative, body) = match trimmed.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, trimmed),
    };
    let compact: String = body.chars().filter(|c| !is_group_space(*c)).collect();
    if compact.is_empty() || !compact.chars().all(|c| c.is_ascii_digit() || c == ',' || c == '.') {
        return None;
    }
    // Spaces may only group thousands: "2 910" but not "29 10".
    if body.chars().any(is_group_space) && !spaces_group_thousands(body) {
        return None;
    }
    let last_sep = compact.rfind([',', '.']);
    let both = compact.contains(',') && compact.contains('.');
    let (int_part, frac_part) = match last_sep {
        None => (compact.as_str(), ""),
        Some(i) => {
            let frac = &compact[i + 1..];
            let sep = compact.as_bytes()[i];
            let repeated = compact[..i].bytes().any(|b| b == sep);
            if both || (frac.len() != 3 && !repeated) {
                (&compact[..i], frac)
            } else {
                (compact.as_str(), "")
            }
        }
    };
    let int_digits = strip_grouping(int_part)?;
    if frac_part.len() > 2 || !frac_part.bytes().all(|b| b.is_ascii_digit()) || int_digits.len() > MAX_AMOUNT_DIGITS {
        return None;
    }
    if int_digits.is_empty() && frac_part.is_empty() {
        return None;
    }
    let units: i64 = if int_digits.is_empty() { 0 } else { int_digits.parse().ok()? };
    let mut cents: i64 = match frac_part.len() {
        0 => 0,
        1 => frac_part.parse::<i64>().ok()? * 10,
        _ => frac_part.parse().ok()?,
    };
    cents = units.checked_mul(100)?.checked_add(cents)?;
    Some(Amount(if negative { -cents } else { cents }))
}

/// Whether every space-separated group after the first has exactly three digits (before any decimal separator).
fn spaces_group_thousands(body: &str) -> bool {
    let integer = body.split([',', '.']).next().unwrap_or(body);
    let mut groups = integer.split(is_group_space).filter(|g| !g.is_empty());
    let first_ok = groups.next().is_some_and(|g| (1..=3).contains(&g.len()));
    first_ok && groups.all(|g| g.len() == 3)
}

/// The integer digits of `int_part` once thousands separators (',' or '.', between groups of three) are removed.
fn strip_grouping(int_part: &str) -> Option<String> {
    if !int_part.contains([',', '.']) {
        return Some(int_part.to_owned());
    }
    let mut groups = int_part.split([',', '.']);
    let first = groups.next()?;
    if first.is_empty() || first.len() > 3 {
        return None;
    }
    let mut digits = first.to_owned();
    for g in groups {
        if g.len() != 3 {
            return None;
        }
        digits.push_str(g);
    }
    Some(digits)
}

/// Every amount written on a page, read generously: each run of digits may start an amount, which may go on with
/// groups of three digits after a single space and end with decimals. Readings that overlap are all kept (from
/// "2 188,55" come 2, 2188.55 and 188.55), so a value is found whichever way the page groups it; a changed digit
/// still gives a different number. A minus sign before the number ("-1 523,40", "− 6,44") makes its readings
/// negative, and only negative: a balance whose sign was flipped is a different amount.
pub fn amounts_in(text: &str) -> Vec<Amount> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_number = chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric());
        if starts_number {
            let from = found.len();
            collect_amounts_from(&chars, i, &mut found);
            if is_negated(&chars, i) {
                for amount in &mut found[from..] {
                    amount.0 = -amount.0;
                }
            }
        }
        // The groups of an amount also start readings of their own ("188,55" inside "2 188,55").
        i += 1;
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Whether the number starting at `start` has a minus sign before it, right before or one space away, and the
/// sign is not a hyphen inside a word or a date ("AB-1234", "2026-10").
fn is_negated(chars: &[char], start: usize) -> bool {
    let before = |k: usize| start.checked_sub(k).and_then(|i| chars.get(i)).copied();
    let sign_at = match (before(1), before(2)) {
        (Some(c), _) if is_minus(c) => 1,
        (Some(' ' | '\u{a0}' | '\u{202f}'), Some(c)) if is_minus(c) => 2,
        _ => return false,
    };
    !before(sign_at + 1).is_some_and(char::is_alphanumeric)
}

/// A hyphen, the minus sign, or the dashes OCR reads a printed minus as.
fn is_minus(c: char) -> bool {
    matches!(c, '-' | '\u{2212}' | '\u{2013}' | '\u{2014}')
}

/// The amounts that start at `start`: the digits there, then each longer reading with more groups or decimals.
fn collect_amounts_from(chars: &[char], start: usize, found: &mut Vec<Amount>) {
    let digits_end = |from: usize| {
        let mut j = from;
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let mut end = digits_end(start);
    let mut readings: Vec<String> = Vec::new();
    let first: String = chars[start..end].iter().collect();
    let mut current = first.clone();
    readings.push(current.clone());
    // Grouped thousands: a single group space, or ',' / '.', then exactly three digits not followed by a digit.
    if first.len() <= 3 {
        while let Some(&sep) = chars.get(end) {
            if !(is_group_space(sep) || sep == '.' || sep == ',') {
                break;
            }
            let group_end = digits_end(end + 1);
            if group_end - (end + 1) != 3 {
                break;
            }
            let group: String = chars[end + 1..group_end].iter().collect();
            current.push(if is_group_space(sep) { ' ' } else { sep });
            current.push_str(&group);
            readings.push(current.clone());
            end = group_end;
        }
    }
    // Decimals: ',' or '.' then one or two digits not followed by a digit.
    let mut with_decimals = Vec::new();
    for reading in &readings {
        let reading_end = start + reading.chars().count();
        if let Some(&sep) = chars.get(reading_end) {
            if sep == ',' || sep == '.' {
                let dec_end = digits_end(reading_end + 1);
                let n = dec_end - (reading_end + 1);
                if (1..=2).contains(&n) {
                    let decimals: String = chars[reading_end + 1..dec_end].iter().collect();
                    with_decimals.push(format!("{reading}{sep}{decimals}"));
                }
            }
        }
    }
    for reading in readings.iter().chain(&with_decimals) {
        if let Some(amount) = parse_amount(reading) {
            found.push(amount);
        }
    }
}

/// The first day of the 2D-Doc calendar: header dates and some identifiers count days from it.
const EPOCH: NaiveDate = match NaiveDate::from_ymd_opt(2000, 1, 1) {
    Some(d) => d,
    None => panic!("valid date"),
};

/// A seal date written `DDMMYYYY` (identifiers such as 4A, 55, 69).
pub fn parse_seal_date_dmy(value: &str) -> Option<NaiveDate> {
    if value.len() != 8 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let day = value[0..2].parse().ok()?;
    let month = value[2..4].parse().ok()?;
    let year = value[4..8].parse().ok()?;
    NaiveDate::from_ymd_opt(year, month, day)
}

/// A seal date written `YYYYMMDD` (the customs identifiers D3, D4).
pub fn parse_seal_date_ymd(value: &str) -> Option<NaiveDate> {
    if value.len() != 8 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let year = value[0..4].parse().ok()?;
    let month = value[4..6].parse().ok()?;
    let day = value[6..8].parse().ok()?;
    NaiveDate::from_ymd_opt(year, month, day)
}

/// A seal date and time written `DDMMYYYYHHmm` (identifiers such as 70, C3, F6).
pub fn parse_seal_datetime_dmy(value: &str) -> Option<NaiveDateTime> {
    if value.len() != 12 {
        return None;
    }
    let date = parse_seal_date_dmy(&value[0..8])?;
    let hour = value[8..10].parse().ok()?;
    let minute = value[10..12].parse().ok()?;
    date.and_hms_opt(hour, minute, 0)
}

/// A seal date written as four hex digits counting days since 2000-01-01 (identifiers such as 53, 54), like the
/// header's dates; `FFFF` means no date.
pub fn parse_seal_date_hex(value: &str) -> Option<NaiveDate> {
    if value.len() != 4 || !value.bytes().all(|b| b.is_ascii_hexdigit()) || value.eq_ignore_ascii_case("FFFF") {
        return None;
    }
    let days = u64::from_str_radix(value, 16).ok()?;
    EPOCH.checked_add_days(Days::new(days))
}

/// French and English month names (folded), with their common abbreviations.
const MONTHS: &[(&str, u32)] = &[
    ("JANVIER", 1),
    ("JANV", 1),
    ("JANUARY", 1),
    ("JAN", 1),
    ("FEVRIER", 2),
    ("FEVR", 2),
    ("FEV", 2),
    ("FEBRUARY", 2),
    ("FEB", 2),
    ("MARS", 3),
    ("MARCH", 3),
    ("MAR", 3),
    ("AVRIL", 4),
    ("AVR", 4),
    ("APRIL", 4),
    ("APR", 4),
    ("MAI", 5),
    ("MAY", 5),
    ("JUIN", 6),
    ("JUNE", 6),
    ("JUN", 6),
    ("JUILLET", 7),
    ("JUIL", 7),
    ("JULY", 7),
    ("JUL", 7),
    ("AOUT", 8),
    ("AUGUST", 8),
    ("AUG", 8),
    ("SEPTEMBRE", 9),
    ("SEPT", 9),
    ("SEPTEMBER", 9),
    ("SEP", 9),
    ("OCTOBRE", 10),
    ("OCTOBER", 10),
    ("OCT", 10),
    ("NOVEMBRE", 11),
    ("NOVEMBER", 11),
    ("NOV", 11),
    ("DECEMBRE", 12),
    ("DECEMBER", 12),
    ("DEC", 12),
];

fn month_number(token: &str) -> Option<u32> {
    MONTHS.iter().find(|(name, _)| *name == token).map(|(_, n)| *n)
}

/// Every calendar date written on a page: "31/07/2026", "31.07.2026", "31-07-2026", "31 07 2026", "31/07/26",
/// "2026-07-31", and "31 juillet 2026" / "1er août 2026". Two-digit years are read as 20YY.
pub fn dates_in(text: &str) -> Vec<NaiveDate> {
    let tokens = tokens(text);
    let mut found = Vec::new();
    for window_start in 0..tokens.len() {
        let t = |k: usize| tokens.get(window_start + k).map(String::as_str);
        let (Some(a), Some(b), Some(c)) = (t(0), t(1), t(2)) else {
            // A compact "31072026" never reaches here as three tokens; it is not read as a printed date either,
            // since pages print dates with separators.
            continue;
        };
        let day_token = a.strip_suffix("ER").unwrap_or(a);
        let numeric = |s: &str, len: std::ops::RangeInclusive<usize>| len.contains(&s.len()) && s.bytes().all(|x| x.is_ascii_digit());
        if numeric(day_token, 1..=2) && (numeric(c, 4..=4) || numeric(c, 2..=2)) {
            let year = expand_year(c);
            let month = if numeric(b, 1..=2) { b.parse().ok() } else { month_number(b) };
            if let (Some(day), Some(month), Some(year)) = (day_token.parse().ok(), month, year) {
                if let Some(date) = NaiveDate::from_ymd_opt(year, month, day) {
                    found.push(date);
                }
            }
        }
        if numeric(a, 4..=4) && numeric(b, 1..=2) && numeric(c, 1..=2) {
            if let (Ok(year), Ok(month), Ok(day)) = (a.parse(), b.parse(), c.parse()) {
                if let Some(date) = NaiveDate::from_ymd_opt(year, month, day) {
                    found.push(date);
                }
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

fn expand_year(token: &str) -> Option<i32> {
    let n: i32 = token.parse().ok()?;
    match token.len() {
        4 => Some(n),
        2 => Some(2000 + n),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_accents_case_ligatures_and_punctuation() {
        assert_eq!(fold("Référence de l'avis : 2675C01112223"), "REFERENCE DE L AVIS 2675C01112223");
        assert_eq!(fold("  Cœur  d’Œuvre—Straße\t\n Æther "), "COEUR D OEUVRE STRASSE AETHER");
        assert_eq!(fold("Numéro fiscal"), "NUMERO FISCAL");
        assert_eq!(fold("ÉLECTRICITÉ DÉMO"), "ELECTRICITE DEMO");
        assert_eq!(fold("ﬁn n° 12"), "FIN N 12");
        assert_eq!(fold(""), "");
        assert_eq!(fold("---"), "");
        assert_eq!(tokens("M/TESTE/NOE"), vec!["M", "TESTE", "NOE"]);
    }

    #[test]
    fn reads_amounts_in_every_usual_format() {
        let cents = |s: &str| parse_amount(s).map(|a| a.0);
        assert_eq!(cents("2 910,05 €"), Some(291005));
        assert_eq!(cents("2910.05"), Some(291005));
        assert_eq!(cents("2 910,05"), Some(291005));
        assert_eq!(cents("2\u{202f}910,05\u{a0}€"), Some(291005));
        assert_eq!(cents("2,910.05"), Some(291005));
        assert_eq!(cents("2.910,05"), Some(291005));
        assert_eq!(cents("12 900 €"), Some(1290000));
        assert_eq!(cents("12900"), Some(1290000));
        assert_eq!(cents("12,900"), Some(1290000));
        assert_eq!(cents("1 234 567,8 EUR"), Some(123456780));
        assert_eq!(cents("1,5"), Some(150));
        assert_eq!(cents("38,65"), Some(3865));
        assert_eq!(cents("-6,44 €"), Some(-644));
        assert_eq!(cents("29 10"), None);
        assert_eq!(cents("1,2345"), None);
        assert_eq!(cents("12a"), None);
        assert_eq!(cents(""), None);
        assert_eq!(cents("€"), None);
        assert_eq!(parse_amount("2910,5").map(|a| a.to_string()).as_deref(), Some("2910.50"));
        assert_eq!(Amount(-5).to_string(), "-0.05");
    }

    #[test]
    fn finds_amounts_however_a_page_groups_them() {
        let page = "Net imposable 2 910,05 €\nCumul 20 455,30 €  TVA 20 %   6,44 €\nRFR : 12 900 €\nParts 1,5";
        let found = amounts_in(page);
        for expected in ["2910,05", "20455,30", "6,44", "12900", "1,5", "20"] {
            let a = parse_amount(expected).unwrap();
            assert!(found.contains(&a), "{expected} not found in {found:?}");
        }
        let changed = parse_amount("2210,05").unwrap();
        assert!(!found.contains(&changed));
        // Digits glued to letters are part of an identifier, not an amount.
        assert!(!amounts_in("EAU4410099").contains(&Amount(441009900)));
        assert!(amounts_in("Total: 2910.05").contains(&Amount(291005)));
    }

    #[test]
    fn a_minus_sign_makes_an_amount_negative_and_only_negative() {
        for page in [
            "Solde au 01/10/2026 : -1 523,40 €",
            "Solde - 1 523,40",
            "Solde \u{2212}1\u{202f}523,40",
        ] {
            let found = amounts_in(page);
            assert!(found.contains(&Amount(-152340)), "{page}: {found:?}");
            assert!(!found.contains(&Amount(152340)), "{page}: {found:?}");
        }
        // Hyphens inside references and dates are not signs.
        assert!(amounts_in("Ref AB-1234").contains(&Amount(123400)));
        assert!(amounts_in("2026-10-01").contains(&Amount(1000)));
        assert!(amounts_in("Solde 1 523,40 €").contains(&Amount(152340)));
    }

    #[test]
    fn reads_year_first_dates_and_date_times() {
        assert_eq!(parse_seal_date_ymd("20270301"), NaiveDate::from_ymd_opt(2027, 3, 1));
        assert_eq!(parse_seal_date_ymd("20271301"), None);
        assert_eq!(parse_seal_date_ymd("2027031"), None);
        assert_eq!(
            parse_seal_datetime_dmy("150320261430"),
            NaiveDate::from_ymd_opt(2026, 3, 15).and_then(|d| d.and_hms_opt(14, 30, 0))
        );
        assert_eq!(parse_seal_datetime_dmy("150320262530"), None);
        assert_eq!(parse_seal_datetime_dmy("15032026"), None);
    }

    #[test]
    fn reads_seal_dates() {
        let d = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd);
        assert_eq!(parse_seal_date_dmy("31072026"), d(2026, 7, 31));
        assert_eq!(parse_seal_date_dmy("31022026"), None);
        assert_eq!(parse_seal_date_dmy("3107202"), None);
        assert_eq!(parse_seal_date_hex("2648"), d(2026, 10, 31));
        assert_eq!(parse_seal_date_hex("262A"), d(2026, 10, 1));
        assert_eq!(parse_seal_date_hex("FFFF"), None);
        assert_eq!(parse_seal_date_hex("XYZ1"), None);
    }

    #[test]
    fn finds_printed_dates() {
        let d = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd).unwrap();
        let page = "Date de mise en recouvrement : 31/07/2026. Période du 01.10.2026 au 31-10-2026, \
                    signé le 1er août 2026, émis 2026-09-15, payé le 3 12 26, vu le 5 juillet 2025";
        let found = dates_in(page);
        for date in [
            d(2026, 7, 31),
            d(2026, 10, 1),
            d(2026, 10, 31),
            d(2026, 8, 1),
            d(2026, 9, 15),
            d(2026, 12, 3),
            d(2025, 7, 5),
        ] {
            assert!(found.contains(&date), "{date} not in {found:?}");
        }
        assert!(!found.contains(&d(2026, 7, 30)));
        assert!(dates_in("31/02/2026").is_empty());
    }
}
