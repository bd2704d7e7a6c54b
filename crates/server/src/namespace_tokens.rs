//! Kvrocks' namespace tokens at run time: the ones the server started
//! with (`namespace.NAME TOKEN` in the configuration file,
//! `--namespace-token`), as `NAMESPACE ADD|SET|DEL`
//! ([`crate::commands::namespace`]) changed them. `AUTH token` selects
//! the token's namespace.

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The prefix of a namespace's line in a configuration file.
pub const CONFIG_PREFIX: &str = "namespace.";

/// The tokens, `(namespace, token)`, in the order they were added.
#[derive(Debug, Default)]
pub struct NamespaceTokens {
    tokens: RwLock<Vec<(String, String)>>,
}

impl NamespaceTokens {
    /// The tokens the server starts with.
    pub fn new(tokens: Vec<(String, String)>) -> NamespaceTokens {
        NamespaceTokens {
            tokens: RwLock::new(tokens),
        }
    }

    /// The namespace whose token is `token`.
    pub fn namespace_of(&self, token: &[u8]) -> Option<String> {
        self.tokens
            .read()
            .iter()
            .find(|(_, t)| t.as_bytes() == token)
            .map(|(ns, _)| ns.clone())
    }

    /// The token of `namespace`.
    pub fn token_of(&self, namespace: &[u8]) -> Option<String> {
        self.tokens
            .read()
            .iter()
            .find(|(ns, _)| ns.as_bytes() == namespace)
            .map(|(_, t)| t.clone())
    }

    /// Whether no namespace has a token.
    pub fn is_empty(&self) -> bool {
        self.tokens.read().is_empty()
    }

    /// Every `(namespace, token)`, in the order of the tokens (Kvrocks
    /// keeps them in a map keyed by token, and lists them so).
    pub fn list(&self) -> Vec<(String, String)> {
        let mut tokens = self.tokens.read().clone();
        tokens.sort_by(|a, b| a.1.cmp(&b.1));
        tokens
    }

    /// The tokens, locked against changes while the caller writes them
    /// out (CONFIG REWRITE).
    pub fn locked(&self) -> RwLockReadGuard<'_, Vec<(String, String)>> {
        self.tokens.read()
    }

    /// The tokens, locked for a change (NAMESPACE): no other change, nor
    /// a CONFIG REWRITE, runs until the guard drops.
    pub fn changing(&self) -> RwLockWriteGuard<'_, Vec<(String, String)>> {
        self.tokens.write()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_find_their_namespaces() {
        let tokens = NamespaceTokens::new(vec![
            ("ns1".into(), "t1".into()),
            ("ns0".into(), "t0".into()),
        ]);
        assert_eq!(
            tokens.list(),
            [("ns0".into(), "t0".into()), ("ns1".into(), "t1".into())]
        );
        assert_eq!(tokens.namespace_of(b"t1").as_deref(), Some("ns1"));
        assert_eq!(tokens.token_of(b"ns1").as_deref(), Some("t1"));
        assert_eq!(tokens.namespace_of(b"ns1"), None);
        assert!(!tokens.is_empty());
        assert!(NamespaceTokens::default().is_empty());
    }
}
