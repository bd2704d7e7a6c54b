//! Which node answers a command (Kvrocks' `Cluster::CanExecByMySelf`,
//! checked in `Connection::ExecuteCommands` after the command parsed and
//! before it runs or is queued).

use redcodec_engine::Reply;
use redcodec_kvrocks::slot::slot;

use super::migrate::WriteGuard;
use super::{Cluster, Role};
use crate::commands::flags;
use crate::session::Session;
use crate::state::Shared;

/// The blocking pops: they may wait long, so a migration does not wait
/// for them.
const BLOCKING: &[&str] = &[
    "blpop",
    "brpop",
    "blmove",
    "brpoplpush",
    "bzpopmin",
    "bzpopmax",
    "blmpop",
    "bzmpop",
];

/// The scripts that may write: their declared keys' slot is tracked
/// while it moves, as a write's (the script's own calls are checked in
/// [`super::script_keys`]).
const SCRIPTS_MAY_WRITE: &[&str] = &["eval", "evalsha", "fcall"];

/// The keys of a command, by the engine's command table, or for the
/// commands the server answers itself, by their Redis key positions.
pub fn keys_of<'a>(shared: &Shared, name: &str, args: &'a [Vec<u8>]) -> Vec<&'a [u8]> {
    let argv: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    if let Some((_, spec)) = shared.commands.get(args[0].as_slice()) {
        return spec.keys.of(&argv);
    }
    let rest = &argv[1..];
    match name {
        // Keys, then a timeout.
        "blpop" | "brpop" | "bzpopmin" | "bzpopmax" => {
            rest[..rest.len().saturating_sub(1)].to_vec()
        }
        "blmove" | "brpoplpush" => rest.iter().take(2).copied().collect(),
        // timeout numkeys key…, script numkeys key…
        "blmpop" | "bzmpop" | "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall"
        | "fcall_ro" => {
            let n = rest
                .get(1)
                .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok())
                .unwrap_or(0);
            rest.iter().skip(2).take(n).copied().collect()
        }
        "watch" => rest.to_vec(),
        // OBJECT ENCODING key, MEMORY USAGE key.
        "object" | "memory" if rest.len() >= 2 => vec![rest[1]],
        _ => Vec::new(),
    }
}

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
        name: &str,
        args: &[Vec<u8>],
    ) -> Result<Moving<'a>, Reply> {
        if !self.enabled {
            return Ok(Vec::new());
        }
        let client = session.info.id;
        let mut moving = Vec::new();
        if name == "exec" {
            let mut refused = None;
            for q in session.queued.iter().flatten() {
                let qname = String::from_utf8_lossy(&q[0]).to_ascii_lowercase();
                match self.check(shared, client, &qname, q) {
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
        } else if let Some(guard) = self.check(shared, client, name, args)? {
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
        shared: &Shared,
        client: u64,
        name: &str,
        args: &[Vec<u8>],
    ) -> Result<Option<WriteGuard<'a>>, Reply> {
        let keys = keys_of(shared, name, args);
        let Some((&first, rest)) = keys.split_first() else {
            return Ok(None);
        };
        let s = slot(first);
        if rest.iter().any(|k| slot(k) != s) {
            return Err(Reply::error(CROSSSLOT));
        }
        let write = flags::is_write(name) || SCRIPTS_MAY_WRITE.contains(&name);
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
                    .enter_write(s, &keys, BLOCKING.contains(&name));
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
