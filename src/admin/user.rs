//! `sceau admin user invite|list|disable`: the members of a company's portal team. The operator
//! invites a company's first owner; the company runs its own team from the portal after that.
//! Disabling a member revokes the API keys they made unless `--keep-keys` says otherwise: the
//! operator disables someone who left, and their keys must not outlive them by oversight.

use super::{id_arg, Ctx};
use crate::output;
use common::mail::Mailer;
use common::membership;
use common::store::audit::Acting;
use common::store::members::{self, Member, MemberState};
use common::store::{companies, settings, RepoError};
use domain::ids::{CompanyId, MemberId};
use domain::team::{Email, Role};
use serde_json::{json, Value};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Invite someone to a company's portal; prints the invitation link (valid 7 days, single use).
    Invite {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: CompanyId,
        #[arg(long, value_parser = parse_email)]
        email: Email,
        /// owner, admin, developer, reviewer or viewer.
        #[arg(long, value_parser = parse_role)]
        role: Role,
    },
    /// The company's members, invited ones included.
    List {
        #[arg(long, value_parser = id_arg::<CompanyId>)]
        company: CompanyId,
    },
    /// Disable a member: their sessions end, they can no longer sign in, and the API keys they
    /// created are revoked (audited).
    Disable {
        #[arg(value_parser = id_arg::<MemberId>)]
        id: MemberId,
        /// Leave the API keys the member created working (the audit log names them).
        #[arg(long)]
        keep_keys: bool,
    },
}

fn parse_email(s: &str) -> Result<Email, String> {
    Email::parse(s).map_err(|_| format!("`{s}` is not a valid e-mail address"))
}

fn parse_role(s: &str) -> Result<Role, String> {
    s.parse()
        .map_err(|_| format!("`{s}` is not a role: owner, admin, developer, reviewer or viewer"))
}

fn describe(m: &Member) -> Value {
    let state = match m.state {
        MemberState::Invited => "invited",
        MemberState::Active => "active",
        MemberState::Disabled => "disabled",
    };
    json!({
        "id": m.id, "email": m.email.as_str(), "role": m.role, "state": state,
        "twoFactor": m.two_factor, "createdAt": domain::time::format(m.created_at),
    })
}

pub async fn run(ctx: &Ctx, args: Args) -> Result<ExitCode, RepoError> {
    let now = chrono::Utc::now();
    match args.command {
        Command::Invite { company, email, role } => {
            let configured = ctx.config.public_url.clone();
            let listen = ctx.config.listen;
            let invited = ctx
                .store
                .write(move |tx| {
                    // The configured public URL, else the one the gateway last started with.
                    let base = match configured {
                        Some(url) => url,
                        None => settings::get(tx, settings::PUBLIC_BASE)?.unwrap_or_else(|| format!("http://{listen}")),
                    };
                    membership::invite(tx, &company, &email, role, &Acting::operator(), &base, now)
                })
                .await?;
            let mailed = mail_invitation(ctx, &invited).await?;
            Ok(output::print(
                ctx.json,
                &json!({
                    "id": invited.member.id, "email": invited.member.email.as_str(), "role": invited.member.role,
                    "inviteUrl": invited.url, "expiresAt": domain::time::format(invited.expires_at), "mailed": mailed,
                }),
            ))
        }
        Command::List { company } => {
            let list = ctx.store.read(move |c| members::list(c, &company)).await?;
            Ok(output::print(
                ctx.json,
                &json!({ "data": list.iter().map(describe).collect::<Vec<_>>() }),
            ))
        }
        Command::Disable { id, keep_keys } => {
            let done = ctx
                .store
                .write(move |tx| {
                    let company = members::get_any(tx, &id)?.company_id;
                    membership::disable(tx, &company, &id, !keep_keys, &Acting::operator(), now)
                })
                .await?;
            let mut shown = describe(&done.member);
            shown["revokedKeys"] = json!(done.revoked_keys);
            Ok(output::print(ctx.json, &shown))
        }
    }
}

/// E-mails the invitation when `SCEAU_SMTP_URL` is set; whether it was sent.
async fn mail_invitation(ctx: &Ctx, invited: &membership::Invited) -> Result<bool, RepoError> {
    let refused = |e: common::mail::MailError| RepoError::Refused(e.to_string());
    let Some(mailer) = Mailer::from_config(&ctx.config).map_err(refused)? else {
        return Ok(false);
    };
    let company = invited.member.company_id.clone();
    let name = ctx.store.read(move |c| companies::get(c, &company)).await?.name;
    mailer.send_invitation(invited, &name).await.map_err(refused)?;
    Ok(true)
}
