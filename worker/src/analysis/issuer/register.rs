//! The offline register: issuers known to the service, shipped in `data/issuers/register.tsv` and
//! compiled in so a worker confirms the common issuers without any network, plus an operator's
//! file of the same format for their own issuers.

use std::collections::HashMap;
use std::path::Path;

use super::siren::{Siren, SirenError};
use super::RegisterError;

/// The shipped register (see the file's header for its columns and sources).
pub const EMBEDDED_REGISTER: &str = include_str!("../../../data/issuers/register.tsv");

/// The header line, optional (a commented one is just a comment).
const HEADER: &str = "siren\tname\tkind\tsource";

/// One register row, the SIREN aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterEntry {
    pub name: String,
    /// energy, telecom, water, tax, social, payroll, bank, insurance, 2ddoc_signer…
    pub kind: String,
    /// Where the row comes from.
    pub source: String,
}

/// Why a register line was refused. Reasons name the rule, never the line's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    pub reason: &'static str,
}

/// Parses a register file: `#` comments and blank lines skipped, an optional header, then rows of
/// four tab-separated columns. A SIREN listed twice in one file is an error: one of the rows is
/// wrong and nobody can tell which.
pub fn parse(text: &str) -> Result<Vec<(Siren, RegisterEntry)>, LineError> {
    let mut rows: Vec<(Siren, RegisterEntry)> = Vec::new();
    let mut index: HashMap<Siren, usize> = HashMap::new();
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let trimmed = raw.trim_end_matches('\r');
        if trimmed.trim().is_empty() || trimmed.trim_start().starts_with('#') || trimmed == HEADER {
            continue;
        }
        let error = |reason| LineError { line, reason };
        let columns: Vec<&str> = trimmed.split('\t').map(str::trim).collect();
        let [siren, name, kind, source] = columns[..] else {
            return Err(error("expected four tab-separated columns: siren, name, kind, source"));
        };
        let siren = Siren::parse(siren).map_err(|e| {
            error(match e {
                SirenError::NotNineDigits => "the SIREN is not nine digits",
                SirenError::CheckDigit => "the SIREN fails its check digit",
            })
        })?;
        if name.is_empty() {
            return Err(error("the name is empty"));
        }
        let kind_ok = !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !kind_ok {
            return Err(error("the kind is not a lowercase word (energy, telecom, bank…)"));
        }
        if source.is_empty() {
            return Err(error("the source is empty"));
        }
        if index.insert(siren.clone(), rows.len()).is_some() {
            return Err(error("the SIREN is listed twice"));
        }
        let entry = RegisterEntry {
            name: name.to_owned(),
            kind: kind.to_owned(),
            source: source.to_owned(),
        };
        rows.push((siren, entry));
    }
    Ok(rows)
}

/// The shipped register and the operator's file merged; the operator's rows win.
pub fn load(extra_file: Option<&Path>) -> Result<HashMap<Siren, RegisterEntry>, RegisterError> {
    let shipped = parse(EMBEDDED_REGISTER).map_err(|e| RegisterError::Embedded {
        line: e.line,
        reason: e.reason,
    })?;
    let mut entries: HashMap<Siren, RegisterEntry> = shipped.into_iter().collect();
    if let Some(path) = extra_file {
        let text = std::fs::read_to_string(path).map_err(|source| RegisterError::Read {
            path: path.to_owned(),
            source,
        })?;
        let extra = parse(&text).map_err(|e| RegisterError::Parse {
            path: path.to_owned(),
            line: e.line,
            reason: e.reason,
        })?;
        let mut replaced = 0usize;
        for (siren, entry) in extra {
            if entries.insert(siren, entry).is_some() {
                replaced += 1;
            }
        }
        tracing::info!(path = %path.display(), replaced, "operator issuer register loaded");
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_row_is_valid() {
        let rows = parse(EMBEDDED_REGISTER).unwrap_or_else(|e| panic!("line {}: {}", e.line, e.reason));
        assert!(rows.len() >= 60, "{} rows", rows.len());
        for (siren, entry) in &rows {
            assert!(super::super::siren::luhn_valid(siren.as_str().as_bytes()), "{siren}");
            assert!(
                entry.name.is_ascii() && entry.name == entry.name.to_uppercase(),
                "{siren}: {}",
                entry.name
            );
        }
        let known = |s: &str| rows.iter().find(|(siren, _)| siren.as_str() == s).map(|(_, e)| e.name.clone());
        assert_eq!(known("552081317").as_deref(), Some("ELECTRICITE DE FRANCE"));
        assert_eq!(known("542107651").as_deref(), Some("ENGIE"));
        assert_eq!(known("380129866").as_deref(), Some("ORANGE"));
        assert_eq!(known("356000000").as_deref(), Some("LA POSTE"));
        assert_eq!(known("130004955").as_deref(), Some("DIRECTION GENERALE DES FINANCES PUBLIQUES"));
    }

    #[test]
    fn demo_issuers_are_not_shipped() {
        let rows = parse(EMBEDDED_REGISTER).unwrap();
        for demo in ["789012341", "890123458", "901234567"] {
            assert!(rows.iter().all(|(siren, _)| siren.as_str() != demo), "{demo}");
        }
        assert!(rows.iter().all(|(_, entry)| !entry.name.contains("DEMO")));
    }

    #[test]
    fn shipped_2ddoc_signers_match_their_certificates() {
        // Every row citing certificates names ones that exist, and their subject carries the SIREN.
        let certs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/2ddoc/certs");
        for (siren, entry) in parse(EMBEDDED_REGISTER).unwrap() {
            let Some(list) = entry.source.strip_prefix("ANTS 2D-Doc signer certificate ") else {
                continue;
            };
            for name in list.split(',') {
                let der = std::fs::read(certs.join(format!("{name}.der"))).unwrap_or_else(|e| panic!("{name}: {e}"));
                let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
                let subject = cert.subject().to_string();
                let digits: String = subject.chars().filter(char::is_ascii_digit).collect();
                assert!(digits.contains(siren.as_str()), "{name}: {subject} lacks {siren}");
            }
        }
    }

    #[test]
    fn refuses_bad_lines_with_their_number() {
        let cases = [
            (
                "552081317\tEDF\tenergy",
                "expected four tab-separated columns: siren, name, kind, source",
            ),
            ("55208131\tEDF\tenergy\tx", "the SIREN is not nine digits"),
            ("552081318\tEDF\tenergy\tx", "the SIREN fails its check digit"),
            ("552081317\t\tenergy\tx", "the name is empty"),
            (
                "552081317\tEDF\tEnergy\tx",
                "the kind is not a lowercase word (energy, telecom, bank…)",
            ),
            ("552081317\tEDF\tenergy\t", "the source is empty"),
        ];
        for (row, reason) in cases {
            let text = format!("# comment\n{HEADER}\n\n{row}\n");
            assert_eq!(parse(&text), Err(LineError { line: 4, reason }), "{row}");
        }
        let twice = "552081317\tEDF\tenergy\tx\r\n552081317\tEDF SA\tenergy\ty\r\n";
        assert_eq!(
            parse(twice),
            Err(LineError {
                line: 2,
                reason: "the SIREN is listed twice"
            })
        );
        assert_eq!(parse("# only comments\n\n").unwrap().len(), 0);
    }
}
