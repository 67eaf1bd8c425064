//! Issuer confirmation: an administrative document without a verified 2D-Doc seal is vouched for
//! only by its issuer, so the SIREN printed on it must name a company the service knows (offline
//! register, shipped and operator-extended) or that the online company register confirms as
//! active. Numbers are read from the visible text and checked against their check digits first.

pub mod online;
pub mod register;
pub mod siren;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

pub use online::{OnlineAnswer, OnlineRegister};
pub use register::RegisterEntry;
pub use siren::{find_identifiers, FoundSiren, IdentifierKind, Identifiers, Siren, SirenError};

/// Most labelled SIRENs of one document asked online: a bill names its issuer and perhaps a
/// parent company or a payment agent; more is noise, and each question costs a round trip.
const MAX_ONLINE_LOOKUPS: usize = 3;

/// How to build the register.
#[derive(Debug, Clone)]
pub struct RegisterOptions {
    /// The operator's register, in the shipped file's format; its rows add to (and override) the
    /// shipped ones.
    pub extra_file: Option<PathBuf>,
    /// Root of an online register answering like `recherche-entreprises.api.gouv.fr`; `None`
    /// keeps the service offline.
    pub online_url: Option<String>,
    pub online_timeout: Duration,
}

/// Why the register could not be built at start. Messages never quote the files' rows.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error("the shipped issuer register is invalid at line {line}: {reason}")]
    Embedded { line: usize, reason: &'static str },
    #[error("cannot read the issuer register file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the issuer register file {path} is invalid at line {line}: {reason}")]
    Parse { path: PathBuf, line: usize, reason: &'static str },
    #[error("the online company register URL is invalid: {0}")]
    OnlineUrl(&'static str),
    #[error("the HTTP client of the online company register could not be built")]
    Client(#[source] reqwest::Error),
}

/// Where an issuer was confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssuerSource {
    Offline,
    Online,
}

/// A confirmed issuer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issuer {
    pub siren: Siren,
    pub name: String,
    pub source: IssuerSource,
}

/// What the register says of one document's visible text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssuerCheck {
    /// Valid SIRENs found (from SIRENs, SIRETs and VAT numbers), labelled ones first, each once.
    pub found: Vec<Siren>,
    /// One entry per distinct number labelled SIREN/SIRET/RCS/TVA that fails its check digit,
    /// giving only how it was written: the digits themselves are document content and are not
    /// kept.
    pub invalid: Vec<IdentifierKind>,
    /// The first found SIREN the registers confirm.
    pub confirmed: Option<Issuer>,
    /// The SIRENs the document labels as such (at most [`MAX_ONLINE_LOOKUPS`]): those the online
    /// register is asked about.
    pub labelled: Vec<Siren>,
}

/// The issuer register: built once at start, shared by every job slot (`Send + Sync`).
#[derive(Debug)]
pub struct IssuerRegister {
    offline: HashMap<Siren, RegisterEntry>,
    online: Option<OnlineRegister>,
}

impl IssuerRegister {
    pub fn build(options: &RegisterOptions) -> Result<Self, RegisterError> {
        let offline = register::load(options.extra_file.as_deref())?;
        let online = online_register(options)?;
        Ok(Self { offline, online })
    }

    /// Issuers in the offline register.
    pub fn len(&self) -> usize {
        self.offline.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offline.is_empty()
    }

    /// The offline register's issuer for `siren`.
    pub fn lookup(&self, siren: &Siren) -> Option<Issuer> {
        self.offline.get(siren).map(|entry| Issuer {
            siren: siren.clone(),
            name: entry.name.clone(),
            source: IssuerSource::Offline,
        })
    }

    /// Finds the company numbers in `visible_text` and confirms the first one a register knows:
    /// the offline register for every valid SIREN, then, if configured, the online one for the
    /// labelled SIRENs only (any nine digits passing Luhn would otherwise send one request in ten).
    pub async fn confirm(&self, visible_text: &str) -> IssuerCheck {
        let mut check = self.confirm_offline(visible_text);
        if check.confirmed.is_none() {
            if let Some(online) = &self.online {
                check.confirmed = confirm_online(online, &check.labelled).await;
            }
        }
        if let Some(issuer) = &check.confirmed {
            tracing::debug!(siren = %issuer.siren, source = ?issuer.source, "issuer confirmed");
        }
        check
    }

    /// What the offline register alone says: the sandbox child's part, which has no network; the
    /// worker asks the online register about [`IssuerCheck::labelled`] afterwards.
    pub fn confirm_offline(&self, visible_text: &str) -> IssuerCheck {
        let identifiers = find_identifiers(visible_text);
        let mut check = IssuerCheck {
            found: identifiers.found.iter().map(|f| f.siren.clone()).collect(),
            invalid: identifiers.invalid,
            confirmed: None,
            labelled: identifiers
                .found
                .iter()
                .filter(|f| f.labelled)
                .take(MAX_ONLINE_LOOKUPS)
                .map(|f| f.siren.clone())
                .collect(),
        };
        check.confirmed = check.found.iter().find_map(|siren| self.lookup(siren));
        check
    }
}

/// The first of `candidates` the online register knows as an active company.
pub async fn confirm_online(online: &OnlineRegister, candidates: &[Siren]) -> Option<Issuer> {
    for candidate in candidates.iter().take(MAX_ONLINE_LOOKUPS) {
        if let OnlineAnswer::Active(name) = online.lookup(candidate).await {
            return Some(Issuer {
                siren: candidate.clone(),
                name,
                source: IssuerSource::Online,
            });
        }
    }
    None
}

/// The online register of `options`, when one is configured.
pub fn online_register(options: &RegisterOptions) -> Result<Option<OnlineRegister>, RegisterError> {
    options
        .online_url
        .as_deref()
        .map(|url| OnlineRegister::new(url, options.online_timeout))
        .transpose()
}
