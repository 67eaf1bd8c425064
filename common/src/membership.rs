//! Operations on a company's team that the operator CLI and the portal share, so both do the same
//! thing: an invitation mints a single-use token, keeps only its hash, audits who invited, and
//! hands back the link (shown once, or e-mailed). Also the sealing of a member's TOTP secret, at
//! rest and while it is being enrolled, and the check of a second factor that spends it.

use crate::crypto::session_token::Token;
use crate::ids::CompanyId;
use crate::store::audit::{self, Acting};
use crate::store::members::{self, Member};
use crate::store::{invitations, RepoError};
use crate::team::{AuditAction, Email, Role};
use chrono::{DateTime, Duration, Utc};
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
fn enrolment_context(member: &crate::ids::MemberId) -> String {
    format!("member={member};totp-enrolment")
}

/// The secret an enrolment page shows, sealed for its form with its issue time (seconds since the
/// epoch, 8 bytes big-endian, then the secret), bound to the member.
pub fn seal_enrolment(
    keys: &crate::crypto::envelope::MasterKeys,
    member: &crate::ids::MemberId,
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
    member: &crate::ids::MemberId,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::envelope::MasterKeys;
    use crate::crypto::totp::TotpSecret;
    use crate::ids::MemberId;

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
}
