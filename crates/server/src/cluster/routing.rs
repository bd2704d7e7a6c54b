//! Which node answers a command (Kvrocks' `Cluster::CanExecByMySelf`,
//! checked in `Connection::ExecuteCommands` after the command parsed and
//! before it runs or is queued).

use bytes::Bytes;
use redcodec_engine::Reply;
use redcodec_kvrocks::slot::slot;

use super::migrate::WriteGuard;
use super::topology::Role;
use super::Cluster;
use crate::command_spec::{Run, Spec};
use crate::command_table;
use crate::session::Session;
use crate::state::Shared;
use redcodec_engine::internals::dispatch::Flags;

/// The text of a CROSSSLOT refusal.
pub const CROSSSLOT: &str = "CROSSSLOT Attempted to access keys that don't hash to the same slot";

/// Writes to slots being migrated, tracked until they end (see
/// [`super::migrate`]).
pub type Moving<'a> = Vec<WriteGuard<'a>>;

impl Cluster {
    /// Whether this node runs the command, or the error that sends the
    /// client elsewhere: `CROSSSLOT`, `CLUSTERDOWN Hash slot not served`,
    /// `MOVED <slot> <host>:<port>`, `TRYAGAIN` while a moving slot's last
    /// writes go out. Clears `ASKING` once a command passed. EXEC checks
    /// the commands it queued again (the topology may have changed
    /// meanwhile); one refused discards the transaction.
    ///
    /// Keep what it returns until the command has run: writes to a slot
    /// being migrated are sent again once they ended.
    pub fn route<'a>(
        &'a self,
        shared: &Shared,
        session: &mut Session,
        spec: &Spec,
        args: &[Bytes],
    ) -> Result<Moving<'a>, Reply> {
        if !self.enabled {
            return Ok(Vec::new());
        }
        let client = session.info.id;
        let mut moving = Vec::new();
        if matches!(spec.run, Run::Exec) {
            let mut refused = None;
            for q in session.queued.iter().flatten() {
                let Some(qspec) = q.spec.map(command_table::by_id) else {
                    continue;
                };
                match self.check(client, qspec, &q.args) {
                    Ok(Some(guard)) => moving.push(guard),
                    Ok(None) => {}
                    Err(e) => {
                        refused = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = refused {
                session.discard(shared);
                return Err(e);
            }
        } else if let Some(guard) = self.check(client, spec, args)? {
            moving.push(guard);
        }
        if let Some(link) = self.links.lock().get_mut(&client) {
            link.asking = false;
        }
        Ok(moving)
    }

    /// One command's check.
    pub(super) fn check<'a>(
        &'a self,
        client: u64,
        spec: &Spec,
        args: &[Bytes],
    ) -> Result<Option<WriteGuard<'a>>, Reply> {
        let keys = spec.keys_of(args);
        let Some((&first, rest)) = keys.split_first() else {
            return Ok(None);
        };
        let s = slot(first);
        if rest.iter().any(|k| slot(k) != s) {
            return Err(Reply::error(CROSSSLOT));
        }
        // A script not `_RO` may write: its declared keys' slot is
        // tracked while it moves, as a write's (its own calls are checked
        // in [`super::script_keys`]).
        let write = spec.has(Flags::WRITE) || spec.has(Flags::MAY_WRITE);
        let state = self.state.read();
        let Some(owner) = state.topology.owner(s) else {
            return Err(Reply::error("CLUSTERDOWN Hash slot not served"));
        };
        let moved = |addr: &str| Reply::error(format!("MOVED {s} {addr}"));
        let me = state.myself();
        if me.is_some_and(|me| me.id == owner.id) {
            if let Some(addr) = state.migrated.get(&s) {
                return Err(moved(addr));
            }
            if write {
                return self
                    .migrator
                    .enter_write(s, &keys, spec.has(Flags::BLOCKING));
            }
            return Ok(None);
        }
        let Some(me) = me else {
            return Err(moved(&owner.addr()));
        };
        let link = self.link(client);
        if state.importing_range.is_some_and(|r| r.contains(s)) && (link.importing || link.asking) {
            return Ok(None);
        }
        if state.imported.contains(&s) {
            return Ok(None);
        }
        if let Role::Slave(master) = &me.role {
            if !write && *master == owner.id && link.readonly {
                return Ok(None);
            }
        }
        Err(moved(&owner.addr()))
    }
}
