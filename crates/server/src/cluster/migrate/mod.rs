//! `CLUSTERX MIGRATE <slot|range> <node-id> [async | sync [timeout]]`:
//! moves slots to another node the way Kvrocks' `SlotMigrator` does with
//! `migrate-type redis-command`, from a background thread:
//!
//! 1. connect to the destination, `AUTH` if this node has a password,
//!    `CLUSTER IMPORT <range> 0` (the destination clears the range and
//!    takes this connection's writes to it); with `migrate-type
//!    raw-key-value`, ask `COMMAND INFO applybatch` (`carrier`);
//! 2. once the writes that began before the range was marked moving have
//!    ended (they are not tracked), send every key of the range: with `raw-key-value` its stored records
//!    in write batches (`raw`); otherwise as typed commands, `migrate-pipeline-size`
//!    (16) a pipeline, one reply each, any error aborts (`dump`); with
//!    `migrate-speed` (4096, 0: no limit) a pipeline leaves at most every
//!    `1000000 * pipeline / speed` µs, as Kvrocks paces it;
//! 3. catch up: the keys written in the range meanwhile are sent again
//!    (`DEL`, then rebuilt; raw: the metadata deleted, then the key's
//!    records under a fresh version), in rounds until few are left (at most
//!    [`MAX_ROUNDS`]; a round stops as soon as more keys were written
//!    during it than it sends: writes outpace the migration);
//! 4. forbid writes to the range (`TRYAGAIN`), wait for the writes
//!    already running, send the last keys written (at full speed: the
//!    range refuses writes meanwhile);
//! 5. `CLUSTER IMPORT <range> 1`; the range is then answered with
//!    `MOVED` to the destination until the controller's next topology,
//!    which deletes its keys here.
//!
//! A failure sends `CLUSTER IMPORT <range> 2` (the destination deletes
//! what arrived) and lifts the write ban. Where Kvrocks reads its WAL to
//! catch up, this node records which keys of the range commands wrote
//! (after each write ran: a key is never sent before its write is
//! applied).

pub(crate) mod carrier;
mod destination;
mod dump;
pub(crate) mod migrate_types;
pub mod migrator;
mod paced_send;
mod raw;
mod write_batch;

use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redcodec_engine::Reply;

use super::parse::SlotRange;
use crate::state::Shared;
use carrier::Carrier;
use destination::Link;
pub use migrator::{MigrationState, Migrator, WriteGuard};

/// Catch-up rounds before writes are forbidden (Kvrocks' `kMaxLoopTimes`).
pub const MAX_ROUNDS: usize = 10;

/// Keys left to send that end the catch-up rounds.
const SMALL_GAP: usize = 100;

/// Keys a catch-up round sends between two looks at how many were
/// written meanwhile.
const ROUND_CHUNK: usize = 256;

fn err(text: impl AsRef<str>) -> Reply {
    Reply::error(format!("ERR {}", text.as_ref()))
}

/// Starts moving `range` to the node `dst` (Kvrocks' `MigrateSlotRange`
/// checks, then `PerformSlotRangeMigration`).
pub fn start(shared: &Shared, range: SlotRange, dst: &str) -> Result<(), Reply> {
    let c = &shared.cluster;
    let Some(me) = shared.handle() else {
        return Err(err("the server is shutting down"));
    };
    let (host, port) = {
        let state = c.state.read();
        let Some(target) = state.topology.node(dst) else {
            return Err(err("Can't find the destination node id"));
        };
        if let (Some(first), Some(last)) =
            (state.migrated.keys().next(), state.migrated.keys().last())
        {
            if range.overlaps(&SlotRange {
                start: *first,
                end: *last,
            }) {
                return Err(err("Can't migrate slot which has been migrated"));
            }
        }
        if !range.slots().all(|s| state.mine(s)) {
            return Err(err("Can't migrate slot which doesn't belong to me"));
        }
        if state.not_master() {
            return Err(err("Slave can't migrate slot"));
        }
        if !target.is_master() {
            return Err(err("Can't migrate slot to a slave"));
        }
        if target.id == state.myid {
            return Err(err("Can't migrate slot to myself"));
        }
        (target.host.clone(), target.port)
    };
    let m = &c.migrator;
    {
        let mut inner = m.inner.lock();
        if inner.running.is_some() {
            return Err(err("There is already a migrating job"));
        }
        if inner.forbidden.is_some_and(|f| f.overlaps(&range)) {
            return Err(err("Can't migrate slot which has been migrated"));
        }
        inner.running = Some(range);
        migrator::Migrator::next_epoch(&mut inner);
        inner.state = MigrationState::Started;
        inner.dst = dst.to_string();
        inner.result = None;
        inner.started += 1;
        m.dirty.lock().clear();
    }
    std::thread::Builder::new()
        .name("slot-migrate".into())
        .spawn(move || run(me, range, host, port))
        .map(|_| ())
        .map_err(|e| err(format!("failed to start the migration: {e}")))
}

/// What a migration moved, for its log line.
struct Moved {
    /// When it started.
    started: Instant,
    /// Keys of the snapshot.
    keys: usize,
    /// Keys written meanwhile and sent again.
    resent: usize,
    /// When writes to the slots began to wait.
    blocked: Instant,
    /// The `migrate-type` used.
    kind: &'static str,
}

/// The migration thread.
fn run(shared: Arc<Shared>, range: SlotRange, host: String, port: u16) {
    let m = &shared.cluster.migrator;
    let mut link = None;
    let result = migrate(&shared, range, &host, port, &mut link);
    let result = match result {
        Ok(moved) => {
            let addr = format!("{host}:{port}");
            {
                let mut state = shared.cluster.state.write();
                for s in range.slots() {
                    state.migrated.insert(s, addr.clone());
                }
            }
            let (bytes, commands) = link.as_ref().map_or((0, 0), Link::sent);
            let secs = moved.started.elapsed().as_secs_f64();
            eprintln!(
                "redcodec serve: [migrate] slot(s) {range} moved to {addr} ({}): {} keys ({} sent again), {commands} commands, {bytes} bytes in {secs:.2}s ({:.1} MB/s, {:.0} keys/s); writes to the slots waited {:.1} ms",
                moved.kind,
                moved.keys,
                moved.resent,
                bytes as f64 / 1e6 / secs.max(1e-9),
                moved.keys as f64 / secs.max(1e-9),
                moved.blocked.elapsed().as_secs_f64() * 1000.0,
            );
            Ok(())
        }
        Err(e) => {
            {
                let mut inner = m.inner.lock();
                inner.failed = Some(range);
                inner.forbidden = None;
            }
            if let Some(link) = link.as_mut() {
                let _ = link.call(&import_args(range, 2));
            }
            Err(e)
        }
    };
    if let Err(e) = &result {
        eprintln!("redcodec serve: [migrate] failed to migrate slot(s) {range}: {e}");
    }
    let mut inner = m.inner.lock();
    match &result {
        Ok(()) => {
            inner.state = MigrationState::Success;
            inner.failed = None;
        }
        Err(_) => inner.state = MigrationState::Failed,
    }
    inner.result = Some(result);
    inner.running = None;
    m.dirty.lock().clear();
    m.finished.notify_all();
}

fn import_args(range: SlotRange, state: u8) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"cluster"),
        Bytes::from_static(b"import"),
        range.to_string().into(),
        state.to_string().into(),
    ]
}

/// Steps 1 to 5; the link is left in `link` for a failure's IMPORT 2.
fn migrate(
    shared: &Shared,
    range: SlotRange,
    host: &str,
    port: u16,
    link: &mut Option<Link>,
) -> Result<Moved, String> {
    let started = Instant::now();
    let l = link.insert(
        Link::connect(host, port)
            .map_err(|e| format!("failed to connect to the destination node: {e}"))?,
    );
    if let Some(pass) = shared.requirepass() {
        l.call(&[Bytes::from_static(b"auth"), pass.into()])
            .map_err(|e| format!("failed to authenticate on destination node: {e}"))?;
    }
    l.call(&import_args(range, 0))
        .map_err(|e| format!("failed to set import status on destination node: {e}"))?;
    let carrier = &mut Carrier::choose(shared, l)?;
    // A write that began before the range was marked moving is not
    // tracked: the snapshot is read once every such write has ended.
    shared
        .cluster
        .migrator
        .drain_earlier_writes(Duration::from_secs(60))?;
    let keys = carrier.snapshot(shared, l, range)?;
    let m = &shared.cluster.migrator;
    let mut resent = 0;
    // Each round sends the keys written during the one before. Writes
    // that come faster than the pace sends make every round larger than
    // the last, and the rounds never end: once the keys written during a
    // round outnumber the round's own, the round stops and writes are
    // forbidden (one TRYAGAIN phase, sent at full speed, below).
    for _ in 0..MAX_ROUNDS {
        let keys: Vec<Vec<u8>> = std::mem::take(&mut *m.dirty.lock()).into_iter().collect();
        let round = keys.len();
        let mut chunks = keys.chunks(ROUND_CHUNK);
        let mut outpaced = false;
        for chunk in chunks.by_ref() {
            carrier.resend(shared, l, range, chunk)?;
            resent += chunk.len();
            if m.dirty.lock().len() > round {
                outpaced = true;
                break;
            }
        }
        // What the round did not send goes with the last phase.
        m.dirty.lock().extend(chunks.flatten().cloned());
        if outpaced || round <= SMALL_GAP {
            break;
        }
    }
    // What is on its way is applied before writes wait (raw batches are
    // pipelined): the window below holds only the last keys.
    carrier.finish(shared, l)?;
    m.inner.lock().forbidden = Some(range);
    let blocked = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(60);
    while m.in_flight.load(Ordering::SeqCst) > 0 {
        if Instant::now() > deadline {
            return Err("writes to the slot did not end".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let last = std::mem::take(&mut *m.dirty.lock());
    resent += last.len();
    // Unpaced: while the range refuses writes, ending soon matters more
    // than sparing the source (Kvrocks paces this phase too).
    carrier.unpaced();
    carrier.resend(shared, l, range, &last.into_iter().collect::<Vec<_>>())?;
    carrier.finish(shared, l)?;
    l.call(&import_args(range, 1))
        .map_err(|e| format!("failed to set import status on destination node: {e}"))?;
    Ok(Moved {
        started,
        keys,
        resent,
        blocked,
        kind: carrier.name(),
    })
}
