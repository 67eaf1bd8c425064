//! The resources of the API as clients read them (camelCase JSON), and the operator's view of a
//! company. Built from store rows; never carry document bytes or extracted data.

use crate::ids::*;
use crate::vocabulary::*;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A workflow of the company: what a verification session checks and how it decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    /// The value to pass as `workflowId`.
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
    /// Where the workflow's test events go (API.md, Test mode); never the live URL.
    #[serde(default)]
    pub test_webhook_url: Option<String>,
    pub rules: WorkflowRules,
    pub default_batch: bool,
}

impl WorkflowDetail {
    /// The URL of the workflow's events in `mode`: a test event goes to the test URL only, and
    /// nowhere when there is none.
    pub fn webhook_url_for(&self, mode: Mode) -> Option<&str> {
        match mode {
            Mode::Live => self.webhook_url.as_deref(),
            Mode::Test => self.test_webhook_url.as_deref(),
        }
    }
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

/// The oldest minimum age a rule may ask for.
pub const MAX_MIN_AGE: u32 = 120;

/// Why a workflow's rules cannot be kept: each would silently refuse documents it should not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("minAge must be between 1 and {MAX_MIN_AGE}")]
    MinAge,
    #[error("acceptedCountries must not be an empty list (leave it out to accept every country)")]
    NoCountry,
    #[error("{0:?} is not an ISO 3166-1 alpha-3 country code")]
    Country(String),
    #[error("acceptedDocumentTypes must not be an empty list (leave it out to accept every type)")]
    NoDocumentType,
    #[error("{0} is not a document type of the workflow's category")]
    DocumentType(DocumentType),
}

impl WorkflowRules {
    /// Checks the rules of a workflow of `category`, whoever sets them (CLI or portal).
    pub fn check(&self, category: DocumentCategory) -> Result<(), RuleError> {
        if self.min_age.is_some_and(|age| !(1..=MAX_MIN_AGE).contains(&age)) {
            return Err(RuleError::MinAge);
        }
        if let Some(countries) = &self.accepted_countries {
            if countries.is_empty() {
                return Err(RuleError::NoCountry);
            }
            if let Some(bad) = countries.iter().find(|c| !crate::country::is_alpha3(c)) {
                return Err(RuleError::Country(bad.clone()));
            }
        }
        if let Some(types) = &self.accepted_document_types {
            if types.is_empty() {
                return Err(RuleError::NoDocumentType);
            }
            if let Some(bad) = types.iter().find(|t| t.category() != Some(category)) {
                return Err(RuleError::DocumentType(*bad));
            }
        }
        Ok(())
    }
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
    /// Every member of the portal team must sign in with a second factor.
    pub two_factor_required: bool,
    /// `test` for a company's test account (API.md, Test mode), which holds its test data.
    pub mode: Mode,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
    /// What its customers' journeys show of it (shared by the test account, like the settings).
    pub journey: crate::branding::JourneySettings,
}

/// A verification session: one journey link for one end customer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerificationSession {
    pub id: VerificationId,
    /// Unique, single-use URL to hand to the end customer. `null` when the key is read-only, and
    /// for every key once the session has left `created` (the customer opened the link): a link
    /// is served only until its journey starts.
    #[schema(required = true, format = "uri")]
    pub verification_url: Option<String>,
    /// The client's reference, returned as given.
    #[schema(required = true, max_length = 255)]
    pub external_ref: Option<String>,
    /// Additive: where the journey's end pages send the customer back ("Retour" button), exactly
    /// as given at creation; `null` when none was given.
    #[schema(required = true, value_type = Option<String>, format = "uri", max_length = 2048)]
    pub return_url: Option<crate::return_url::ReturnUrl>,
    pub workflow_id: WorkflowId,
    #[serde(with = "crate::time::serde_millis")]
    pub expires_at: DateTime<Utc>,
    /// Additive: where the journey stands.
    pub status: VerificationStatus,
    /// Additive: the result, once `completed`.
    #[schema(required = true)]
    pub consultation_id: Option<ConsultationId>,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
}

/// A result: what the analysis found in one document, never the document or the data it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Consultation {
    pub id: ConsultationId,
    /// The client's reference, returned as given.
    #[schema(required = true, max_length = 255)]
    pub external_ref: Option<String>,
    pub workflow_id: WorkflowId,
    pub document_category: DocumentCategory,
    pub document_type: DocumentType,
    /// ISO 3166-1 alpha-3; null when unknown.
    #[schema(required = true, pattern = "^[A-Z]{3}$")]
    pub document_country: Option<String>,
    pub verdict: Verdict,
    /// The workflow's decision; null for batch results.
    #[schema(required = true)]
    pub decision: Option<Decision>,
    #[schema(required = true)]
    pub review_status: Option<ReviewStatus>,
    pub anomaly_count: usize,
    pub has_reject_anomaly: bool,
    pub anomalies: Vec<Anomaly>,
    /// Null when there is no 2D-Doc and nothing to report.
    #[schema(required = true)]
    pub two_d_doc: Option<TwoDDoc>,
    #[serde(with = "crate::time::serde_millis")]
    pub analyzed_at: DateTime<Utc>,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
}

/// How many documents of a batch stand in each state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(as = BatchCounts)]
pub struct Counts {
    pub total: u32,
    pub pending: u32,
    pub succeeded: u32,
    pub errored: u32,
    pub canceled: u32,
    pub expired: u32,
}

/// A batch: documents the client already holds, analysed once it is submitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Batch {
    pub id: BatchId,
    pub status: BatchStatus,
    /// The client's reference, returned as given.
    #[schema(required = true, max_length = 255)]
    pub external_ref: Option<String>,
    pub counts: Counts,
    #[serde(with = "crate::time::serde_millis_opt")]
    #[schema(required = true)]
    pub submitted_at: Option<DateTime<Utc>>,
    /// 24 h after creation while open, then 24 h after submission.
    #[serde(with = "crate::time::serde_millis")]
    pub expires_at: DateTime<Utc>,
    #[serde(with = "crate::time::serde_millis_opt")]
    #[schema(required = true)]
    pub ended_at: Option<DateTime<Utc>>,
    #[serde(with = "crate::time::serde_millis")]
    pub created_at: DateTime<Utc>,
    /// Only in the detail read of a batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub items: Option<Vec<BatchItem>>,
}

/// One document of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchItem {
    pub id: BatchItemId,
    /// Rank in the batch, from 1.
    #[schema(minimum = 1)]
    pub position: u32,
    pub document_category: DocumentCategory,
    /// The client's reference, returned as given.
    #[schema(required = true, max_length = 255)]
    pub external_ref: Option<String>,
    pub status: ItemStatus,
    /// Set for `succeeded` documents.
    #[schema(required = true)]
    pub consultation_id: Option<ConsultationId>,
    /// Set for `errored` documents.
    #[schema(required = true)]
    pub error: Option<ItemError>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_checked_against_their_category() {
        let id = DocumentCategory::Identite;
        let rules = |json: &str| serde_json::from_str::<WorkflowRules>(json).unwrap();
        assert_eq!(
            rules(r#"{"minAge":18,"acceptedCountries":["FRA","BEL"],"acceptedDocumentTypes":["passeport"]}"#).check(id),
            Ok(())
        );
        assert_eq!(WorkflowRules::default().check(id), Ok(()));
        assert_eq!(rules(r#"{"minAge":0}"#).check(id), Err(RuleError::MinAge));
        assert_eq!(rules(r#"{"minAge":121}"#).check(id), Err(RuleError::MinAge));
        assert_eq!(rules(r#"{"minAge":120}"#).check(id), Ok(()));
        assert_eq!(
            rules(r#"{"acceptedCountries":["FRA","XYZ"]}"#).check(id),
            Err(RuleError::Country("XYZ".into()))
        );
        assert_eq!(rules(r#"{"acceptedCountries":[]}"#).check(id), Err(RuleError::NoCountry));
        assert_eq!(
            rules(r#"{"acceptedDocumentTypes":["facture"]}"#).check(id),
            Err(RuleError::DocumentType(DocumentType::Facture))
        );
        assert_eq!(
            rules(r#"{"acceptedDocumentTypes":["facture"]}"#).check(DocumentCategory::Administratif),
            Ok(())
        );
    }

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
