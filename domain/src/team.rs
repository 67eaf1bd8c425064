//! The people of a client company in the portal (PORTAL.md, Who uses it): their roles, what each
//! role may do, and the rule that a company always keeps an owner. The server asks `Role::may`
//! on every portal route; the menus ask the same question, so they cannot disagree.

use crate::vocabulary::wire_enum;

wire_enum!(
    /// A member's role in their company; one per member.
    Role {
        Owner => "owner",
        Admin => "admin",
        Developer => "developer",
        Reviewer => "reviewer",
        Viewer => "viewer",
    }
);

/// What a member may attempt in the portal. Each portal route names the one it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// Dashboard, results without images, a member's own account (password, two-factor, sessions).
    ViewResults,
    /// A result's images (each view audited) and its certificate, which carries them.
    ViewImages,
    /// The review queue and its decisions.
    Review,
    /// Batches and their documents.
    ViewBatches,
    /// Cancelling a batch.
    CancelBatches,
    /// Workflows: rules and Diffusion (webhook URL, signing secret, test button, deliveries, replay).
    ManageWorkflows,
    /// API keys: list, create, revoke.
    ManageApiKeys,
    /// Invitations, roles and members.
    ManageTeam,
    /// Company settings: AI use, retention, two-factor requirement.
    ManageSettings,
    /// The audit log and its export.
    ViewAudit,
    /// Acts per month and their export.
    ViewUsage,
}

impl Permission {
    pub const ALL: &'static [Permission] = &[
        Permission::ViewResults,
        Permission::ViewImages,
        Permission::Review,
        Permission::ViewBatches,
        Permission::CancelBatches,
        Permission::ManageWorkflows,
        Permission::ManageApiKeys,
        Permission::ManageTeam,
        Permission::ManageSettings,
        Permission::ViewAudit,
        Permission::ViewUsage,
    ];
}

impl Role {
    /// The role matrix of PORTAL.md. Owners and admins differ only on other owners, which
    /// [`Role::may_assign`] and [`Role::may_manage`] decide.
    pub fn may(self, permission: Permission) -> bool {
        use Permission::*;
        match self {
            Role::Owner | Role::Admin => true,
            Role::Developer => matches!(
                permission,
                ViewResults | ViewBatches | CancelBatches | ManageWorkflows | ManageApiKeys
            ),
            Role::Reviewer => matches!(permission, ViewResults | ViewImages | Review),
            Role::Viewer => matches!(permission, ViewResults | ViewBatches | ViewUsage),
        }
    }

    /// Whether a member of this role may give `role` to someone (invite or change a role):
    /// only an owner makes owners.
    pub fn may_assign(self, role: Role) -> bool {
        self.may(Permission::ManageTeam) && (role != Role::Owner || self == Role::Owner)
    }

    /// Whether a member of this role may change or disable a member who holds `theirs`: an admin
    /// never removes or demotes an owner.
    pub fn may_manage(self, theirs: Role) -> bool {
        self.may(Permission::ManageTeam) && (theirs != Role::Owner || self == Role::Owner)
    }
}

/// A member's e-mail address, their sign-in name: trimmed, lowercased, one `@` between a local
/// part and a dotted domain, at most 254 characters, no spaces or control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Email(String);

/// A string that is not an e-mail address we accept.
#[derive(Debug, Clone, thiserror::Error)]
#[error("not a valid e-mail address")]
pub struct InvalidEmail;

impl Email {
    pub fn parse(s: &str) -> Result<Self, InvalidEmail> {
        let s = s.trim();
        if s.is_empty() || s.len() > 254 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(InvalidEmail);
        }
        let (local, domain) = s.rsplit_once('@').ok_or(InvalidEmail)?;
        let domain_ok = domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains("..")
            && domain.chars().all(|c| c.is_alphanumeric() || c == '.' || c == '-');
        if local.is_empty() || local.len() > 64 || local.contains('@') || !domain_ok {
            return Err(InvalidEmail);
        }
        Ok(Self(s.to_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Email {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for Email {
    type Err = InvalidEmail;
    fn from_str(s: &str) -> Result<Self, InvalidEmail> {
        Self::parse(s)
    }
}

wire_enum!(
    /// What an audit row records: every change made in the portal, every image viewed or
    /// downloaded (portal, API or operator export).
    AuditAction {
        ImageViewed => "image.view",
        ImageDownloaded => "image.download",
        ImageExported => "image.export",
        CertificateDownloaded => "certificate.download",
        ReviewSettled => "review.settle",
        ApiKeyCreated => "api_key.create",
        ApiKeyRevoked => "api_key.revoke",
        WorkflowCreated => "workflow.create",
        WorkflowUpdated => "workflow.update",
        WebhookUrlChanged => "workflow.webhook_url",
        WebhookTestSent => "workflow.webhook_test",
        SigningSecretRotated => "company.rotate_secret",
        TestSigningSecretRotated => "company.rotate_test_secret",
        EventReplayed => "webhook.replay",
        BatchCanceled => "batch.cancel",
        MemberInvited => "member.invite",
        InvitationRevoked => "member.invitation_revoke",
        InvitationAccepted => "member.invitation_accept",
        RoleChanged => "member.role",
        MemberDisabled => "member.disable",
        SettingsChanged => "company.settings",
        PasswordChanged => "member.password",
        TwoFactorEnabled => "member.two_factor_enable",
        TwoFactorDisabled => "member.two_factor_disable",
        SessionRevoked => "member.session_revoke",
        SignedIn => "member.sign_in",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_of_portal_md() {
        use Permission::*;
        let allowed = |role: Role| -> Vec<Permission> { Permission::ALL.iter().copied().filter(|p| role.may(*p)).collect() };
        assert_eq!(allowed(Role::Owner), Permission::ALL);
        assert_eq!(allowed(Role::Admin), Permission::ALL);
        assert_eq!(
            allowed(Role::Developer),
            [ViewResults, ViewBatches, CancelBatches, ManageWorkflows, ManageApiKeys]
        );
        assert_eq!(allowed(Role::Reviewer), [ViewResults, ViewImages, Review]);
        assert_eq!(allowed(Role::Viewer), [ViewResults, ViewBatches, ViewUsage]);
    }

    #[test]
    fn emails_are_lowercased_and_strict() {
        assert_eq!(
            Email::parse("  Alice.Martin@Example.FR ").unwrap().as_str(),
            "alice.martin@example.fr"
        );
        for bad in [
            "",
            "alice",
            "alice@",
            "@example.fr",
            "a b@example.fr",
            "alice@example",
            "alice@.fr",
            "a@b@c.fr",
            "alice@ex..fr",
        ] {
            assert!(Email::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_owners_make_or_unmake_owners() {
        assert!(Role::Owner.may_assign(Role::Owner) && Role::Owner.may_manage(Role::Owner));
        assert!(!Role::Admin.may_assign(Role::Owner) && !Role::Admin.may_manage(Role::Owner));
        assert!(Role::Admin.may_assign(Role::Admin) && Role::Admin.may_manage(Role::Developer));
        for role in [Role::Developer, Role::Reviewer, Role::Viewer] {
            assert!(Role::ALL.iter().all(|r| !role.may_assign(*r) && !role.may_manage(*r)));
        }
    }
}
