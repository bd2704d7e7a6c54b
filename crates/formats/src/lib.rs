//! The formats redcodec can run, chosen at run time by name.
//!
//! [`AnyCodec`] is an enum over every format crate, dispatched to the
//! [`Codec`] trait with `enum_dispatch`: the engine is generic over the
//! codec, and `Engine<AnyCodec>` runs whichever format a user names.

use std::fmt;
use std::str::FromStr;

use enum_dispatch::enum_dispatch;
pub use redcodec_codec::Codec;
// The types the Codec trait's methods name, for the generated impl.
use redcodec_ardb::{ArdbCodec, ArdbOptions};
use redcodec_blackwidow::BlackwidowCodec;
use redcodec_codec::{
    Capabilities, ComparatorSpec, DataType, DecodeError, EncodeError, GcDecision, KeyRange,
    KeyShape, Layout, Meta, Place, Record, SubId, SubKind, SubOwner, SubValue,
};
use redcodec_kvrocks::{KvrocksCodec, KvrocksOptions};
use redcodec_nemo::NemoCodec;
use thiserror::Error;

/// `enum_dispatch` needs to see the trait's definition in this crate: the
/// codec crate hands its tokens over (see `codec_trait_tokens!`), and this
/// private copy registers them. The impl it generates is for the real
/// [`Codec`] trait imported above.
mod registration {
    #![allow(dead_code, missing_docs)]
    use super::enum_dispatch;
    use redcodec_codec::{
        Capabilities, ComparatorSpec, DataType, DecodeError, EncodeError, GcDecision, KeyRange,
        KeyShape, Layout, Meta, Place, Record, SubId, SubKind, SubOwner, SubValue,
    };

    macro_rules! register {
        ($($trait:tt)*) => {
            #[enum_dispatch]
            $($trait)*
        };
    }
    redcodec_codec::codec_trait_tokens!(register);
}

/// A codec of any format.
#[enum_dispatch(Codec)]
#[derive(Clone, Debug)]
pub enum AnyCodec {
    /// Apache Kvrocks.
    Kvrocks(KvrocksCodec),
    /// Pika 3.x blackwidow.
    Blackwidow(BlackwidowCodec),
    /// Pika 2.x nemo.
    Nemo(NemoCodec),
    /// Ardb (RocksDB engine).
    Ardb(ArdbCodec),
}

/// The formats, by name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Apache Kvrocks (namespaced, optionally slotted).
    Kvrocks,
    /// Pika 3.x blackwidow (five instances, second-resolution expiry).
    Blackwidow,
    /// Pika 2.x nemo (five instances, linked lists, 5-decimal score index).
    Nemo,
    /// Ardb (one column family per namespace, `ardb.comparator`).
    Ardb,
}

impl Format {
    /// Every format that can be run.
    pub const ALL: &'static [Format] = &[
        Format::Kvrocks,
        Format::Blackwidow,
        Format::Nemo,
        Format::Ardb,
    ];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Format::Kvrocks => "kvrocks",
            Format::Blackwidow => "blackwidow",
            Format::Nemo => "nemo",
            Format::Ardb => "ardb",
        }
    }

    /// A codec of this format with `options`.
    pub fn codec(self, options: &FormatOptions) -> Result<AnyCodec, FormatError> {
        match self {
            Format::Kvrocks => {
                let mut opts = KvrocksOptions::default();
                if let Some(ns) = &options.namespace {
                    opts.namespace = ns.clone();
                }
                opts.cluster = options.cluster;
                Ok(AnyCodec::from(KvrocksCodec::new(opts)?))
            }
            Format::Blackwidow => {
                if options.namespace.is_some() || options.cluster {
                    return Err(FormatError::Unsupported {
                        format: "blackwidow",
                        what: "no namespaces and no cluster mode",
                    });
                }
                Ok(AnyCodec::from(BlackwidowCodec::new()))
            }
            Format::Nemo => {
                if options.namespace.is_some() || options.cluster {
                    return Err(FormatError::Unsupported {
                        format: "nemo",
                        what: "no namespaces and no cluster mode",
                    });
                }
                Ok(AnyCodec::from(NemoCodec::new()))
            }
            Format::Ardb => {
                if options.cluster {
                    return Err(FormatError::Unsupported {
                        format: "ardb",
                        what: "no cluster mode",
                    });
                }
                let mut opts = ArdbOptions::default();
                if let Some(ns) = &options.namespace {
                    opts.namespace = ns.clone();
                }
                Ok(AnyCodec::from(ArdbCodec::new(opts)?))
            }
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = FormatError;

    fn from_str(s: &str) -> Result<Format, FormatError> {
        Format::ALL
            .iter()
            .copied()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| FormatError::Unknown {
                name: s.to_string(),
                known: Format::ALL
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// Options that some formats take.
#[derive(Clone, Debug, Default)]
pub struct FormatOptions {
    /// Namespace (Kvrocks: the key prefix, default `__namespace`; Ardb: the
    /// column family, default `0`).
    pub namespace: Option<Vec<u8>>,
    /// Cluster mode (Kvrocks: a slot in every key).
    pub cluster: bool,
}

/// A format that cannot be chosen.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FormatError {
    /// No format has this name.
    #[error("unknown format '{name}' (known formats: {known})")]
    Unknown {
        /// The name given.
        name: String,
        /// The names that exist.
        known: String,
    },
    /// Kvrocks rejects the namespace.
    #[error(transparent)]
    Kvrocks(#[from] redcodec_kvrocks::OptionsError),
    /// Ardb rejects the namespace.
    #[error(transparent)]
    Ardb(#[from] redcodec_ardb::OptionsError),
    /// The format has no such option.
    #[error("the {format} format has {what}")]
    Unsupported {
        /// The format's name.
        format: &'static str,
        /// What it lacks (`no namespaces and no cluster mode`, …).
        what: &'static str,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_chosen_by_name() {
        assert_eq!("kvrocks".parse::<Format>().unwrap(), Format::Kvrocks);
        assert_eq!("KVROCKS".parse::<Format>().unwrap(), Format::Kvrocks);
        let err = "pika9".parse::<Format>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown format 'pika9' (known formats: kvrocks, blackwidow, nemo, ardb)"
        );
    }

    #[test]
    fn any_codec_dispatches_to_the_format() {
        let codec = Format::Kvrocks.codec(&FormatOptions::default()).unwrap();
        assert_eq!(codec.name(), "kvrocks");
        assert_eq!(codec.layout().instances[0].dir, "db");
        let codec = Format::Blackwidow.codec(&FormatOptions::default()).unwrap();
        assert_eq!(codec.name(), "blackwidow");
        assert_eq!(codec.layout().instances.len(), 5);
        assert_eq!("blackwidow".parse::<Format>().unwrap(), Format::Blackwidow);
        let codec = Format::Nemo.codec(&FormatOptions::default()).unwrap();
        assert_eq!(codec.name(), "nemo");
        assert_eq!(codec.layout().instances[0].dir, "kv");
        assert_eq!(codec.bootstrap_records().len(), 5);
        assert_eq!("Nemo".parse::<Format>().unwrap(), Format::Nemo);
        let cluster = FormatOptions {
            cluster: true,
            ..FormatOptions::default()
        };
        assert!(Format::Nemo.codec(&cluster).is_err());
        let codec = Format::Ardb.codec(&FormatOptions::default()).unwrap();
        assert_eq!(codec.name(), "ardb");
        assert_eq!(codec.layout().instances[0].dir, "rocksdb");
        let named = FormatOptions {
            namespace: Some(b"tenant".to_vec()),
            cluster: false,
        };
        let codec = Format::Ardb.codec(&named).unwrap();
        assert_eq!(
            codec.layout().instances[0].column_families[1].name,
            "tenant"
        );
        let cluster = FormatOptions {
            namespace: None,
            cluster: true,
        };
        assert!(Format::Ardb.codec(&cluster).is_err());
    }
}
