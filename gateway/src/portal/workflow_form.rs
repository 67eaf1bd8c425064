//! The fields of a workflow's name and rules, shared by the create form and the settings tab:
//! read from the posted pairs (the document types are repeated checkboxes), turned into the
//! domain's `WorkflowRules` and checked by the same `WorkflowRules::check` as the CLI, and shown
//! again with what was typed when something is refused.

use crate::i18n::{labels, Lang};
use common::store::workflows::MAX_NAME_CHARS;
use domain::model::{RuleError, WorkflowDetail, WorkflowRules};
use domain::vocabulary::{DocumentCategory, DocumentType};
use maud::{html, Markup};

/// What the member typed, kept as text so a refused form shows it back unchanged.
#[derive(Debug, Default, Clone)]
pub struct RulesInput {
    pub csrf: String,
    pub name: String,
    pub category: String,
    pub min_age: String,
    pub countries: String,
    pub types: Vec<String>,
    pub systematic_review: bool,
}

/// Why the form cannot be saved, in the member's words (with the offending value when useful).
pub struct Problem {
    pub text: String,
}

impl RulesInput {
    /// Reads the posted pairs; unknown fields are ignored.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        let mut input = RulesInput::default();
        for (key, value) in pairs {
            match key.as_str() {
                "csrf" => input.csrf = value,
                "name" => input.name = value,
                "category" => input.category = value,
                "minAge" => input.min_age = value,
                "acceptedCountries" => input.countries = value,
                "acceptedDocumentTypes" => input.types.push(value),
                "systematicReview" => input.systematic_review = true,
                _ => {}
            }
        }
        input
    }

    /// The form of an existing workflow.
    pub fn of(wf: &WorkflowDetail) -> Self {
        let rules = &wf.rules;
        RulesInput {
            csrf: String::new(),
            name: wf.workflow.name.clone(),
            category: wf.workflow.document_category.as_str().to_owned(),
            min_age: rules.min_age.map(|a| a.to_string()).unwrap_or_default(),
            countries: rules.accepted_countries.as_deref().map(|c| c.join(", ")).unwrap_or_default(),
            types: rules
                .accepted_document_types
                .iter()
                .flatten()
                .map(|t| t.as_str().to_owned())
                .collect(),
            systematic_review: rules.systematic_review,
        }
    }

    /// The category chosen; `None` when it is not one.
    pub fn category(&self) -> Option<DocumentCategory> {
        self.category.parse().ok()
    }

    /// The name and rules of a workflow of `category`, or why not. The store checks them again.
    pub fn rules(&self, category: DocumentCategory, lang: Lang) -> Result<WorkflowRules, Problem> {
        let t = lang.portal();
        let problem = |text: &str, value: &str| Problem {
            text: if value.is_empty() {
                text.to_owned()
            } else {
                format!("{text} {value}")
            },
        };
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return Err(problem(t.wf_err_name, ""));
        }
        let min_age = match self.min_age.trim() {
            "" => None,
            typed => Some(typed.parse::<u32>().map_err(|_| problem(t.wf_err_min_age, ""))?),
        };
        let countries: Vec<String> = self
            .countries
            .split(',')
            .map(|c| c.trim().to_ascii_uppercase())
            .filter(|c| !c.is_empty())
            .collect();
        let mut types = Vec::new();
        for typed in &self.types {
            let parsed: DocumentType = typed.parse().map_err(|_| problem(t.wf_err_type, typed))?;
            if !types.contains(&parsed) {
                types.push(parsed);
            }
        }
        let rules = WorkflowRules {
            min_age,
            accepted_countries: (!countries.is_empty()).then_some(countries),
            accepted_document_types: (!types.is_empty()).then_some(types),
            systematic_review: self.systematic_review,
        };
        rules.check(category).map_err(|e| match e {
            RuleError::MinAge => problem(t.wf_err_min_age, ""),
            RuleError::Country(code) => problem(t.wf_err_country, &code),
            RuleError::DocumentType(kind) => problem(t.wf_err_type, labels::document_type(kind, lang)),
            // Empty lists are read as "not set" above.
            RuleError::NoCountry | RuleError::NoDocumentType => problem(t.error_text, ""),
        })?;
        Ok(rules)
    }
}

/// The name, category and rule fields, on the create form and the settings tab alike: the
/// document types of both categories are offered, each under its category's name, and the rules
/// are checked against the category chosen.
pub fn fields(input: &RulesInput, lang: Lang) -> Markup {
    let t = lang.portal();
    html! {
        label for="wf-name" { (t.wf_name) }
        input #wf-name type="text" name="name" value=(input.name) maxlength=(MAX_NAME_CHARS) required;
        label for="wf-category" { (t.wf_category) }
        select #wf-category name="category" {
            @for c in DocumentCategory::ALL {
                option value=(c.as_str()) selected[input.category == c.as_str()] { (labels::category(*c, lang)) }
            }
        }
        label for="wf-min-age" { (t.wf_min_age) }
        input #wf-min-age type="number" name="minAge" min="1" max=(domain::model::MAX_MIN_AGE) step="1" value=(input.min_age) aria-describedby="wf-min-age-hint";
        p.hint #wf-min-age-hint { (t.wf_min_age_hint) }
        label for="wf-countries" { (t.wf_countries) }
        input #wf-countries type="text" name="acceptedCountries" value=(input.countries) aria-describedby="wf-countries-hint";
        p.hint #wf-countries-hint { (t.wf_countries_hint) }
        fieldset {
            legend { (t.wf_types) }
            p.hint { (t.wf_types_hint) }
            @for group in DocumentCategory::ALL {
                p { strong { (labels::category(*group, lang)) } }
                @for kind in DocumentType::ALL.iter().filter(|k| k.category() == Some(*group)) {
                    div.check {
                        input id=(format!("wf-type-{}", kind.as_str())) type="checkbox" name="acceptedDocumentTypes" value=(kind.as_str())
                            checked[input.types.iter().any(|t| t == kind.as_str())];
                        label for=(format!("wf-type-{}", kind.as_str())) { (labels::document_type(*kind, lang)) }
                    }
                }
            }
        }
        div.check {
            input #wf-review type="checkbox" name="systematicReview" value="on" checked[input.systematic_review];
            label for="wf-review" { (t.wf_systematic_review) }
        }
    }
}

/// The rules in one line, for the list.
pub fn summary(rules: &WorkflowRules, lang: Lang) -> String {
    let t = lang.portal();
    let mut parts = Vec::new();
    if let Some(age) = rules.min_age {
        parts.push(format!("{} {age}", t.wf_age_short));
    }
    if let Some(countries) = &rules.accepted_countries {
        parts.push(countries.join(", "));
    }
    if let Some(types) = &rules.accepted_document_types {
        parts.push(types.iter().map(|k| labels::document_type(*k, lang)).collect::<Vec<_>>().join(", "));
    }
    if rules.systematic_review {
        parts.push(t.wf_review_short.to_owned());
    }
    if parts.is_empty() {
        t.wf_none_set.to_owned()
    } else {
        parts.join(" · ")
    }
}
