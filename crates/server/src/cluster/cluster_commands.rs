//! CLUSTER, CLUSTERX, ASKING, READONLY and READWRITE, parsed and answered
//! as Kvrocks' `src/commands/cmd_cluster.cc` does: the arguments first
//! (Kvrocks' `Parse`), then cluster mode and admin permission, then the
//! subcommand. CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT, which Kvrocks
//! 2.10 lacks, answer as Redis 7.0 does.

use bytes::Bytes;
use redcodec_engine::Reply;
use redcodec_kvrocks::slot::slot;

use super::parse::{parse_int, parse_slot_ranges, SlotRange, SLOTS};
use super::topology::NODE_ID_LEN;
use super::{slot_keys, Cluster, ImportState, Link};
use crate::session::Session;
use crate::state::Shared;

fn err(text: impl AsRef<str>) -> Reply {
    Reply::error(format!("ERR {}", text.as_ref()))
}

fn lower(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).to_ascii_lowercase()
}

/// A parsed `CLUSTER` subcommand.
enum ClusterCmd {
    Nodes,
    Slots,
    Info,
    Reset,
    KeySlot,
    Import(SlotRange, i64),
    Replicas,
    CountKeys,
    GetKeys,
}

fn parse_cluster(args: &[Bytes]) -> Result<ClusterCmd, Reply> {
    let sub = lower(&args[1]);
    let n = args.len();
    match sub.as_str() {
        "nodes" if n == 2 => return Ok(ClusterCmd::Nodes),
        "slots" if n == 2 => return Ok(ClusterCmd::Slots),
        "info" if n == 2 => return Ok(ClusterCmd::Info),
        "reset" if n == 2 || n == 3 => {
            if n == 3
                && !args[2].eq_ignore_ascii_case(b"hard")
                && !args[2].eq_ignore_ascii_case(b"soft")
            {
                return Err(err("syntax error"));
            }
            return Ok(ClusterCmd::Reset);
        }
        "keyslot" if n == 3 => return Ok(ClusterCmd::KeySlot),
        "import" => {
            if n != 4 {
                return Err(err("wrong number of arguments"));
            }
            let ranges = parse_slot_ranges(&args[2]).map_err(err)?;
            let state = parse_int(&args[3], 0, i64::from(u32::MAX))
                .ok()
                .filter(|s| (0..=3).contains(s))
                .ok_or_else(|| err("Invalid import state"))?;
            return Ok(ClusterCmd::Import(ranges[0], state));
        }
        "replicas" if n == 3 => return Ok(ClusterCmd::Replicas),
        "countkeysinslot" if n == 3 => return Ok(ClusterCmd::CountKeys),
        "getkeysinslot" if n == 4 => return Ok(ClusterCmd::GetKeys),
        _ => {}
    }
    Err(err(
        "CLUSTER command, CLUSTER INFO|NODES|SLOTS|KEYSLOT|RESET|REPLICAS",
    ))
}

/// Cluster mode on and an admin connection (Kvrocks' `Execute` checks).
fn permitted(shared: &Shared, session: &Session) -> Result<(), Reply> {
    if !shared.cluster.enabled() {
        return Err(err("Cluster mode is not enabled"));
    }
    if !session.is_admin(shared) {
        return Err(Reply::error(crate::commands::flush_all::ADMIN_REQUIRED));
    }
    Ok(())
}

const NOT_INITIALIZED: &str = "CLUSTERDOWN The cluster is not initialized";

/// `CLUSTER <subcommand> …`.
pub fn cluster(shared: &Shared, session: &Session, args: &[Bytes]) -> Reply {
    let cmd = match parse_cluster(args) {
        Ok(c) => c,
        Err(e) => return e,
    };
    if let Err(e) = permitted(shared, session) {
        return e;
    }
    let c = &shared.cluster;
    match cmd {
        ClusterCmd::KeySlot => Reply::Integer(i64::from(slot(&args[2]))),
        ClusterCmd::Slots => {
            let state = c.state.read();
            if state.version < 0 {
                return Reply::error(NOT_INITIALIZED);
            }
            Reply::Array(
                state
                    .topology
                    .slot_entries()
                    .into_iter()
                    .map(|(range, nodes)| {
                        let mut entry = vec![
                            Reply::Integer(i64::from(range.start)),
                            Reply::Integer(i64::from(range.end)),
                        ];
                        entry.extend(nodes.into_iter().map(|n| {
                            Reply::Array(vec![
                                Reply::bulk(n.host.as_str()),
                                Reply::Integer(i64::from(n.port)),
                                Reply::bulk(n.id.as_str()),
                            ])
                        }));
                        Reply::Array(entry)
                    })
                    .collect(),
            )
        }
        ClusterCmd::Nodes => {
            let state = c.state.read();
            if state.version < 0 {
                return Reply::error(NOT_INITIALIZED);
            }
            Reply::bulk(c.nodes_text(&state))
        }
        ClusterCmd::Info => {
            let state = c.state.read();
            if state.version < 0 {
                return Reply::error(NOT_INITIALIZED);
            }
            Reply::bulk(c.info_text(&state))
        }
        ClusterCmd::Replicas => {
            let state = c.state.read();
            if state.version < 0 {
                return Reply::error(NOT_INITIALIZED);
            }
            let id = String::from_utf8_lossy(&args[2]);
            match state.topology.node(&id) {
                None => err("Invalid cluster node id"),
                Some(n) if !n.is_master() => err("The node isn't a master"),
                Some(n) => Reply::bulk(state.topology.replicas_text(
                    n,
                    state.version,
                    super::now_ms(),
                )),
            }
        }
        ClusterCmd::Reset => reset(shared),
        ClusterCmd::Import(range, state) => import(shared, session, range, state),
        ClusterCmd::CountKeys => match redis_slot(&args[2]) {
            Ok(s) => {
                let keys = in_slot(shared, s, usize::MAX);
                keys.map_or_else(|e| e, |k| Reply::Integer(k.len() as i64))
            }
            Err(e) => e,
        },
        ClusterCmd::GetKeys => {
            let (s, count) = match (redis_int(&args[2]), redis_int(&args[3])) {
                (Ok(s), Ok(n)) => (s, n),
                (Err(e), _) | (_, Err(e)) => return e,
            };
            if !(0..SLOTS as i64).contains(&s) || count < 0 {
                return err("Invalid slot or number of keys");
            }
            in_slot(shared, s as u16, count as usize).map_or_else(|e| e, Reply::bulks)
        }
    }
}

/// Redis' `getLongLongFromObjectOrReply`.
fn redis_int(arg: &[u8]) -> Result<i64, Reply> {
    std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| err("value is not an integer or out of range"))
}

/// A slot as Redis' COUNTKEYSINSLOT takes it.
fn redis_slot(arg: &[u8]) -> Result<u16, Reply> {
    let s = redis_int(arg)?;
    if !(0..SLOTS as i64).contains(&s) {
        return Err(err("Invalid slot"));
    }
    Ok(s as u16)
}

fn in_slot(shared: &Shared, s: u16, limit: usize) -> Result<Vec<Vec<u8>>, Reply> {
    let engine = shared.engines.shared(&shared.config.default_namespace)?;
    Ok(slot_keys::keys_in(&engine, SlotRange::point(s), limit))
}

fn reset(shared: &Shared) -> Reply {
    let c = &shared.cluster;
    if c.migrator.migrating().is_some() {
        return err("Can't reset cluster while migrating slot");
    }
    let state = c.state.write();
    if matches!(state.import, Some((_, ImportState::Start))) {
        return err("Can't reset cluster while importing slot");
    }
    let empty = match shared.engines.shared(&shared.config.default_namespace) {
        Ok(engine) => engine.execute(&[b"dbsize".as_slice()]) == Reply::Integer(0),
        Err(e) => return e,
    };
    if !empty {
        return err("Can't reset cluster while database is not empty");
    }
    // A replica stops following (Kvrocks' `RemoveMaster`), without the
    // topology's lock: the link may need it to finish the command it
    // applies.
    drop(state);
    crate::replica::replicaof::stop(shared);
    c.reset(&mut c.state.write());
    Reply::ok()
}

fn import(shared: &Shared, session: &Session, range: SlotRange, code: i64) -> Reply {
    let c = &shared.cluster;
    let mut state = c.state.write();
    if state.not_master() {
        return err("Slave can't import slot");
    }
    if range.slots().any(|s| state.mine(s)) {
        return err("Can't import slot which belongs to me");
    }
    let current = state
        .import
        .map_or("-1".to_string(), |(r, _)| r.to_string());
    let mismatch = || {
        err(format!(
            "mismatch slot, importing slot(s): {current}, but got: {range}"
        ))
    };
    match code {
        0 => {
            if let Some((r, ImportState::Start)) = state.import {
                if r == range {
                    return Reply::ok();
                }
                return err(format!(
                    "only one importing job is allowed, current importing: {r}"
                ));
            }
            c.clear_slots(shared, range);
            state.import = Some((range, ImportState::Start));
            state.importing_range = Some(range);
            c.update_link(session.info.id, |l| l.importing = true);
            c.migrator.release_forbidden(range);
            Reply::ok()
        }
        1 => {
            if state.import.map(|(r, _)| r) != Some(range) {
                return mismatch();
            }
            state.imported.extend(range.slots());
            state.import = Some((range, ImportState::Success));
            Reply::ok()
        }
        2 => {
            if state.import.map(|(r, _)| r) != Some(range) {
                return mismatch();
            }
            c.clear_slots(shared, range);
            state.import = Some((range, ImportState::Failed));
            Reply::ok()
        }
        _ => err("Invalid import state"),
    }
}

/// A parsed `CLUSTERX` subcommand.
enum ClusterXCmd {
    Version,
    MyId,
    SetNodeId,
    SetNodes {
        version: i64,
        force: bool,
    },
    SetSlot {
        ranges: Vec<SlotRange>,
        version: i64,
    },
    Migrate {
        range: SlotRange,
        sync: Option<u64>,
    },
}

fn parse_clusterx(args: &[Bytes]) -> Result<ClusterXCmd, Reply> {
    let sub = lower(&args[1]);
    let n = args.len();
    match sub.as_str() {
        "version" if n == 2 => return Ok(ClusterXCmd::Version),
        "myid" if n == 2 => return Ok(ClusterXCmd::MyId),
        "setnodeid" if n == 3 && args[2].len() == NODE_ID_LEN => return Ok(ClusterXCmd::SetNodeId),
        "migrate" => {
            if !(4..=6).contains(&n) {
                return Err(err("wrong number of arguments"));
            }
            let ranges = parse_slot_ranges(&args[2]).map_err(err)?;
            let mut sync = None;
            if n >= 5 {
                match lower(&args[4]).as_str() {
                    "async" if n == 6 => {
                        return Err(err("Async migration does not support timeout"))
                    }
                    "async" => {}
                    "sync" => {
                        let mut timeout = 0;
                        if n == 6 {
                            let t = parse_int(&args[5], i64::from(i32::MIN), i64::from(i32::MAX))
                                .map_err(|_| {
                                err("timeout is not an integer or out of range")
                            })?;
                            if t < 0 {
                                return Err(err("timeout is negative"));
                            }
                            timeout = t as u64;
                        }
                        sync = Some(timeout);
                    }
                    _ => return Err(err("Invalid sync flag")),
                }
            }
            return Ok(ClusterXCmd::Migrate {
                range: ranges[0],
                sync,
            });
        }
        "setnodes" if n >= 4 => {
            let version =
                parse_int(&args[3], i64::MIN, i64::MAX).map_err(|_| err("Invalid version"))?;
            if n == 4 {
                return Ok(ClusterXCmd::SetNodes {
                    version,
                    force: false,
                });
            }
            if n == 5 && args[4].eq_ignore_ascii_case(b"force") {
                return Ok(ClusterXCmd::SetNodes {
                    version,
                    force: true,
                });
            }
            return Err(err("Invalid setnodes options"));
        }
        "setslot" if n == 6 => {
            let ranges = parse_slot_ranges(&args[2]).map_err(err)?;
            if !args[3].eq_ignore_ascii_case(b"node") {
                return Err(err("Invalid setslot options"));
            }
            if args[4].len() != NODE_ID_LEN {
                return Err(err("Invalid node id"));
            }
            let version = parse_int(&args[5], i64::MIN, i64::MAX)
                .map_err(|_| err("value is not an integer or out of range"))?;
            if version < 0 {
                return Err(err("Invalid version"));
            }
            return Ok(ClusterXCmd::SetSlot { ranges, version });
        }
        _ => {}
    }
    Err(err(
        "CLUSTERX command, CLUSTERX VERSION|MYID|SETNODEID|SETNODES|SETSLOT|MIGRATE",
    ))
}

/// What `CLUSTERX` answers: a reply now, or a synchronous migration to
/// wait for.
enum ClusterXAnswer {
    /// The reply.
    Now(Reply),
    /// `CLUSTERX MIGRATE … sync [timeout]`: wait for the migration
    /// (timeout in seconds, 0: none).
    WaitMigration(u64),
}

/// `CLUSTERX <subcommand> …`. `MIGRATE … sync [timeout]` answers when
/// the migration ends: OK, its error, or a nil bulk string after the
/// timeout (Kvrocks' `SyncMigrateContext`); inside a transaction it
/// answers at once, as `async`.
pub fn clusterx(shared: &Shared, session: &Session, args: &[Bytes]) -> Reply {
    match clusterx_reply(shared, session, args) {
        Ok(ClusterXAnswer::Now(r)) | Err(r) => r,
        // Inside EXEC the engine is held: the migration could not read it.
        Ok(ClusterXAnswer::WaitMigration(_)) if session.ready_keys.is_some() => Reply::ok(),
        Ok(ClusterXAnswer::WaitMigration(timeout)) => {
            let wait = || shared.cluster.migrator.wait(timeout);
            let multi_thread = tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
            let result = if multi_thread {
                tokio::task::block_in_place(wait)
            } else {
                wait()
            };
            match result {
                None => Reply::Nil,
                Some(Ok(())) => Reply::ok(),
                Some(Err(e)) => err(e),
            }
        }
    }
}

fn clusterx_reply(
    shared: &Shared,
    session: &Session,
    args: &[Bytes],
) -> Result<ClusterXAnswer, Reply> {
    let cmd = parse_clusterx(args)?;
    permitted(shared, session)?;
    let c = &shared.cluster;
    let persist = |state: &super::State| c.persist(state).map_err(err);
    let reply = match cmd {
        ClusterXCmd::Version => Reply::bulk(c.state.read().version.to_string()),
        ClusterXCmd::MyId => Reply::bulk(c.state.read().myid.as_str()),
        ClusterXCmd::SetNodeId => {
            let mut state = c.state.write();
            state.myid = String::from_utf8_lossy(&args[2]).into_owned();
            persist(&state)?;
            drop(state);
            super::replication::follow_topology(shared);
            Reply::ok()
        }
        ClusterXCmd::SetNodes { version, force } => {
            let gone = {
                let mut state = c.state.write();
                let gone = c
                    .set_nodes(&mut state, &args[2], version, force)
                    .map_err(err)?;
                persist(&state)?;
                gone
            };
            for s in gone {
                c.clear_slots(shared, SlotRange::point(s));
            }
            super::replication::follow_topology(shared);
            Reply::ok()
        }
        ClusterXCmd::SetSlot { ranges, version } => {
            let gone = set_slot(c, &ranges, &args[4], version)?;
            for s in gone {
                c.clear_slots(shared, SlotRange::point(s));
            }
            Reply::ok()
        }
        ClusterXCmd::Migrate { range, sync } => {
            let dst = String::from_utf8_lossy(&args[3]).into_owned();
            super::migrate::start(shared, range, &dst)?;
            match sync {
                Some(timeout) => return Ok(ClusterXAnswer::WaitMigration(timeout)),
                None => Reply::ok(),
            }
        }
    };
    Ok(ClusterXAnswer::Now(reply))
}

/// Kvrocks' `SetSlotRanges`: gives `ranges` to the master `id`; the
/// version must be the current one plus one. Returns the slots this node
/// migrated away and lost, whose keys go.
fn set_slot(c: &Cluster, ranges: &[SlotRange], id: &[u8], version: i64) -> Result<Vec<u16>, Reply> {
    let mut state = c.state.write();
    if version <= 0 || version != state.version + 1 {
        return Err(err("Invalid cluster version"));
    }
    let id = String::from_utf8_lossy(id);
    let Some(to) = state.topology.index_of(&id) else {
        return Err(err("No this node in the cluster"));
    };
    if !state.topology.nodes[to].is_master() {
        return Err(err("The node isn't a master"));
    }
    state.version = version;
    let me = state.myself().map(|n| n.id.clone());
    let mut gone = Vec::new();
    for range in ranges {
        for s in range.slots() {
            let old = state.topology.slots[usize::from(s)];
            state.topology.slots[usize::from(s)] = Some(to);
            let was_mine = old.is_some_and(|o| Some(&state.topology.nodes[o].id) == me.as_ref());
            if was_mine && old != Some(to) {
                if state.migrated.remove(&s).is_some() {
                    gone.push(s);
                }
                state.imported.remove(&s);
            }
        }
    }
    c.persist(&state).map_err(err)?;
    Ok(gone)
}

/// `ASKING`, `READONLY`, `READWRITE`: OK, and the connection's flag.
pub fn link_flag(shared: &Shared, session: &Session, set: fn(&mut Link)) -> Reply {
    shared.cluster.update_link(session.info.id, set);
    Reply::ok()
}

/// Whether `CLUSTER <sub>` answers verbatim text under RESP3.
pub fn verbatim(sub: &[u8]) -> bool {
    [b"nodes".as_slice(), b"info", b"replicas"]
        .iter()
        .any(|s| sub.eq_ignore_ascii_case(s))
}
