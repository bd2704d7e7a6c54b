//! Replication set by the topology, as Kvrocks' `SetMasterSlaveRepl`: a
//! node the topology lists as a master follows no one; a node listed as
//! `slave <master-id>` follows that master. It runs after every
//! `CLUSTERX SETNODES`, after `CLUSTERX SETNODEID` when the topology
//! names the new id, after `CLUSTER RESET` (no master any more) and at
//! start with the topology of `nodes.conf`. In cluster mode clients cannot
//! change it (`REPLICAOF` is refused with Kvrocks' text).

use crate::replica::replicaof;
use crate::state::Shared;

pub use super::replica_role::starts_as_replica;
use super::replica_role::{wanted, Wanted};

/// Follows what the topology says this node is. Following the master it
/// already follows changes nothing (Kvrocks' `AddMaster` without
/// `force_reconnect`); a master that followed another node becomes
/// writable, as after `REPLICAOF NO ONE`.
pub fn follow_topology(shared: &Shared) {
    if !shared.cluster.enabled() {
        return;
    }
    match wanted(shared) {
        Wanted::Nothing => {}
        Wanted::Master => replicaof::stop(shared),
        Wanted::Follow(host, port) => {
            if replicaof::follows(shared, &host, port) {
                return;
            }
            if let Some(shared) = shared.handle() {
                eprintln!(
                    "redcodec serve: cluster: SLAVE OF {host}:{port} enabled by cluster topology setting"
                );
                replicaof::follow(&shared, host, port);
            }
        }
    }
}
