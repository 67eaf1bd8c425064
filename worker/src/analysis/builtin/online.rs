//! The checks that go on the network: the online company register and the external analysis
//! service. A sandbox child has no network (and holds no token), so it stops at a [`Draft`]; the
//! worker finishes it here, outside the sandbox, with the files it sent the child.

use domain::analysis::{AnalysisInput, AnalysisReport};
use serde::{Deserialize, Serialize};

use super::findings::Findings;
use super::{administrative, selfie, BuildError, EngineOptions};
use crate::analysis::external::ExternalEngine;
use crate::analysis::issuer::{self, OnlineRegister, Siren};

/// What the offline analysis found, and what is left to ask online.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Draft {
    pub(super) findings: Findings,
    pub(super) pages: u32,
    /// `None` for a document no check can start on: its report is final.
    pub(super) pending: Option<Pending>,
}

/// The checks left to the worker.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Pending {
    /// The SIRENs the offline register did not confirm, for the online one.
    pub(super) issuer: Option<Vec<Siren>>,
}

/// The network's side of the engine, built once by the worker (and by an engine run in process).
pub struct OnlineChecks {
    register: Option<OnlineRegister>,
    external: Option<ExternalEngine>,
}

impl OnlineChecks {
    pub fn build(options: &EngineOptions) -> Result<Self, BuildError> {
        Ok(Self {
            register: issuer::online_register(&options.register)?,
            external: options.external.clone().map(ExternalEngine::new).transpose()?,
        })
    }

    /// Whether the external service is configured.
    pub fn has_external(&self) -> bool {
        self.external.is_some()
    }

    /// The report of `draft`, the online checks done: the register first, then the external
    /// service with `input`'s files (the order the checks have always run in).
    pub async fn finish(&self, draft: Draft, input: &AnalysisInput) -> AnalysisReport {
        let Draft {
            mut findings,
            pages,
            pending,
        } = draft;
        if let Some(pending) = pending {
            if let Some(candidates) = pending.issuer {
                administrative::weigh_issuer_online(&mut findings, &candidates, self.register.as_ref()).await;
            }
            selfie::weigh(&mut findings, input, self.external.as_ref()).await;
        }
        super::report(findings, pages)
    }
}
