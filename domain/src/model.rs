//! The resources of the API as clients read them (camelCase JSON), and the operator's view of a
//! company. Built from store rows; never carry document bytes or extracted data.

use crate::ids::*;
use crate::vocabulary::*;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    pub id: WorkflowId,
    pub name: String,
    pub document_category: DocumentCategory,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
}

/// Operator-side view of a workflow (CLI `--json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowDetail {
    #[serde(flatten)]
    pub workflow: Workflow,
    pub company_id: CompanyId,
    pub webhook_url: Option<String>,
    pub rules: WorkflowRules,
    pub default_batch: bool,
}

/// The client's decision rules (`API.md`, Verdict and decision).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkflowRules {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_age: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_countries: Option<Vec<String>>,
    /// Read as rules have always been written: in any case, and a name of no type (a typo kept
    /// in an older rule) is left out, as it never matched a document.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "document_types")]
    pub accepted_document_types: Option<Vec<DocumentType>>,
    #[serde(default)]
    pub systematic_review: bool,
}

fn document_types<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<DocumentType>>, D::Error> {
    let names = Option::<Vec<String>>::deserialize(d)?;
    Ok(names.map(|names| {
        names
            .iter()
            .filter_map(|name| name.trim().to_ascii_lowercase().parse().ok())
            .collect()
    }))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Company {
    pub id: CompanyId,
    pub name: String,
    pub licence: Licence,
    pub ai_enabled: bool,
    pub retention_days: u32,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerificationSession {
    pub id: VerificationId,
    /// The link for the customer: `None` once the session has left `created` and for a
    /// read-only key (see the gateway's `serves_link`).
    pub verification_url: Option<String>,
    pub external_ref: Option<String>,
    pub workflow_id: WorkflowId,
    #[serde(with = "crate::time::serde_millis")]
    pub expires_at: DateTime<Utc>,
    pub status: VerificationStatus,
    pub consultation_id: Option<ConsultationId>,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Consultation {
    pub id: ConsultationId,
    pub external_ref: Option<String>,
    pub workflow_id: WorkflowId,
    pub document_category: DocumentCategory,
    pub document_type: DocumentType,
    pub document_country: Option<String>,
    pub verdict: Verdict,
    pub decision: Option<Decision>,
    pub review_status: Option<ReviewStatus>,
    pub anomaly_count: usize,
    pub has_reject_anomaly: bool,
    pub anomalies: Vec<Anomaly>,
    pub two_d_doc: Option<TwoDDoc>,
    #[serde(with = "crate::time::serde_millis")]
    pub analyzed_at: DateTime<Utc>,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub total: u32,
    pub pending: u32,
    pub succeeded: u32,
    pub errored: u32,
    pub canceled: u32,
    pub expired: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Batch {
    pub id: BatchId,
    pub status: BatchStatus,
    pub external_ref: Option<String>,
    pub counts: Counts,
    #[serde(with = "crate::time::serde_millis_opt")]
    pub submitted_at: Option<DateTime<Utc>>,
    #[serde(with = "crate::time::serde_millis")]
    pub expires_at: DateTime<Utc>,
    #[serde(with = "crate::time::serde_millis_opt")]
    pub ended_at: Option<DateTime<Utc>>,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<BatchItem>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchItem {
    pub id: BatchItemId,
    pub position: u32,
    pub document_category: DocumentCategory,
    pub external_ref: Option<String>,
    pub status: ItemStatus,
    pub consultation_id: Option<ConsultationId>,
    pub error: Option<ItemError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_rules_keep_reading_as_they_were_written() {
        let rules: WorkflowRules = serde_json::from_str(r#"{"acceptedDocumentTypes":["Passeport","PERMIS_CONDUIRE","pasport"]}"#).unwrap();
        assert_eq!(
            rules.accepted_document_types,
            Some(vec![DocumentType::Passeport, DocumentType::PermisConduire])
        );
        let written = serde_json::to_value(&rules).unwrap();
        assert_eq!(
            written["acceptedDocumentTypes"],
            serde_json::json!(["passeport", "permis_conduire"])
        );
    }
}
