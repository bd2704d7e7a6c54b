//! `check`: reads a whole store and reports what is wrong with it, for
//! `redcodec check`. It never writes (open the engine read-only).
//!
//! What it finds:
//! - records whose bytes do not decode (metadata and element records);
//! - live collections whose stored element count disagrees with the
//!   element records that belong to them;
//! - orphaned element records: records of a version their key's metadata
//!   does not have (so no read sees them) that the format's compaction
//!   rule would nevertheless keep for ever. (Elements whose metadata is
//!   gone are garbage compaction collects: every format's `DEL` or
//!   metadata compaction leaves such records behind, by design.)
//! - keys of types redcodec does not model (Kvrocks' bitmaps, streams,
//!   JSON, …);
//! - keys kept in a RocksDB instance the layout does not name (Pika 3.5's
//!   `streams/`);
//! - keys held in several types at once (Pika's blackwidow and nemo allow
//!   it; see [`crate::keyspace::TYPE_ORDER`]).
//!
//! It also counts the element records that compaction will collect
//! (old versions, expired or deleted keys), which are no fault.

use std::collections::BTreeMap;

use redcodec_codec::{Codec, DataType, GcDecision, Place, SubKind};

use crate::core::EngineCore;
use crate::error::{CmdError, CmdResult};
use crate::keyspace::Ctx;
use crate::value::read_value;

/// One fault `check` found.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// A record whose bytes do not decode.
    Undecodable {
        /// `<instance>/<column family>`.
        family: String,
        /// The record's key.
        key: Vec<u8>,
        /// What is wrong.
        error: String,
    },
    /// A collection whose metadata states another element count than its
    /// element records hold.
    CountMismatch {
        /// The user key.
        key: Vec<u8>,
        /// Its type.
        data_type: DataType,
        /// The count the metadata states.
        stored: u64,
        /// The elements found.
        found: u64,
    },
    /// A collection whose elements cannot be read back.
    Unreadable {
        /// The user key.
        key: Vec<u8>,
        /// Its type.
        data_type: DataType,
        /// What failed.
        error: String,
    },
    /// An element record no read sees and compaction keeps: its version
    /// is not its key's.
    Orphan {
        /// `<instance>/<column family>`.
        family: String,
        /// The record's key.
        key: Vec<u8>,
    },
    /// A key of a type the real system has and redcodec does not model
    /// (Kvrocks' bitmaps, streams, JSON, …): it is listed, and `migrate`
    /// reports it as unrepresentable.
    Unmodelled {
        /// The user key.
        key: Vec<u8>,
        /// The real system's name of the type.
        type_name: &'static str,
    },
    /// A record of a RocksDB instance beside the layout's that the layout
    /// does not name (Pika 3.5's `streams/`): a key redcodec does not model.
    Foreign {
        /// The instance's directory.
        instance: String,
        /// The record's key (the user key, in blackwidow-style layouts).
        key: Vec<u8>,
    },
    /// A key held in several types at once.
    SeveralTypes {
        /// The user key.
        key: Vec<u8>,
        /// Its live types; commands see the first.
        types: Vec<DataType>,
    },
}

/// What `check` read and found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Live keys.
    pub keys: u64,
    /// Metadata records read (live or not).
    pub meta_records: u64,
    /// Element records read.
    pub element_records: u64,
    /// Element records compaction will collect: no fault.
    pub garbage: u64,
    /// Every fault, in the order found.
    pub findings: Vec<Finding>,
    /// Column families opened but not part of the format's layout, per
    /// instance directory (e.g. Ardb's namespaces).
    pub other_families: Vec<(String, String)>,
}

impl CheckReport {
    /// Whether nothing is wrong.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }
}

/// Checks every record of the store behind `engine`.
pub fn check<C: Codec>(engine: &EngineCore<C>) -> CmdResult<CheckReport> {
    let ctx = Ctx::new(engine);
    let mut report = CheckReport::default();
    let live_types = check_metadata(&ctx, &mut report)?;
    for (key, types) in &live_types {
        report.keys += 1;
        if types.len() > 1 {
            report.findings.push(Finding::SeveralTypes {
                key: key.clone(),
                types: types.clone(),
            });
        }
    }
    check_counts(&ctx, &live_types, &mut report)?;
    check_elements(&ctx, &mut report)?;
    let store = engine.store();
    for instance in redcodec_store::foreign::foreign_instances(store) {
        for key in redcodec_store::foreign::foreign_keys(store, &instance)? {
            report.findings.push(Finding::Foreign {
                instance: instance.clone(),
                key,
            });
        }
    }
    // Other families of a format that keeps namespaces in families are
    // its other namespaces, checked on their own.
    let namespaced = engine.capabilities().namespaces == redcodec_codec::Namespaces::ColumnFamily;
    for (index, inst) in store.layout().instances.iter().enumerate() {
        if namespaced {
            break;
        }
        for family in store.other_families(index) {
            report
                .other_families
                .push((inst.dir.to_string(), family.clone()));
        }
    }
    Ok(report)
}

/// `<instance>/<column family>` of `place`.
fn family_name<C: Codec>(ctx: &Ctx<'_, C>, place: Place) -> String {
    let layout = ctx.engine().store().layout();
    format!(
        "{}/{}",
        layout.instances[place.instance].dir,
        layout.cf(place).name
    )
}

/// Reads every metadata record; returns the live types of each user key,
/// in [`crate::keyspace::TYPE_ORDER`].
fn check_metadata<C: Codec>(
    ctx: &Ctx<'_, C>,
    report: &mut CheckReport,
) -> CmdResult<BTreeMap<Vec<u8>, Vec<DataType>>> {
    let codec = ctx.codec();
    let mut live: BTreeMap<Vec<u8>, Vec<DataType>> = BTreeMap::new();
    for (range, place_type) in codec.meta_ranges() {
        let mut it = ctx.engine().store().scan(&range, None, false);
        while let Some((raw_key, value)) = it.next()? {
            let user_key = match codec.decode_meta_key(range.place, &raw_key) {
                Ok(Some(k)) => k,
                // Element records share some formats' metadata ranges.
                Ok(None) => continue,
                Err(e) => {
                    report.findings.push(Finding::Undecodable {
                        family: family_name(ctx, range.place),
                        key: raw_key,
                        error: e.to_string(),
                    });
                    continue;
                }
            };
            report.meta_records += 1;
            match ctx.decode_meta(&user_key, place_type.unwrap_or(DataType::String), &value) {
                Ok(meta) if ctx.is_live(&meta) => {
                    live.entry(user_key).or_default().push(meta.data_type);
                }
                Ok(_) => {}
                Err(CmdError::Unmodelled { key, type_name }) => {
                    report.findings.push(Finding::Unmodelled { key, type_name });
                }
                Err(e) => report.findings.push(Finding::Undecodable {
                    family: family_name(ctx, range.place),
                    key: raw_key,
                    error: e.to_string(),
                }),
            }
        }
    }
    for types in live.values_mut() {
        types.sort_by_key(|t| crate::keyspace::TYPE_ORDER.iter().position(|o| o == t));
    }
    Ok(live)
}

/// Reads every live collection whole and compares its element count with
/// the count its metadata states.
fn check_counts<C: Codec>(
    ctx: &Ctx<'_, C>,
    live: &BTreeMap<Vec<u8>, Vec<DataType>>,
    report: &mut CheckReport,
) -> CmdResult<()> {
    for (key, types) in live {
        for &ty in types {
            let Some(meta) = ctx.meta_of_type(key, ty)? else {
                continue;
            };
            if !ty.is_collection() || ctx.caps().size_unknown(&meta) {
                continue;
            }
            let found = match read_value(ctx, key, &meta) {
                Ok(value) => value.element_count(),
                Err(e) => {
                    report.findings.push(Finding::Unreadable {
                        key: key.clone(),
                        data_type: ty,
                        error: e.to_string(),
                    });
                    continue;
                }
            };
            if found != meta.size {
                report.findings.push(Finding::CountMismatch {
                    key: key.clone(),
                    data_type: ty,
                    stored: meta.size,
                    found,
                });
            }
        }
    }
    Ok(())
}

/// Reads every element record and asks the format's garbage rule about
/// it: records the rule drops are garbage; records it keeps must carry
/// their key's current version, or they are orphans.
fn check_elements<C: Codec>(ctx: &Ctx<'_, C>, report: &mut CheckReport) -> CmdResult<()> {
    let codec = ctx.codec();
    let store = ctx.engine().store();
    let mut places: Vec<Place> = [
        SubKind::HashField,
        SubKind::SetMember,
        SubKind::ListItem,
        SubKind::ZSetMember,
        SubKind::ZSetScore,
    ]
    .into_iter()
    .flat_map(|kind| codec.sub_places(kind))
    .collect();
    places.sort();
    places.dedup();
    let place_types: Vec<(Place, Option<DataType>)> = codec
        .meta_ranges()
        .into_iter()
        .map(|(range, ty)| (range.place, ty))
        .collect();
    let now = ctx.now_ms();
    for place in places {
        let mut it = store.scan_family(place);
        while let Some((key, value)) = it.next()? {
            let Some(owner) = codec.gc_sub_owner(place, &key, &value) else {
                continue;
            };
            // Elements of another namespace are checked with it.
            if !matches!(
                codec.decode_meta_key(owner.meta.place, &owner.meta.key),
                Ok(Some(_))
            ) {
                continue;
            }
            report.element_records += 1;
            let meta = store.get(owner.meta.place, &owner.meta.key)?;
            if codec.gc_sub(&owner, meta.as_deref(), now) == GcDecision::Drop {
                report.garbage += 1;
                continue;
            }
            let Some(raw) = meta else { continue };
            let ty = place_types
                .iter()
                .find(|(p, _)| *p == owner.meta.place)
                .and_then(|(_, ty)| *ty)
                .unwrap_or(DataType::String);
            // Undecodable metadata is reported by the metadata pass.
            let Ok(meta) = codec.decode_meta(ty, &raw) else {
                continue;
            };
            if owner.version != 0 && meta.version != owner.version {
                report.findings.push(Finding::Orphan {
                    family: family_name(ctx, place),
                    key,
                });
            }
        }
    }
    Ok(())
}
