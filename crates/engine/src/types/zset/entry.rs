//! [`Entry`]: one member of a sorted set with its exact score, what
//! ranges bound and walks yield.

/// A sorted-set member with its exact score.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    /// The member.
    pub(crate) member: Vec<u8>,
    /// Its exact score.
    pub(crate) score: f64,
}

/// The entry of `member` (as UTF-8) with `score`: the shorthand of the
/// tests of ranges and walks.
#[cfg(test)]
pub(crate) fn entry(member: &str, score: f64) -> Entry {
    Entry {
        member: member.as_bytes().to_vec(),
        score,
    }
}
