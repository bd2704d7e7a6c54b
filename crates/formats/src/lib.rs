//! The formats redcodec can run, chosen at run time by name.
//!
//! [`AnyCodec`] is an enum over every format crate; it implements the
//! [`Codec`] trait by forwarding each method to the format it holds (one
//! local macro, `forward!`, lists the methods once). The engine is generic
//! over the codec, and `Engine<AnyCodec>` runs whichever format a user names.

use std::fmt;
use std::str::FromStr;

use redcodec_ardb::{ArdbCodec, ArdbOptions};
use redcodec_blackwidow::BlackwidowCodec;
pub use redcodec_codec::Codec;
use redcodec_codec::{
    DataType, Declaration, DecodeError, Elements, EncodeError, GcDecision, KeyRange, KeyShape,
    Meta, Place, Record, SubId, SubIdRef, SubKind, SubOwner, SubValue, SubValueRef,
};
use redcodec_floyd::FloydCodec;
use redcodec_kvrocks::{KvrocksCodec, KvrocksOptions};
use redcodec_nemo::NemoCodec;
use thiserror::Error;

/// The registry of formats: one line per format, naming its [`Format`]
/// variant and its codec type. It defines [`AnyCodec`] (one variant per
/// format), `From<Codec>` for each codec, [`Format`], [`Format::ALL`] and
/// [`Format::name`] (the codec's own `NAME`, which its [`Codec::name`]
/// returns), and `with_codec!`, the one `match` that names every variant.
/// Adding a format adds one line here and one arm to [`Format::codec`]
/// (which turns [`FormatOptions`] into that format's options).
macro_rules! formats {
    ($d:tt $($(#[$doc:meta])* $variant:ident($codec:ty),)*) => {
        /// A codec of any format.
        #[derive(Clone, Debug)]
        pub enum AnyCodec {
            $($(#[$doc])* $variant($codec),)*
        }

        $(
            impl From<$codec> for AnyCodec {
                fn from(codec: $codec) -> AnyCodec {
                    AnyCodec::$variant(codec)
                }
            }
        )*

        /// Runs `$body` with `$c` bound to the codec `$any` holds.
        macro_rules! with_codec {
            ($d any:expr, $d c:ident => $d body:expr) => {
                match $d any {
                    $(AnyCodec::$variant($d c) => $d body,)*
                }
            };
        }

        /// The formats, by name.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Format {
            $($(#[$doc])* $variant,)*
        }

        impl Format {
            /// Every format that can be run, in registry order.
            pub const ALL: &'static [Format] = &[$(Format::$variant,)*];

            /// The name the command line uses: the codec's [`Codec::name`].
            pub fn name(self) -> &'static str {
                match self {
                    $(Format::$variant => <$codec>::NAME,)*
                }
            }
        }
    };
}

formats! {$
    /// Apache Kvrocks (namespaced, optionally slotted).
    Kvrocks(KvrocksCodec),
    /// Pika 3.x blackwidow (five instances, second-resolution expiry).
    Blackwidow(BlackwidowCodec),
    /// Pika 2.x nemo (five instances, linked lists, 5-decimal score index).
    Nemo(NemoCodec),
    /// Ardb (one column family per namespace, `ardb.comparator`).
    Ardb(ArdbCodec),
    /// Pika 4.x floyd (keys spread over three instances, millisecond times).
    Floyd(FloydCodec),
}

/// [`Codec`] for `AnyCodec`: every method listed once, forwarded to the
/// codec the enum holds.
macro_rules! forward {
    ($(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {
        impl Codec for AnyCodec {
            $(
                #[inline]
                fn $name(&self $(, $arg: $ty)*) -> $ret {
                    with_codec!(self, c => c.$name($($arg),*))
                }
            )*

            #[inline]
            fn note_member(&self, meta: &mut Meta, member: &[u8]) {
                with_codec!(self, c => c.note_member(meta, member))
            }
        }
    };
}

forward! {
    fn declaration(&self) -> &Declaration;
    fn next_version(&self, now_us: u64, counter: u64, previous: Option<u64>) -> u64;
    fn new_meta(&self, data_type: DataType, version: u64) -> Meta;
    fn reset_meta(&self, old: &Meta, version: u64) -> Meta;
    fn meta_record(&self, key: &[u8], data_type: DataType) -> Result<Record, EncodeError>;
    fn encode_meta_with(&self, meta: &Meta, string: &[u8]) -> Result<Vec<u8>, EncodeError>;
    fn decode_meta(&self, data_type: DataType, raw: &[u8]) -> Result<Meta, DecodeError>;
    fn meta_ranges(&self) -> Vec<(KeyRange, Option<DataType>)>;
    fn decode_meta_key(&self, place: Place, raw: &[u8]) -> Result<Option<Vec<u8>>, DecodeError>;
    fn flush_ranges(&self) -> Vec<KeyRange>;
    fn flush_all_ranges(&self) -> Vec<KeyRange>;
    fn sub_place(&self, kind: SubKind, key: &[u8]) -> Place;
    fn sub_places(&self, kind: SubKind) -> Vec<Place>;
    fn sub_key(&self, of: Elements<'_>, id: SubIdRef<'_>) -> Vec<u8>;
    fn sub_range(&self, of: Elements<'_>) -> KeyRange;
    fn decode_sub_key(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubId, DecodeError>;
    fn encode_sub_value(&self, of: Elements<'_>, value: SubValueRef<'_>) -> Vec<u8>;
    fn decode_sub_value(&self, of: Elements<'_>, raw: &[u8]) -> Result<SubValue, DecodeError>;
    fn gc_meta(&self, place: Place, key: &[u8], value: &[u8], now_ms: u64) -> GcDecision;
    fn gc_sub_owner(&self, place: Place, key: &[u8], value: &[u8]) -> Option<SubOwner>;
    fn sub_owner(&self, place: Place, key: &[u8], value: &[u8]) -> Option<SubOwner>;
    fn gc_sub(&self, owner: &SubOwner, meta: Option<&[u8]>, now_ms: u64) -> GcDecision;
    fn bootstrap_records(&self) -> Vec<(Record, Vec<u8>)>;
    fn sub_is_current(&self, of: Elements<'_>, raw_value: &[u8]) -> bool;
    fn key_range(&self, key: &[u8]) -> Option<KeyRange>;
    fn gc_expired_key(&self, place: Place, key: &[u8], value: &[u8], now_ms: u64) -> Option<Vec<u8>>;
    fn key_shape(&self, place: Place, raw: &[u8]) -> Option<KeyShape>;
}

impl Format {
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
                options.refuse_namespace_and_cluster("blackwidow")?;
                Ok(AnyCodec::from(BlackwidowCodec::new()))
            }
            Format::Nemo => {
                options.refuse_namespace_and_cluster("nemo")?;
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
            Format::Floyd => {
                options.refuse_namespace_and_cluster("floyd")?;
                Ok(AnyCodec::from(FloydCodec::default()))
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

impl FormatOptions {
    /// Refuses a namespace or cluster mode for `format`, which has
    /// neither.
    fn refuse_namespace_and_cluster(&self, format: &'static str) -> Result<(), FormatError> {
        if self.namespace.is_some() || self.cluster {
            return Err(FormatError::Unsupported {
                format,
                what: "no namespaces and no cluster mode",
            });
        }
        Ok(())
    }
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

    /// Every defaulted method a format overrides reaches it through
    /// `AnyCodec` (a method missing from `forward!` would silently answer
    /// the trait's default instead).
    #[test]
    fn any_codec_forwards_every_overridden_default() {
        let kv = KvrocksCodec::default();
        let ardb = ArdbCodec::default();
        let nemo = NemoCodec::default();
        let any_kv = AnyCodec::from(kv.clone());
        let any_ardb = AnyCodec::from(ardb.clone());
        let any_nemo = AnyCodec::from(nemo.clone());
        let meta_key = kv.meta_record(b"k", DataType::String).unwrap();
        assert!(kv.key_shape(meta_key.place, &meta_key.key).is_some());
        assert_eq!(
            any_kv.key_shape(meta_key.place, &meta_key.key),
            kv.key_shape(meta_key.place, &meta_key.key)
        );
        assert!(!nemo.bootstrap_records().is_empty());
        assert_eq!(any_nemo.bootstrap_records(), nemo.bootstrap_records());
        assert!(ardb.key_range(b"k").is_some());
        assert_eq!(any_ardb.key_range(b"k"), ardb.key_range(b"k"));
        let set = ardb.new_meta(DataType::Set, 0);
        let (mut a, mut b) = (set.clone(), set);
        ardb.note_member(&mut a, b"m");
        any_ardb.note_member(&mut b, b"m");
        assert!(a.bounds.is_some());
        assert_eq!(a, b);
        let floyd = FloydCodec::default();
        let any_floyd = AnyCodec::from(floyd.clone());
        assert_eq!(floyd.sub_places(SubKind::HashField).len(), 3);
        assert_eq!(
            any_floyd.sub_places(SubKind::HashField),
            floyd.sub_places(SubKind::HashField)
        );
        let hash = nemo.new_meta(DataType::Hash, 7);
        for raw in [&b""[..], b"\x00\x00\x00\x07"] {
            assert_eq!(
                any_nemo.sub_is_current(SubKind::HashField.of(b"h", &hash), raw),
                nemo.sub_is_current(SubKind::HashField.of(b"h", &hash), raw)
            );
        }
    }

    #[test]
    fn formats_are_chosen_by_name() {
        assert_eq!("kvrocks".parse::<Format>().unwrap(), Format::Kvrocks);
        assert_eq!("KVROCKS".parse::<Format>().unwrap(), Format::Kvrocks);
        let err = "pika9".parse::<Format>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown format 'pika9' (known formats: kvrocks, blackwidow, nemo, ardb, floyd)"
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
