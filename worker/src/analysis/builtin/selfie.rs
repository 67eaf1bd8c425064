//! The selfie and the external analysis service. Sceau compares the selfie itself (`face`); an
//! operator's external service, when configured, still runs: its face match and fraud signals join
//! the findings beside Sceau's own, and its silence is reported rather than failing the document.

use domain::analysis::{AnalysisInput, Check};
use domain::vocabulary::{Anomaly, AnomalyCode};

use super::findings::Findings;
use common::document::sniff;

use crate::analysis::external::{Attachment, ExternalEngine, ExternalRequest};

/// What the external service did not check, said apart from what Sceau's own comparison says.
const EXTERNAL: &str = "by the external analysis service";

/// Adds what the external service says, or that it could not compare the selfie.
pub async fn weigh(findings: &mut Findings, input: &AnalysisInput, external: Option<&ExternalEngine>) {
    let Some(external) = external else {
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
            let (mismatch, others): (Vec<Anomaly>, Vec<Anomaly>) =
                verdict.anomalies.into_iter().partition(|a| a.code == AnomalyCode::SelfieMismatch);
            findings.add_distinct(mismatch);
            findings.add(others);
            if input.selfie.is_some() && !verdict.selfie_checked {
                findings.add_distinct([Anomaly::with_detail(AnomalyCode::SelfieNotChecked, EXTERNAL)]);
            }
        }
        Err(error) => {
            tracing::warn!(%error, "the external analysis service did not answer");
            findings.add_code(AnomalyCode::ExternalEngineUnavailable);
            if input.selfie.is_some() {
                findings.add_distinct([Anomaly::with_detail(AnomalyCode::SelfieNotChecked, EXTERNAL)]);
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
