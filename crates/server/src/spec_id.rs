//! A command's place in the registry's table (a leaf): a session keeps
//! each command MULTI queued as its [`SpecId`], resolved in O(1) at EXEC
//! without looking its name up again.

/// The index of a command's spec in the registry's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecId(pub(crate) u32);
