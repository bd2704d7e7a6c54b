//! Kvrocks' cluster model: a node serves the slots a controller assigns it
//! (`CLUSTERX SETNODES`, as apache/kvrocks-controller sends it), redirects
//! clients to the node serving a key's slot (`MOVED`), and moves slots to
//! another node (`CLUSTERX MIGRATE`, see [`migrate`]).
//!
//! Everything here follows Kvrocks' `src/cluster/cluster.cc`,
//! `src/commands/cmd_cluster.cc`, `slot_import.cc` and `slot_migrate.cc`
//! (commit 5fccd57): replies, error texts, the order of the checks, and
//! `nodes.conf`. Modules: [`parse`] (slot ranges and numbers),
//! [`topology`] (nodes and slots), [`nodes_file`] (`nodes.conf`),
//! [`routing`] (which node answers a command), [`replication`] (a
//! replica of the topology follows its master), [`slot_keys`] (the keys of
//! a slot), [`cluster_commands`] (CLUSTER, CLUSTERX, ASKING, READONLY,
//! READWRITE), [`migrate`] (moving slots).

pub mod apply_batch;
pub mod apply_raw;
pub mod cluster_commands;
pub mod cluster_state;
pub mod migrate;
pub mod nodes_file;
pub mod parse;
pub mod replica_role;
pub mod replication;
pub mod routing;
pub mod script_keys;
pub mod slot_keys;
pub mod topology;

use crate::state::Shared;

pub use cluster_state::{now_ms, Cluster, ImportState, Link, State};
use parse::SlotRange;

impl Cluster {
    /// A connection closed: an import running through it fails (its keys
    /// are deleted, Kvrocks' `StopForLinkError`).
    pub fn disconnected(&self, shared: &Shared, client: u64) {
        let link = self.links.lock().remove(&client);
        if link.is_some_and(|l| l.importing) {
            // As Kvrocks, under the import's lock: the keys go before the
            // state says `error`, so no one sees a failed import's keys.
            let mut state = self.state.write();
            if let Some((range, ImportState::Start)) = state.import {
                self.clear_slots(shared, range);
                state.import = Some((range, ImportState::Failed));
            }
        }
    }

    /// Deletes the keys of `range` in the cluster's namespace.
    pub fn clear_slots(&self, shared: &Shared, range: SlotRange) {
        if let Ok(engine) = shared.engines.shared(&shared.config.default_namespace) {
            if slot_keys::clear(&engine, range) > 0 {
                shared.note_write();
            }
        }
    }
}
