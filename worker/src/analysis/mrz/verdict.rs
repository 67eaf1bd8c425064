//! What a parsed zone means for the engine: the document type and country the API reports, the
//! holder's age, whether the document has expired, and the catalogue anomalies that weigh on
//! the verdict. Parsing says what is written; this file says what to make of it.

use chrono::{Datelike, NaiveDate};
use domain::vocabulary::{Anomaly, AnomalyCode, DocumentType};

use super::countries::{self, IssuerCode};
use super::{french_legacy, Mrz, MrzField, MrzFormat};

/// The engine's findings from one zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MrzFindings {
    pub document_type: DocumentType,
    /// ISO 3166-1 alpha-3 of the issuing state; `None` for organisations, stateless and refugee
    /// documents, and codes that are no country.
    pub document_country: Option<String>,
    /// Whole years at `today`, when the birth date was read.
    pub holder_age: Option<u32>,
    /// The last day the document is valid: its expiry date, or for the French legacy card the
    /// latest date its issue month allows (see [`french_legacy`]).
    pub valid_until: Option<NaiveDate>,
    pub expired: bool,
    pub anomalies: Vec<Anomaly>,
}

/// What the engine reports for `mrz` at `today`.
pub fn findings(mrz: &Mrz, today: NaiveDate) -> MrzFindings {
    let issuer = countries::classify(&mrz.issuing_state);
    let valid_until = valid_until(mrz);
    let expired = valid_until.is_some_and(|last| last < today);
    let mut anomalies = Vec::new();
    anomalies.extend(check_digit_anomaly(mrz));
    anomalies.extend(composite_anomaly(mrz));
    if expired {
        anomalies.push(Anomaly::new(AnomalyCode::DocumentExpired));
    }
    anomalies.extend(unreadable_anomaly(mrz));
    if issuer == IssuerCode::Unknown && !mrz.unreadable.contains(&MrzField::IssuingState) {
        anomalies.push(Anomaly::new(AnomalyCode::MrzUnknownCountry));
    }
    MrzFindings {
        document_type: document_type(mrz),
        document_country: countries::iso_alpha3(&mrz.issuing_state).map(str::to_owned),
        holder_age: mrz.birth_date.and_then(|birth| age_on(birth, today)),
        valid_until,
        expired,
        anomalies,
    }
}

/// The `documentType` the document code stands for. ICAO leaves the second letter to issuers;
/// the EU residence permit format and most states use `R` there (`IR`, `AR`, `CR`).
pub fn document_type(mrz: &Mrz) -> DocumentType {
    if mrz.format == MrzFormat::FrenchIdLegacy {
        return DocumentType::CarteIdentite;
    }
    let mut code = mrz.document_code.bytes();
    match (code.next(), code.next()) {
        (Some(b'P'), _) => DocumentType::Passeport,
        (Some(b'I' | b'A' | b'C'), Some(b'R')) => DocumentType::TitreSejour,
        (Some(b'I'), _) => DocumentType::CarteIdentite,
        // Visas (V), crew certificates (A, C) and anything else with an MRZ.
        _ => DocumentType::AutreIdentite,
    }
}

/// Whole years from `birth` to `on`; `None` when `birth` is after `on`. Someone born on
/// 29 February has a birthday on 1 March in common years.
pub fn age_on(birth: NaiveDate, on: NaiveDate) -> Option<u32> {
    if birth > on {
        return None;
    }
    let had_birthday = (on.month(), on.day()) >= (birth.month(), birth.day());
    let years = on.year() - birth.year() - i32::from(!had_birthday);
    u32::try_from(years).ok()
}

fn valid_until(mrz: &Mrz) -> Option<NaiveDate> {
    match mrz.format {
        MrzFormat::FrenchIdLegacy => mrz.issue_month.and_then(|month| french_legacy::valid_until(month, mrz.birth_date)),
        MrzFormat::Td1 | MrzFormat::Td2 | MrzFormat::Td3 => mrz.expiry_date,
    }
}

/// One anomaly for all the field check digits that failed, naming the fields (never their
/// values: messages do not quote the document).
fn check_digit_anomaly(mrz: &Mrz) -> Option<Anomaly> {
    let failed: Vec<&str> = mrz
        .checks
        .iter()
        .filter(|c| !c.ok && c.field != MrzField::Composite)
        .map(|c| c.field.as_str())
        .collect();
    if failed.is_empty() {
        return None;
    }
    Some(Anomaly::with_detail(AnomalyCode::MrzCheckDigitMismatch, &failed.join(", ")))
}

fn composite_anomaly(mrz: &Mrz) -> Option<Anomaly> {
    (mrz.check(MrzField::Composite) == Some(false)).then(|| Anomaly::new(AnomalyCode::MrzCompositeMismatch))
}

fn unreadable_anomaly(mrz: &Mrz) -> Option<Anomaly> {
    if mrz.unreadable.is_empty() {
        return None;
    }
    let fields: Vec<&str> = mrz.unreadable.iter().map(|f| f.as_str()).collect();
    Some(Anomaly::with_detail(AnomalyCode::MrzUnreadableField, &fields.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::vocabulary::Severity;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn age_counts_whole_years() {
        assert_eq!(age_on(d(2012, 3, 4), d(2026, 11, 22)), Some(14));
        assert_eq!(age_on(d(2008, 11, 22), d(2026, 11, 22)), Some(18));
        assert_eq!(age_on(d(2008, 11, 23), d(2026, 11, 22)), Some(17));
        assert_eq!(age_on(d(2008, 2, 29), d(2026, 2, 28)), Some(17));
        assert_eq!(age_on(d(2008, 2, 29), d(2026, 3, 1)), Some(18));
        assert_eq!(age_on(d(2027, 1, 1), d(2026, 11, 22)), None);
    }

    #[test]
    fn mrz_codes_weigh_as_the_api_says() {
        assert_eq!(AnomalyCode::MrzCheckDigitMismatch.severity(), Severity::Reject);
        assert_eq!(AnomalyCode::MrzCompositeMismatch.severity(), Severity::Reject);
        assert_eq!(AnomalyCode::MrzUnreadableField.severity(), Severity::Warning);
        let detailed = Anomaly::with_detail(AnomalyCode::MrzCheckDigitMismatch, "documentNumber");
        assert!(detailed.message.ends_with("its field (documentNumber)."), "{}", detailed.message);
    }
}
