//! What the analysis engine can do on this machine: the optional programs it found and the ANTS trust
//! list it verifies seals with. One vocabulary for the three places that report it: the start-up
//! lines of `serve` and `worker`, `/readyz`, and `sceau doctor`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// An optional program the service runs as a child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Program {
    Tesseract,
    Pdftoppm,
    Xmlsec1,
}

impl Program {
    /// Every program, in report order.
    pub const ALL: [Program; 3] = [Program::Tesseract, Program::Pdftoppm, Program::Xmlsec1];

    pub fn name(self) -> &'static str {
        match self {
            Program::Tesseract => "tesseract",
            Program::Pdftoppm => "pdftoppm",
            Program::Xmlsec1 => "xmlsec1",
        }
    }

    /// What the service loses without it.
    pub fn cost(self) -> &'static str {
        match self {
            Program::Tesseract => "photographed and scanned documents cannot have their printed text compared with their seal",
            Program::Pdftoppm => "2D-Doc seals drawn as vectors in PDFs are not found",
            Program::Xmlsec1 => "`sceau admin trust import` cannot check a new ANTS trust list's signature",
        }
    }

    /// The Debian packages that provide it (the French data for Tesseract; `tesseract-ocr` brings the
    /// orientation data its `--psm 1` reads turned pages with).
    pub fn debian_packages(self) -> &'static str {
        match self {
            Program::Tesseract => "tesseract-ocr tesseract-ocr-fra",
            Program::Pdftoppm => "poppler-utils",
            Program::Xmlsec1 => "xmlsec1",
        }
    }

    /// Whether the analysis engine itself uses it (the others serve operator commands).
    pub fn used_by_engine(self) -> bool {
        !matches!(self, Program::Xmlsec1)
    }
}

/// What a program's probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgramCheck {
    pub program: Program,
    pub available: bool,
    /// Why it is unusable (absent, a language missing); the version line when it works.
    pub detail: String,
}

impl ProgramCheck {
    /// The one line printed at start for a missing program: what it costs and how to install it.
    pub fn missing_line(&self) -> Option<String> {
        (!self.available).then(|| {
            format!(
                "missing program {}: {} ({}); install: apt-get install {}",
                self.program.name(),
                self.program.cost(),
                self.detail,
                self.program.debian_packages()
            )
        })
    }
}

/// Where the trust list in use comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustListOrigin {
    /// Compiled into the binary.
    Shipped,
    /// Imported with `sceau admin trust import` into the data directory.
    Imported,
}

/// The ANTS trust list's identity: its sequence number and dates (ETSI TS 102 231 scheme information).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustListSummary {
    pub origin: TrustListOrigin,
    pub sequence: u64,
    pub issued: DateTime<Utc>,
    /// The date a newer list is due; past it, the list is expired.
    pub next_update: Option<DateTime<Utc>>,
}

impl TrustListSummary {
    pub fn expired_at(&self, now: DateTime<Utc>) -> bool {
        self.next_update.is_some_and(|due| due < now)
    }

    /// The start-up warning for an expired list, if it is.
    pub fn expiry_warning(&self, now: DateTime<Utc>) -> Option<String> {
        let due = self.next_update.filter(|_| self.expired_at(now))?;
        Some(format!(
            "warning: the ANTS trust list in use (sequence {}, issued {}) expired on {}: seals of authorities added or \
             withdrawn since are judged on stale data; import a newer one with `sceau admin trust import FILE`",
            self.sequence,
            self.issued.format("%Y-%m-%d"),
            due.format("%Y-%m-%d")
        ))
    }
}

/// The engine's capabilities on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    pub programs: Vec<ProgramCheck>,
    pub trust_list: TrustListSummary,
    /// Whether the trust list's next update is past.
    pub trust_list_expired: bool,
}

impl Capabilities {
    pub fn program(&self, program: Program) -> Option<&ProgramCheck> {
        self.programs.iter().find(|c| c.program == program)
    }
}

/// The engine's capabilities as they are at the moment of asking (`/readyz`): a trust list
/// imported while the service runs, or one that expires, shows at once.
pub trait CapabilityReport: Send + Sync {
    fn now(&self) -> Capabilities;
}

/// Capabilities probed once, reported as they were (a gateway without an engine of its own in
/// tests).
impl CapabilityReport for Capabilities {
    fn now(&self) -> Capabilities {
        self.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(next_update: Option<&str>) -> TrustListSummary {
        TrustListSummary {
            origin: TrustListOrigin::Shipped,
            sequence: 23,
            issued: "2026-05-11T14:00:00Z".parse().unwrap(),
            next_update: next_update.map(|d| d.parse().unwrap()),
        }
    }

    #[test]
    fn a_list_past_its_next_update_is_expired() {
        let list = summary(Some("2027-05-11T14:00:00Z"));
        let before: DateTime<Utc> = "2027-05-11T13:59:59Z".parse().unwrap();
        let after: DateTime<Utc> = "2027-05-11T14:00:01Z".parse().unwrap();
        assert!(!list.expired_at(before) && list.expiry_warning(before).is_none());
        assert!(list.expired_at(after));
        let warning = list.expiry_warning(after).unwrap();
        assert!(
            warning.contains("expired on 2027-05-11") && warning.contains("sequence 23"),
            "{warning}"
        );
        assert!(summary(None).expiry_warning(after).is_none(), "no next update, no expiry");
    }

    #[test]
    fn a_missing_program_line_says_cost_and_install() {
        let check = ProgramCheck {
            program: Program::Pdftoppm,
            available: false,
            detail: "the program pdftoppm was not found".into(),
        };
        let line = check.missing_line().unwrap();
        assert!(line.contains("vectors") && line.contains("apt-get install poppler-utils"), "{line}");
        assert!(ProgramCheck { available: true, ..check }.missing_line().is_none());
    }
}
