//! The keys a script touches on a cluster node, checked call by call as
//! Redis 7.0 checks them (`scriptVerifyClusterState` in script.c).
//!
//! The script's declared keys were routed with EVAL or FCALL itself
//! (one slot, served here: `CROSSSLOT`, `MOVED` otherwise). Inside the
//! script every `redis.call` is checked again:
//! - a key this node does not serve is refused with Redis' *non local
//!   key* error, also for a command whose keys span slots; the slot the
//!   declared keys were routed to stays served for the whole script (an
//!   `ASKING` client's importing slot included);
//! - unless the script may cross slots (an EVAL script without shebang,
//!   or the `allow-cross-slot-keys` flag), every key must share one slot:
//!   the declared keys' slot, or else the first key's.
//!
//! Kvrocks runs a script's command on a key of another node's slot when
//! it is the script's first key; redcodec refuses it, as Redis does.
//!
//! Writes to a slot being migrated are tracked like a plain command's,
//! and the guards are held until the script's single store write
//! committed, so that the migration sends those keys again.

use bytes::Bytes;
use redcodec_engine::Reply;
use redcodec_kvrocks::slot::slot;
use redcodec_scripting::ScriptFlags;

use super::routing::Moving;
use super::Cluster;
use crate::command_spec::Spec;
use redcodec_engine::internals::dispatch::Flags;

/// A key of another node, or keys over slots in one command.
pub const NON_LOCAL: &str = "Script attempted to access a non local key in a cluster node";
/// A key outside the script's slot, the script not allowed to cross slots.
pub const CROSS_SLOT: &str = "Script attempted to access keys that do not hash to the same slot";
/// A script flagged `no-cluster`, run on a cluster node.
pub const NO_CLUSTER: &str = "ERR Can not run script on cluster, 'no-cluster' flag is set.";

/// The slot rules of one script run.
pub struct ScriptSlots<'a> {
    cluster: &'a Cluster,
    /// The declared keys' slot, routed with the script itself.
    routed: Option<u16>,
    /// The slot every key must hash to, unless `cross_slot_ok`.
    pinned: Option<u16>,
    cross_slot_ok: bool,
    /// Writes to slots being migrated, held until the script committed.
    guards: Moving<'a>,
}

impl Cluster {
    /// Redis' refusal of a `no-cluster` script on a cluster node.
    pub fn refuses_script(&self, flags: &ScriptFlags) -> Option<Reply> {
        (self.enabled && !flags.eval_compat && flags.no_cluster).then(|| Reply::error(NO_CLUSTER))
    }

    /// The rules for a script run with `declared` keys (already routed)
    /// and `flags`.
    pub fn script_slots(&self, declared: &[Bytes], flags: &ScriptFlags) -> ScriptSlots<'_> {
        let routed = declared.first().filter(|_| self.enabled).map(|k| slot(k));
        ScriptSlots {
            cluster: self,
            routed,
            pinned: routed,
            cross_slot_ok: flags.eval_compat || flags.allow_cross_slot,
            guards: Vec::new(),
        }
    }
}

impl<'a> ScriptSlots<'a> {
    /// Checks one command a script calls (`spec`, `args` with the name
    /// first) for `client`: Redis' error text when refused.
    pub fn check(&mut self, client: u64, spec: &Spec, args: &[Bytes]) -> Result<(), &'static str> {
        if !self.cluster.enabled {
            return Ok(());
        }
        let keys = spec.keys_of(args);
        let Some(&first) = keys.first() else {
            return Ok(());
        };
        let s = slot(first);
        if keys.iter().any(|k| slot(k) != s) {
            return Err(NON_LOCAL);
        }
        let guard = if Some(s) == self.routed {
            // Served for the whole script; a write may still have to wait
            // for a migration's last phase.
            if spec.has(Flags::WRITE) {
                self.cluster.migrator.enter_write(s, &keys, false)
            } else {
                Ok(None)
            }
        } else {
            self.cluster.check(client, spec, args)
        };
        match guard {
            Ok(guard) => self.guards.extend(guard),
            Err(_) => return Err(NON_LOCAL),
        }
        if !self.cross_slot_ok {
            match self.pinned {
                None => self.pinned = Some(s),
                Some(p) if p != s => return Err(CROSS_SLOT),
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// The writes to moving slots, to hold until the script committed.
    pub fn into_guards(self) -> Moving<'a> {
        self.guards
    }
}
