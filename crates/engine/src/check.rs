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

use redcodec_codec::{Codec, DataType, GcDecision, KeyRange, Meta, Place};
use redcodec_store::{ReadAhead, Store};

use crate::core::EngineCore;
use crate::cursors::{ReadCursors, SubCursors};
use crate::error::{CmdError, CmdResult};
use crate::keyspace::{Ctx, TYPE_ORDER};
use crate::value::visit_elements_on;

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
    check_keys(&ctx, &mut report)?;
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

/// One metadata range read in key order (ahead, on a thread of its
/// own), merged with the others by [`check_keys`].
struct MetaLane {
    range: KeyRange,
    place_type: Option<DataType>,
    it: ReadAhead,
    /// The next user key of the range, with its metadata when live.
    head: Option<(Vec<u8>, Option<Meta>)>,
    /// Faults of this range's records, reported range by range.
    findings: Vec<Finding>,
}

impl MetaLane {
    /// Reads on to the range's next user key (counting its metadata
    /// record, and noting the faults of the records before it).
    fn fill<C: Codec>(&mut self, ctx: &Ctx<'_, C>, meta_records: &mut u64) -> CmdResult<()> {
        let codec = ctx.codec();
        while self.head.is_none() {
            let Some((raw_key, value)) = self.it.next_ref()? else {
                return Ok(());
            };
            let user_key = match codec.decode_meta_key(self.range.place, raw_key) {
                Ok(Some(k)) => k,
                // Element records share some formats' metadata ranges.
                Ok(None) => continue,
                Err(e) => {
                    self.findings.push(Finding::Undecodable {
                        family: family_name(ctx, self.range.place),
                        key: raw_key.to_vec(),
                        error: e.to_string(),
                    });
                    continue;
                }
            };
            *meta_records += 1;
            let ty = self.place_type.unwrap_or(DataType::String);
            let live = match ctx.decode_meta(&user_key, ty, value) {
                Ok(meta) => ctx.is_live(&meta).then_some(meta),
                Err(CmdError::Unmodelled { key, type_name }) => {
                    self.findings.push(Finding::Unmodelled { key, type_name });
                    None
                }
                Err(e) => {
                    self.findings.push(Finding::Undecodable {
                        family: family_name(ctx, self.range.place),
                        key: raw_key.to_vec(),
                        error: e.to_string(),
                    });
                    None
                }
            };
            self.head = Some((user_key, live));
        }
        Ok(())
    }
}

/// Reads every metadata record, its ranges merged in key order (memory:
/// one record per range, whatever the store's size): counts the live
/// keys, reports keys live in several types and, for every live
/// collection, compares the elements found (counted as they are read, on
/// cursors kept from key to key) with the count its metadata states.
/// Reported in this order: the metadata faults, range by range; keys in
/// several types; counts that disagree.
fn check_keys<C: Codec>(ctx: &Ctx<'_, C>, report: &mut CheckReport) -> CmdResult<()> {
    let store = ctx.engine().store();
    std::thread::scope(|scope| {
        let lanes: Vec<MetaLane> = ctx
            .codec()
            .meta_ranges()
            .into_iter()
            .map(|(range, place_type)| MetaLane {
                it: store.read_ahead_range(scope, &range),
                range,
                place_type,
                head: None,
                findings: Vec::new(),
            })
            .collect();
        merge_lanes(ctx, lanes, report)
    })
}

/// [`check_keys`] over its `lanes`.
fn merge_lanes<C: Codec>(
    ctx: &Ctx<'_, C>,
    mut lanes: Vec<MetaLane>,
    report: &mut CheckReport,
) -> CmdResult<()> {
    let mut several = Vec::new();
    let mut counts = Vec::new();
    let mut cursors = SubCursors::new();
    loop {
        for lane in &mut lanes {
            lane.fill(ctx, &mut report.meta_records)?;
        }
        let Some(key) = lanes
            .iter()
            .filter_map(|lane| lane.head.as_ref().map(|(k, _)| k))
            .min()
            .cloned()
        else {
            break;
        };
        let mut metas: Vec<Meta> = lanes
            .iter_mut()
            .filter(|lane| lane.head.as_ref().is_some_and(|(k, _)| *k == key))
            .filter_map(|lane| lane.head.take().and_then(|(_, meta)| meta))
            .collect();
        if metas.is_empty() {
            continue;
        }
        metas.sort_by_key(|m| TYPE_ORDER.iter().position(|t| *t == m.data_type));
        report.keys += 1;
        if metas.len() > 1 {
            let types = metas.iter().map(|m| m.data_type).collect();
            let finding = Finding::SeveralTypes {
                key: key.clone(),
                types,
            };
            several.push((key.clone(), finding));
        }
        for meta in &metas {
            if let Some(finding) = count_finding(ctx, &mut cursors, &key, meta) {
                counts.push((key.clone(), finding));
            }
        }
    }
    for lane in lanes {
        report.findings.extend(lane.findings);
    }
    // In key order (a format whose ranges are not in the user keys'
    // bytewise order merges them in another).
    several.sort_by(|a: &(Vec<u8>, Finding), b| a.0.cmp(&b.0));
    counts.sort_by(|a: &(Vec<u8>, Finding), b| a.0.cmp(&b.0));
    report.findings.extend(several.into_iter().map(|(_, f)| f));
    report.findings.extend(counts.into_iter().map(|(_, f)| f));
    Ok(())
}

/// Reads the live collection `meta` of `key` on `cursors`: the fault when
/// its elements cannot be read, or are not as many as `meta` states.
fn count_finding<'e, C: Codec>(
    ctx: &Ctx<'e, C>,
    cursors: &mut SubCursors<'e, Store>,
    key: &[u8],
    meta: &Meta,
) -> Option<Finding> {
    let ty = meta.data_type;
    if !ty.is_collection() || ctx.caps().size_unknown(meta) {
        return None;
    }
    match visit_elements_on(ctx, Some(cursors), key, meta, |_| Ok::<(), CmdError>(())) {
        Ok(found) if found == meta.size => None,
        Ok(found) => Some(Finding::CountMismatch {
            key: key.to_vec(),
            data_type: ty,
            stored: meta.size,
            found,
        }),
        Err(e) => Some(Finding::Unreadable {
            key: key.to_vec(),
            data_type: ty,
            error: e.to_string(),
        }),
    }
}

/// Reads every element record and asks the format's garbage rule about
/// it: records the rule drops are garbage; records it keeps must carry
/// their key's current version, or they are orphans.
fn check_elements<C: Codec>(ctx: &Ctx<'_, C>, report: &mut CheckReport) -> CmdResult<()> {
    let codec = ctx.codec();
    let store = ctx.engine().store();
    let places = codec.element_places();
    let place_types: Vec<(Place, Option<DataType>)> = codec
        .meta_ranges()
        .into_iter()
        .map(|(range, ty)| (range.place, ty))
        .collect();
    let now = ctx.now_ms();
    // Element records come in about their owners' order: the owners'
    // metadata is read on iterators moved along, not a point read each.
    let mut metas = ReadCursors::new(store);
    for place in places {
        std::thread::scope(|scope| -> CmdResult<()> {
            let mut it = store.read_ahead(scope, place);
            while let Some((key, value)) = it.next_ref()? {
                let Some(owner) = codec.gc_sub_owner(place, key, value) else {
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
                let meta = metas.get(owner.meta.place, &owner.meta.key)?;
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
                        key: key.to_vec(),
                    });
                }
            }
            Ok(())
        })?;
    }
    Ok(())
}
