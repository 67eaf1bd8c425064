//! Logs: JSON lines on stderr, filtered by `RUST_LOG` (default `info`). Spans carry the request
//! id; no key, secret or document byte is ever a field.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber once; later calls are no-ops (tests start several services).
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_current_span(true)
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
