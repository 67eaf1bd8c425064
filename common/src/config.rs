//! Configuration: embedded defaults, then `sceau.toml` in the working directory if present, then
//! `SCEAU_*` environment variables (flags of the binary override these last). Invalid values fail
//! at start with one clear line.

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(pub String);

/// Everything a role needs to start.
#[derive(Debug, Clone)]
pub struct Config {
    /// Database, blobs and master key live here.
    pub data_dir: PathBuf,
    pub listen: SocketAddr,
    /// Where `/metrics` is served, apart from the public listener (loopback by default).
    pub metrics_listen: SocketAddr,
    /// Base of journey and authenticity links; defaults to `http://<listen>`.
    pub public_url: Option<String>,
    pub master_key_file: Option<PathBuf>,
    /// Concurrent analysis jobs of the embedded worker pool.
    pub workers: usize,
    /// Hosts exempt from the SSRF guard and the https rule.
    pub webhook_allow_hosts: Vec<String>,
    /// Delays between webhook attempts; `None` keeps the notifier's default schedule.
    pub retry_schedule: Option<String>,
    /// Pending file volume allowed per company, in bytes.
    pub volume_limit_bytes: u64,
    /// Open and completion windows of batches (24 h; shortened only to test expiry).
    pub batch_window: Duration,
    /// Real-time requests per minute and company.
    pub realtime_rate_per_minute: u32,
    /// How often deadlines, outbox and retention are swept.
    pub sweep_interval: Duration,
    pub amqp_url: Option<String>,
    pub redis_url: Option<String>,
    /// Prefix of every Redis key, so several deployments (or test runs) can share a server.
    pub redis_prefix: String,
    pub trust_dir: Option<PathBuf>,
    pub accept_test_ca: bool,
    /// The Tesseract program that reads the visible text of photographed documents.
    pub tesseract: PathBuf,
    /// Issuers added to the shipped offline register (same TSV format).
    pub issuer_register_file: Option<PathBuf>,
    /// An online company register consulted when the offline one does not know an issuer.
    pub issuer_register_url: Option<String>,
    /// An external analysis service (face matching, fraud signals); `None` runs the built-in engine alone.
    pub external_engine_url: Option<String>,
    pub external_engine_token: Option<SecretString>,
    pub external_engine_timeout: Duration,
    /// Longest an engine may spend on one document before the attempt counts as an engine failure.
    pub analysis_timeout: Duration,
    /// Reverse proxies whose `X-Forwarded-For` names the client (rate limits, audit log); empty:
    /// the header is ignored and the TCP peer is the client.
    pub trusted_proxies: Vec<ipnet::IpNet>,
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

/// The keys `sceau.toml` may set (same names as the variables, lower case, without `SCEAU_`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    data_dir: Option<PathBuf>,
    listen: Option<String>,
    metrics_listen: Option<String>,
    public_url: Option<String>,
    master_key_file: Option<PathBuf>,
    workers: Option<usize>,
    webhook_allow_hosts: Option<String>,
    retry_schedule: Option<String>,
    volume_limit_bytes: Option<u64>,
    realtime_rate_per_minute: Option<u32>,
    batch_window_seconds: Option<u64>,
    sweep_interval_ms: Option<u64>,
    amqp_url: Option<String>,
    redis_url: Option<String>,
    redis_prefix: Option<String>,
    trust_dir: Option<PathBuf>,
    accept_test_ca: Option<bool>,
    tesseract: Option<PathBuf>,
    issuer_register_file: Option<PathBuf>,
    issuer_register_url: Option<String>,
    external_engine_url: Option<String>,
    external_engine_token: Option<String>,
    external_engine_timeout_ms: Option<u64>,
    analysis_timeout_seconds: Option<u64>,
    trusted_proxies: Option<String>,
}

pub const DEFAULT_VOLUME_LIMIT: u64 = 5 * 1024 * 1024 * 1024;

impl Default for Config {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("./data"),
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            metrics_listen: SocketAddr::from(([127, 0, 0, 1], 9464)),
            public_url: None,
            master_key_file: None,
            workers: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
            webhook_allow_hosts: Vec::new(),
            retry_schedule: None,
            volume_limit_bytes: DEFAULT_VOLUME_LIMIT,
            batch_window: Duration::from_secs(24 * 3600),
            realtime_rate_per_minute: 120,
            sweep_interval: Duration::from_secs(1),
            amqp_url: None,
            redis_url: None,
            redis_prefix: "sceau:".into(),
            trust_dir: None,
            accept_test_ca: false,
            tesseract: PathBuf::from("tesseract"),
            issuer_register_file: None,
            issuer_register_url: None,
            external_engine_url: None,
            external_engine_token: None,
            external_engine_timeout: Duration::from_secs(10),
            analysis_timeout: Duration::from_secs(120),
            trusted_proxies: Vec::new(),
        }
    }
}

fn parse<T: std::str::FromStr>(name: &str, value: &str) -> Result<T, ConfigError> {
    value
        .trim()
        .parse()
        .map_err(|_| ConfigError(format!("{name}={value:?} is not a valid value")))
}

fn parse_bool(name: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        _ => Err(ConfigError(format!("{name}={value:?} is not a boolean"))),
    }
}

/// The public URL carries journey tokens to customers and the engine URL carries their documents:
/// plain http is accepted only to this machine (127.0.0.0/8, ::1, localhost), for development and
/// a TLS proxy on the same host. The value is not echoed: it may hold a credential.
fn https_unless_loopback(key: &str, value: &str) -> Result<(), ConfigError> {
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

/// Comma-separated CIDRs (a bare address is one host). Host bits set under the prefix are refused:
/// `10.0.0.1/8` is more likely a typo than a wish to trust all of 10/8.
fn parse_cidrs(key: &str, v: &str) -> Result<Vec<ipnet::IpNet>, ConfigError> {
    v.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| {
            let net = match c.parse::<ipnet::IpNet>() {
                Ok(net) => net,
                Err(_) => c
                    .parse::<std::net::IpAddr>()
                    .map(ipnet::IpNet::from)
                    .map_err(|_| ConfigError(format!("{key}: {c:?} is not a CIDR (such as 10.0.0.0/8 or fd00::/8)")))?,
            };
            if net.trunc() != net {
                return Err(ConfigError(format!(
                    "{key}: {c:?} has host bits set; did you mean {}?",
                    net.trunc()
                )));
            }
            Ok(net)
        })
        .collect()
}

fn split_hosts(s: &str) -> Vec<String> {
    s.split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| !h.is_empty())
        .collect()
}

impl Config {
    /// Defaults, then `./sceau.toml`, then the process environment.
    pub fn load() -> Result<Self, ConfigError> {
        let mut config = Self::default();
        if let Ok(text) = std::fs::read_to_string("sceau.toml") {
            let file: FileConfig = toml::from_str(&text).map_err(|e| ConfigError(format!("sceau.toml: {e}")))?;
            config.apply_file(file)?;
        }
        config.apply_env(|k| std::env::var(k).ok())?;
        Ok(config)
    }

    fn apply_file(&mut self, f: FileConfig) -> Result<(), ConfigError> {
        let mut set = |k: &str, v: Option<String>| -> Result<(), ConfigError> {
            match v {
                Some(v) => self.set(k, &v),
                None => Ok(()),
            }
        };
        set("SCEAU_LISTEN", f.listen)?;
        set("SCEAU_METRICS_LISTEN", f.metrics_listen)?;
        set("SCEAU_PUBLIC_URL", f.public_url)?;
        set("SCEAU_WEBHOOK_ALLOW_HOSTS", f.webhook_allow_hosts)?;
        set("SCEAU_WORKERS", f.workers.map(|w| w.to_string()))?;
        set("SCEAU_VOLUME_LIMIT_BYTES", f.volume_limit_bytes.map(|w| w.to_string()))?;
        set("SCEAU_REALTIME_RATE_PER_MINUTE", f.realtime_rate_per_minute.map(|w| w.to_string()))?;
        set("SCEAU_SWEEP_INTERVAL_MS", f.sweep_interval_ms.map(|w| w.to_string()))?;
        set("SCEAU_BATCH_WINDOW_SECONDS", f.batch_window_seconds.map(|w| w.to_string()))?;
        set("SCEAU_ACCEPT_TEST_CA", f.accept_test_ca.map(|w| w.to_string()))?;
        set("SCEAU_ISSUER_REGISTER_URL", f.issuer_register_url)?;
        set("SCEAU_EXTERNAL_ENGINE_URL", f.external_engine_url)?;
        set("SCEAU_EXTERNAL_ENGINE_TOKEN", f.external_engine_token)?;
        set(
            "SCEAU_EXTERNAL_ENGINE_TIMEOUT_MS",
            f.external_engine_timeout_ms.map(|w| w.to_string()),
        )?;
        set("SCEAU_ANALYSIS_TIMEOUT_SECONDS", f.analysis_timeout_seconds.map(|w| w.to_string()))?;
        set("SCEAU_TRUSTED_PROXIES", f.trusted_proxies)?;
        if let Some(v) = f.data_dir {
            self.data_dir = v;
        }
        self.master_key_file = f.master_key_file.or(self.master_key_file.take());
        self.retry_schedule = f.retry_schedule.or(self.retry_schedule.take());
        self.amqp_url = f.amqp_url.or(self.amqp_url.take());
        self.redis_url = f.redis_url.or(self.redis_url.take());
        if let Some(p) = f.redis_prefix {
            self.redis_prefix = p;
        }
        self.trust_dir = f.trust_dir.or(self.trust_dir.take());
        if let Some(program) = f.tesseract {
            self.tesseract = program;
        }
        self.issuer_register_file = f.issuer_register_file.or(self.issuer_register_file.take());
        Ok(())
    }

    /// Applies variables read through `get` (the environment, or a map in tests).
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        for key in [
            "SCEAU_DATA_DIR",
            "SCEAU_LISTEN",
            "SCEAU_METRICS_LISTEN",
            "SCEAU_PUBLIC_URL",
            "SCEAU_MASTER_KEY_FILE",
            "SCEAU_WORKERS",
            "SCEAU_WEBHOOK_ALLOW_HOSTS",
            "SCEAU_RETRY_SCHEDULE",
            "SCEAU_VOLUME_LIMIT_BYTES",
            "SCEAU_REALTIME_RATE_PER_MINUTE",
            "SCEAU_SWEEP_INTERVAL_MS",
            "SCEAU_BATCH_WINDOW_SECONDS",
            "SCEAU_AMQP_URL",
            "SCEAU_REDIS_URL",
            "SCEAU_REDIS_PREFIX",
            "SCEAU_TRUST_DIR",
            "SCEAU_ACCEPT_TEST_CA",
            "SCEAU_TESSERACT",
            "SCEAU_ISSUER_REGISTER_FILE",
            "SCEAU_ISSUER_REGISTER_URL",
            "SCEAU_EXTERNAL_ENGINE_URL",
            "SCEAU_EXTERNAL_ENGINE_TOKEN",
            "SCEAU_EXTERNAL_ENGINE_TIMEOUT_MS",
            "SCEAU_ANALYSIS_TIMEOUT_SECONDS",
            "SCEAU_TRUSTED_PROXIES",
        ] {
            if let Some(v) = get(key) {
                self.set(key, &v)?;
            }
        }
        Ok(())
    }

    /// Sets one setting by its variable name.
    pub fn set(&mut self, key: &str, v: &str) -> Result<(), ConfigError> {
        let non_empty = |v: &str| (!v.trim().is_empty()).then(|| v.trim().to_owned());
        match key {
            "SCEAU_DATA_DIR" => self.data_dir = PathBuf::from(v),
            "SCEAU_LISTEN" => self.listen = parse(key, v)?,
            "SCEAU_METRICS_LISTEN" => self.metrics_listen = parse(key, v)?,
            "SCEAU_PUBLIC_URL" => {
                let url = non_empty(v).map(|u| u.trim_end_matches('/').to_owned());
                url.as_deref().map_or(Ok(()), |u| https_unless_loopback(key, u))?;
                self.public_url = url;
            }
            "SCEAU_MASTER_KEY_FILE" => self.master_key_file = non_empty(v).map(PathBuf::from),
            "SCEAU_WORKERS" => {
                self.workers = parse(key, v)?;
                if self.workers == 0 || self.workers > 1024 {
                    return Err(ConfigError(format!("{key}={v:?} must be between 1 and 1024")));
                }
            }
            "SCEAU_WEBHOOK_ALLOW_HOSTS" => self.webhook_allow_hosts = split_hosts(v),
            "SCEAU_RETRY_SCHEDULE" => self.retry_schedule = non_empty(v),
            "SCEAU_VOLUME_LIMIT_BYTES" => self.volume_limit_bytes = parse(key, v)?,
            "SCEAU_REALTIME_RATE_PER_MINUTE" => self.realtime_rate_per_minute = parse(key, v)?,
            "SCEAU_SWEEP_INTERVAL_MS" => self.sweep_interval = Duration::from_millis(parse::<u64>(key, v)?.max(10)),
            "SCEAU_BATCH_WINDOW_SECONDS" => self.batch_window = Duration::from_secs(parse::<u64>(key, v)?.max(1)),
            "SCEAU_AMQP_URL" => self.amqp_url = non_empty(v),
            "SCEAU_REDIS_URL" => self.redis_url = non_empty(v),
            "SCEAU_REDIS_PREFIX" => self.redis_prefix = v.trim().to_owned(),
            "SCEAU_TRUST_DIR" => self.trust_dir = non_empty(v).map(PathBuf::from),
            "SCEAU_ACCEPT_TEST_CA" => self.accept_test_ca = parse_bool(key, v)?,
            "SCEAU_TESSERACT" => self.tesseract = non_empty(v).map_or_else(|| PathBuf::from("tesseract"), PathBuf::from),
            "SCEAU_ISSUER_REGISTER_FILE" => self.issuer_register_file = non_empty(v).map(PathBuf::from),
            "SCEAU_ISSUER_REGISTER_URL" => self.issuer_register_url = non_empty(v).map(|u| u.trim_end_matches('/').to_owned()),
            "SCEAU_EXTERNAL_ENGINE_URL" => {
                let url = non_empty(v);
                url.as_deref().map_or(Ok(()), |u| https_unless_loopback(key, u))?;
                self.external_engine_url = url;
            }
            "SCEAU_EXTERNAL_ENGINE_TOKEN" => self.external_engine_token = non_empty(v).map(SecretString),
            "SCEAU_EXTERNAL_ENGINE_TIMEOUT_MS" => self.external_engine_timeout = Duration::from_millis(parse::<u64>(key, v)?.max(1)),
            "SCEAU_ANALYSIS_TIMEOUT_SECONDS" => self.analysis_timeout = Duration::from_secs(parse::<u64>(key, v)?.max(1)),
            "SCEAU_TRUSTED_PROXIES" => self.trusted_proxies = parse_cidrs(key, v)?,
            _ => return Err(ConfigError(format!("unknown setting {key}"))),
        }
        Ok(())
    }

    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("sceau.db")
    }

    pub fn blob_dir(&self) -> PathBuf {
        self.data_dir.join("blobs")
    }

    pub fn master_key_path(&self) -> PathBuf {
        self.master_key_file.clone().unwrap_or_else(|| self.data_dir.join("master.key"))
    }

    /// Base URL of links handed to customers.
    pub fn public_base(&self, bound: SocketAddr) -> String {
        self.public_url.clone().unwrap_or_else(|| format!("http://{bound}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn env_overrides_defaults_and_bad_values_fail_clearly() {
        let vars: HashMap<&str, &str> = [("SCEAU_WORKERS", "3"), ("SCEAU_WEBHOOK_ALLOW_HOSTS", "127.0.0.1, Localhost")].into();
        let mut c = Config::default();
        c.apply_env(|k| vars.get(k).map(|v| v.to_string())).unwrap();
        assert_eq!(c.workers, 3);
        assert_eq!(c.webhook_allow_hosts, vec!["127.0.0.1", "localhost"]);
        let err = Config::default().set("SCEAU_LISTEN", "nowhere").unwrap_err();
        assert!(err.to_string().contains("SCEAU_LISTEN"));
        assert!(Config::default().set("SCEAU_WORKERS", "0").is_err());
    }

    #[test]
    fn metrics_listen_on_loopback_unless_told_otherwise() {
        assert_eq!(Config::default().metrics_listen, SocketAddr::from(([127, 0, 0, 1], 9464)));
        let mut c = Config::default();
        c.set("SCEAU_METRICS_LISTEN", "127.0.0.1:0").unwrap();
        assert_eq!(c.metrics_listen.port(), 0);
        let err = c.set("SCEAU_METRICS_LISTEN", "everywhere").unwrap_err();
        assert!(err.to_string().contains("SCEAU_METRICS_LISTEN"));
    }

    #[test]
    fn file_config_is_read() {
        let f: FileConfig = toml::from_str("workers = 2\nlisten = \"127.0.0.1:9000\"").unwrap();
        let mut c = Config::default();
        c.apply_file(f).unwrap();
        assert_eq!(c.workers, 2);
        assert_eq!(c.listen.port(), 9000);
        assert!(toml::from_str::<FileConfig>("nope = 1").is_err());
    }

    #[test]
    fn analysis_settings_are_read_and_the_token_is_never_printed() {
        let vars: HashMap<&str, &str> = [
            ("SCEAU_EXTERNAL_ENGINE_URL", "https://faces.example/v1/analyse"),
            ("SCEAU_EXTERNAL_ENGINE_TOKEN", "tok_very_secret"),
            ("SCEAU_EXTERNAL_ENGINE_TIMEOUT_MS", "2500"),
            ("SCEAU_ISSUER_REGISTER_URL", "https://recherche-entreprises.api.gouv.fr/"),
            ("SCEAU_ANALYSIS_TIMEOUT_SECONDS", "30"),
        ]
        .into();
        let mut c = Config::default();
        c.apply_env(|k| vars.get(k).map(|v| v.to_string())).unwrap();
        assert_eq!(c.external_engine_token.as_ref().map(SecretString::expose), Some("tok_very_secret"));
        assert_eq!(c.external_engine_timeout, Duration::from_millis(2500));
        assert_eq!(c.issuer_register_url.as_deref(), Some("https://recherche-entreprises.api.gouv.fr"));
        assert_eq!(c.analysis_timeout, Duration::from_secs(30));
        assert!(!format!("{c:?}").contains("tok_very_secret"));
        assert!(Config::default().set("SCEAU_ANALYSIS_TIMEOUT_SECONDS", "soon").is_err());
    }

    #[test]
    fn public_and_engine_urls_must_be_https_except_on_loopback() {
        for key in ["SCEAU_PUBLIC_URL", "SCEAU_EXTERNAL_ENGINE_URL"] {
            for fine in [
                "https://sceau.example.com",
                "https://10.0.0.4:8443/v1/analyse",
                "http://127.0.0.1:8080",
                "http://127.9.8.7:1/x",
                "http://[::1]:9000/",
                "http://localhost:8080",
                "http://LocalHost./",
            ] {
                assert!(Config::default().set(key, fine).is_ok(), "{key}={fine}");
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
                let err = Config::default().set(key, refused).expect_err(refused).to_string();
                assert!(err.contains(key), "{err}");
                assert_eq!(err.lines().count(), 1, "{err}");
            }
        }
        let err = Config::default()
            .set("SCEAU_PUBLIC_URL", "http://u:hunter2@example.com")
            .unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "a credential in the URL is not echoed: {err}");
        // An empty value still means unset.
        assert!(Config::default().set("SCEAU_PUBLIC_URL", "").is_ok());
    }

    #[test]
    fn the_file_public_url_is_checked_too() {
        let f: FileConfig = toml::from_str("public_url = \"http://sceau.example.com\"").unwrap();
        let err = Config::default().apply_file(f).unwrap_err();
        assert!(err.to_string().contains("SCEAU_PUBLIC_URL"), "{err}");
        let f: FileConfig = toml::from_str("public_url = \"https://sceau.example.com/\"").unwrap();
        let mut c = Config::default();
        c.apply_file(f).unwrap();
        assert_eq!(c.public_url.as_deref(), Some("https://sceau.example.com"));
    }

    #[test]
    fn trusted_proxies_are_cidrs() {
        assert!(Config::default().trusted_proxies.is_empty(), "no proxy is trusted by default");
        let mut c = Config::default();
        c.set("SCEAU_TRUSTED_PROXIES", " 10.0.0.0/8, 127.0.0.1 ,fd00::/8,").unwrap();
        let shown: Vec<String> = c.trusted_proxies.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"]);
        c.set("SCEAU_TRUSTED_PROXIES", "").unwrap();
        assert!(c.trusted_proxies.is_empty());
        for (refused, says) in [
            ("10.0.0.0/33", "not a CIDR"),
            ("proxy.example", "not a CIDR"),
            ("10.0.0.1/8", "did you mean 10.0.0.0/8"),
        ] {
            let err = Config::default().set("SCEAU_TRUSTED_PROXIES", refused).unwrap_err().to_string();
            assert!(err.contains("SCEAU_TRUSTED_PROXIES") && err.contains(says), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        let f: FileConfig = toml::from_str("trusted_proxies = \"192.168.0.0/16\"").unwrap();
        let mut c = Config::default();
        c.apply_file(f).unwrap();
        assert_eq!(c.trusted_proxies.len(), 1);
    }
}
