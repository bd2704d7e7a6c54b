//! The per-command context: reads a key's metadata through the codec,
//! applies Redis' key rules (expiry, one type per key, WRONGTYPE), and
//! queues every write of the command in one batch.

use redcodec_codec::{
    Capabilities, Codec, DataType, DeleteModel, Meta, MetaLookup, SubId, SubKind, SubValue,
    TtlResolution, VersionWidth,
};

use crate::engine::Engine;
use crate::error::{CmdError, CmdResult};
use crate::reply::quote_bytes;
use crate::store::{Batch, StoreIter};

/// What is stored under one key.
#[derive(Debug, Default)]
pub struct KeyView {
    /// The key's live value, if any.
    pub live: Option<Meta>,
    /// Metadata that is still on disk but expired or empty.
    pub dead: Vec<Meta>,
}

/// One command's view of the engine and its pending writes.
pub struct Ctx<'e, C: Codec> {
    pub(crate) eng: &'e Engine<C>,
    /// The command's time, read once: every check in a command agrees.
    pub now_ms: u64,
    batch: Batch,
}

impl<'e, C: Codec> Ctx<'e, C> {
    pub(crate) fn new(eng: &'e Engine<C>) -> Ctx<'e, C> {
        Ctx {
            eng,
            now_ms: eng.clock.now_ms(),
            batch: Batch::default(),
        }
    }

    /// The format.
    pub fn codec(&self) -> &'e C {
        &self.eng.codec
    }

    /// The format's capabilities.
    pub fn caps(&self) -> &'e Capabilities {
        self.eng.codec.capabilities()
    }

    /// The engine.
    pub fn engine(&self) -> &'e Engine<C> {
        self.eng
    }

    /// Writes everything queued, atomically per instance.
    pub(crate) fn commit(self) -> CmdResult<()> {
        if !self.batch.is_empty() {
            self.eng.store.write(self.batch)?;
        }
        Ok(())
    }

    /// Queues raw range deletions (FLUSHDB).
    pub(crate) fn batch_mut(&mut self) -> &mut Batch {
        &mut self.batch
    }

    pub(crate) fn is_live(&self, meta: &Meta) -> bool {
        !meta.expired_at(self.now_ms) && (meta.data_type == DataType::String || meta.size > 0)
    }

    /// Reads every metadata record of `key`.
    pub fn view(&self, key: &[u8]) -> CmdResult<KeyView> {
        let types: &[DataType] = match self.caps().meta_lookup {
            MetaLookup::Shared => &[DataType::String],
            MetaLookup::PerType => &DataType::ALL,
        };
        let mut view = KeyView::default();
        for &ty in types {
            // A key a place cannot hold (too long for the format) is absent there.
            let Ok(record) = self.codec().meta_record(key, ty) else {
                continue;
            };
            let Some(raw) = self.eng.store.get(record.place, &record.key)? else {
                continue;
            };
            let meta = self
                .codec()
                .decode_meta(ty, &raw)
                .map_err(|e| corrupt(key, e))?;
            if self.is_live(&meta) && view.live.is_none() {
                view.live = Some(meta);
            } else {
                view.dead.push(meta);
            }
        }
        Ok(view)
    }

    /// The live metadata of `key`, of any type.
    pub fn live(&self, key: &[u8]) -> CmdResult<Option<Meta>> {
        Ok(self.view(key)?.live)
    }

    /// The live metadata of `key` if it has type `ty`; `WRONGTYPE` if it
    /// holds another type.
    pub fn typed(&self, key: &[u8], ty: DataType) -> CmdResult<Option<Meta>> {
        match self.live(key)? {
            Some(m) if m.data_type == ty => Ok(Some(m)),
            Some(_) => Err(CmdError::WrongType),
            None => Ok(None),
        }
    }

    /// The live metadata of `key` of type `ty`, or fresh metadata for a new
    /// collection (not yet written). `WRONGTYPE` if it holds another type.
    pub fn typed_or_create(&mut self, key: &[u8], ty: DataType) -> CmdResult<Meta> {
        let view = self.view(key)?;
        match &view.live {
            Some(m) if m.data_type == ty => Ok(m.clone()),
            Some(_) => Err(CmdError::WrongType),
            None => self.create(key, ty, &view),
        }
    }

    /// Fresh metadata for a new value of type `ty` at `key`, replacing
    /// whatever is there (the caller has checked types). Queues the removal
    /// of anything the new value's records would not overwrite.
    pub fn create(&mut self, key: &[u8], ty: DataType, view: &KeyView) -> CmdResult<Meta> {
        self.codec().meta_record(key, ty)?;
        if let Some(live) = &view.live {
            let other_place =
                self.caps().meta_lookup == MetaLookup::PerType && live.data_type != ty;
            let unversioned = self.caps().version_width == VersionWidth::None;
            if other_place || (unversioned && live.data_type.is_collection()) {
                self.remove_key(key, live)?;
            }
        }
        if self.caps().version_width == VersionWidth::None {
            for dead in &view.dead {
                if dead.data_type.is_collection() {
                    self.clear_elements(key, dead)?;
                }
            }
        }
        if ty == DataType::String {
            return Ok(Meta::string(Vec::new(), 0));
        }
        let previous = view
            .live
            .iter()
            .chain(&view.dead)
            .filter(|m| m.data_type == ty || self.caps().meta_lookup == MetaLookup::Shared)
            .map(|m| m.version)
            .max();
        Ok(self.codec().new_meta(ty, self.eng.next_version(previous)))
    }

    /// Queues a metadata write.
    pub fn put_meta(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        let record = self.codec().meta_record(key, meta.data_type)?;
        let value = self.codec().encode_meta(meta)?;
        self.batch.put(record.place, record.key, value);
        Ok(())
    }

    /// Queues the metadata of a collection after its elements changed: kept,
    /// or removed when it became empty (unless the format keeps empty
    /// metadata for the type).
    pub fn save(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        if meta.data_type.is_collection() && meta.size == 0 {
            if self.caps().keeps_empty_meta.contains(&meta.data_type) {
                return self.put_meta(key, meta);
            }
            let record = self.codec().meta_record(key, meta.data_type)?;
            self.batch.delete(record.place, record.key);
            return Ok(());
        }
        self.put_meta(key, meta)
    }

    /// Queues the deletion of a key's value, the way the format deletes.
    pub fn remove_key(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        let record = self.codec().meta_record(key, meta.data_type)?;
        if meta.data_type == DataType::String {
            self.batch.delete(record.place, record.key);
            return Ok(());
        }
        match self.caps().delete {
            DeleteModel::DropMeta => self.batch.delete(record.place, record.key),
            DeleteModel::ResetMeta => {
                let fresh = self
                    .codec()
                    .new_meta(meta.data_type, self.eng.next_version(Some(meta.version)));
                let value = self.codec().encode_meta(&fresh)?;
                self.batch.put(record.place, record.key, value);
            }
            DeleteModel::RemoveElements { .. } => {
                self.clear_elements(key, meta)?;
                self.batch.delete(record.place, record.key);
            }
        }
        Ok(())
    }

    /// Queues the deletion of every element record of a collection: by
    /// range when the format deletes large collections that way, else one
    /// by one.
    pub fn clear_elements(&mut self, key: &[u8], meta: &Meta) -> CmdResult<()> {
        let by_range = match self.caps().delete {
            DeleteModel::RemoveElements { min_size } => meta.size >= min_size,
            _ => false,
        };
        for &kind in kinds_of(meta.data_type) {
            let range = self.codec().sub_range(kind, key, meta);
            if by_range {
                self.batch.delete_range(&range);
                continue;
            }
            let mut it = self.eng.store.scan(&range, None, false);
            while let Some((k, _)) = it.next()? {
                self.batch.delete(range.place, k);
            }
        }
        Ok(())
    }

    /// Sets the absolute expiry (unix ms; 0 clears it) in `meta`, rounded to
    /// the format's resolution. Expiries the format cannot hold are errors,
    /// raised before anything is written: a command that fails here leaves
    /// the store as it was (its batch is never committed).
    ///
    /// With [`TtlResolution::Seconds`] the absolute expiry is rounded **up**
    /// to a whole second: `stored = ceil(expire_ms / 1000) * 1000`. A key
    /// never expires before Redis would have expired it, and at most 999 ms
    /// after; an expiry already on a whole second is kept exactly. The
    /// rounding applies to every way of setting an expiry (EXPIRE, PEXPIRE,
    /// EXPIREAT, PEXPIREAT, SET EX/PX/EXAT/PXAT, SETEX, PSETEX, GETEX);
    /// TTL and PTTL then report the stored expiry minus the current time in
    /// ms (TTL rounding that to the nearest second, as Redis does). A key is
    /// live up to and including the millisecond of its stored expiry.
    pub fn set_expire(&self, meta: &mut Meta, expire_ms: u64) -> CmdResult<()> {
        let stored = stored_expiry(self.caps().ttl, expire_ms);
        let max = self.caps().max_expire_ms;
        if stored > max {
            return Err(CmdError::other(format!(
                "ERR expire time {expire_ms} ms is past the latest this format stores \
                 ({max} ms, {})",
                iso_utc(max)
            )));
        }
        meta.expire_ms = stored;
        Ok(())
    }

    /// Reads one element record.
    pub fn sub_get(
        &self,
        kind: SubKind,
        key: &[u8],
        meta: &Meta,
        id: &SubId,
    ) -> CmdResult<Option<SubValue>> {
        let place = self.codec().sub_place(kind);
        let raw_key = self.codec().sub_key(kind, key, meta, id);
        match self.eng.store.get(place, &raw_key)? {
            None => Ok(None),
            Some(raw) => Ok(Some(
                self.codec()
                    .decode_sub_value(kind, meta, &raw)
                    .map_err(|e| corrupt(key, e))?,
            )),
        }
    }

    /// Queues an element record write.
    pub fn sub_put(
        &mut self,
        kind: SubKind,
        key: &[u8],
        meta: &Meta,
        id: &SubId,
        value: &SubValue,
    ) {
        let place = self.codec().sub_place(kind);
        let raw_key = self.codec().sub_key(kind, key, meta, id);
        let raw_value = self.codec().encode_sub_value(kind, meta, value);
        self.batch.put(place, raw_key, raw_value);
    }

    /// Queues an element record deletion.
    pub fn sub_del(&mut self, kind: SubKind, key: &[u8], meta: &Meta, id: &SubId) {
        let place = self.codec().sub_place(kind);
        let raw_key = self.codec().sub_key(kind, key, meta, id);
        self.batch.delete(place, raw_key);
    }

    /// Iterates the element records of `kind`, forward or backward, from the
    /// start (or from `from`, inclusive).
    pub fn subs<'k>(
        &self,
        kind: SubKind,
        key: &'k [u8],
        meta: &'k Meta,
        from: Option<&SubId>,
        reverse: bool,
    ) -> SubIter<'e, 'k, C> {
        let codec = self.codec();
        let range = codec.sub_range(kind, key, meta);
        let start = from.map(|id| codec.sub_key(kind, key, meta, id));
        SubIter {
            codec,
            kind,
            key,
            meta,
            it: self.eng.store.scan(&range, start.as_deref(), reverse),
        }
    }
}

/// Decoded element records of one key.
pub struct SubIter<'e, 'k, C: Codec> {
    codec: &'e C,
    kind: SubKind,
    key: &'k [u8],
    meta: &'k Meta,
    it: StoreIter<'e>,
}

impl<C: Codec> Iterator for SubIter<'_, '_, C> {
    type Item = CmdResult<(SubId, SubValue)>;

    fn next(&mut self) -> Option<Self::Item> {
        let (k, v) = match self.it.next() {
            Ok(Some(pair)) => pair,
            Ok(None) => return None,
            Err(e) => return Some(Err(e.into())),
        };
        let decoded = self
            .codec
            .decode_sub_key(self.kind, self.key, self.meta, &k)
            .and_then(|id| {
                self.codec
                    .decode_sub_value(self.kind, self.meta, &v)
                    .map(|val| (id, val))
            })
            .map_err(|e| corrupt(self.key, e));
        Some(decoded)
    }
}

/// The absolute expiry stored for `expire_ms` at resolution `ttl`: itself
/// in milliseconds, rounded up to a whole second in seconds.
pub fn stored_expiry(ttl: TtlResolution, expire_ms: u64) -> u64 {
    match ttl {
        TtlResolution::Millis => expire_ms,
        TtlResolution::Seconds => expire_ms.div_ceil(1000).saturating_mul(1000),
    }
}

/// `ms` (unix milliseconds) as `YYYY-MM-DDTHH:MM:SSZ`, for messages.
pub(crate) fn iso_utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The element kinds a type stores.
pub fn kinds_of(ty: DataType) -> &'static [SubKind] {
    match ty {
        DataType::String => &[],
        DataType::Hash => &[SubKind::HashField],
        DataType::Set => &[SubKind::SetMember],
        DataType::List => &[SubKind::ListItem],
        DataType::ZSet => &[SubKind::ZSetMember, SubKind::ZSetScore],
    }
}

/// The error reply for undecodable bytes under `key`.
pub fn corrupt(key: &[u8], e: impl std::fmt::Display) -> CmdError {
    CmdError::other(format!(
        "ERR data under key {} is unreadable: {e}",
        quote_bytes(key)
    ))
}

#[cfg(test)]
mod expiry_tests {
    use super::*;

    #[test]
    fn seconds_round_up_and_whole_seconds_stay() {
        let s = TtlResolution::Seconds;
        assert_eq!(stored_expiry(s, 1_700_000_000_000), 1_700_000_000_000);
        assert_eq!(stored_expiry(s, 1_700_000_000_001), 1_700_000_001_000);
        assert_eq!(stored_expiry(s, 1_700_000_000_999), 1_700_000_001_000);
        assert_eq!(stored_expiry(TtlResolution::Millis, 7), 7);
    }

    #[test]
    fn dates_print_in_utc() {
        assert_eq!(iso_utc(2_147_483_647_000), "2038-01-19T03:14:07Z");
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(1_700_000_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(iso_utc(951_782_400_000), "2000-02-29T00:00:00Z");
    }
}
