//! Configuration, declared once: [`Config`] is what every role reads, and its serde attributes
//! say how each setting is spelled and read. Settings come from defaults, then `sceau.toml` in
//! the working directory, then `SCEAU_*` variables, then the binary's flags (each overriding the
//! one before); a variable is the file's key in upper case after `SCEAU_`. Invalid values fail at
//! start with one clear line naming the variable.

mod de;
mod sources;

use figment::providers::{Format, Toml};
use figment::Figment;
use serde::Deserialize;
use sources::{keys_of, Texts};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The file read from the working directory, if it is there.
const FILE: &str = "sceau.toml";

#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(pub String);

/// Everything a role needs to start.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Database, blobs and master key live here.
    pub data_dir: PathBuf,
    #[serde(deserialize_with = "de::lenient")]
    pub listen: SocketAddr,
    /// Where `/metrics` is served, apart from the public listener (loopback by default).
    #[serde(deserialize_with = "de::lenient")]
    pub metrics_listen: SocketAddr,
    /// Base of journey and authenticity links, without a trailing slash; defaults to
    /// `http://<listen>`.
    #[serde(deserialize_with = "de::text")]
    pub public_url: Option<String>,
    #[serde(deserialize_with = "de::path")]
    pub master_key_file: Option<PathBuf>,
    /// Where documents and images are kept: `file:///dir` or `s3://bucket[/prefix]` (endpoint,
    /// region and credentials from `AWS_*`); the data dir's `blobs/` when unset.
    #[serde(deserialize_with = "de::parsed")]
    pub blob_url: Option<crate::blobs::BlobLocation>,
    /// Concurrent analysis jobs of the embedded worker pool (1 to 1024).
    #[serde(deserialize_with = "de::lenient")]
    pub workers: usize,
    /// Worker slots that take real-time jobs only, beside the `workers` that take any job: a
    /// journey never waits for a batch document to finish (0 to 16).
    #[serde(deserialize_with = "de::lenient")]
    pub realtime_slots: usize,
    /// How much lower the OS priority (nice) of batch analyses is than the service's, so that a
    /// journey's analysis takes the CPU first while both run, and whose children are paused
    /// while a journey is handled (0 to 19; 0: the same priority, one pool, no pause).
    #[serde(deserialize_with = "de::lenient")]
    pub batch_nice: u8,
    /// Hosts exempt from the SSRF guard and the https rule (comma-separated).
    #[serde(deserialize_with = "de::hosts")]
    pub webhook_allow_hosts: Vec<String>,
    /// Delays between webhook attempts; `None` keeps the notifier's default schedule.
    #[serde(deserialize_with = "de::text")]
    pub retry_schedule: Option<String>,
    /// Pending file volume allowed per company, in bytes.
    #[serde(deserialize_with = "de::lenient")]
    pub volume_limit_bytes: u64,
    /// Open and completion windows of batches (24 h; shortened only to test expiry).
    #[serde(rename = "batch_window_seconds", deserialize_with = "de::seconds")]
    pub batch_window: Duration,
    /// Longest an API request may last, its body included (120 s: a 30 MB deposit at 300 KB/s;
    /// at most 300, well under the 10 minutes after which an idempotency key's claim is abandoned).
    #[serde(rename = "request_timeout_seconds", deserialize_with = "de::seconds")]
    pub request_timeout: Duration,
    /// Real-time requests per minute and company.
    #[serde(deserialize_with = "de::lenient")]
    pub realtime_rate_per_minute: u32,
    /// Wrong API keys a client address may present in a minute (all at once if it likes) before
    /// its every request is refused `rate_limited`: guessing keys is slowed, a typo is not. Raised
    /// only where one address legitimately sends many, such as a contract tester (at least 1).
    #[serde(deserialize_with = "de::lenient")]
    pub key_failures_per_minute: u32,
    /// How often deadlines, outbox and retention are swept (at least 10 ms).
    #[serde(rename = "sweep_interval_ms", deserialize_with = "de::millis")]
    pub sweep_interval: Duration,
    #[serde(deserialize_with = "de::text")]
    pub amqp_url: Option<String>,
    #[serde(deserialize_with = "de::text")]
    pub redis_url: Option<String>,
    /// Prefix of every Redis key, so several deployments (or test runs) can share a server.
    #[serde(deserialize_with = "de::plain")]
    pub redis_prefix: String,
    #[serde(deserialize_with = "de::path")]
    pub trust_dir: Option<PathBuf>,
    #[serde(deserialize_with = "de::flag")]
    pub accept_test_ca: bool,
    /// Compare a journey's selfie with its document's portrait, and look for the portrait on
    /// every identity document, with the shipped face models (`docs/face-match.md`).
    #[serde(deserialize_with = "de::flag")]
    pub face_match: bool,
    /// The Tesseract program that reads the visible text of photographed documents.
    #[serde(deserialize_with = "tesseract_program")]
    pub tesseract: PathBuf,
    /// Issuers added to the shipped offline register (same TSV format).
    #[serde(deserialize_with = "de::path")]
    pub issuer_register_file: Option<PathBuf>,
    /// An online company register consulted when the offline one does not know an issuer.
    #[serde(deserialize_with = "de::text")]
    pub issuer_register_url: Option<String>,
    /// An external analysis service (face matching, fraud signals); `None` runs the built-in engine alone.
    #[serde(deserialize_with = "de::text")]
    pub external_engine_url: Option<String>,
    #[serde(deserialize_with = "secret")]
    pub external_engine_token: Option<SecretString>,
    #[serde(rename = "external_engine_timeout_ms", deserialize_with = "de::millis")]
    pub external_engine_timeout: Duration,
    /// Where invitations are e-mailed from (`smtp://user:pass@host:port`, `smtps://…`); without
    /// it, whoever invites copies the link.
    #[serde(deserialize_with = "secret")]
    pub smtp_url: Option<SecretString>,
    /// The sender of those e-mails.
    #[serde(deserialize_with = "de::plain")]
    pub smtp_from: String,
    /// Longest an engine may spend on one document before the attempt counts as an engine failure.
    #[serde(rename = "analysis_timeout_seconds", deserialize_with = "de::seconds")]
    pub analysis_timeout: Duration,
    /// Reverse proxies whose `X-Forwarded-For` names the client (rate limits, audit log); empty:
    /// the header is ignored and the TCP peer is the client.
    #[serde(deserialize_with = "de::cidrs")]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Months the audit log is kept before the sweeper forgets its entries (1 to 1200): long
    /// enough for a yearly audit of who saw which document, and no longer.
    #[serde(deserialize_with = "de::lenient")]
    pub audit_retention_months: u32,
}

/// A credential read from the configuration: usable, never printed by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretString(String);

impl SecretString {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretString(…)")
    }
}

fn secret<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<SecretString>, D::Error> {
    Ok(de::text(d)?.map(SecretString))
}

fn tesseract_program<'de, D: serde::Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    Ok(de::text(d)?.map_or_else(|| PathBuf::from("tesseract"), PathBuf::from))
}

/// `SCEAU_REQUEST_TIMEOUT_SECONDS` unless the operator says otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
pub const DEFAULT_VOLUME_LIMIT: u64 = 5 * 1024 * 1024 * 1024;
/// `SCEAU_KEY_FAILURES_PER_MINUTE` unless the operator says otherwise.
pub const DEFAULT_KEY_FAILURES_PER_MINUTE: u32 = 20;
/// `SCEAU_AUDIT_RETENTION_MONTHS` unless the operator says otherwise: a year and a month, so a
/// yearly review always finds the whole year.
pub const DEFAULT_AUDIT_RETENTION_MONTHS: u32 = 13;

impl Default for Config {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("./data"),
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            metrics_listen: SocketAddr::from(([127, 0, 0, 1], 9464)),
            public_url: None,
            master_key_file: None,
            blob_url: None,
            workers: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
            realtime_slots: 1,
            // 19 rather than 10: journeys under a batch at 1.04 (embedded) and 1.10 (distributed)
            // of their idle p50, 1.13 and 1.17 at p95, where 10 left 1.19 and 1.26 at p95
            // (scripts/bench --realtime); batch throughput alone unchanged (1.00, 1.01).
            batch_nice: 19,
            webhook_allow_hosts: Vec::new(),
            retry_schedule: None,
            volume_limit_bytes: DEFAULT_VOLUME_LIMIT,
            batch_window: Duration::from_secs(24 * 3600),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            realtime_rate_per_minute: 120,
            key_failures_per_minute: DEFAULT_KEY_FAILURES_PER_MINUTE,
            sweep_interval: Duration::from_secs(1),
            amqp_url: None,
            redis_url: None,
            redis_prefix: "sceau:".into(),
            trust_dir: None,
            accept_test_ca: false,
            face_match: true,
            tesseract: PathBuf::from("tesseract"),
            issuer_register_file: None,
            issuer_register_url: None,
            external_engine_url: None,
            external_engine_token: None,
            external_engine_timeout: Duration::from_secs(10),
            smtp_url: None,
            smtp_from: "Sceau <no-reply@sceau.invalid>".into(),
            analysis_timeout: Duration::from_secs(120),
            trusted_proxies: Vec::new(),
            audit_retention_months: DEFAULT_AUDIT_RETENTION_MONTHS,
        }
    }
}

/// The public URL carries journey tokens to customers and the engine URL carries their documents:
/// plain http is accepted only to this machine (127.0.0.0/8, ::1, localhost), for development and
/// a TLS proxy on the same host. The value is not echoed: it may hold a credential.
pub fn https_unless_loopback(key: &str, value: &str) -> Result<(), ConfigError> {
    let url = url::Url::parse(value).map_err(|_| ConfigError(format!("{key} is not an absolute URL")))?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.trim_end_matches('.').eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(ConfigError(format!(
            "{key} must use https; plain http is accepted only on a loopback host (127.0.0.0/8, ::1, localhost)"
        ))),
    }
}

impl Config {
    /// Defaults, then `./sceau.toml`, then the process's `SCEAU_*` variables, then `flags`
    /// (given by their variable names, e.g. `("SCEAU_WORKERS", "4")`).
    pub fn load(flags: &[(&str, String)]) -> Result<Config, ConfigError> {
        // `vars_os`: a variable of another program that is not Unicode must not stop the start.
        let environment = std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value)))
            .filter(|(name, _)| name.starts_with("SCEAU_"))
            .map(|(name, value)| (name, value.to_string_lossy().into_owned()));
        // The working directory's file only, as documented (not a parent's), and only if it is there.
        let file = if std::path::Path::new(FILE).is_file() {
            Toml::file_exact(FILE)
        } else {
            Toml::string("")
        };
        Self::layered(file, environment, flags)
    }

    /// Defaults, then the process's `SCEAU_*` variables, without `./sceau.toml`: a sandbox child,
    /// which gets its settings from its parent as variables and may not read the working directory.
    pub fn from_environment() -> Result<Config, ConfigError> {
        let environment = std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value)))
            .filter(|(name, _)| name.starts_with("SCEAU_"))
            .map(|(name, value)| (name, value.to_string_lossy().into_owned()));
        Self::layered(Toml::string(""), environment, &[])
    }

    /// `file`, then `environment`, then `flags`, each overriding the one before.
    fn layered(
        file: impl figment::Provider,
        environment: impl IntoIterator<Item = (String, String)>,
        flags: &[(&str, String)],
    ) -> Result<Config, ConfigError> {
        let keys = keys_of::<Config>();
        let flags = flags.iter().map(|(name, value)| (name.to_string(), value.clone()));
        let figment = Figment::new()
            .merge(file)
            .merge(Texts::new("the environment", environment, keys, false).map_err(ConfigError)?)
            .merge(Texts::new("the command line", flags, keys, true).map_err(ConfigError)?);
        Self::extract(figment)
    }

    /// Defaults and `vars` only (a deployment's environment, read without this process's own):
    /// every name must be a setting.
    pub fn from_vars<'a>(vars: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Config, ConfigError> {
        let vars = vars.into_iter().map(|(name, value)| (name.to_owned(), value.to_owned()));
        let texts = Texts::new("variables", vars, keys_of::<Config>(), true).map_err(ConfigError)?;
        Self::extract(Figment::from(texts))
    }

    /// Defaults and a `sceau.toml` text.
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        Self::extract(Figment::from(Toml::string(text)))
    }

    fn extract(figment: Figment) -> Result<Config, ConfigError> {
        figment.extract::<Config>().map_err(explain)?.validate()
    }

    /// The rules no single value's reader can check alone.
    fn validate(mut self) -> Result<Config, ConfigError> {
        if self.workers == 0 || self.workers > 1024 {
            return Err(ConfigError(format!("SCEAU_WORKERS={} must be between 1 and 1024", self.workers)));
        }
        if self.realtime_slots > 16 {
            return Err(ConfigError(format!(
                "SCEAU_REALTIME_SLOTS={} must be between 0 and 16",
                self.realtime_slots
            )));
        }
        if self.batch_nice > 19 {
            return Err(ConfigError(format!(
                "SCEAU_BATCH_NICE={} must be between 0 and 19",
                self.batch_nice
            )));
        }
        if self.request_timeout > Duration::from_secs(300) {
            return Err(ConfigError(format!(
                "SCEAU_REQUEST_TIMEOUT_SECONDS={} must be at most 300",
                self.request_timeout.as_secs()
            )));
        }
        if self.key_failures_per_minute == 0 {
            // Zero would refuse every request of an address after its first wrong key, forever.
            return Err(ConfigError("SCEAU_KEY_FAILURES_PER_MINUTE=0 must be at least 1".into()));
        }
        if !(1..=1200).contains(&self.audit_retention_months) {
            // Zero would forget every entry at the next sweep.
            return Err(ConfigError(format!(
                "SCEAU_AUDIT_RETENTION_MONTHS={} must be between 1 and 1200",
                self.audit_retention_months
            )));
        }
        if let Some(url) = &mut self.public_url {
            https_unless_loopback("SCEAU_PUBLIC_URL", url)?;
            // Links are built as `<public_url>/v/<token>`.
            *url = url.trim_end_matches('/').to_owned();
        }
        if let Some(url) = &self.external_engine_url {
            https_unless_loopback("SCEAU_EXTERNAL_ENGINE_URL", url)?;
        }
        if let Some(url) = &mut self.issuer_register_url {
            *url = url.trim_end_matches('/').to_owned();
        }
        self.sweep_interval = self.sweep_interval.max(Duration::from_millis(10));
        Ok(self)
    }

    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("sceau.db")
    }

    /// Where blobs are kept: `SCEAU_BLOB_URL`, or the data dir's `blobs/`.
    pub fn blob_location(&self) -> crate::blobs::BlobLocation {
        self.blob_url
            .clone()
            .unwrap_or_else(|| crate::blobs::BlobLocation::Directory(self.data_dir.join("blobs")))
    }

    pub fn master_key_path(&self) -> PathBuf {
        self.master_key_file.clone().unwrap_or_else(|| self.data_dir.join("master.key"))
    }

    /// Base URL of links handed to customers.
    pub fn public_base(&self, bound: SocketAddr) -> String {
        self.public_url.clone().unwrap_or_else(|| format!("http://{bound}"))
    }
}

/// One line naming the setting by its variable, whatever source gave it, and where it came from.
fn explain(error: figment::Error) -> ConfigError {
    let source = error.metadata.as_ref().map(|m| m.name.to_string());
    let setting = error.path.last().map(|key| format!("SCEAU_{}", key.to_ascii_uppercase()));
    let from = source.map(|s| format!(" (from {s})")).unwrap_or_default();
    match setting {
        Some(setting) => ConfigError(format!("{setting}{from}: {}", error.kind)),
        None => ConfigError(format!("{}{from}", error.kind)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_vars(pairs.iter().copied())
    }

    #[test]
    fn file_environment_and_flags_read_every_setting_alike() {
        let settings = [
            ("data_dir", "/srv/sceau"),
            ("listen", "127.0.0.1:9000"),
            ("metrics_listen", "127.0.0.1:0"),
            ("public_url", "https://sceau.example.com/"),
            ("master_key_file", "/run/secrets/master_key"),
            ("blob_url", "s3://sceau-blobs/prod"),
            ("workers", "3"),
            ("realtime_slots", "2"),
            ("batch_nice", "5"),
            ("webhook_allow_hosts", "127.0.0.1, Localhost"),
            ("retry_schedule", "1s,2s"),
            ("volume_limit_bytes", "1000"),
            ("batch_window_seconds", "60"),
            ("request_timeout_seconds", "30"),
            ("realtime_rate_per_minute", "30"),
            ("key_failures_per_minute", "500"),
            ("sweep_interval_ms", "250"),
            ("amqp_url", "amqp://guest:guest@127.0.0.1:5672/%2f"),
            ("redis_url", "redis://127.0.0.1:6379/0"),
            ("redis_prefix", "t1:"),
            ("trust_dir", "/etc/sceau/trust"),
            ("accept_test_ca", "true"),
            ("face_match", "false"),
            ("tesseract", "/usr/bin/tesseract"),
            ("issuer_register_file", "/etc/sceau/issuers.tsv"),
            ("issuer_register_url", "https://recherche-entreprises.api.gouv.fr/"),
            ("external_engine_url", "https://faces.example/v1/analyse"),
            ("external_engine_token", "12345"),
            ("external_engine_timeout_ms", "2500"),
            ("analysis_timeout_seconds", "30"),
            ("trusted_proxies", "10.0.0.0/8"),
            ("smtp_url", "smtp://mail.example.com:25"),
            ("smtp_from", "Sceau <portal@example.com>"),
            ("audit_retention_months", "24"),
        ];
        assert_eq!(settings.len(), keys_of::<Config>().len(), "every setting is in this table");
        for (key, text) in settings {
            let var = format!("SCEAU_{}", key.to_ascii_uppercase());
            let native = match text.parse::<u64>() {
                Ok(n) => n.to_string(),
                Err(_) if text == "true" => text.to_owned(),
                Err(_) => format!("{text:?}"),
            };
            let from_file = Config::from_toml(&format!("{key} = {native}")).unwrap_or_else(|e| panic!("{key}: {e}"));
            let from_env = vars(&[(&var, text)]).unwrap_or_else(|e| panic!("{var}: {e}"));
            let from_flag = Config::layered(Toml::string(""), [], &[(&var, text.to_owned())]).unwrap();
            let shown = format!("{from_file:?}");
            assert_ne!(shown, format!("{:?}", Config::default()), "{key} changed nothing");
            assert_eq!(shown, format!("{from_env:?}"), "{key}: file and environment disagree");
            assert_eq!(shown, format!("{from_flag:?}"), "{key}: file and flag disagree");
        }
    }

    #[test]
    fn flags_override_the_environment_which_overrides_the_file() {
        let file = Toml::string("workers = 2\nredis_prefix = \"file:\"\nlisten = \"127.0.0.1:7000\"");
        let environment = [
            ("SCEAU_WORKERS".to_owned(), "3".to_owned()),
            ("SCEAU_REDIS_PREFIX".to_owned(), "env:".to_owned()),
        ];
        let c = Config::layered(file, environment, &[("SCEAU_WORKERS", "4".into())]).unwrap();
        assert_eq!((c.workers, c.redis_prefix.as_str(), c.listen.port()), (4, "env:", 7000));
        // Variables of other programs are left alone; an unknown flag or file key is an error.
        let other = [("SCEAU_TEST_MODE".to_owned(), "distributed".to_owned())];
        assert!(Config::layered(Toml::string(""), other, &[]).is_ok());
        assert!(Config::layered(Toml::string(""), [], &[("SCEAU_NOPE", "1".into())]).is_err());
        let err = Config::from_toml("nope = 1").unwrap_err().to_string();
        assert!(err.contains("nope") && err.lines().count() == 1, "{err}");
    }

    #[test]
    fn bad_values_fail_clearly_naming_the_variable() {
        for (var, bad) in [
            ("SCEAU_LISTEN", "nowhere"),
            ("SCEAU_METRICS_LISTEN", "everywhere"),
            ("SCEAU_WORKERS", "0"),
            ("SCEAU_WORKERS", "many"),
            ("SCEAU_ANALYSIS_TIMEOUT_SECONDS", "soon"),
            ("SCEAU_ACCEPT_TEST_CA", "perhaps"),
            ("SCEAU_REALTIME_SLOTS", "17"),
            ("SCEAU_BATCH_NICE", "20"),
            ("SCEAU_BATCH_NICE", "-5"),
            ("SCEAU_BLOB_URL", "ftp://example.com/blobs"),
            ("SCEAU_AUDIT_RETENTION_MONTHS", "0"),
            ("SCEAU_AUDIT_RETENTION_MONTHS", "1201"),
        ] {
            let err = vars(&[(var, bad)]).unwrap_err().to_string();
            assert!(err.contains(var), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        let err = Config::from_toml("workers = \"many\"").unwrap_err().to_string();
        assert!(
            err.contains("SCEAU_WORKERS") && err.contains("sceau.toml") || err.contains("TOML"),
            "{err}"
        );
        assert!(vars(&[("SCEAU_ACCEPT_TEST_CA", "on")]).unwrap().accept_test_ca);
        assert_eq!(vars(&[("SCEAU_AMQP_URL", " ")]).unwrap().amqp_url, None, "blank means unset");
    }

    #[test]
    fn key_failures_per_minute_defaults_to_20_and_is_at_least_1() {
        assert_eq!(Config::default().key_failures_per_minute, 20);
        assert_eq!(vars(&[]).unwrap().key_failures_per_minute, 20);
        assert_eq!(vars(&[("SCEAU_KEY_FAILURES_PER_MINUTE", "1")]).unwrap().key_failures_per_minute, 1);
        assert_eq!(
            vars(&[("SCEAU_KEY_FAILURES_PER_MINUTE", " 100000 ")])
                .unwrap()
                .key_failures_per_minute,
            100_000
        );
        for bad in ["0", "-1", "many", "4294967296"] {
            let err = vars(&[("SCEAU_KEY_FAILURES_PER_MINUTE", bad)]).expect_err(bad).to_string();
            assert!(err.contains("SCEAU_KEY_FAILURES_PER_MINUTE"), "{bad}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        let err = Config::from_toml("key_failures_per_minute = 0").unwrap_err().to_string();
        assert!(
            err.contains("SCEAU_KEY_FAILURES_PER_MINUTE"),
            "the file's value is checked too: {err}"
        );
    }

    #[test]
    fn metrics_listen_on_loopback_unless_told_otherwise() {
        assert_eq!(Config::default().metrics_listen, SocketAddr::from(([127, 0, 0, 1], 9464)));
    }

    #[test]
    fn urls_lose_their_trailing_slash_and_the_token_is_never_printed() {
        let c = Config::from_toml("public_url = \"https://x/\"").unwrap();
        assert_eq!(c.public_base(SocketAddr::from(([127, 0, 0, 1], 1))), "https://x");
        let c = vars(&[
            ("SCEAU_EXTERNAL_ENGINE_TOKEN", "tok_very_secret"),
            ("SCEAU_ISSUER_REGISTER_URL", "https://recherche-entreprises.api.gouv.fr/"),
        ])
        .unwrap();
        assert_eq!(c.external_engine_token.as_ref().map(SecretString::expose), Some("tok_very_secret"));
        assert_eq!(c.issuer_register_url.as_deref(), Some("https://recherche-entreprises.api.gouv.fr"));
        assert!(!format!("{c:?}").contains("tok_very_secret"));
    }

    #[test]
    fn public_and_engine_urls_must_be_https_except_on_loopback() {
        for var in ["SCEAU_PUBLIC_URL", "SCEAU_EXTERNAL_ENGINE_URL"] {
            for fine in [
                "https://sceau.example.com",
                "https://10.0.0.4:8443/v1/analyse",
                "http://127.0.0.1:8080",
                "http://127.9.8.7:1/x",
                "http://[::1]:9000/",
                "http://localhost:8080",
                "http://LocalHost./",
                "",
            ] {
                assert!(vars(&[(var, fine)]).is_ok(), "{var}={fine}");
            }
            for refused in [
                "http://example.com",
                "http://10.0.0.4:8080",
                "http://[::2]/",
                "http://localhost.example.com/",
                "http://127.0.0.1.example.com/",
                "http://127.0.0.1@example.com/",
                "ftp://127.0.0.1/",
                "sceau.example.com",
            ] {
                let err = vars(&[(var, refused)]).expect_err(refused).to_string();
                assert!(err.contains(var), "{err}");
                assert_eq!(err.lines().count(), 1, "{err}");
            }
        }
        let err = vars(&[("SCEAU_PUBLIC_URL", "http://u:hunter2@example.com")]).unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "a credential in the URL is not echoed: {err}");
        let err = Config::from_toml("public_url = \"http://sceau.example.com\"").unwrap_err();
        assert!(
            err.to_string().contains("SCEAU_PUBLIC_URL"),
            "the file's value is checked too: {err}"
        );
    }

    #[test]
    fn trusted_proxies_are_cidrs() {
        assert!(Config::default().trusted_proxies.is_empty(), "no proxy is trusted by default");
        let c = vars(&[("SCEAU_TRUSTED_PROXIES", " 10.0.0.0/8, 127.0.0.1 ,fd00::/8,")]).unwrap();
        let shown: Vec<String> = c.trusted_proxies.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"]);
        assert!(vars(&[("SCEAU_TRUSTED_PROXIES", "")]).unwrap().trusted_proxies.is_empty());
        for (refused, says) in [
            ("10.0.0.0/33", "not a CIDR"),
            ("proxy.example", "not a CIDR"),
            ("10.0.0.1/8", "did you mean 10.0.0.0/8"),
        ] {
            let err = vars(&[("SCEAU_TRUSTED_PROXIES", refused)]).unwrap_err().to_string();
            assert!(err.contains("SCEAU_TRUSTED_PROXIES") && err.contains(says), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }

    #[test]
    fn credentials_may_come_from_secret_files() {
        let dir = std::env::temp_dir().join(format!("sceau-config-{}", domain::ids::random_hex(8)));
        std::fs::create_dir_all(&dir).unwrap();
        let amqp = dir.join("amqp-url");
        std::fs::write(&amqp, "amqp://sceau:s3cret@rabbitmq:5672/%2f\n").unwrap();
        let redis = dir.join("redis-url");
        std::fs::write(&redis, "redis://:s3cret@redis:6379/0").unwrap();
        let (amqp, redis) = (amqp.display().to_string(), redis.display().to_string());
        let c = vars(&[("SCEAU_AMQP_URL_FILE", &amqp), ("SCEAU_REDIS_URL_FILE", &redis)]).unwrap();
        assert_eq!(c.amqp_url.as_deref(), Some("amqp://sceau:s3cret@rabbitmq:5672/%2f"));
        assert_eq!(c.redis_url.as_deref(), Some("redis://:s3cret@redis:6379/0"));
        // Only credentials: another setting is not read from a file, and a missing file is named.
        assert!(vars(&[("SCEAU_WORKERS_FILE", &amqp)]).is_err());
        let missing = dir.join("missing").display().to_string();
        let err = vars(&[("SCEAU_REDIS_URL_FILE", &missing)]).unwrap_err().to_string();
        assert!(err.contains("SCEAU_REDIS_URL_FILE") && !err.contains("s3cret"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
