//! [`CommandEvent`]: what one command did, as the observer of commands
//! ([`crate::observe`]) is told. A leaf: the engine's core holds the
//! observer, and [`crate::observe`] installs it, without naming each other
//! both ways.

use crate::reply::Reply;

/// What one command did.
pub struct CommandEvent<'a> {
    /// The command as run, name first. The active expiry reports each key
    /// it deletes as `DEL key`.
    pub args: &'a [&'a [u8]],
    /// Its reply (errors included).
    pub reply: &'a Reply,
    /// Keys it names but left unchanged although it may write (see
    /// [`crate::Engine::execute_noting_unchanged`]).
    pub unchanged: &'a [Vec<u8>],
    /// Keys it met whose metadata had expired (still stored, invisible),
    /// in the order met: a replica may still hold them.
    pub expired: &'a [Vec<u8>],
}
