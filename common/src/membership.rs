//! Operations on a company's team that the operator CLI and the portal share, so both do the same
//! thing: an invitation mints a single-use token, keeps only its hash, audits who invited, and
//! hands back the link (shown once, or e-mailed); disabling a member may revoke the API keys they
//! made, and a new role takes from their keys the scopes it lacks, the audit log naming the keys.
//! Also the sealing of a member's TOTP secret, at rest and while it is being enrolled, and the
//! check of a second factor that spends it.

use crate::crypto::session_token::Token;
use crate::store::audit::{self, Acting};
use crate::store::members::{self, Member, MemberState};
use crate::store::{api_keys, invitations, RepoError};
use chrono::{DateTime, Duration, Utc};
use domain::ids::{CompanyId, MemberId};
use domain::team::{AuditAction, Email, Role};
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

/// A member disabled (or an invitation revoked), and the keys revoked with them.
#[derive(Debug, Clone)]
pub struct Disabled {
    /// As they were left: disabled, or the invitation as it was before its removal.
    pub member: Member,
    /// The prefixes of the API keys revoked with them (none for an invitation).
    pub revoked_keys: Vec<String>,
}

/// Disables a member, or revokes an invitation, and with `revoke_keys` revokes every live API key
/// the member created (live and test): a key must not outlive its maker by oversight. Audited as
/// `member.disable` (`member.invitation_revoke`) naming the keys revoked, or those kept, plus one
/// `api_key.revoke` per key.
pub fn disable(
    tx: &Connection,
    company: &CompanyId,
    id: &MemberId,
    revoke_keys: bool,
    by: &Acting,
    now: DateTime<Utc>,
) -> Result<Disabled, RepoError> {
    let member = members::disable(tx, company, id, now)?;
    let invited = member.state == MemberState::Invited;
    let (revoked_keys, kept) = match (invited, revoke_keys) {
        (true, _) => (Vec::new(), Vec::new()),
        (false, true) => (api_keys::revoke_created_by(tx, company, id, now)?, Vec::new()),
        (false, false) => (Vec::new(), api_keys::live_created_by(tx, company, id)?),
    };
    for prefix in &revoked_keys {
        audit::record(tx, company, &by.entry(AuditAction::ApiKeyRevoked, prefix.as_str(), now))?;
    }
    let (action, target) = if invited {
        (AuditAction::InvitationRevoked, member.email.to_string())
    } else if !revoked_keys.is_empty() {
        (
            AuditAction::MemberDisabled,
            format!("{} (API keys revoked: {})", member.email, revoked_keys.join(", ")),
        )
    } else if !kept.is_empty() {
        (
            AuditAction::MemberDisabled,
            format!("{} (API keys kept: {})", member.email, kept.join(", ")),
        )
    } else {
        (AuditAction::MemberDisabled, member.email.to_string())
    };
    audit::record(tx, company, &by.entry(action, target, now))?;
    Ok(Disabled { member, revoked_keys })
}

/// Gives a member a new role (their sessions end) and takes from the live keys they created the
/// scopes the new role may not give: a developer's keys never reach images, whoever they were
/// when they made them. A promotion widens no key. Audited as `member.role`, naming the keys
/// narrowed.
pub fn change_role(
    tx: &Connection,
    company: &CompanyId,
    id: &MemberId,
    role: Role,
    by: &Acting,
    now: DateTime<Utc>,
) -> Result<Member, RepoError> {
    let before = members::get(tx, company, id)?;
    let member = members::set_role(tx, company, id, role)?;
    let narrowed = api_keys::narrow_created_by(tx, company, id, role.key_scopes())?;
    let mut target = format!("{} ({} → {})", member.email, before.role, role);
    if !narrowed.is_empty() {
        target.push_str(&format!(" (API keys without images: {})", narrowed.join(", ")));
    }
    audit::record(tx, company, &by.entry(AuditAction::RoleChanged, target, now))?;
    Ok(member)
}

/// The associated data binding a member's sealed TOTP secret to them.
fn totp_context(member: &domain::ids::MemberId) -> String {
    format!("member={member};totp")
}

/// A member's TOTP secret as the database keeps it: sealed with the master key, bound to them.
pub fn seal_totp(
    keys: &crate::crypto::envelope::MasterKeys,
    member: &domain::ids::MemberId,
    secret: &crate::crypto::totp::TotpSecret,
) -> Vec<u8> {
    keys.seal(&totp_context(member), secret.as_bytes())
}

/// Opens what [`seal_totp`] sealed; `None` when it is not this member's or was altered.
pub fn open_totp(
    keys: &crate::crypto::envelope::MasterKeys,
    member: &domain::ids::MemberId,
    sealed: &[u8],
) -> Option<crate::crypto::totp::TotpSecret> {
    let bytes = keys.open(&totp_context(member), sealed).ok()?;
    crate::crypto::totp::TotpSecret::from_bytes(&bytes).ok()
}

/// How long the secret an enrolment page shows can be confirmed: time to find the phone and scan,
/// not long enough for a form left open (or copied from a session) to replace a factor later.
pub const ENROLMENT_VALIDITY: Duration = Duration::minutes(10);
/// Leeway for an issue time ahead of the clock (another gateway's clock a little ahead).
const ENROLMENT_CLOCK_SKEW: Duration = Duration::minutes(1);

/// Why a sealed enrolment was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnrolmentRefused {
    /// Issued more than [`ENROLMENT_VALIDITY`] ago.
    Expired,
    /// Not sealed for this member's enrolment, or altered.
    Invalid,
}

/// The associated data of a secret being enrolled: its own, so that neither a stored secret nor
/// another member's enrolment passes for one.
fn enrolment_context(member: &domain::ids::MemberId) -> String {
    format!("member={member};totp-enrolment")
}

/// The secret an enrolment page shows, sealed for its form with its issue time (seconds since the
/// epoch, 8 bytes big-endian, then the secret), bound to the member.
pub fn seal_enrolment(
    keys: &crate::crypto::envelope::MasterKeys,
    member: &domain::ids::MemberId,
    secret: &crate::crypto::totp::TotpSecret,
    now: DateTime<Utc>,
) -> Vec<u8> {
    let mut plain = now.timestamp().to_be_bytes().to_vec();
    plain.extend_from_slice(secret.as_bytes());
    keys.seal(&enrolment_context(member), &plain)
}

/// Opens what [`seal_enrolment`] sealed, if this member's and issued less than
/// [`ENROLMENT_VALIDITY`] before `now`.
pub fn open_enrolment(
    keys: &crate::crypto::envelope::MasterKeys,
    member: &domain::ids::MemberId,
    sealed: &[u8],
    now: DateTime<Utc>,
) -> Result<crate::crypto::totp::TotpSecret, EnrolmentRefused> {
    let plain = keys
        .open(&enrolment_context(member), sealed)
        .map_err(|_| EnrolmentRefused::Invalid)?;
    let (issued, secret) = plain.split_at_checked(8).ok_or(EnrolmentRefused::Invalid)?;
    let issued = i64::from_be_bytes(issued.try_into().map_err(|_| EnrolmentRefused::Invalid)?);
    let issued = DateTime::<Utc>::from_timestamp(issued, 0).ok_or(EnrolmentRefused::Invalid)?;
    if issued > now + ENROLMENT_CLOCK_SKEW || now - issued > ENROLMENT_VALIDITY {
        return Err(EnrolmentRefused::Expired);
    }
    crate::crypto::totp::TotpSecret::from_bytes(secret).map_err(|_| EnrolmentRefused::Invalid)
}

/// Whether `code` is the member's second factor, spending it: a TOTP code of a step not used yet
/// (recorded as used), or one of their unused recovery codes (removed). In the caller's
/// transaction, so that two requests with one code get one yes.
pub fn spend_second_factor(
    tx: &Connection,
    keys: &crate::crypto::envelope::MasterKeys,
    member: &domain::ids::MemberId,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::envelope::MasterKeys;
    use crate::crypto::totp::TotpSecret;
    use crate::store::api_keys::KeySpec;
    use crate::store::test_support::{company, memory};
    use domain::ids::MemberId;
    use domain::key_scopes::KeyScopes;
    use domain::vocabulary::Mode;

    #[test]
    fn an_enrolment_opens_for_its_member_for_ten_minutes() {
        let keys = MasterKeys::ephemeral();
        let now = Utc::now();
        let (member, other) = (MemberId::generate(now), MemberId::generate(now));
        let secret = TotpSecret::generate();
        let sealed = seal_enrolment(&keys, &member, &secret, now);
        assert_eq!(open_enrolment(&keys, &member, &sealed, now), Ok(secret.clone()));
        assert_eq!(
            open_enrolment(&keys, &member, &sealed, now + Duration::minutes(9)),
            Ok(secret.clone())
        );
        assert_eq!(
            open_enrolment(&keys, &member, &sealed, now + Duration::minutes(11)),
            Err(EnrolmentRefused::Expired)
        );
        assert_eq!(
            open_enrolment(&keys, &member, &sealed, now - Duration::minutes(5)),
            Err(EnrolmentRefused::Expired),
            "issued in the future"
        );
        assert_eq!(open_enrolment(&keys, &other, &sealed, now), Err(EnrolmentRefused::Invalid));
        let stored = seal_totp(&keys, &member, &secret);
        assert_eq!(
            open_enrolment(&keys, &member, &stored, now),
            Err(EnrolmentRefused::Invalid),
            "a stored secret is no enrolment"
        );
        let mut altered = sealed.clone();
        let last = altered.len() - 1;
        altered[last] ^= 1;
        assert_eq!(open_enrolment(&keys, &member, &altered, now), Err(EnrolmentRefused::Invalid));
    }

    fn active(tx: &Connection, company: &CompanyId, email: &str, role: Role) -> MemberId {
        let m = members::invite(tx, company, &Email::parse(email).unwrap(), role, Utc::now()).unwrap();
        members::set_password(tx, &m.id, "$argon2id$fake").unwrap();
        m.id
    }

    fn key(tx: &Connection, company: &CompanyId, by: &MemberId, scopes: KeyScopes) -> String {
        let spec = KeySpec {
            read_only: false,
            mode: Mode::Live,
            scopes,
        };
        api_keys::create(tx, company, spec, Some(by), Utc::now()).unwrap().prefix
    }

    fn audit_rows(tx: &Connection, company: &CompanyId) -> Vec<(AuditAction, String)> {
        audit::list(tx, company, &audit::Filter::default(), 100)
            .unwrap()
            .into_iter()
            .map(|(_, e)| (e.action, e.target))
            .collect()
    }

    #[test]
    fn disabling_a_member_revokes_their_keys_when_asked_and_the_audit_log_names_them() {
        let conn = memory();
        let co = company(&conn);
        let _owner = active(&conn, &co, "owner@example.fr", Role::Owner);
        let dev = active(&conn, &co, "dev@example.fr", Role::Developer);
        let admin = active(&conn, &co, "admin@example.fr", Role::Admin);
        let dev_key = key(&conn, &co, &dev, KeyScopes::NONE);
        let admin_key = key(&conn, &co, &admin, KeyScopes::all());

        let done = disable(&conn, &co, &dev, true, &Acting::operator(), Utc::now()).unwrap();
        assert_eq!(done.revoked_keys, std::slice::from_ref(&dev_key));
        assert_eq!(done.member.state, MemberState::Disabled);
        let rows = audit_rows(&conn, &co);
        assert!(rows.contains(&(AuditAction::ApiKeyRevoked, dev_key.clone())), "{rows:?}");
        let target = format!("dev@example.fr (API keys revoked: {dev_key})");
        assert!(rows.contains(&(AuditAction::MemberDisabled, target)), "{rows:?}");

        let kept = disable(&conn, &co, &admin, false, &Acting::operator(), Utc::now()).unwrap();
        assert!(kept.revoked_keys.is_empty());
        assert_eq!(
            api_keys::live_created_by(&conn, &co, &admin).unwrap(),
            std::slice::from_ref(&admin_key)
        );
        let target = format!("admin@example.fr (API keys kept: {admin_key})");
        assert!(audit_rows(&conn, &co).contains(&(AuditAction::MemberDisabled, target)));
    }

    #[test]
    fn a_demoted_members_keys_lose_the_scopes_of_their_old_role() {
        let conn = memory();
        let co = company(&conn);
        let _owner = active(&conn, &co, "owner@example.fr", Role::Owner);
        let admin = active(&conn, &co, "admin@example.fr", Role::Admin);
        let prefix = key(&conn, &co, &admin, KeyScopes::all());
        change_role(&conn, &co, &admin, Role::Developer, &Acting::operator(), Utc::now()).unwrap();
        let listed = api_keys::list(&conn, &co).unwrap();
        assert_eq!(listed[0].scopes, KeyScopes::NONE);
        let target = format!("admin@example.fr (admin → developer) (API keys without images: {prefix})");
        assert!(audit_rows(&conn, &co).contains(&(AuditAction::RoleChanged, target)));
        change_role(&conn, &co, &admin, Role::Admin, &Acting::operator(), Utc::now()).unwrap();
        assert_eq!(
            api_keys::list(&conn, &co).unwrap()[0].scopes,
            KeyScopes::NONE,
            "a promotion widens no key"
        );
    }
}
