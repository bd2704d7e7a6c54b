//! Sorted-set commands.
//!
//! Every member has two records: a member record (member → exact score)
//! and a score-index record ((score, member) → nothing). Point reads use
//! the member records; everything ordered goes through
//! [`order::walk`](crate::types::zset::order::walk), which yields
//! members in Redis order with exact scores whatever the format's score
//! index keeps. Every score written goes through
//! [`put_member`](crate::types::zset::write::put_member), which
//! applies the format's score limit.

mod common;
pub(super) mod geo;
pub(super) mod geo_search;
pub(super) mod members;
pub(super) mod range;
pub(super) mod remove;
pub(super) mod setops;

#[cfg(test)]
mod nemo_tests;
#[cfg(test)]
mod zset_tests;
