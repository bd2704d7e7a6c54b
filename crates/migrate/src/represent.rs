//! Whether the destination format can hold a key, judged from its declared
//! [`Capabilities`]: key length, latest expiry, score range. A key that
//! fails is never half-written: the check runs before any of its records
//! is queued.

use std::fmt;

use redcodec_codec::{Capabilities, Codec, DataType, Meta, SubId, SubKind, SubValue};

use crate::options::TypeConflict;
use redcodec_engine::error::CmdResult;
use redcodec_engine::internals::keyspace::{corrupt, iso_utc, migrated_expiry, Ctx};
use redcodec_engine::internals::number::format_score;

/// Why the destination cannot hold a key.
#[derive(Clone, Debug, PartialEq)]
pub enum Unrepresentable {
    /// The key is longer than the format allows for its type.
    KeyTooLong {
        /// The key's type.
        data_type: DataType,
        /// Its length in bytes.
        len: usize,
        /// The format's limit in bytes.
        limit: usize,
    },
    /// The absolute expiry, at the format's resolution, is past the latest
    /// one the format stores.
    ExpireTooLate {
        /// The source's expiry, unix ms.
        expire_ms: u64,
        /// The latest expiry the format stores, unix ms.
        max_ms: u64,
    },
    /// A sorted-set score outside the format's range.
    ScoreOutOfRange {
        /// The first member found with such a score.
        member: Vec<u8>,
        /// Its score.
        score: f64,
        /// The smallest storable score.
        min: f64,
        /// The largest storable score.
        max: f64,
    },
    /// The format's encoder refused the key (its message).
    Refused(String),
    /// The source holds the key in a type redcodec does not model (a
    /// Kvrocks bitmap, stream, JSON value, …).
    Unmodelled {
        /// The real system's name of the type.
        type_name: String,
    },
    /// The source holds the key in several types at once (Pika's
    /// blackwidow and nemo allow it); [`super::TypeConflict`] decides.
    SeveralTypes {
        /// Its live types, the one commands see first.
        types: Vec<DataType>,
    },
}

impl fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unrepresentable::KeyTooLong {
                data_type,
                len,
                limit,
            } => write!(
                f,
                "the {} key is {len} bytes long; the format's limit for such keys is {limit} bytes",
                data_type.redis_name()
            ),
            Unrepresentable::ExpireTooLate { expire_ms, max_ms } => write!(
                f,
                "its expiry {} ({expire_ms} ms) is past the latest the format stores, {} ({max_ms} ms)",
                iso_utc(*expire_ms),
                iso_utc(*max_ms)
            ),
            Unrepresentable::ScoreOutOfRange {
                member,
                score,
                min,
                max,
            } => write!(
                f,
                "member {} has score {}, outside the format's range [{}, {}]",
                redcodec_engine::reply::quote_bytes(member),
                format_score(*score),
                format_score(*min),
                format_score(*max)
            ),
            Unrepresentable::Refused(message) => write!(f, "the format refuses it: {message}"),
            Unrepresentable::Unmodelled { type_name } => {
                write!(f, "it holds a {type_name}, a type redcodec does not model")
            }
            Unrepresentable::SeveralTypes { types } => {
                let names: Vec<&str> = types.iter().map(|t| t.redis_name()).collect();
                write!(
                    f,
                    "the source holds it in several types ({}); --type-conflict first migrates the {}, skip leaves it out",
                    names.join(", "),
                    names.first().copied().unwrap_or("first")
                )
            }
        }
    }
}

/// What can be told from the key and its metadata alone: key length and
/// expiry against the declared capabilities, then whether the format's
/// encoder accepts the key for its type.
pub(crate) fn check_key<C: Codec>(codec: &C, key: &[u8], meta: &Meta) -> Option<Unrepresentable> {
    let found = check_caps(codec.capabilities(), key, meta);
    if found.is_some() {
        return found;
    }
    codec
        .meta_record(key, meta.data_type)
        .err()
        .map(|e| Unrepresentable::Refused(e.to_string()))
}

/// Key length and expiry against the declared capabilities.
fn check_caps(caps: &Capabilities, key: &[u8], meta: &Meta) -> Option<Unrepresentable> {
    if let Some(limit) = caps.collection_key_limit {
        if meta.data_type.is_collection() && key.len() > limit {
            return Some(Unrepresentable::KeyTooLong {
                data_type: meta.data_type,
                len: key.len(),
                limit,
            });
        }
    }
    if meta.expire_ms != 0 && migrated_expiry(caps, meta.expire_ms) > caps.max_expire_ms {
        return Some(Unrepresentable::ExpireTooLate {
            expire_ms: meta.expire_ms,
            max_ms: caps.max_expire_ms,
        });
    }
    None
}

/// Every check, scores included: a sorted set is read through (its member
/// records, streamed) when the destination limits scores.
pub(crate) fn check<A: Codec, B: Codec>(
    source: &Ctx<'_, A>,
    destination: &B,
    key: &[u8],
    meta: &Meta,
    conflicts: TypeConflict,
) -> CmdResult<Option<Unrepresentable>> {
    if conflicts != TypeConflict::First {
        let shadowed = source.shadowed_types(key);
        if !shadowed.is_empty() {
            let mut types = vec![meta.data_type];
            types.extend(shadowed);
            return Ok(Some(Unrepresentable::SeveralTypes { types }));
        }
    }
    if let Some(found) = check_key(destination, key, meta) {
        return Ok(Some(found));
    }
    let Some((min, max)) = destination.capabilities().score_limit else {
        return Ok(None);
    };
    if meta.data_type != DataType::ZSet {
        return Ok(None);
    }
    for record in source.subs(SubKind::ZSetMember, key, meta, None, false) {
        match record? {
            (SubId::Name(member), SubValue::Score(score)) => {
                if !(min..=max).contains(&score) {
                    return Ok(Some(Unrepresentable::ScoreOutOfRange {
                        member,
                        score,
                        min,
                        max,
                    }));
                }
            }
            (id, value) => {
                return Err(corrupt(
                    key,
                    format!("unexpected sorted-set member record {id:?} = {value:?}"),
                ))
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use redcodec_codec::TtlResolution;

    fn caps() -> Capabilities {
        crate::testkit::TestEngine::new()
            .engine
            .capabilities()
            .clone()
    }

    #[test]
    fn key_length_limits_collections_only() {
        let mut caps = caps();
        caps.collection_key_limit = Some(4);
        let hash = Meta {
            data_type: DataType::Hash,
            size: 1,
            ..Meta::string(Vec::new(), 0)
        };
        assert_eq!(check_caps(&caps, b"abcd", &hash), None);
        assert_eq!(
            check_caps(&caps, b"abcde", &hash),
            Some(Unrepresentable::KeyTooLong {
                data_type: DataType::Hash,
                len: 5,
                limit: 4
            })
        );
        let string = Meta::string(b"v".to_vec(), 0);
        assert_eq!(check_caps(&caps, b"abcde", &string), None);
    }

    #[test]
    fn expiry_is_judged_after_rounding_to_the_format_resolution() {
        let mut caps = caps();
        caps.ttl = TtlResolution::Seconds;
        caps.max_expire_ms = 2_000_000;
        let at = |ms| Meta::string(Vec::new(), ms);
        assert_eq!(check_caps(&caps, b"k", &at(2_000_000)), None);
        assert_eq!(check_caps(&caps, b"k", &at(0)), None);
        // 1 ms past rounds up to the next second, past the limit.
        let late = check_caps(&caps, b"k", &at(2_000_001)).unwrap();
        assert_eq!(
            late,
            Unrepresentable::ExpireTooLate {
                expire_ms: 2_000_001,
                max_ms: 2_000_000
            }
        );
        assert!(late.to_string().contains("1970-01-01T00:33:20Z"), "{late}");
    }
}
