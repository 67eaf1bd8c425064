//! What an API key may reach beyond results, batches and deposits, which every key reaches: its
//! scopes. A key never holds a scope its creator's role lacks (PORTAL.md, Who uses it), so the
//! API keeps the portal's role matrix: a developer's key reads results, never their images.

use crate::team::{Permission, Role};
use crate::vocabulary::{wire_enum, UnknownValue};

wire_enum!(
    /// A scope an API key may hold.
    Scope {
        /// The identity images of a result and its certificate, which carries them.
        Images => "images",
    }
);

impl Scope {
    /// The portal permission a member needs to give a key this scope.
    pub fn permission(self) -> Permission {
        match self {
            Scope::Images => Permission::ViewImages,
        }
    }

    fn bit(self) -> u8 {
        match self {
            Scope::Images => 1,
        }
    }
}

/// The scopes of one key: a small set, stored as their wire names separated by spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KeyScopes(u8);

impl KeyScopes {
    /// No scope: results, batches and deposits only.
    pub const NONE: KeyScopes = KeyScopes(0);

    /// Every scope there is: what the operator's keys hold unless told otherwise.
    pub fn all() -> Self {
        Self::of(Scope::ALL)
    }

    pub fn of(scopes: &[Scope]) -> Self {
        KeyScopes(scopes.iter().fold(0, |bits, s| bits | s.bit()))
    }

    pub fn has(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    /// Whether every scope of `self` is also in `other`.
    pub fn within(self, other: KeyScopes) -> bool {
        self.0 & !other.0 == 0
    }

    /// The scopes of both.
    pub fn and(self, other: KeyScopes) -> Self {
        KeyScopes(self.0 & other.0)
    }

    /// The scopes held, in declaration order.
    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.iter().copied().filter(move |s| self.has(*s))
    }

    /// The stored form: wire names separated by a space, empty for none.
    pub fn stored(self) -> String {
        self.iter().map(Scope::as_str).collect::<Vec<_>>().join(" ")
    }

    /// Reads the stored form; an unknown name is an error, never silently dropped.
    pub fn parse(s: &str) -> Result<Self, UnknownValue> {
        let scopes = s.split_whitespace().map(str::parse).collect::<Result<Vec<Scope>, _>>()?;
        Ok(Self::of(&scopes))
    }
}

impl serde::Serialize for KeyScopes {
    /// A JSON list of wire names (`["images"]`, `[]`), as the CLI prints a key.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl Role {
    /// The scopes a member of this role may give a key they create: those whose permission the
    /// role holds. Owners and admins give `images`; developers (results without images) do not.
    pub fn key_scopes(self) -> KeyScopes {
        let granted: Vec<Scope> = Scope::ALL.iter().copied().filter(|s| self.may(s.permission())).collect();
        KeyScopes::of(&granted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_roles_that_see_images_give_them_to_a_key() {
        let images = KeyScopes::of(&[Scope::Images]);
        for role in [Role::Owner, Role::Admin, Role::Reviewer] {
            assert_eq!(role.key_scopes(), images, "{role}");
        }
        for role in [Role::Developer, Role::Viewer] {
            assert_eq!(role.key_scopes(), KeyScopes::NONE, "{role}");
            assert!(!images.within(role.key_scopes()), "{role}");
        }
        assert!(KeyScopes::NONE.within(Role::Developer.key_scopes()));
        assert_eq!(images.and(KeyScopes::NONE), KeyScopes::NONE);
    }

    #[test]
    fn the_stored_form_reads_back_and_refuses_unknown_names() {
        for scopes in [KeyScopes::NONE, KeyScopes::all()] {
            assert_eq!(KeyScopes::parse(&scopes.stored()).unwrap(), scopes);
        }
        assert_eq!(KeyScopes::all().stored(), "images");
        assert_eq!(KeyScopes::parse(" images  ").unwrap(), KeyScopes::all());
        assert!(KeyScopes::parse("images admin").is_err());
        assert_eq!(serde_json::to_string(&KeyScopes::all()).unwrap(), r#"["images"]"#);
        assert_eq!(serde_json::to_string(&KeyScopes::NONE).unwrap(), "[]");
    }
}
