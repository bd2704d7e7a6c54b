//! Whether a key can be migrated, decided before anything of it is
//! written, with the rules of the store-to-store migration: a key of a
//! type redcodec does not model, or one the destination format cannot
//! hold, stops the migration unless `--skip-unrepresentable`; a key a
//! store holds in several types follows `--type-conflict`.

use super::remote::{RemoteKey, RemoteType};
use crate::error::{fail, MigrateError};
use crate::options::{MigrateOptions, OnUnrepresentable, TypeConflict};
use crate::report::Skipped;
use crate::represent::Unrepresentable;
use redcodec_codec::{Capabilities, Codec};
use redcodec_engine::internals::keyspace::migrated_expiry;
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::typed::KeySummary;
use redcodec_engine::CmdError;

/// What to do with one key.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Migrate it.
    Copy,
    /// Migrate the type commands see, and list it (`--type-conflict
    /// first`).
    CopyFirst(Skipped),
    /// Leave it out, and list it.
    Skip(Skipped),
    /// Stop before writing anything, naming it.
    Stop(Skipped),
}

/// Which keys a migration with a server copies: the rules of
/// [`MigrateOptions`].
#[derive(Copy, Clone, Debug)]
pub struct Rules {
    /// Leave out keys the destination cannot hold, listed (else stop).
    pub skip_unrepresentable: bool,
    /// Keys a store holds in several types.
    pub type_conflict: TypeConflict,
}

impl Rules {
    /// The strict rules of a verification: nothing is skipped, a key in
    /// several types is a conflict.
    pub const STRICT: Rules = Rules {
        skip_unrepresentable: false,
        type_conflict: TypeConflict::Fail,
    };

    /// The rules `options` set.
    pub fn of(options: &MigrateOptions) -> Rules {
        Rules {
            skip_unrepresentable: options.on_unrepresentable == OnUnrepresentable::Skip,
            type_conflict: options.type_conflict,
        }
    }

    fn unrepresentable(&self, skipped: Skipped) -> Verdict {
        if self.skip_unrepresentable {
            Verdict::Skip(skipped)
        } else {
            Verdict::Stop(skipped)
        }
    }

    /// A key of a store, met by a walk (its summary, or why its metadata
    /// does not decode), to be written to a server. A key whose metadata
    /// is unreadable for another reason than an unmodelled type is an
    /// error.
    pub fn source_key(
        &self,
        key: &[u8],
        entry: &Result<KeySummary, CmdError>,
    ) -> Result<Verdict, MigrateError> {
        let summary = match entry {
            Ok(summary) => summary,
            Err(CmdError::Unmodelled { type_name, .. }) => {
                return Ok(self.unrepresentable(Skipped {
                    key: key.to_vec(),
                    data_type: None,
                    reason: Unrepresentable::Unmodelled {
                        type_name: type_name.to_string(),
                    },
                }))
            }
            Err(e) => {
                return Err(fail(format!(
                    "source key {} is unreadable; nothing was written for it: {e}",
                    quote_bytes(key)
                )))
            }
        };
        if summary.shadowed.is_empty() {
            return Ok(Verdict::Copy);
        }
        let mut types = vec![summary.data_type];
        types.extend(summary.shadowed.iter().copied());
        let skipped = Skipped {
            key: key.to_vec(),
            data_type: Some(summary.data_type),
            reason: Unrepresentable::SeveralTypes { types },
        };
        Ok(match self.type_conflict {
            TypeConflict::Fail => Verdict::Stop(skipped),
            TypeConflict::Skip => Verdict::Skip(skipped),
            TypeConflict::First => Verdict::CopyFirst(skipped),
        })
    }

    /// A key of a server, to be written to another server: any type
    /// redcodec models can go.
    pub fn server_key(&self, key: &RemoteKey) -> Verdict {
        match &key.kind {
            RemoteType::Modelled(_) => Verdict::Copy,
            RemoteType::Other(name) => self.unrepresentable(Skipped {
                key: key.key.clone(),
                data_type: None,
                reason: Unrepresentable::Unmodelled {
                    type_name: name.clone(),
                },
            }),
        }
    }

    /// A key of a server, to be written to a store of a format with
    /// `caps`, encoded by `codec`.
    pub fn remote_key<C: Codec>(&self, key: &RemoteKey, caps: &Capabilities, codec: &C) -> Verdict {
        match cannot_hold(key, caps, codec) {
            None => Verdict::Copy,
            Some(reason) => self.unrepresentable(Skipped {
                key: key.key.clone(),
                data_type: key.data_type(),
                reason,
            }),
        }
    }
}

/// Why a store of a format with `caps` cannot hold the server's `key`, if
/// it cannot: the checks of the store-to-store migration.
pub fn cannot_hold<C: Codec>(
    key: &RemoteKey,
    caps: &Capabilities,
    codec: &C,
) -> Option<Unrepresentable> {
    let t = match &key.kind {
        RemoteType::Modelled(t) => *t,
        RemoteType::Other(name) => {
            return Some(Unrepresentable::Unmodelled {
                type_name: name.clone(),
            })
        }
    };
    if let Some(limit) = caps.collection_key_limit {
        if t.is_collection() && key.key.len() > limit {
            return Some(Unrepresentable::KeyTooLong {
                data_type: t,
                len: key.key.len(),
                limit,
            });
        }
    }
    if let Some(e) = key.expire {
        if migrated_expiry(caps, e.at_ms) > caps.max_expire_ms {
            return Some(Unrepresentable::ExpireTooLate {
                expire_ms: e.at_ms,
                max_ms: caps.max_expire_ms,
            });
        }
    }
    if let Err(e) = codec.meta_record(&key.key, t) {
        return Some(Unrepresentable::Refused(e.to_string()));
    }
    if let (Some((min, max)), Some((lowest, highest))) = (caps.score_limit, &key.score_range) {
        for (member, score) in [lowest, highest] {
            if !(min..=max).contains(score) {
                return Some(Unrepresentable::ScoreOutOfRange {
                    member: member.clone(),
                    score: *score,
                    min,
                    max,
                });
            }
        }
    }
    None
}
