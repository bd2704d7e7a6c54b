//! The server as a replica of a Redis master (`REPLICAOF host port`,
//! `redcodec serve --replicaof HOST:PORT`): the handshake of a Redis 7
//! replica, a full copy (the master's RDB spooled to the data directory,
//! checked whole, then loaded through the engine; into a replica that
//! holds no key, loaded as it arrives), then every write the
//! master propagates, applied through the same path clients' commands
//! take (WATCH and blocked clients see them), with Redis' offsets, ACKs
//! and partial resynchronisation after a lost link.
//!
//! - [`master_link`]: one connection to the master, from the handshake to the
//!   end of the command stream, and the loop that reconnects.
//! - [`transfer`]: receiving the RDB (`$<len>` or diskless `$EOF:<mark>`)
//!   into a spool file, and [`rdb_feed`]: the thread that reads it as it
//!   arrives (checks it, or loads it into a replica that holds no key).
//! - [`load`]: the load marker, flushing and loading the keys, mapping
//!   Redis database indexes to the format's namespaces.
//! - [`info`]: `INFO replication` as a Redis 7.0 replica writes it.
//! - [`replicaof`](mod@replicaof): `REPLICAOF` / `SLAVEOF`, and the refusals a replica
//!   answers clients with (`READONLY`, `LOADING`) and replicas with
//!   (`NOMASTERLINK`).
//! - [`resume`]: the replication ID and offset kept in the data directory
//!   for a partial resync after a restart.
//! - [`follow`]: `migrate --follow`, this replica run with progress until
//!   caught up.

pub mod across_databases;
pub mod follow;
pub mod info;
pub mod kvrocks;
pub mod link_error;
pub mod link_phase;
pub mod load;
pub mod master_link;
pub mod pika;
pub mod rdb_feed;
pub mod replica_options;
pub mod replica_state;
pub mod replicaof;
pub mod resume;
pub mod resume_file;
pub mod resume_points;
pub mod stream_apply;
pub mod transfer;

use std::sync::Arc;

pub use replica_options::ReplicaOptions;
pub use replica_state::{LinkPhase, LinkState, Replica};
pub use replicaof::{gate, replicaof};
pub use resume::starts_following;

/// Starts what `redcodec serve` does about replication before it accepts
/// clients: a load that a crash interrupted is undone (its keys flushed,
/// so a half copy is never served as complete), and with `--replicaof`
/// (or as a replica in its cluster topology) the server starts following.
pub fn start(shared: &Arc<crate::state::Shared>) {
    resume::restore(shared, &load::marker_path(shared));
    if let Err(e) = load::recover(shared) {
        eprintln!("redcodec serve: replication: {e}");
    }
    if let Some((host, port)) = shared.config.replica.replicaof.clone() {
        replicaof::follow(shared, host, port);
    }
    // A cluster node restarted as a replica follows its master again.
    crate::cluster::replication::follow_topology(shared);
}

/// At shutdown, once clients are gone: waits for the link task to end
/// (nothing is applied after), then saves the replication state for a
/// partial resync at the next start ([`resume`]).
pub async fn finish(shared: &Arc<crate::state::Shared>) {
    let task = shared.replica.task.lock().take();
    if let Some(task) = task {
        let _ = task.await;
    }
    resume::save_at_stop(shared);
}
