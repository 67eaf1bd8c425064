//! `sceau admin company create|list|show|set|rotate-secret [--test]`.

use super::{id_arg, Ctx};
use crate::output;
use common::logo::{self, LogoError, LogoRefusal};
use common::sandbox::{Sandbox, SandboxCommand, PAGE_COUNT_ADDRESS_SPACE_MB};
use common::store::branding::{self, Change, JourneyUpdate, ReencodedLogo};
use common::store::{companies, consultations, RepoError};
use domain::branding::{
    AccentColor, DisplayName, InvalidSetting, PolicyUrl, PrivacyContact, PrivacyController, PrivacyPurpose, MAX_LOGO_BYTES,
};
use domain::ids::CompanyId;
use domain::vocabulary::{Licence, Mode};
use serde_json::json;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Create a company (with its webhook secret and default batch workflows).
    Create {
        #[arg(long)]
        name: String,
        /// `group` is required to create API keys.
        #[arg(long, default_value = "standard", value_parser = ["standard", "group"])]
        licence: String,
    },
    /// List companies.
    List,
    /// Show one company.
    Show {
        #[arg(value_parser = id_arg::<CompanyId>)]
        id: CompanyId,
    },
    /// Change AI use, image retention, and what the company's journeys show its customers (an
    /// empty value clears a journey setting).
    Set {
        #[arg(value_parser = id_arg::<CompanyId>)]
        id: CompanyId,
        #[arg(long, value_parser = ["on", "off"])]
        ai: Option<String>,
        #[arg(long)]
        retention_days: Option<u32>,
        /// Confirms a lower retention that deletes images now (the command says how many).
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        journey: JourneyArgs,
    },
    /// Make a new webhook secret current (the previous one keeps signing for 24 h).
    RotateSecret {
        #[arg(value_parser = id_arg::<CompanyId>)]
        id: CompanyId,
        /// The test account's secret (`whsec_test_…`, signing test events only), not the live one.
        #[arg(long)]
        test: bool,
    },
}

/// The journey settings of `company set`, as the portal's "Parcours client" section names them.
#[derive(clap::Args)]
struct JourneyArgs {
    /// The name customers know the company by (80 characters at most).
    #[arg(long)]
    display_name: Option<String>,
    /// A PNG or JPEG file of at most 200 KB, re-encoded by Sceau before it is served.
    #[arg(long, value_name = "FILE")]
    logo: Option<std::path::PathBuf>,
    /// Removes the logo: the journey then shows the name alone.
    #[arg(long, conflicts_with = "logo")]
    no_logo: bool,
    /// The journey's accent colour, as #RRGGBB.
    #[arg(long, value_name = "#RRGGBB")]
    accent: Option<String>,
    /// Who is responsible for the processing (GDPR art. 13), e.g. the bank's legal name.
    #[arg(long)]
    privacy_controller: Option<String>,
    /// Where customers exercise their rights: the DPO's e-mail or address.
    #[arg(long)]
    privacy_contact: Option<String>,
    /// Why the documents are asked for, in the company's words.
    #[arg(long)]
    privacy_purpose: Option<String>,
    /// The company's privacy policy (https).
    #[arg(long, value_name = "URL")]
    privacy_policy_url: Option<String>,
}

/// One text setting: absent keeps it, empty clears it, anything else is parsed.
fn change<T>(raw: Option<&str>, parse: impl Fn(&str) -> Result<T, InvalidSetting>) -> Result<Change<T>, RepoError> {
    match raw.map(str::trim) {
        None => Ok(None),
        Some("") => Ok(Some(None)),
        Some(value) => parse(value).map(|v| Some(Some(v))).map_err(|e| RepoError::Invalid {
            field: e.field,
            message: format!("{}: {}", e.field, e.message),
        }),
    }
}

impl JourneyArgs {
    /// The update these flags ask for; a logo is re-encoded in a sandbox child first.
    async fn update(&self) -> Result<JourneyUpdate, RepoError> {
        let logo = match (self.logo.as_deref(), self.no_logo) {
            (Some(path), _) => Some(Some(reencode_logo(path).await?)),
            (None, true) => Some(None),
            (None, false) => None,
        };
        Ok(JourneyUpdate {
            display_name: change(self.display_name.as_deref(), DisplayName::parse)?,
            accent_color: change(self.accent.as_deref(), AccentColor::parse)?,
            logo,
            privacy_controller: change(self.privacy_controller.as_deref(), PrivacyController::parse)?,
            privacy_contact: change(self.privacy_contact.as_deref(), PrivacyContact::parse)?,
            privacy_purpose: change(self.privacy_purpose.as_deref(), PrivacyPurpose::parse)?,
            privacy_policy_url: change(self.privacy_policy_url.as_deref(), PolicyUrl::parse)?,
        })
    }
}

/// Reads the logo file (at most 200 KB: a bigger one is refused before it is read whole) and has
/// a sandbox child re-encode it; this process, which may hold keys, never decodes it.
async fn reencode_logo(path: &std::path::Path) -> Result<ReencodedLogo, RepoError> {
    let invalid = |message: String| RepoError::Invalid { field: "logo", message };
    use std::io::Read as _;
    let unreadable = |e: std::io::Error| invalid(format!("{}: {e}", path.display()));
    // One byte past the limit tells a file too large, whatever it is (a pipe, a device, a file
    // that grows): never more is read.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(unreadable)?
        .take(MAX_LOGO_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() > MAX_LOGO_BYTES {
        return Err(invalid(LogoError::TooLarge.to_string()));
    }
    let command = SandboxCommand::current_exe(PAGE_COUNT_ADDRESS_SPACE_MB)
        .map_err(|e| RepoError::Refused(format!("cannot start the sandbox: {e}")))?
        .with_cpu_deadline(logo::DEADLINE * 2);
    let sandbox = Sandbox::new(command, 1);
    logo::reencode_in(&sandbox, &bytes).await.map_err(|refusal| match refusal {
        LogoRefusal::Logo(e) => invalid(e.to_string()),
        LogoRefusal::Sandbox(e) => RepoError::Refused(format!("the logo cannot be checked now: {e}")),
    })
}

/// As the portal's settings page does, a retention that deletes images now is applied only once
/// the operator has seen how many: without `--yes` the command refuses and says.
async fn confirm_retention(ctx: &Ctx, id: &CompanyId, days: u32, now: chrono::DateTime<chrono::Utc>) -> Result<(), RepoError> {
    let company = id.clone();
    let (current, images) = ctx
        .store
        .read(move |c| {
            let current = companies::get(c, &company)?.retention_days;
            let images = if days < current {
                consultations::purged_by_retention(c, &company, days, now)?
            } else {
                0
            };
            Ok::<_, RepoError>((current, images))
        })
        .await?;
    if images == 0 {
        return Ok(());
    }
    Err(RepoError::Refused(format!(
        "lowering retention from {current} to {days} days deletes {images} image(s) of settled results now \
         (those of results waiting for review are kept until settled); run again with --yes to confirm"
    )))
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let now = chrono::Utc::now();
    match args.command {
        Command::Create { name, licence } => {
            let licence: Licence = licence.parse().map_err(|_| RepoError::Invalid {
                field: "licence",
                message: "licence must be standard or group".into(),
            })?;
            let keys = ctx.keys()?;
            let created = ctx.store.write(move |tx| companies::create(tx, &name, licence, &keys, now)).await?;
            let mut value = serde_json::to_value(&created.company).map_err(RepoError::from)?;
            value["webhookSecret"] = json!(created.webhook_secret);
            Ok(output::print(ctx.json, &value))
        }
        Command::List => Ok(output::print(ctx.json, &json!({ "data": ctx.store.read(companies::list).await? }))),
        Command::Show { id } => Ok(output::print(ctx.json, &ctx.store.read(move |c| companies::get(c, &id)).await?)),
        Command::Set {
            id,
            ai,
            retention_days,
            yes,
            journey,
        } => {
            let journey = journey.update().await?;
            if ai.is_none() && retention_days.is_none() && journey.is_empty() {
                return Err(RepoError::Invalid {
                    field: "ai",
                    message: "give --ai, --retention-days or a journey setting (--display-name, --logo, --accent, --privacy-…)".into(),
                });
            }
            if let (Some(days), false) = (retention_days, yes) {
                confirm_retention(ctx, &id, days, now).await?;
            }
            let ai = ai.map(|a| a == "on");
            let company = ctx
                .store
                .write(move |tx| {
                    let company = companies::set(tx, &id, ai, retention_days)?;
                    if journey.is_empty() {
                        return Ok(company);
                    }
                    branding::set_journey(tx, &id, &journey)
                })
                .await?;
            Ok(output::print(ctx.json, &company))
        }
        Command::RotateSecret { id, test } => {
            let (company, keys) = (id.clone(), ctx.keys()?);
            let secret = ctx
                .store
                .write(move |tx| match test {
                    true => companies::rotate_test_secret(tx, &company, &keys, now),
                    false => companies::rotate_secret(tx, &company, &keys, now),
                })
                .await?;
            let mode = if test { Mode::Test } else { Mode::Live };
            Ok(output::print(
                ctx.json,
                &json!({ "id": id, "mode": mode, "webhookSecret": secret, "previousSecretValidHours": companies::ROTATION_OVERLAP_HOURS }),
            ))
        }
    }
}
