//! An optional external analysis service, for the checks the project ships no model for: matching the selfie
//! with the document's photo, and machine-learned fraud detection. The operator plugs any service that speaks the
//! JSON contract of `docs/external-engine.md`; its answer becomes catalogue anomalies here, so the rest of the
//! engine never sees the service's own vocabulary.

pub mod client;
pub mod contract;

use std::time::Duration;

use domain::vocabulary::{Anomaly, AnomalyCode, Severity};
use thiserror::Error;

pub use client::ExternalEngine;
pub use contract::{Attachment, ExternalRequest, CONTRACT_VERSION};
use contract::{ResponseBody, SignalSeverity};

/// Most signals kept from one answer; more would drown the report.
pub const MAX_SIGNALS: usize = 16;
/// Longest service message kept in an anomaly, in characters.
pub const MAX_MESSAGE_CHARS: usize = 200;
/// Longest service signal code kept, in characters.
const MAX_CODE_CHARS: usize = 64;

/// Where and how the service is called.
#[derive(Clone, PartialEq, Eq)]
pub struct ExternalOptions {
    /// The endpoint the request is POSTed to (`http` or `https`).
    pub url: String,
    /// Sent as `Authorization: Bearer …` when set.
    pub token: Option<String>,
    /// Wall time allowed to one attempt, connection included.
    pub timeout: Duration,
    /// Attempts in all, the first included; 0 is taken as 1.
    pub attempts: u32,
}

impl std::fmt::Debug for ExternalOptions {
    /// The token is a secret: debug output shows only whether there is one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalOptions")
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("attempts", &self.attempts)
            .finish()
    }
}

/// Why the service gave no usable answer. Messages never contain the document, the token or the answer's values.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ExternalError {
    #[error("external engine configuration is invalid: {0}")]
    Config(String),
    #[error("external engine could not be reached: {0}")]
    Connect(String),
    #[error("external engine did not answer within {0:?}")]
    Timeout(Duration),
    #[error("external engine answered HTTP {0}")]
    Status(u16),
    #[error("external engine request failed: {0}")]
    Transport(String),
    #[error("external engine's answer does not follow the contract: {0}")]
    InvalidResponse(String),
}

impl ExternalError {
    /// Whether another attempt may succeed: connection failures, timeouts and server errors (5xx). A 4xx is the
    /// request's fault and an answer outside the contract the service's; repeating them changes nothing.
    pub fn is_retryable(&self) -> bool {
        match self {
            ExternalError::Connect(_) | ExternalError::Timeout(_) | ExternalError::Transport(_) => true,
            ExternalError::Status(code) => (500..600).contains(code),
            ExternalError::Config(_) | ExternalError::InvalidResponse(_) => false,
        }
    }

    /// The anomaly a report carries when the service failed: its checks were not performed.
    pub fn anomaly(&self) -> Anomaly {
        Anomaly::new(AnomalyCode::ExternalEngineUnavailable)
    }
}

/// The service's answer in the catalogue's terms.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExternalVerdict {
    /// The selfie was compared with the document's photo (whatever the outcome). False when no selfie was sent
    /// or the service could not compare: the caller then reports `selfie_not_checked` if a selfie was expected.
    pub selfie_checked: bool,
    /// The comparison's outcome, when it was made.
    pub selfie_match: Option<bool>,
    /// The service's confidence in [0, 1], when it gave a valid one.
    pub selfie_score: Option<f64>,
    /// `selfie_mismatch` and `external_fraud_signal` anomalies.
    pub anomalies: Vec<Anomaly>,
}

impl ExternalVerdict {
    /// Maps an answer to anomalies. `selfie_sent` says whether the request carried a selfie: a selfie result
    /// about a selfie that was never sent is ignored.
    pub fn from_response(response: ResponseBody, selfie_sent: bool) -> ExternalVerdict {
        let mut verdict = ExternalVerdict::default();
        if let Some(selfie) = response.selfie.filter(|s| s.checked && selfie_sent) {
            verdict.selfie_checked = true;
            verdict.selfie_match = Some(selfie.matched);
            verdict.selfie_score = selfie.score.filter(|s| s.is_finite() && (0.0..=1.0).contains(s));
            if !selfie.matched {
                // Said apart from Sceau's own comparison, which may conclude otherwise.
                verdict.anomalies.push(Anomaly::with_detail(
                    AnomalyCode::SelfieMismatch,
                    "by the external analysis service",
                ));
            }
        }
        for signal in response.signals.into_iter().take(MAX_SIGNALS) {
            let mut anomaly = Anomaly::new(AnomalyCode::ExternalFraudSignal);
            // The service may block a document outright (reject); anything else it reports weighs at most a
            // warning, the catalogue's severity for an unverified outside opinion.
            anomaly.severity = match signal.severity {
                SignalSeverity::Reject => Severity::Reject,
                SignalSeverity::Info => Severity::Info,
                SignalSeverity::Warning | SignalSeverity::Unknown => Severity::Warning,
            };
            let code = sanitise_code(&signal.code);
            let message = sanitise(&signal.message, MAX_MESSAGE_CHARS);
            anomaly.message = match (code.is_empty(), message.is_empty()) {
                (true, true) => anomaly.message,
                (false, true) => format!("{} (signal {code})", anomaly.message),
                (true, false) => format!("{} ({message})", anomaly.message),
                (false, false) => format!("{} (signal {code}: {message})", anomaly.message),
            };
            verdict.anomalies.push(anomaly);
        }
        verdict
    }
}

/// The service's text as it may appear in a report: control characters removed, whitespace collapsed, at most
/// `max` characters (an ellipsis marks a cut).
pub fn sanitise(text: &str, max: usize) -> String {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect();
    let cleaned: String = words.join(" ").chars().filter(|c| !c.is_control() && !is_invisible(*c)).collect();
    if cleaned.chars().count() <= max {
        return cleaned;
    }
    let mut cut: String = cleaned.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Format characters that could reorder or hide text in a client's display (bidi overrides, zero-width marks).
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// A signal code reduced to `[A-Za-z0-9_.-]`, at most [`MAX_CODE_CHARS`].
fn sanitise_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .take(MAX_CODE_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::contract::{SelfieResult, Signal};
    use super::*;

    fn response(selfie: Option<(bool, bool)>, signals: Vec<(&str, SignalSeverity, &str)>) -> ResponseBody {
        ResponseBody {
            selfie: selfie.map(|(checked, matched)| SelfieResult {
                checked,
                matched,
                score: Some(0.9),
            }),
            signals: signals
                .into_iter()
                .map(|(code, severity, message)| Signal {
                    code: code.into(),
                    severity,
                    message: message.into(),
                })
                .collect(),
        }
    }

    fn codes(v: &ExternalVerdict) -> Vec<(&str, Severity)> {
        v.anomalies.iter().map(|a| (a.code.as_str(), a.severity)).collect()
    }

    #[test]
    fn selfie_outcomes() {
        let matched = ExternalVerdict::from_response(response(Some((true, true)), vec![]), true);
        assert!(matched.selfie_checked && matched.anomalies.is_empty());
        assert_eq!((matched.selfie_match, matched.selfie_score), (Some(true), Some(0.9)));
        let mismatch = ExternalVerdict::from_response(response(Some((true, false)), vec![]), true);
        assert_eq!(codes(&mismatch), vec![("selfie_mismatch", Severity::Reject)]);
        let unchecked = ExternalVerdict::from_response(response(Some((false, false)), vec![]), true);
        assert_eq!(unchecked, ExternalVerdict::default());
        let not_sent = ExternalVerdict::from_response(response(Some((true, false)), vec![]), false);
        assert_eq!(not_sent, ExternalVerdict::default());
    }

    #[test]
    fn signals_become_catalogue_anomalies() {
        let verdict = ExternalVerdict::from_response(
            response(
                None,
                vec![
                    ("screen_replay", SignalSeverity::Reject, "photo of a screen"),
                    ("font\u{7}mix", SignalSeverity::Warning, "line 1\nline\t2\u{202e}"),
                    ("", SignalSeverity::Info, ""),
                    ("x", SignalSeverity::Unknown, &"a".repeat(1000)),
                ],
            ),
            false,
        );
        assert_eq!(
            codes(&verdict),
            vec![
                ("external_fraud_signal", Severity::Reject),
                ("external_fraud_signal", Severity::Warning),
                ("external_fraud_signal", Severity::Info),
                ("external_fraud_signal", Severity::Warning),
            ]
        );
        assert!(verdict.anomalies[0].message.ends_with("(signal screen_replay: photo of a screen)"));
        assert!(
            verdict.anomalies[1].message.ends_with("(signal fontmix: line 1 line 2)"),
            "{}",
            verdict.anomalies[1].message
        );
        assert!(!verdict.anomalies[2].message.contains('('));
        assert!(verdict.anomalies[3].message.chars().count() < 200 + 120);
        let many = response(None, vec![("x", SignalSeverity::Info, ""); 40]);
        assert_eq!(ExternalVerdict::from_response(many, false).anomalies.len(), MAX_SIGNALS);
    }

    #[test]
    fn sanitise_caps_and_cleans() {
        assert_eq!(sanitise("  a\r\n\tb\u{0}c  ", 10), "a b c");
        assert_eq!(sanitise("abcdef", 4), "abc…");
        assert_eq!(sanitise("\u{200b}hidden\u{feff}", 20), "hidden");
    }

    #[test]
    fn retry_classes_and_redacted_token() {
        assert!(ExternalError::Status(503).is_retryable());
        assert!(!ExternalError::Status(400).is_retryable());
        assert!(!ExternalError::Status(429).is_retryable());
        assert!(ExternalError::Timeout(Duration::from_secs(1)).is_retryable());
        assert!(!ExternalError::InvalidResponse("x".into()).is_retryable());
        assert_eq!(ExternalError::Status(500).anomaly().code, AnomalyCode::ExternalEngineUnavailable);
        let options = ExternalOptions {
            url: "http://127.0.0.1:1/".into(),
            token: Some("s3cr3t".into()),
            timeout: Duration::from_secs(1),
            attempts: 1,
        };
        assert!(!format!("{options:?}").contains("s3cr3t"));
    }
}
