//! The cluster side of a server: the topology, the slot moves, each
//! connection's flags (the data [`crate::cluster`] works on; a leaf the
//! server's state holds).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use parking_lot::{Mutex, RwLock};
use redcodec_codec::{Codec, Namespaces};

use super::migrate::migrator::Migrator;
use super::nodes_file;
use super::parse::SlotRange;
use super::topology::{Node, Role, Topology};
use crate::engines::EngineSlot;

/// What a connection asked for: `ASKING` (next command only),
/// `READONLY`, or being the link a migration imports through.
#[derive(Clone, Copy, Debug, Default)]
pub struct Link {
    /// `ASKING`: the next command may use an importing slot.
    pub asking: bool,
    /// `READONLY`: a replica serves reads of its master's slots.
    pub readonly: bool,
    /// This connection sent `CLUSTER IMPORT <slot> 0`.
    pub importing: bool,
}

/// Where an import stands (`ImportStatus`: start 0, success 1, failed 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportState {
    /// Keys are arriving.
    Start,
    /// All keys arrived; the slot is served until the topology changes.
    Success,
    /// The import failed; its keys were deleted.
    Failed,
}

impl ImportState {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ImportState::Start => "start",
            ImportState::Success => "success",
            ImportState::Failed => "error",
        }
    }
}

/// The topology and what slot moves left in it.
#[derive(Debug)]
pub struct State {
    /// Topology version; -1 before the first `SETNODES`.
    pub version: i64,
    /// This node's id (empty: not known yet).
    pub myid: String,
    /// Nodes and slots.
    pub topology: Topology,
    /// Slots this node migrated away, and the `host:port` that took them
    /// (MOVED there until the controller's next topology).
    pub migrated: BTreeMap<u16, String>,
    /// Slots imported here, served until the next topology.
    pub imported: BTreeSet<u16>,
    /// The last import: its range and state.
    pub import: Option<(SlotRange, ImportState)>,
    /// The range this node accepts through importing links or ASKING.
    pub importing_range: Option<SlotRange>,
}

impl State {
    pub(crate) fn new() -> State {
        State {
            version: -1,
            myid: String::new(),
            topology: Topology::empty(),
            migrated: BTreeMap::new(),
            imported: BTreeSet::new(),
            import: None,
            importing_range: None,
        }
    }

    /// This node in the topology, if the topology names it.
    pub fn myself(&self) -> Option<&Node> {
        if self.myid.is_empty() {
            return None;
        }
        self.topology.node(&self.myid)
    }

    /// Whether this node is not a master of the topology (Kvrocks'
    /// `IsNotMaster`).
    pub fn not_master(&self) -> bool {
        !self.myself().is_some_and(Node::is_master)
    }

    /// Whether this node serves `slot` by the topology.
    pub fn mine(&self, slot: u16) -> bool {
        match (self.myself(), self.topology.owner(slot)) {
            (Some(me), Some(owner)) => me.id == owner.id,
            _ => false,
        }
    }

    /// CLUSTER INFO's `importing_slot(s)` lines.
    fn import_info(&self) -> String {
        match self.import {
            Some((range, state)) => format!(
                "importing_slot(s): {range}\r\nimport_state: {}\r\n",
                state.name()
            ),
            None => String::new(),
        }
    }
}

/// The cluster side of a server: off unless the store is on Kvrocks'
/// slotted layout (`serve --format kvrocks --cluster`).
pub struct Cluster {
    pub(crate) enabled: bool,
    port: u16,
    bind: String,
    nodes_file: PathBuf,
    /// Topology and slot moves.
    pub state: RwLock<State>,
    pub(crate) links: Mutex<HashMap<u64, Link>>,
    /// The migration this node runs or ran last.
    pub migrator: Migrator,
}

impl Cluster {
    /// The cluster of a server listening on `bind:port` with its store in
    /// `dir`: `enabled` when the store's keys carry slots. A topology
    /// saved in `dir/nodes.conf` is loaded.
    pub fn open(enabled: bool, bind: &str, port: u16, dir: &str) -> Result<Cluster, String> {
        let cluster = Cluster {
            enabled,
            port,
            bind: bind.to_string(),
            nodes_file: PathBuf::from(dir).join("nodes.conf"),
            state: RwLock::new(State::new()),
            links: Mutex::new(HashMap::new()),
            migrator: Migrator::default(),
        };
        if enabled {
            if let Some(saved) = nodes_file::load(&cluster.nodes_file)
                .map_err(|e| format!("failed to load cluster nodes info: {e}"))?
            {
                let mut state = cluster.state.write();
                state.myid = saved.myid;
                if !saved.nodes.is_empty() {
                    cluster
                        .set_nodes(&mut state, saved.nodes.as_bytes(), saved.version, false)
                        .map_err(|e| format!("failed to load cluster nodes info: {e}"))?;
                }
            }
        }
        Ok(cluster)
    }

    /// The cluster of a server over `engines` listening on `port`: on
    /// when the store's keys carry slots (Kvrocks' layout with
    /// `--cluster`).
    pub fn for_server(
        engines: &EngineSlot,
        config: &crate::config::ServerConfig,
        port: u16,
    ) -> Result<Cluster, std::io::Error> {
        let enabled = engines
            .shared(&config.default_namespace)
            .map_err(|e| std::io::Error::other(format!("{e:?}")))?
            .codec()
            .capabilities()
            .namespaces
            == Namespaces::Prefix { slots: true };
        Cluster::open(enabled, &config.bind, port, &config.dir).map_err(std::io::Error::other)
    }

    /// Whether cluster mode is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// INFO's cluster section.
    pub fn info_section(&self) -> &'static str {
        if self.enabled {
            "cluster_enabled:1\r\n"
        } else {
            "cluster_enabled:0\r\n"
        }
    }

    /// A connection's flags.
    pub fn link(&self, client: u64) -> Link {
        self.links.lock().get(&client).copied().unwrap_or_default()
    }

    /// Changes a connection's flags.
    pub fn update_link(&self, client: u64, f: impl FnOnce(&mut Link)) {
        let mut links = self.links.lock();
        let link = links.entry(client).or_default();
        f(link);
    }

    /// Kvrocks' `SetClusterNodes`: takes a topology of a higher version
    /// (or any with `force`), finds this node in it, and forgets finished
    /// slot moves. Returns the slots this node migrated away that the new
    /// topology does not give back: their keys are to be deleted.
    pub fn set_nodes(
        &self,
        state: &mut State,
        text: &[u8],
        version: i64,
        force: bool,
    ) -> Result<Vec<u16>, &'static str> {
        if version < 0 {
            return Err("Invalid cluster version");
        }
        if !force {
            if state.version > version {
                return Err("Invalid cluster version");
            }
            if state.version == version {
                return Ok(Vec::new());
            }
        }
        let topology = Topology::parse(text)?;
        state.version = version;
        state.topology = topology;
        if state.myid.is_empty() || force {
            if let Some(me) = state
                .topology
                .nodes
                .iter()
                .find(|n| n.port == self.port && self.listens_on(&n.host))
            {
                state.myid = me.id.clone();
            }
        }
        let gone: Vec<u16> = state
            .migrated
            .keys()
            .copied()
            .filter(|&slot| !state.mine(slot))
            .collect();
        state.migrated.clear();
        state.imported.clear();
        state.importing_range = None;
        Ok(gone)
    }

    /// Whether `host` is an address this server listens on
    /// (`util::MatchListeningIP`).
    fn listens_on(&self, host: &str) -> bool {
        if host == self.bind {
            return true;
        }
        let any = matches!(self.bind.as_str(), "0.0.0.0" | "::");
        any && host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| std::net::TcpListener::bind((ip, 0)).is_ok())
    }

    /// Saves the topology to `nodes.conf`.
    pub fn persist(&self, state: &State) -> Result<(), String> {
        nodes_file::dump(
            &self.nodes_file,
            state.version,
            &state.myid,
            &state.topology,
        )
    }

    /// Kvrocks' `Reset`: forgets the topology and removes `nodes.conf`.
    pub fn reset(&self, state: &mut State) {
        *state = State::new();
        let _ = std::fs::remove_file(&self.nodes_file);
    }

    /// `CLUSTER INFO`.
    pub fn info_text(&self, state: &State) -> String {
        let served = state.topology.slots.iter().filter(|s| s.is_some()).count();
        let mut out = format!(
            "cluster_state:ok\r\ncluster_slots_assigned:{served}\r\ncluster_slots_ok:{served}\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:{}\r\ncluster_size:{}\r\ncluster_current_epoch:{v}\r\ncluster_my_epoch:{v}\r\n",
            state.topology.nodes.len(),
            state.topology.size(),
            v = state.version,
        );
        if state.myself().is_some_and(|n| n.role == Role::Master) {
            out.push_str(&self.migrator.info_text());
            out.push_str(&state.import_info());
        }
        out
    }

    /// `CLUSTER NODES`, with this node's slot move in brackets.
    pub fn nodes_text(&self, state: &State) -> String {
        let mut moving = String::new();
        if let Some((range, dst)) = self.migrator.migrating() {
            moving.push_str(&format!(" [{range}->-{dst}]"));
        }
        if let (Some((range, ImportState::Start)), true) = (state.import, !state.myid.is_empty()) {
            let src = state
                .topology
                .owner(range.start)
                .map_or(String::new(), |n| n.id.clone());
            moving.push_str(&format!(" [{range}-<-{src}]"));
        }
        state
            .topology
            .nodes_text(&state.myid, state.version, now_ms(), &moving)
    }
}

/// Unix time in milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
