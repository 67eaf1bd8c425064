//! Operations on a company's team that the operator CLI and the portal share, so both do the same
//! thing: an invitation mints a single-use token, keeps only its hash, audits who invited, and
//! hands back the link (shown once, or e-mailed).

use crate::crypto::session_token::Token;
use crate::ids::CompanyId;
use crate::store::audit::{self, Acting};
use crate::store::members::{self, Member};
use crate::store::{invitations, RepoError};
use crate::team::{AuditAction, Email, Role};
use chrono::{DateTime, Utc};
use rusqlite::Connection;

/// A member just invited, and the link that lets them choose a password.
#[derive(Debug, Clone)]
pub struct Invited {
    pub member: Member,
    pub url: String,
    pub expires_at: DateTime<Utc>,
}

/// The path of an invitation link under the public base URL.
pub fn invitation_path(token: &Token) -> String {
    format!("/portal/invitations/{}", token.as_str())
}

/// Invites `email` to `company` with `role` (again, if they were invited before and have not
/// joined: the old link stops working).
pub fn invite(
    tx: &Connection,
    company: &CompanyId,
    email: &Email,
    role: Role,
    by: &Acting,
    public_base: &str,
    now: DateTime<Utc>,
) -> Result<Invited, RepoError> {
    let member = members::invite(tx, company, email, role, now)?;
    let token = Token::generate();
    let expires_at = invitations::create(tx, &member, &token.hash(), by.member(), now)?;
    let target = format!("{} ({})", member.email, role);
    audit::record(tx, company, &by.entry(AuditAction::MemberInvited, target, now))?;
    Ok(Invited {
        url: format!("{}{}", public_base.trim_end_matches('/'), invitation_path(&token)),
        member,
        expires_at,
    })
}

/// The associated data binding a member's sealed TOTP secret to them.
fn totp_context(member: &crate::ids::MemberId) -> String {
    format!("member={member};totp")
}

/// A member's TOTP secret as the database keeps it: sealed with the master key, bound to them.
pub fn seal_totp(
    keys: &crate::crypto::envelope::MasterKeys,
    member: &crate::ids::MemberId,
    secret: &crate::crypto::totp::TotpSecret,
) -> Vec<u8> {
    keys.seal(&totp_context(member), secret.as_bytes())
}

/// Opens what [`seal_totp`] sealed; `None` when it is not this member's or was altered.
pub fn open_totp(
    keys: &crate::crypto::envelope::MasterKeys,
    member: &crate::ids::MemberId,
    sealed: &[u8],
) -> Option<crate::crypto::totp::TotpSecret> {
    let bytes = keys.open(&totp_context(member), sealed).ok()?;
    crate::crypto::totp::TotpSecret::from_bytes(&bytes).ok()
}

/// Whether `code` is the member's second factor, spending it: a TOTP code of a step not used yet
/// (recorded as used), or one of their unused recovery codes (removed). In the caller's
/// transaction, so that two requests with one code get one yes.
pub fn spend_second_factor(
    tx: &Connection,
    keys: &crate::crypto::envelope::MasterKeys,
    member: &crate::ids::MemberId,
    code: &str,
    now: DateTime<Utc>,
) -> Result<bool, RepoError> {
    let credentials = members::credentials_of(tx, member)?;
    let secret = credentials.totp_secret_sealed.as_deref().and_then(|s| open_totp(keys, member, s));
    let by_totp = match secret.and_then(|s| crate::crypto::totp::verify(&s, code, now, credentials.totp_last_step)) {
        Some(step) => members::use_totp_step(tx, member, step)?,
        None => false,
    };
    if by_totp {
        return Ok(true);
    }
    let recovery = crate::crypto::recovery_codes::RecoveryKeys::of(keys);
    members::use_recovery_code(tx, member, &crate::crypto::recovery_codes::candidates(&recovery, code))
}
