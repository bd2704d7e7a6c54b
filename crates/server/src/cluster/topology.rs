//! The cluster topology a controller sets (`CLUSTERX SETNODES`): nodes,
//! which node serves each slot, and the version. Parsing and the texts
//! of `CLUSTER NODES`, `CLUSTER SLOTS`, `CLUSTER REPLICAS` and
//! `nodes.conf`, as Kvrocks' `src/cluster/cluster.cc` writes them.

use std::fmt::Write;

use super::parse::{parse_int, SlotRange, SLOTS};

/// Length of a node id (hex digits).
pub const NODE_ID_LEN: usize = 40;

/// A node's role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Serves its slots.
    Master,
    /// Replicates the master of this id.
    Slave(String),
}

/// One node of the topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// 40 hex digits.
    pub id: String,
    /// Host clients reach it at.
    pub host: String,
    /// Port clients reach it at.
    pub port: u16,
    /// Master or replica.
    pub role: Role,
    /// The ids of its replicas, in the order the topology lists them.
    pub replicas: Vec<String>,
}

impl Node {
    /// Whether it is a master.
    pub fn is_master(&self) -> bool {
        self.role == Role::Master
    }

    /// `host:port`, as `MOVED` names it.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// Errors Kvrocks gives for a topology it cannot take.
pub mod errors {
    /// `errInvalidClusterNodeInfo`.
    pub const INVALID_INFO: &str = "Invalid cluster nodes info";
    /// `errInvalidNodeID`.
    pub const INVALID_ID: &str = "Invalid cluster node id";
    /// A port that is not a `uint16`.
    pub const INVALID_PORT: &str = "Invalid cluster node port";
    /// A role other than master, slave or replica.
    pub const INVALID_ROLE: &str = "Invalid cluster node role";
    /// `errSlotOutOfRange`.
    pub const OUT_OF_RANGE: &str = "Slot is out of range";
    /// `errSlotOverlapped`.
    pub const OVERLAPPED: &str = "Slot distribution is overlapped";
    /// A node id among slots.
    pub const MISSING_NEWLINE: &str =
        "Invalid nodes definition: Missing newline between node entries.";
}

/// The nodes and who serves each slot.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Nodes, in the order the controller listed them.
    pub nodes: Vec<Node>,
    /// For each slot, the index in `nodes` of the master serving it.
    pub slots: Vec<Option<usize>>,
}

fn is_node_id(s: &str) -> bool {
    s.len() == NODE_ID_LEN && s.bytes().all(|b| b.is_ascii_hexdigit())
}

impl Topology {
    /// No nodes, no slot served.
    pub fn empty() -> Topology {
        Topology {
            nodes: Vec::new(),
            slots: vec![None; SLOTS],
        }
    }

    /// Parses `CLUSTERX SETNODES`' text (`parseClusterNodes`): lines
    /// `id host port master - 0-100 200 …` or `id host port slave <master-id>`.
    pub fn parse(text: &[u8]) -> Result<Topology, &'static str> {
        let text = String::from_utf8_lossy(text);
        let lines: Vec<&str> = text.split('\n').filter(|l| !l.is_empty()).collect();
        if lines.is_empty() {
            return Err(errors::INVALID_INFO);
        }
        let mut nodes: Vec<Node> = Vec::new();
        let mut owner: Vec<Option<String>> = vec![None; SLOTS];
        for line in lines {
            let fields: Vec<&str> = line.split(' ').filter(|f| !f.is_empty()).collect();
            if fields.len() < 5 {
                return Err(errors::INVALID_INFO);
            }
            if fields[0].len() != NODE_ID_LEN {
                return Err(errors::INVALID_ID);
            }
            let id = fields[0].to_string();
            let host = fields[1].to_string();
            let port = parse_int(fields[2].as_bytes(), 0, i64::from(u16::MAX))
                .map_err(|_| errors::INVALID_PORT)? as u16;
            let master = if fields[3].eq_ignore_ascii_case("master") {
                true
            } else if fields[3].eq_ignore_ascii_case("slave")
                || fields[3].eq_ignore_ascii_case("replica")
            {
                false
            } else {
                return Err(errors::INVALID_ROLE);
            };
            let master_id = fields[4];
            if (master && master_id != "-") || (!master && master_id.len() != NODE_ID_LEN) {
                return Err(errors::INVALID_ID);
            }
            let role = if master {
                Role::Master
            } else {
                if fields.len() != 5 {
                    return Err(errors::INVALID_INFO);
                }
                Role::Slave(master_id.to_string())
            };
            if master {
                for field in &fields[5..] {
                    let range = parse_slot_field(field)?;
                    for slot in range.slots() {
                        let owner = &mut owner[usize::from(slot)];
                        if owner.is_some() {
                            return Err(errors::OVERLAPPED);
                        }
                        *owner = Some(id.clone());
                    }
                }
            }
            let node = Node {
                id,
                host,
                port,
                role,
                replicas: Vec::new(),
            };
            // A node listed twice: the last line counts (a map in Kvrocks).
            match nodes.iter_mut().find(|n| n.id == node.id) {
                Some(old) => *old = node,
                None => nodes.push(node),
            }
        }
        let replicas: Vec<(String, String)> = nodes
            .iter()
            .filter_map(|n| match &n.role {
                Role::Slave(m) => Some((m.clone(), n.id.clone())),
                Role::Master => None,
            })
            .collect();
        for (master, replica) in replicas {
            if let Some(m) = nodes.iter_mut().find(|n| n.id == master) {
                m.replicas.push(replica);
            }
        }
        let slots = owner
            .into_iter()
            .map(|id| id.and_then(|id| nodes.iter().position(|n| n.id == id)))
            .collect();
        Ok(Topology { nodes, slots })
    }

    /// The node of this id.
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// The index of the node of this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// The master serving `slot`.
    pub fn owner(&self, slot: u16) -> Option<&Node> {
        self.slots[usize::from(slot)].map(|i| &self.nodes[i])
    }

    /// Masters serving at least one slot (`cluster_size`).
    pub fn size(&self) -> usize {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| n.is_master() && self.slots.contains(&Some(*i)))
            .count()
    }

    /// Runs of consecutive slots served by one node: `(start, end, node)`.
    pub fn runs(&self) -> Vec<(SlotRange, usize)> {
        let mut runs: Vec<(SlotRange, usize)> = Vec::new();
        for (slot, owner) in self.slots.iter().enumerate() {
            let Some(node) = *owner else { continue };
            let slot = slot as u16;
            match runs.last_mut() {
                Some((range, n)) if *n == node && range.end + 1 == slot => range.end = slot,
                _ => runs.push((SlotRange::point(slot), node)),
            }
        }
        runs
    }

    /// Each node's slots as `CLUSTER NODES` and `nodes.conf` list them:
    /// `0-100 200`.
    fn slots_text(&self, node: usize) -> String {
        self.runs()
            .into_iter()
            .filter(|(_, n)| *n == node)
            .map(|(r, _)| r.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `CLUSTER SLOTS`' entries: start, end, then the master and its
    /// replicas as `(host, port, id)`.
    pub fn slot_entries(&self) -> Vec<(SlotRange, Vec<&Node>)> {
        self.runs()
            .into_iter()
            .map(|(range, i)| {
                let master = &self.nodes[i];
                let mut nodes = vec![master];
                nodes.extend(master.replicas.iter().filter_map(|id| self.node(id)));
                (range, nodes)
            })
            .collect()
    }

    /// `CLUSTER NODES` (`genNodesDescription`); `moving` is this node's
    /// ` [slot->-dst]` / ` [slot-<-src]` suffix.
    pub fn nodes_text(&self, myid: &str, version: i64, now_ms: u64, moving: &str) -> String {
        let mut out = String::new();
        for (i, node) in self.nodes.iter().enumerate() {
            let _ = write!(
                out,
                "{} {}:{}@{} ",
                node.id,
                node.host,
                node.port,
                u32::from(node.port) + 10000
            );
            if node.id == myid {
                out.push_str("myself,");
            }
            match &node.role {
                Role::Master => out.push_str("master - "),
                Role::Slave(m) => {
                    let _ = write!(out, "slave {m} ");
                }
            }
            let _ = write!(
                out,
                "{} {} {version} connected",
                now_ms.saturating_sub(1),
                now_ms
            );
            if node.is_master() {
                let slots = self.slots_text(i);
                if !slots.is_empty() {
                    out.push(' ');
                    out.push_str(&slots);
                }
            }
            if node.id == myid {
                out.push_str(moving);
            }
            out.push('\n');
        }
        out
    }

    /// `CLUSTER REPLICAS <id>` of a master: its replicas' lines.
    pub fn replicas_text(&self, master: &Node, version: i64, now_ms: u64) -> String {
        let mut out = String::new();
        for id in &master.replicas {
            let Some(r) = self.node(id) else { continue };
            let _ = writeln!(
                out,
                "{} {}:{}@{} slave {} {} {} {version} connected",
                r.id,
                r.host,
                r.port,
                u32::from(r.port) + 10000,
                master.id,
                now_ms.saturating_sub(1),
                now_ms
            );
        }
        out
    }

    /// The `node …` lines of `nodes.conf` (`genNodesInfo`, with its two
    /// spaces before the slots).
    pub fn conf_lines(&self) -> String {
        let mut out = String::new();
        for (i, node) in self.nodes.iter().enumerate() {
            let _ = write!(out, "node {} {} {} ", node.id, node.host, node.port);
            match &node.role {
                Role::Master => out.push_str("master - "),
                Role::Slave(m) => {
                    let _ = write!(out, "slave {m} ");
                }
            }
            if node.is_master() {
                let slots = self.slots_text(i);
                if !slots.is_empty() {
                    out.push(' ');
                    out.push_str(&slots);
                }
            }
            out.push('\n');
        }
        out
    }
}

/// One slot field of a master's line: `5` or `5-9` (start < end).
fn parse_slot_field(field: &str) -> Result<SlotRange, &'static str> {
    let slot = |s: &str| {
        parse_int(s.as_bytes(), i64::from(i32::MIN), i64::from(i32::MAX))
            .ok()
            .filter(|n| (0..SLOTS as i64).contains(n))
            .map(|n| n as u16)
    };
    let parts: Vec<&str> = field.split('-').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [one] => {
            if is_node_id(field) {
                return Err(errors::MISSING_NEWLINE);
            }
            slot(one).map(SlotRange::point).ok_or(errors::OUT_OF_RANGE)
        }
        [a, b] => match (slot(a), slot(b)) {
            (Some(start), Some(end)) if start < end => Ok(SlotRange { start, end }),
            _ => Err(errors::OUT_OF_RANGE),
        },
        _ => Err(errors::OUT_OF_RANGE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    const C: &str = "cccccccccccccccccccccccccccccccccccccccc";

    fn three() -> Topology {
        let text = format!(
            "{A} 127.0.0.1 7000 master - 0-100 300\n{B} 127.0.0.1 7001 master - 101-299 301-16383\n{C} 127.0.0.1 7002 slave {A}"
        );
        Topology::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn parses_masters_slots_and_replicas() {
        let t = three();
        assert_eq!(t.owner(0).unwrap().id, A);
        assert_eq!(t.owner(300).unwrap().id, A);
        assert_eq!(t.owner(16383).unwrap().id, B);
        assert_eq!(t.node(A).unwrap().replicas, vec![C.to_string()]);
        assert_eq!(t.size(), 2);
        let entries = t.slot_entries();
        assert_eq!(entries.len(), 4);
        assert_eq!(entries[0].0, SlotRange { start: 0, end: 100 });
        assert_eq!(entries[0].1.len(), 2);
    }

    #[test]
    fn texts() {
        let t = three();
        let nodes = t.nodes_text(A, 3, 1000, "");
        let first = nodes.lines().next().unwrap();
        assert_eq!(
            first,
            format!("{A} 127.0.0.1:7000@17000 myself,master - 999 1000 3 connected 0-100 300")
        );
        assert!(nodes.ends_with(&format!("slave {A} 999 1000 3 connected\n")));
        assert_eq!(
            t.conf_lines().lines().next().unwrap(),
            format!("node {A} 127.0.0.1 7000 master -  0-100 300")
        );
    }

    #[test]
    fn refusals() {
        let bad = |s: String| Topology::parse(s.as_bytes()).unwrap_err();
        assert_eq!(bad(String::new()), errors::INVALID_INFO);
        assert_eq!(bad(format!("{A} h 1 master")), errors::INVALID_INFO);
        assert_eq!(bad("abc h 1 master -".into()), errors::INVALID_ID);
        assert_eq!(bad(format!("{A} h 70000 master -")), errors::INVALID_PORT);
        assert_eq!(bad(format!("{A} h 1 leader -")), errors::INVALID_ROLE);
        assert_eq!(bad(format!("{A} h 1 master x")), errors::INVALID_ID);
        assert_eq!(bad(format!("{A} h 1 master - 16384")), errors::OUT_OF_RANGE);
        assert_eq!(bad(format!("{A} h 1 master - 5-5")), errors::OUT_OF_RANGE);
        assert_eq!(
            bad(format!("{A} h 1 master - 1-5\n{B} h 2 master - 5")),
            errors::OVERLAPPED
        );
        assert_eq!(
            bad(format!("{A} h 1 master - 1 {B}")),
            errors::MISSING_NEWLINE
        );
        assert_eq!(bad(format!("{C} h 1 slave {A} 5")), errors::INVALID_INFO);
    }
}
