//! Replication set by the topology, as Kvrocks' `SetMasterSlaveRepl`: a
//! node the topology lists as a master follows no one; a node listed as
//! `slave <master-id>` follows that master. It runs after every
//! `CLUSTERX SETNODES`, after `CLUSTERX SETNODEID` when the topology
//! names the new id, after `CLUSTER RESET` (no master any more) and at
//! start with the topology of `nodes.conf`. In cluster mode clients cannot
//! change it (`REPLICAOF` is refused with Kvrocks' text).

use crate::replica::replicaof;
use crate::state::Shared;

use super::topology::Role;

/// Kvrocks' refusal of `SLAVEOF`/`REPLICAOF` in cluster mode.
pub const REPLICAOF_REFUSED: &str = "ERR can't change to slave in cluster mode";

/// What the topology asks of this node's replication.
#[derive(Debug, PartialEq, Eq)]
enum Wanted {
    /// The topology does not name this node, or names a master it does
    /// not list: nothing changes (Kvrocks does nothing either).
    Nothing,
    /// A master: stop following.
    Master,
    /// A replica of the master at this address.
    Follow(String, u16),
}

fn wanted(shared: &Shared) -> Wanted {
    let state = shared.cluster.state.read();
    let Some(me) = state.myself() else {
        return Wanted::Nothing;
    };
    match &me.role {
        Role::Master => Wanted::Master,
        Role::Slave(master) => match state.topology.node(master) {
            Some(m) => Wanted::Follow(m.host.clone(), m.port),
            None => Wanted::Nothing,
        },
    }
}

/// Whether the topology lists this node as the replica of a master it
/// names: such a node follows from the start, so the replication state
/// it saved at its last stop still holds (a partial resync).
pub fn starts_as_replica(shared: &Shared) -> bool {
    shared.cluster.enabled() && matches!(wanted(shared), Wanted::Follow(..))
}

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
