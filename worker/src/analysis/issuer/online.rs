//! The optional online register, for issuers the offline one does not know: the French
//! government's company search (`recherche-entreprises.api.gouv.fr`, `GET {base}/search?q=SIREN`),
//! or any service answering in its shape. Asked only when the operator configured it, and only
//! about numbers the document itself labels as company numbers; any failure means "not confirmed".

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::siren::Siren;
use super::RegisterError;

/// Largest answer read: a search page of a few companies is a few kilobytes.
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;
/// How long a definite answer (active, closed, unknown) is reused: companies do not open or
/// close by the minute, and the public API limits the request rate.
const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);
/// Most answers kept; the cache is emptied when full rather than tracking ages.
const CACHE_CAPACITY: usize = 10_000;

/// What the online register says of one SIREN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnlineAnswer {
    /// Registered and active, with its name.
    Active(String),
    /// Registered but closed (`etat_administratif` other than `A`).
    Closed,
    /// Not in the register.
    Unknown,
    /// The register could not be asked (network, timeout, error status, unreadable answer).
    Unavailable,
}

#[derive(Deserialize)]
struct SearchPage {
    #[serde(default)]
    results: Vec<Company>,
}

#[derive(Deserialize)]
struct Company {
    #[serde(default)]
    siren: String,
    #[serde(default)]
    nom_complet: Option<String>,
    #[serde(default)]
    nom_raison_sociale: Option<String>,
    #[serde(default)]
    etat_administratif: Option<String>,
}

/// A client of the online register, built once and shared.
pub struct OnlineRegister {
    client: reqwest::Client,
    search: reqwest::Url,
    pub(super) cache: Mutex<HashMap<Siren, (Instant, OnlineAnswer)>>,
}

impl std::fmt::Debug for OnlineRegister {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnlineRegister")
            .field("search", &self.search.as_str())
            .finish_non_exhaustive()
    }
}

impl OnlineRegister {
    /// `base_url` is the API root (`https://recherche-entreprises.api.gouv.fr`); requests go to
    /// `{base_url}/search`.
    pub fn new(base_url: &str, timeout: Duration) -> Result<Self, RegisterError> {
        let search = reqwest::Url::parse(&format!("{}/search", base_url.trim_end_matches('/')))
            .map_err(|_| RegisterError::OnlineUrl("not a valid URL"))?;
        if !matches!(search.scheme(), "http" | "https") {
            return Err(RegisterError::OnlineUrl("the scheme must be http or https"));
        }
        if search.query().is_some() || search.fragment().is_some() {
            return Err(RegisterError::OnlineUrl("the URL must not carry a query or a fragment"));
        }
        // reqwest is built without a default crypto provider; the binary installs one at start,
        // and installing it again here (a no-op then) keeps tests and tools working.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("Sceau-Issuer-Register/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(RegisterError::Client)?;
        Ok(Self {
            client,
            search,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// Asks about `siren`, from the cache when a definite answer is fresh.
    pub async fn lookup(&self, siren: &Siren) -> OnlineAnswer {
        if let Some(answer) = self.cached(siren) {
            return answer;
        }
        let answer = self.ask(siren).await;
        if answer != OnlineAnswer::Unavailable {
            self.remember(siren, &answer);
        }
        answer
    }

    fn cached(&self, siren: &Siren) -> Option<OnlineAnswer> {
        let cache = self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        cache
            .get(siren)
            .filter(|(at, _)| at.elapsed() < CACHE_TTL)
            .map(|(_, answer)| answer.clone())
    }

    fn remember(&self, siren: &Siren, answer: &OnlineAnswer) {
        let mut cache = self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if cache.len() >= CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(siren.clone(), (Instant::now(), answer.clone()));
    }

    async fn ask(&self, siren: &Siren) -> OnlineAnswer {
        let mut url = self.search.clone();
        url.query_pairs_mut().append_pair("q", siren.as_str());
        // Errors are logged without their URL: it holds a number read from a document that is
        // not (yet) a confirmed issuer.
        let mut response = match self.client.get(url).send().await {
            Ok(response) => response,
            Err(error) => {
                tracing::warn!(error = %error.without_url(), "the online company register could not be reached; issuer not confirmed");
                return OnlineAnswer::Unavailable;
            }
        };
        if !response.status().is_success() {
            tracing::warn!(
                status = response.status().as_u16(),
                "the online company register answered an error; issuer not confirmed"
            );
            return OnlineAnswer::Unavailable;
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                        tracing::warn!("the online company register's answer is too large; issuer not confirmed");
                        return OnlineAnswer::Unavailable;
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(error) => {
                    tracing::warn!(error = %error.without_url(), "the online company register's answer was cut; issuer not confirmed");
                    return OnlineAnswer::Unavailable;
                }
            }
        }
        match serde_json::from_slice::<SearchPage>(&body) {
            Ok(page) => answer_for(siren, page),
            Err(_) => {
                tracing::warn!("the online company register's answer is not the expected JSON; issuer not confirmed");
                OnlineAnswer::Unavailable
            }
        }
    }
}

/// A full-text search may return other companies first: only the exact SIREN counts.
fn answer_for(siren: &Siren, page: SearchPage) -> OnlineAnswer {
    let Some(company) = page.results.into_iter().find(|c| c.siren == siren.as_str()) else {
        return OnlineAnswer::Unknown;
    };
    if company.etat_administratif.as_deref() != Some("A") {
        return OnlineAnswer::Closed;
    }
    let name = company
        .nom_complet
        .or(company.nom_raison_sociale)
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| siren.to_string());
    OnlineAnswer::Active(name)
}
