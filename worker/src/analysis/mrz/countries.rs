//! From the ICAO code of an issuing state to the ISO 3166-1 alpha-3 code the API reports as
//! `documentCountry`: ICAO 9303 part 3 uses ISO codes except for a few of its own (Germany's `D`,
//! British nationality classes, organisations and statuses that are no country).

/// What an ICAO state or nationality code designates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssuerCode {
    /// A country, by its ISO 3166-1 alpha-3 code.
    Country(&'static str),
    /// A code ICAO defines for an organisation or a status (United Nations, stateless person,
    /// refugee, Interpol…): a valid document, but no country to report.
    NonState,
    /// Not a code ICAO or ISO defines: misread, or not a genuine document.
    Unknown,
}

/// British nationality classes of ICAO 9303 part 3, all issued by the United Kingdom.
const BRITISH: &[&str] = &["GBD", "GBN", "GBO", "GBP", "GBS"];

/// ICAO 9303 part 3 codes that designate no country: United Nations and its agencies, the EU,
/// regional organisations, the Sovereign Military Order of Malta, Interpol, stateless persons
/// and refugees, and Kosovo as it appears in MRZs (`UNK` under UNMIK, `RKS`), which ISO 3166-1
/// does not list.
const NON_STATE: &[&str] = &[
    "UNO", "UNA", "UNK", "RKS", "EUE", "XBA", "XIM", "XCC", "XCE", "XCO", "XDC", "XEC", "XES", "XMP", "XOM", "XPO", "XXA", "XXB", "XXC",
    "XXX",
];

/// Classifies an ICAO code as written in a zone (trailing fillers allowed: `D<<`).
pub fn classify(icao: &str) -> IssuerCode {
    let code = icao.trim_end_matches('<');
    if code == "D" {
        return IssuerCode::Country("DEU");
    }
    if BRITISH.contains(&code) {
        return IssuerCode::Country("GBR");
    }
    if NON_STATE.contains(&code) {
        return IssuerCode::NonState;
    }
    match domain::country::alpha3(code) {
        Some(iso) => IssuerCode::Country(iso),
        None => IssuerCode::Unknown,
    }
}

/// The ISO 3166-1 alpha-3 code of the country an ICAO code designates, if any.
pub fn iso_alpha3(icao: &str) -> Option<&'static str> {
    match classify(icao) {
        IssuerCode::Country(code) => Some(code),
        IssuerCode::NonState | IssuerCode::Unknown => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icao_specific_codes_map_to_iso() {
        assert_eq!(iso_alpha3("D"), Some("DEU"));
        assert_eq!(iso_alpha3("D<<"), Some("DEU"));
        for british in BRITISH {
            assert_eq!(iso_alpha3(british), Some("GBR"));
        }
        assert_eq!(iso_alpha3("FRA"), Some("FRA"));
        assert_eq!(iso_alpha3("BEL"), Some("BEL"));
        assert_eq!(iso_alpha3("DEU"), Some("DEU"));
    }

    #[test]
    fn organisations_and_statuses_have_no_country() {
        for code in ["UNO", "UNA", "XXA", "XXB", "XXC", "XXX", "EUE"] {
            assert_eq!(classify(code), IssuerCode::NonState, "{code}");
            assert_eq!(iso_alpha3(code), None);
        }
    }

    #[test]
    fn unknown_codes_are_told_apart() {
        assert_eq!(classify("UTO"), IssuerCode::Unknown, "ICAO's fictitious Utopia");
        assert_eq!(classify(""), IssuerCode::Unknown);
        assert_eq!(classify("F?A"), IssuerCode::Unknown);
    }
}
