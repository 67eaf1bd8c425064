//! The validity of the French identity card of 1988–2021, whose MRZ has no expiry date: it has
//! to be derived from the month of issue (the first four digits of the card number), the
//! holder's age at issue and the law, so the engine can still tell an expired card.
//!
//! The rule implemented (décret n° 2013-1188 of 18 December 2013, in force 1 January 2014):
//! - a card issued to an adult on or after 2 January 2004 is valid 15 years (cards issued from
//!   2004 to 2013 were extended without being reissued: the date printed on them is 5 years
//!   short);
//! - a card issued before 2 January 2004, or to a minor, is valid 10 years;
//! - a card is valid up to the day before the anniversary of its issue date.
//!
//! Only the month of issue is known, so every doubt goes the holder's way: the issue day is
//! taken as the last of the month, January 2004 counts as on or after the 2nd, and a holder
//! who turns 18 during the month of issue counts as an adult. The result is the latest date the
//! card can be valid until; a card reported expired is expired whatever its issue day.

use chrono::{Datelike, Days, Months, NaiveDate};

use super::verdict::age_on;

/// Months of validity for a card issued in `issue_month` to a holder born on `birth`; an
/// unknown birth date is taken as an adult's.
pub fn validity_years(issue_month: NaiveDate, birth: Option<NaiveDate>) -> u32 {
    let Some(issued) = last_day_of_month(issue_month) else { return 10 };
    let before_2004 = issued.year() < 2004;
    let minor = birth.and_then(|b| age_on(b, issued)).is_some_and(|age| age < 18);
    if before_2004 || minor {
        10
    } else {
        15
    }
}

/// The latest date the card can be valid until; `None` only for dates at the end of chrono's
/// range, which no card has.
pub fn valid_until(issue_month: NaiveDate, birth: Option<NaiveDate>) -> Option<NaiveDate> {
    let issued = last_day_of_month(issue_month)?;
    let years = validity_years(issue_month, birth);
    let anniversary = issued.checked_add_months(Months::new(12 * years))?;
    if anniversary.day() != issued.day() {
        // Issued on 29 February: the anniversary falls on 1 March, so the 28th is still valid.
        return Some(anniversary);
    }
    anniversary.checked_sub_days(Days::new(1))
}

fn last_day_of_month(date: NaiveDate) -> Option<NaiveDate> {
    date.with_day(1)?.checked_add_months(Months::new(1))?.checked_sub_days(Days::new(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn adults_since_2004_get_15_years() {
        // The manifest's legacy sample: issued 2018-09, printed validity 2033-09-03.
        assert_eq!(validity_years(d(2018, 9, 1), Some(d(1985, 7, 7))), 15);
        let until = valid_until(d(2018, 9, 1), Some(d(1985, 7, 7))).unwrap();
        assert_eq!(until, d(2033, 9, 29));
        assert!(until >= d(2033, 9, 3));
        assert_eq!(validity_years(d(2004, 1, 1), Some(d(1960, 1, 1))), 15);
    }

    #[test]
    fn before_2004_or_minors_get_10_years() {
        assert_eq!(validity_years(d(2003, 12, 1), Some(d(1960, 1, 1))), 10);
        assert_eq!(valid_until(d(1995, 3, 1), None), Some(d(2005, 3, 30)));
        assert_eq!(validity_years(d(2015, 6, 1), Some(d(2001, 5, 10))), 10, "14 at issue");
        assert_eq!(valid_until(d(2015, 6, 1), Some(d(2001, 5, 10))), Some(d(2025, 6, 29)));
    }

    #[test]
    fn turning_18_in_the_month_of_issue_counts_as_adult() {
        assert_eq!(validity_years(d(2016, 3, 1), Some(d(1998, 3, 31))), 15);
        assert_eq!(validity_years(d(2016, 3, 1), Some(d(1998, 4, 1))), 10);
    }

    #[test]
    fn unknown_birth_date_is_taken_as_an_adult() {
        assert_eq!(validity_years(d(2010, 2, 1), None), 15);
        assert_eq!(valid_until(d(2012, 2, 1), None), Some(d(2027, 2, 28)));
    }
}
