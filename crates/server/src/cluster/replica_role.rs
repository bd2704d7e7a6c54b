//! What the cluster topology makes this node: a master, a replica of a
//! master it names, or nothing said ([`super::replication`] follows it).

use crate::state::Shared;

use super::topology::Role;

/// What the topology asks of this node's replication.
#[derive(Debug, PartialEq, Eq)]
pub enum Wanted {
    /// The topology does not name this node, or names a master it does
    /// not list: nothing changes (Kvrocks does nothing either).
    Nothing,
    /// A master: stop following.
    Master,
    /// A replica of the master at this address.
    Follow(String, u16),
}

/// What the topology asks of this node.
pub fn wanted(shared: &Shared) -> Wanted {
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
