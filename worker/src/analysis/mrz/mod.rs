//! The machine-readable zone of identity documents: [`read`] finds the zone in the pixels and reads
//! its lines (an OCR-B matcher); the rest of this module says which layout they are, what they
//! contain and whether their check digits, expiry and holder's age let the document through.
//!
//! Layouts: ICAO 9303 TD1 (3×30), TD2 (2×36), TD3 (2×44) and the French national identity card
//! of 1988–2021 (2×36, no expiry date in the zone: see [`french_legacy`]).

pub mod check_digit;
pub mod countries;
pub mod encode;
mod fields;
mod formats;
pub mod french_legacy;
pub mod read;
pub mod verdict;

#[cfg(test)]
mod tests;

use chrono::NaiveDate;

pub use encode::encode;
pub use verdict::{findings, MrzFindings};

/// The layouts this module reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MrzFormat {
    /// ICAO 9303 part 5: identity cards and residence permits, 3 lines of 30.
    Td1,
    /// ICAO 9303 part 6: 2 lines of 36 (older cards, MRV-B visas).
    Td2,
    /// ICAO 9303 part 4: passports (and MRV-A visas), 2 lines of 44.
    Td3,
    /// The French national identity card issued from 1988 to 2021: 2 lines of 36, national layout.
    FrenchIdLegacy,
}

impl MrzFormat {
    /// The names the samples manifest uses (`mrzType`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Td1 => "TD1",
            Self::Td2 => "TD2",
            Self::Td3 => "TD3",
            Self::FrenchIdLegacy => "FR_ID_LEGACY",
        }
    }

    pub fn line_count(self) -> usize {
        match self {
            Self::Td1 => 3,
            Self::Td2 | Self::Td3 | Self::FrenchIdLegacy => 2,
        }
    }

    pub fn line_len(self) -> usize {
        match self {
            Self::Td1 => 30,
            Self::Td2 | Self::FrenchIdLegacy => 36,
            Self::Td3 => 44,
        }
    }
}

/// The holder's sex as the MRZ states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sex {
    Female,
    Male,
    /// `<`, or `X` which some states print for the same meaning.
    Unspecified,
}

impl Sex {
    /// The character the encoder writes.
    pub fn as_char(self) -> char {
        match self {
            Self::Female => 'F',
            Self::Male => 'M',
            Self::Unspecified => '<',
        }
    }
}

/// A field of the zone, named as the samples manifest names check digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MrzField {
    DocumentCode,
    IssuingState,
    Surname,
    GivenNames,
    DocumentNumber,
    Nationality,
    BirthDate,
    Sex,
    ExpiryDate,
    OptionalData,
    /// TD3's optional data field, which has its own check digit.
    PersonalNumber,
    /// French legacy card: year and month of issue, the first four digits of the card number.
    IssueDate,
    /// French legacy card: department and office that issued it (end of line 1).
    AdministrativeCode,
    /// The check digit over several fields at the end of the zone.
    Composite,
}

impl MrzField {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DocumentCode => "documentCode",
            Self::IssuingState => "issuingState",
            Self::Surname => "surname",
            Self::GivenNames => "givenNames",
            Self::DocumentNumber => "documentNumber",
            Self::Nationality => "nationality",
            Self::BirthDate => "birthDate",
            Self::Sex => "sex",
            Self::ExpiryDate => "expiryDate",
            Self::OptionalData => "optionalData",
            Self::PersonalNumber => "personalNumber",
            Self::IssueDate => "issueDate",
            Self::AdministrativeCode => "administrativeCode",
            Self::Composite => "composite",
        }
    }
}

/// The outcome of one check digit that could be computed (an unreadable character makes it
/// undecidable instead: the field is then listed in [`Mrz::unreadable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckResult {
    pub field: MrzField,
    pub ok: bool,
}

/// An OCR confusion this module undid because the field's type left no doubt (a letter `O` in a
/// date is a zero). Kept so a reviewer can see the text was not read exactly as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Correction {
    pub field: MrzField,
    /// 0-based line and column in the zone.
    pub line: usize,
    pub column: usize,
    pub read: char,
    pub corrected: char,
}

/// A parsed zone. Strings are the MRZ's own (upper case A–Z, digits), fillers removed; names use
/// spaces between their parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mrz {
    pub format: MrzFormat,
    /// The zone as read: trimmed, upper-cased, OCR corrections applied.
    pub lines: Vec<String>,
    /// `P`, `ID`, `IR`, `I`… (trailing filler removed).
    pub document_code: String,
    /// The ICAO code as written (`D` for Germany); see [`countries`] for the ISO code.
    pub issuing_state: String,
    pub surname: String,
    pub given_names: String,
    pub document_number: String,
    /// ICAO code as written; `FRA` for the French legacy card, which is only issued to nationals.
    pub nationality: String,
    pub birth_date: Option<NaiveDate>,
    pub sex: Option<Sex>,
    /// `None` when unreadable or, for the French legacy card, absent from the layout.
    pub expiry_date: Option<NaiveDate>,
    /// French legacy card: first day of the month of issue (the day is not in the zone).
    pub issue_month: Option<NaiveDate>,
    /// TD1 line 1, TD2, TD3 (personal number), French legacy (administrative code).
    pub optional_data: String,
    /// TD1 line 2's optional data; empty in other layouts.
    pub optional_data_2: String,
    pub checks: Vec<CheckResult>,
    pub corrections: Vec<Correction>,
    /// Fields that could not be read (characters outside the MRZ set, impossible dates).
    pub unreadable: Vec<MrzField>,
}

impl Mrz {
    /// Whether every check digit that could be computed matched and none was undecidable.
    pub fn all_checks_ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok) && !self.unreadable.contains(&MrzField::Composite)
    }

    /// The outcome of one field's check digit, if the layout has one and it could be computed.
    pub fn check(&self, field: MrzField) -> Option<bool> {
        self.checks.iter().find(|c| c.field == field).map(|c| c.ok)
    }
}

/// Why text is not an MRZ this module can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MrzError {
    #[error("no MRZ text was given")]
    Empty,
    #[error("{} line(s) of lengths {lengths:?} match no MRZ layout (TD1 3×30, TD2 2×36, TD3 2×44, French identity card 2×36)", lengths.len())]
    UnknownLayout { lengths: Vec<usize> },
}

/// Parses a zone, resolving two-digit years against today's date (UTC).
///
/// # Errors
/// [`MrzError`] when there is no text or its lines have the shape of no layout; a zone of the
/// right shape always parses, what could not be read being listed in [`Mrz::unreadable`].
pub fn parse(lines: &[&str]) -> Result<Mrz, MrzError> {
    parse_at(lines, chrono::Utc::now().date_naive())
}

/// Parses a zone, resolving two-digit years against `today`: a birth date that would be in the
/// future belongs to the previous century.
///
/// # Errors
/// As [`parse`].
pub fn parse_at(lines: &[&str], today: NaiveDate) -> Result<Mrz, MrzError> {
    formats::parse(lines, today)
}
