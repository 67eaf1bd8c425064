//! The JSON contract with an external analysis service, version 1 (`docs/external-engine.md`): the request the
//! worker sends and the answer it accepts. Kept apart from the HTTP client so the wire format is one small,
//! reviewable file that a service implementer can read next to the document.

use base64::Engine as _;
use domain::vocabulary::DocumentCategory;
use serde::{Deserialize, Serialize};

/// The contract version the worker speaks, sent as `contractVersion`.
pub const CONTRACT_VERSION: u32 = 1;

/// One image or file sent to the service.
#[derive(Clone, Copy)]
pub struct Attachment<'a> {
    /// The MIME type of `bytes`, e.g. `image/jpeg` or `application/pdf`.
    pub content_type: &'a str,
    pub bytes: &'a [u8],
}

impl std::fmt::Debug for Attachment<'_> {
    /// The document's bytes stay out of debug output, which ends up in logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attachment")
            .field("content_type", &self.content_type)
            .field("len", &self.bytes.len())
            .finish()
    }
}

/// What the worker asks the service about one document.
#[derive(Debug, Clone, Copy)]
pub struct ExternalRequest<'a> {
    pub category: DocumentCategory,
    /// The `documentType` the engine has determined so far (`inconnu` when none).
    pub document_type: &'a str,
    pub front: Attachment<'a>,
    pub back: Option<Attachment<'a>>,
    /// The holder's selfie, to be compared with the document's photo.
    pub selfie: Option<Attachment<'a>>,
}

/// The request body on the wire.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestBody<'a> {
    pub contract_version: u32,
    pub category: DocumentCategory,
    pub document_type: &'a str,
    pub front: WirePart<'a>,
    pub back: Option<WirePart<'a>>,
    pub selfie: Option<WirePart<'a>>,
}

/// An attachment on the wire: its type and its bytes in standard base64 (with padding).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WirePart<'a> {
    pub content_type: &'a str,
    pub data: String,
}

impl<'a> From<Attachment<'a>> for WirePart<'a> {
    fn from(a: Attachment<'a>) -> Self {
        WirePart {
            content_type: a.content_type,
            data: base64::engine::general_purpose::STANDARD.encode(a.bytes),
        }
    }
}

impl<'a> From<&ExternalRequest<'a>> for RequestBody<'a> {
    fn from(r: &ExternalRequest<'a>) -> Self {
        RequestBody {
            contract_version: CONTRACT_VERSION,
            category: r.category,
            document_type: r.document_type,
            front: r.front.into(),
            back: r.back.map(Into::into),
            selfie: r.selfie.map(Into::into),
        }
    }
}

/// The service's answer on the wire. Unknown members are ignored, so a service may add its own; `signals` is
/// required (empty when nothing was seen), so that an endpoint answering some other JSON is not taken for a
/// service that found nothing.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseBody {
    /// `null` or absent when no selfie was sent or the service does no face matching.
    #[serde(default)]
    pub selfie: Option<SelfieResult>,
    pub signals: Vec<Signal>,
}

/// The service's face-matching result.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SelfieResult {
    /// The comparison was made (a face was found on both images).
    pub checked: bool,
    /// The faces belong to the same person; meaningless when `checked` is false.
    #[serde(rename = "match", default)]
    pub matched: bool,
    /// The service's confidence, from 0 to 1; informative only.
    #[serde(default)]
    pub score: Option<f64>,
}

/// One sign of fraud the service saw.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Signal {
    /// The service's own code, e.g. `screen_replay`.
    pub code: String,
    pub severity: SignalSeverity,
    #[serde(default)]
    pub message: String,
}

/// How much the service says a signal weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignalSeverity {
    Info,
    Warning,
    Reject,
    /// A severity this contract version does not define: weighed as a warning.
    #[serde(other)]
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_body_wire_format() {
        let request = ExternalRequest {
            category: DocumentCategory::Identite,
            document_type: "carte_identite",
            front: Attachment {
                content_type: "image/jpeg",
                bytes: b"\xff\xd8abc",
            },
            back: None,
            selfie: Some(Attachment {
                content_type: "image/png",
                bytes: b"png",
            }),
        };
        let json = serde_json::to_value(RequestBody::from(&request)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "contractVersion": 1,
                "category": "identite",
                "documentType": "carte_identite",
                "front": {"contentType": "image/jpeg", "data": "/9hhYmM="},
                "back": null,
                "selfie": {"contentType": "image/png", "data": "cG5n"},
            })
        );
        assert!(!format!("{request:?}").contains("abc"));
    }

    #[test]
    fn response_body_is_read_leniently_where_the_contract_allows() {
        let full: ResponseBody = serde_json::from_str(
            r#"{"selfie":{"checked":true,"match":false,"score":0.12},"signals":[{"code":"x","severity":"reject","message":"m"},{"code":"y","severity":"critical"}],"extra":1}"#,
        )
        .unwrap();
        assert_eq!(
            full.selfie,
            Some(SelfieResult {
                checked: true,
                matched: false,
                score: Some(0.12)
            })
        );
        assert_eq!(full.signals[0].severity, SignalSeverity::Reject);
        assert_eq!(full.signals[1].severity, SignalSeverity::Unknown);
        assert_eq!(full.signals[1].message, "");
        let empty: ResponseBody = serde_json::from_str(r#"{"signals":[]}"#).unwrap();
        assert_eq!(
            empty,
            ResponseBody {
                selfie: None,
                signals: vec![]
            }
        );
        assert!(serde_json::from_str::<ResponseBody>(r#"{"signals":[{"severity":"info"}]}"#).is_err());
        assert!(serde_json::from_str::<ResponseBody>("[]").is_err());
        assert!(serde_json::from_str::<ResponseBody>(r#"{"selfie":null,"status":"ok"}"#).is_err());
    }
}
