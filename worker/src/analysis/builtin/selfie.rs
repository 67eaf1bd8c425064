//! The selfie and the external analysis service. No face model ships with the project: without an
//! external service a selfie is reported `selfie_not_checked`; with one, its face match and fraud
//! signals join the findings, and its silence is reported rather than failing the document.

use common::analysis::{AnalysisInput, Check};
use common::domain::AnomalyCode;

use super::findings::Findings;
use common::document::sniff;

use crate::analysis::external::{Attachment, ExternalEngine, ExternalRequest};

/// Adds what the external service says, or that the selfie could not be compared.
pub async fn weigh(findings: &mut Findings, input: &AnalysisInput, external: Option<&ExternalEngine>) {
    let Some(external) = external else {
        if input.selfie.is_some() {
            findings.add_code(AnomalyCode::SelfieNotChecked);
        }
        return;
    };
    let request = ExternalRequest {
        category: input.category,
        document_type: findings.document_type.as_str(),
        front: attachment(&input.front),
        back: input.back.as_deref().map(attachment),
        selfie: input.selfie.as_deref().map(attachment),
    };
    match external.analyse(request).await {
        Ok(verdict) => {
            if let (true, Some(matched)) = (verdict.selfie_checked, verdict.selfie_match) {
                findings.checked(Check::SelfieMatch, matched);
            }
            findings.add(verdict.anomalies);
            if input.selfie.is_some() && !verdict.selfie_checked {
                findings.add_code(AnomalyCode::SelfieNotChecked);
            }
        }
        Err(error) => {
            tracing::warn!(%error, "the external analysis service did not answer");
            findings.add_code(AnomalyCode::ExternalEngineUnavailable);
            if input.selfie.is_some() {
                findings.add_code(AnomalyCode::SelfieNotChecked);
            }
        }
    }
}

/// The file with the MIME type its bytes show (they were sniffed and checked before the analysis).
fn attachment(bytes: &[u8]) -> Attachment<'_> {
    Attachment {
        content_type: sniff(bytes).map_or("application/octet-stream", |kind| kind.content_type()),
        bytes,
    }
}
