//! Active expiry, for formats that declare
//! [`redcodec_codec::Capabilities::active_expiry`] (Ardb): compaction
//! filters report expired keys into [`redcodec_store::ExpiredKeys`] instead
//! of dropping them, and a background task started with the engine deletes,
//! every period, each reported key that is still expired.
//!
//! Two halves: the store side ([`pass`]: one pass,
//! [`crate::EngineCore::expire_reported_keys`], which decides with the
//! engine's clock, takes each key's lock like any command and deletes
//! through the same path as `DEL`) and the task side (`task`: the thread
//! that runs the pass every period, stopped and joined when the engine is
//! dropped).

#[cfg(feature = "rocksdb")]
pub mod pass;
pub(crate) mod task;

pub(crate) use task::ExpiryTask;
