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

/// ISO 3166-1 alpha-3 (249 codes, from Debian's iso-codes), sorted for binary search.
const ISO_ALPHA3: &[&str] = &[
    "ABW", "AFG", "AGO", "AIA", "ALA", "ALB", "AND", "ARE", "ARG", "ARM", "ASM", "ATA", "ATF", "ATG", "AUS", "AUT", "AZE", "BDI", "BEL",
    "BEN", "BES", "BFA", "BGD", "BGR", "BHR", "BHS", "BIH", "BLM", "BLR", "BLZ", "BMU", "BOL", "BRA", "BRB", "BRN", "BTN", "BVT", "BWA",
    "CAF", "CAN", "CCK", "CHE", "CHL", "CHN", "CIV", "CMR", "COD", "COG", "COK", "COL", "COM", "CPV", "CRI", "CUB", "CUW", "CXR", "CYM",
    "CYP", "CZE", "DEU", "DJI", "DMA", "DNK", "DOM", "DZA", "ECU", "EGY", "ERI", "ESH", "ESP", "EST", "ETH", "FIN", "FJI", "FLK", "FRA",
    "FRO", "FSM", "GAB", "GBR", "GEO", "GGY", "GHA", "GIB", "GIN", "GLP", "GMB", "GNB", "GNQ", "GRC", "GRD", "GRL", "GTM", "GUF", "GUM",
    "GUY", "HKG", "HMD", "HND", "HRV", "HTI", "HUN", "IDN", "IMN", "IND", "IOT", "IRL", "IRN", "IRQ", "ISL", "ISR", "ITA", "JAM", "JEY",
    "JOR", "JPN", "KAZ", "KEN", "KGZ", "KHM", "KIR", "KNA", "KOR", "KWT", "LAO", "LBN", "LBR", "LBY", "LCA", "LIE", "LKA", "LSO", "LTU",
    "LUX", "LVA", "MAC", "MAF", "MAR", "MCO", "MDA", "MDG", "MDV", "MEX", "MHL", "MKD", "MLI", "MLT", "MMR", "MNE", "MNG", "MNP", "MOZ",
    "MRT", "MSR", "MTQ", "MUS", "MWI", "MYS", "MYT", "NAM", "NCL", "NER", "NFK", "NGA", "NIC", "NIU", "NLD", "NOR", "NPL", "NRU", "NZL",
    "OMN", "PAK", "PAN", "PCN", "PER", "PHL", "PLW", "PNG", "POL", "PRI", "PRK", "PRT", "PRY", "PSE", "PYF", "QAT", "REU", "ROU", "RUS",
    "RWA", "SAU", "SDN", "SEN", "SGP", "SGS", "SHN", "SJM", "SLB", "SLE", "SLV", "SMR", "SOM", "SPM", "SRB", "SSD", "STP", "SUR", "SVK",
    "SVN", "SWE", "SWZ", "SXM", "SYC", "SYR", "TCA", "TCD", "TGO", "THA", "TJK", "TKL", "TKM", "TLS", "TON", "TTO", "TUN", "TUR", "TUV",
    "TWN", "TZA", "UGA", "UKR", "UMI", "URY", "USA", "UZB", "VAT", "VCT", "VEN", "VGB", "VIR", "VNM", "VUT", "WLF", "WSM", "YEM", "ZAF",
    "ZMB", "ZWE",
];

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
    match ISO_ALPHA3.binary_search(&code) {
        Ok(index) => IssuerCode::Country(ISO_ALPHA3[index]),
        Err(_) => IssuerCode::Unknown,
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
    fn table_is_sorted_and_complete() {
        assert!(ISO_ALPHA3.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ISO_ALPHA3.len(), 249);
    }

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
