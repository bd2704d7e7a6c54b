//! How a migration carries keys to the destination: Kvrocks'
//! `migrate-type` (`redis-command`: typed commands, [`super::dump`];
//! `raw-key-value`: the stored records in write batches, [`super::raw`]).
//! The flow of [`super::migrate`] is the same for both: snapshot, catch-up
//! rounds, last keys, one branch on the type here.

use std::time::Duration;

use super::destination::Link;
use super::migrate_types::MIGRATE_TYPES;
use super::paced_send::{self, send, Pace};
use super::raw;
use crate::cluster::parse::SlotRange;
use crate::state::Shared;

/// The carrier of one migration.
pub enum Carrier {
    /// Typed commands, `migrate-pipeline-size` a pipeline.
    Commands(Pace),
    /// Write batches (`APPLYBATCH`).
    Raw {
        /// The batches.
        sender: raw::Sender,
        /// Counter of the fresh versions keys sent again get.
        versions: u64,
    },
}

impl Carrier {
    /// The carrier `migrate-type` names. As Kvrocks, `raw-key-value` falls
    /// back to commands when the destination's `COMMAND INFO applybatch`
    /// is not an array of arrays.
    pub fn choose(shared: &Shared, link: &mut Link) -> Result<Carrier, String> {
        let raw = shared
            .settings
            .lock()
            .value("migrate-type")
            .is_some_and(|t| t == MIGRATE_TYPES[1]);
        if raw {
            let supported = link
                .call_is_nested_array(&[b"command".as_slice(), b"info", b"applybatch"])
                .map_err(|e| format!("failed to send command info to the destination node: {e}"))?;
            if supported {
                return Ok(Carrier::Raw {
                    sender: raw::Sender::new(shared),
                    versions: 0,
                });
            }
            eprintln!(
                "redcodec serve: [migrate] APPLYBATCH command is not supported, use redis command for migration"
            );
        }
        Ok(Carrier::Commands(Pace::of(shared)))
    }

    /// The type's name, for the log.
    pub fn name(&self) -> &'static str {
        match self {
            Carrier::Commands(_) => MIGRATE_TYPES[0],
            Carrier::Raw { .. } => MIGRATE_TYPES[1],
        }
    }

    /// Sends every key of `range`; how many.
    pub fn snapshot(
        &mut self,
        shared: &Shared,
        link: &mut Link,
        range: SlotRange,
    ) -> Result<usize, String> {
        match self {
            Carrier::Commands(pace) => {
                let keys = {
                    let engine = paced_send::engine(shared)?;
                    crate::cluster::slot_keys::keys_in(&engine, range, usize::MAX)
                };
                send(shared, link, pace, &keys, false)?;
                Ok(keys.len())
            }
            Carrier::Raw { sender, .. } => {
                Ok(raw::send_snapshot(shared, link, sender, range)?.keys)
            }
        }
    }

    /// Sends `keys` again as they are now (a key gone as its deletion).
    pub fn resend(
        &mut self,
        shared: &Shared,
        link: &mut Link,
        range: SlotRange,
        keys: &[Vec<u8>],
    ) -> Result<(), String> {
        match self {
            Carrier::Commands(pace) => send(shared, link, pace, keys, true),
            Carrier::Raw { sender, versions } => {
                raw::resend(shared, link, sender, range, keys, versions)?;
                sender.send(shared, link)
            }
        }
    }

    /// No pacing from now on (the last phase).
    pub fn unpaced(&mut self) {
        match self {
            Carrier::Commands(pace) => pace.gap = Duration::ZERO,
            Carrier::Raw { sender, .. } => sender.unpaced(),
        }
    }

    /// Waits until everything sent is applied.
    pub fn finish(&mut self, shared: &Shared, link: &mut Link) -> Result<(), String> {
        match self {
            Carrier::Commands(_) => Ok(()),
            Carrier::Raw { sender, .. } => sender.finish(shared, link),
        }
    }
}
