//! Compaction filters: RocksDB asks, the codec decides. Metadata records are
//! judged alone; element records after looking up their owner's metadata in
//! the same instance (cached per owner for the length of one compaction).
//! With active expiry, the filter of a metadata family also reports the
//! expired keys the codec names ([`Codec::gc_expired_key`]) to the
//! engine's expiry task. While expiry is held (a replica's store,
//! [`ExpiryHold`]) a compaction judges at time 0.

use std::ffi::{CStr, CString};
use std::sync::{Arc, OnceLock, Weak};

use redcodec_codec::{Codec, GcDecision, GcRule, Place, SubOwner};
use rocksdb::compaction_filter::{CompactionFilter, Decision};
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};

use crate::clock::Clock;
use crate::db::Db;
use crate::expired::ExpiredKeys;
use crate::expiry_hold::ExpiryHold;

/// Creates one [`Filter`] per compaction of one column family.
pub(crate) struct FilterFactory<C> {
    codec: Arc<C>,
    clock: Arc<dyn Clock>,
    place: Place,
    rule: GcRule,
    db: Arc<OnceLock<Weak<Db>>>,
    name: CString,
    /// Where expired keys are reported, with active expiry.
    expired: Option<Arc<ExpiredKeys>>,
    /// While held, a compaction judges at time 0 (no TTL has passed).
    hold: Arc<ExpiryHold>,
}

impl<C: Codec> FilterFactory<C> {
    /// The factory for `place`, or `None` when its rule keeps everything.
    pub(crate) fn for_place(
        codec: Arc<C>,
        clock: Arc<dyn Clock>,
        place: Place,
        db: Arc<OnceLock<Weak<Db>>>,
        expired: Arc<ExpiredKeys>,
        hold: Arc<ExpiryHold>,
    ) -> Option<FilterFactory<C>> {
        let cf = codec.layout().cf(place);
        let rule = cf.gc;
        if rule == GcRule::KeepAll {
            return None;
        }
        let expired = (rule == GcRule::Metadata && codec.capabilities().active_expiry.is_some())
            .then_some(expired);
        let name = CString::new(format!("redcodec.{}.{}", codec.name(), cf.name))
            .unwrap_or_else(|_| CString::from(c"redcodec.filter"));
        Some(FilterFactory {
            codec,
            clock,
            place,
            rule,
            db,
            name,
            expired,
            hold,
        })
    }
}

impl<C: Codec> CompactionFilterFactory for FilterFactory<C> {
    type Filter = Filter<C>;

    fn create(&mut self, _context: CompactionFilterContext) -> Filter<C> {
        Filter {
            codec: self.codec.clone(),
            now_ms: self.hold.judging_time(self.clock.now_ms()),
            place: self.place,
            rule: self.rule,
            db: self.db.clone(),
            name: self.name.clone(),
            cached: None,
            expired: self.expired.clone(),
        }
    }

    fn name(&self) -> &CStr {
        &self.name
    }
}

/// The filter of one compaction.
pub(crate) struct Filter<C> {
    codec: Arc<C>,
    now_ms: u64,
    place: Place,
    rule: GcRule,
    db: Arc<OnceLock<Weak<Db>>>,
    name: CString,
    cached: Option<(SubOwner, OwnerMeta)>,
    expired: Option<Arc<ExpiredKeys>>,
}

/// An owner's metadata bytes (`None`: missing); `Err` when unreadable.
type OwnerMeta = Result<Option<Vec<u8>>, ()>;

impl<C: Codec> Filter<C> {
    /// The owner's metadata bytes; `Err` when they cannot be read.
    fn owner_meta(&mut self, owner: &SubOwner) -> OwnerMeta {
        if let Some((cached_owner, meta)) = &self.cached {
            if cached_owner.meta == owner.meta {
                return meta.clone();
            }
        }
        let meta = self.read_meta(owner);
        self.cached = Some((owner.clone(), meta.clone()));
        meta
    }

    /// The decision for an element record of `owner`: kept when its
    /// owner's metadata cannot be read.
    fn judge_element(&mut self, owner: &SubOwner) -> GcDecision {
        match self.owner_meta(owner) {
            Err(()) => GcDecision::Keep,
            Ok(meta) => self.codec.gc_sub(owner, meta.as_deref(), self.now_ms),
        }
    }

    fn read_meta(&self, owner: &SubOwner) -> OwnerMeta {
        if owner.meta.place.instance != self.place.instance {
            return Err(());
        }
        let db = self.db.get().and_then(Weak::upgrade).ok_or(())?;
        let cf_name = self.codec.layout().cf(owner.meta.place).name;
        let cf = db.cf_handle(cf_name).ok_or(())?;
        db.get_cf(&cf, &owner.meta.key).map_err(|_| ())
    }
}

impl<C: Codec> CompactionFilter for Filter<C> {
    fn filter(&mut self, _level: u32, key: &[u8], value: &[u8]) -> Decision {
        let decision = match self.rule {
            GcRule::KeepAll => GcDecision::Keep,
            GcRule::DropAll => GcDecision::Drop,
            GcRule::Metadata => {
                if let Some(expired) = &self.expired {
                    if let Some(user_key) =
                        self.codec
                            .gc_expired_key(self.place, key, value, self.now_ms)
                    {
                        expired.report(user_key);
                    }
                }
                self.codec.gc_meta(self.place, key, value, self.now_ms)
            }
            GcRule::SubKeys => match self.codec.gc_sub_owner(self.place, key, value) {
                None => GcDecision::Keep,
                Some(owner) => self.judge_element(&owner),
            },
            GcRule::MetaAndSubKeys => match self.codec.gc_sub_owner(self.place, key, value) {
                None => self.codec.gc_meta(self.place, key, value, self.now_ms),
                Some(owner) => self.judge_element(&owner),
            },
        };
        match decision {
            GcDecision::Keep => Decision::Keep,
            GcDecision::Drop => Decision::Remove,
        }
    }

    fn name(&self) -> &CStr {
        &self.name
    }
}
