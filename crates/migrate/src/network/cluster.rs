//! A Redis cluster used as one server. Its topology is learned with
//! `CLUSTER SLOTS` from the seed node; every command goes to the master
//! owning its key's slot (CRC16 of the key or of its hash tag, as
//! [`redcodec_kvrocks::slot`] computes it), many commands per node in one
//! pipeline, and the replies come back in the order of the commands.
//!
//! A `MOVED slot host:port` reply (the slot has moved for good) refreshes
//! the topology and sends the command again to the node it names; an
//! `ASK slot host:port` reply (the slot is being migrated and the key is
//! already there) sends `ASKING` and the command again to that node, once.
//! Commands without a key (`TIME`) go to the first master; `DBSIZE` and
//! `SCAN` cover every master.

use redis::{Cmd, ConnectionAddr, ConnectionInfo, Value};

use redcodec_kvrocks::slot::{slot, SLOTS};

use super::link::Link;
use super::reply::{command_name, describe, int, scan_reply};
use crate::error::{fail, MigrateError};

/// Rounds of redirections followed for one pipeline before a `MOVED` or
/// `ASK` reply is handed back as the refusal it then is.
const REDIRECTIONS: usize = 5;

/// A master of the cluster, connected once a command goes to it.
struct Node {
    host: String,
    port: u16,
    link: Option<Link>,
}

impl Node {
    fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// Where a `SCAN` over the whole cluster is: the master being scanned,
/// its own cursor, and the cursor handed out for the next page.
#[derive(Default)]
struct ScanState {
    node: usize,
    cursor: u64,
    token: u64,
}

/// A connected cluster.
pub struct Cluster {
    /// The seed's settings (password): every node is reached with them.
    info: ConnectionInfo,
    /// The seed's host and port, for the first refresh and for an empty
    /// host in `CLUSTER SLOTS`.
    seed: (String, u16),
    /// Masters, in the order of the first slot each owns.
    nodes: Vec<Node>,
    /// The master of each slot, as an index into `nodes`.
    owner: Vec<Option<usize>>,
    scan: ScanState,
}

/// One range of `CLUSTER SLOTS`: first and last slot, master host and port.
type SlotRange = (u16, u16, String, u16);

impl Cluster {
    /// Connects to the seed node `host:port` (with `info`'s credentials)
    /// and learns the topology.
    pub fn connect(info: &ConnectionInfo, host: &str, port: u16) -> Result<Cluster, MigrateError> {
        let mut cluster = Cluster {
            info: info.clone(),
            seed: (host.to_string(), port),
            nodes: Vec::new(),
            owner: vec![None; usize::from(SLOTS)],
            scan: ScanState::default(),
        };
        cluster.refresh()?;
        Ok(cluster)
    }

    /// The index of the node at `host:port`, added if it is new.
    fn node(&mut self, host: &str, port: u16) -> usize {
        let host = if host.is_empty() || host == "?" {
            self.seed.0.as_str()
        } else {
            host
        };
        if let Some(i) = self
            .nodes
            .iter()
            .position(|n| n.host == host && n.port == port)
        {
            return i;
        }
        self.nodes.push(Node {
            host: host.to_string(),
            port,
            link: None,
        });
        self.nodes.len() - 1
    }

    /// The connection to node `i`, opened on first use.
    fn link(&mut self, i: usize) -> Result<&mut Link, MigrateError> {
        let node = &mut self.nodes[i];
        if node.link.is_none() {
            let info = self
                .info
                .clone()
                .set_addr(ConnectionAddr::Tcp(node.host.clone(), node.port));
            let name = format!("cluster node {}", node.address());
            node.link = Some(Link::connect(&info, &name)?);
        }
        Ok(node.link.as_mut().expect("connected above"))
    }

    /// Reads `CLUSTER SLOTS` from a known master (the seed first) and
    /// routes every slot by it.
    fn refresh(&mut self) -> Result<(), MigrateError> {
        let mut asked = vec![self.seed.clone()];
        asked.extend(self.nodes.iter().map(|n| (n.host.clone(), n.port)));
        let mut why = String::new();
        for (host, port) in asked {
            let i = self.node(&host, port);
            let reply = self
                .link(i)
                .and_then(|link| link.pipeline(&[cluster_slots()]));
            match reply.map(|mut r| r.remove(0)) {
                Ok(Value::ServerError(e)) => why = format!("{host}:{port}: {}", describe(&e)),
                Ok(reply) => {
                    let ranges = slot_ranges(reply).ok_or_else(|| {
                        fail(format!("{host}:{port}: CLUSTER SLOTS: unexpected reply"))
                    })?;
                    self.route(ranges);
                    return Ok(());
                }
                Err(e) => why = e.to_string(),
            }
        }
        Err(fail(format!(
            "cannot read the cluster's topology (CLUSTER SLOTS): {why}"
        )))
    }

    /// Routes every slot as `ranges` say; slots they leave out have no
    /// master.
    fn route(&mut self, mut ranges: Vec<SlotRange>) {
        ranges.sort_by_key(|r| r.0);
        self.owner = vec![None; usize::from(SLOTS)];
        for (first, last, host, port) in ranges {
            let i = self.node(&host, port);
            for s in first..=last.min(SLOTS - 1) {
                self.owner[usize::from(s)] = Some(i);
            }
        }
    }

    /// The node `command` goes to: its key's slot's master (the first
    /// master for a command without a key).
    fn target(&self, command: &Cmd) -> Result<usize, MigrateError> {
        let Some(key) = key_of(command) else {
            return Ok(0);
        };
        let s = slot(key);
        self.owner[usize::from(s)].ok_or_else(|| {
            fail(format!(
                "slot {s} has no master in the cluster's topology (CLUSTER SLOTS); {} cannot be sent",
                command_name(command)
            ))
        })
    }

    /// Sends `commands` (grouped per node, a pipeline each) and returns
    /// their replies in order, following `MOVED` and `ASK`.
    pub fn pipeline(&mut self, commands: &[Cmd]) -> Result<Vec<Value>, MigrateError> {
        let mut replies = vec![Value::Nil; commands.len()];
        let mut routes = Vec::with_capacity(commands.len());
        for c in commands {
            routes.push(Route::Node(self.target(c)?));
        }
        let mut pending: Vec<usize> = (0..commands.len()).collect();
        for round in 0..=REDIRECTIONS {
            self.send(commands, &pending, &routes, &mut replies)?;
            let mut moved = false;
            let mut again = Vec::new();
            for &i in &pending {
                let Some((kind, s, host, port)) = redirection(&replies[i]) else {
                    continue;
                };
                let node = self.node(&host, port);
                if kind == Redirect::Moved {
                    moved = true;
                    self.owner[usize::from(s)] = Some(node);
                    routes[i] = Route::Node(node);
                } else {
                    routes[i] = Route::Asking(node);
                }
                again.push(i);
            }
            if again.is_empty() || round == REDIRECTIONS {
                break;
            }
            if moved {
                self.refresh()?;
                // The redirections are newer than the seed's view.
                for &i in &again {
                    if let (Route::Node(node), Some(key)) = (routes[i], key_of(&commands[i])) {
                        self.owner[usize::from(slot(key))] = Some(node);
                    }
                }
            }
            pending = again;
        }
        Ok(replies)
    }

    /// Sends the commands numbered `which` to their routes, one pipeline
    /// per node, and puts the replies in place.
    fn send(
        &mut self,
        commands: &[Cmd],
        which: &[usize],
        routes: &[Route],
        replies: &mut [Value],
    ) -> Result<(), MigrateError> {
        let mut by_node: Vec<Batch> = Vec::new();
        for &i in which {
            let (node, asking) = match routes[i] {
                Route::Node(n) => (n, false),
                Route::Asking(n) => (n, true),
            };
            let at = match by_node.iter().position(|(n, _, _)| *n == node) {
                Some(at) => at,
                None => {
                    by_node.push((node, Vec::new(), Vec::new()));
                    by_node.len() - 1
                }
            };
            let (_, cmds, slots) = &mut by_node[at];
            if asking {
                cmds.push(redis::cmd("ASKING"));
                slots.push((i, false));
            }
            cmds.push(commands[i].clone());
            slots.push((i, true));
        }
        for (node, cmds, slots) in by_node {
            let got = self.link(node)?.pipeline(&cmds)?;
            for ((i, keep), reply) in slots.into_iter().zip(got) {
                if keep {
                    replies[i] = reply;
                }
            }
        }
        Ok(())
    }

    /// The keys of every master together (`DBSIZE` on each).
    pub fn dbsize(&mut self) -> Result<Value, MigrateError> {
        let mut total = 0;
        for i in 0..self.nodes.len() {
            if !self.owner.contains(&Some(i)) {
                continue;
            }
            match self.link(i)?.pipeline(&[redis::cmd("DBSIZE")])?.remove(0) {
                Value::ServerError(e) => return Ok(Value::ServerError(e)),
                reply => match int(&reply) {
                    Some(n) => total += n,
                    None => return Ok(reply),
                },
            }
        }
        Ok(Value::Int(total))
    }

    /// One page of a `SCAN` over every master in turn, as a `SCAN` reply.
    /// The cursor is this connection's own: a cursor other than 0 must be
    /// the one the previous page returned.
    pub fn scan(&mut self, cursor: u64, count: usize) -> Result<Value, MigrateError> {
        if cursor == 0 {
            self.scan = ScanState::default();
        } else if cursor != self.scan.token {
            return Err(fail(format!(
                "SCAN cursor {cursor} does not continue this connection's walk of the cluster"
            )));
        }
        let masters: Vec<usize> = (0..self.nodes.len())
            .filter(|i| self.owner.contains(&Some(*i)))
            .collect();
        let Some(&node) = masters.get(self.scan.node) else {
            return Ok(scan_page(0, Vec::new()));
        };
        let mut c = redis::cmd("SCAN");
        c.arg(self.scan.cursor).arg("COUNT").arg(count);
        let reply = self.link(node)?.pipeline(&[c])?.remove(0);
        if let Value::ServerError(_) = reply {
            return Ok(reply);
        }
        let Some((next, keys)) = scan_reply(reply.clone()) else {
            return Ok(reply);
        };
        self.scan.cursor = next;
        if next == 0 {
            self.scan.node += 1;
        }
        let done = self.scan.node >= masters.len();
        self.scan.token = if done { 0 } else { self.scan.token + 1 };
        Ok(scan_page(self.scan.token, keys))
    }
}

/// The commands for one node: its index, the commands (an `ASKING`
/// before a redirected one), and for each the number of the command it
/// answers and whether its reply is kept (not `ASKING`'s).
type Batch = (usize, Vec<Cmd>, Vec<(usize, bool)>);

/// Where one command goes.
#[derive(Copy, Clone)]
enum Route {
    /// To this node.
    Node(usize),
    /// To this node, after `ASKING`.
    Asking(usize),
}

/// The two redirections of a cluster.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Redirect {
    Moved,
    Ask,
}

/// `MOVED`/`ASK slot host:port` in a reply.
fn redirection(reply: &Value) -> Option<(Redirect, u16, String, u16)> {
    let Value::ServerError(e) = reply else {
        return None;
    };
    let kind = match e.code() {
        "MOVED" => Redirect::Moved,
        "ASK" => Redirect::Ask,
        _ => return None,
    };
    let (s, address) = e.details()?.trim().split_once(' ')?;
    let (host, port) = address.rsplit_once(':')?;
    let s: u16 = s.parse().ok().filter(|s| *s < SLOTS)?;
    Some((kind, s, host.to_string(), port.parse().ok()?))
}

/// The key a command acts on: its first argument, except for the
/// commands without one this module sends.
fn key_of(command: &Cmd) -> Option<&[u8]> {
    if matches!(
        command_name(command).to_ascii_uppercase().as_str(),
        "TIME" | "DBSIZE" | "SCAN" | "CLUSTER" | "ASKING" | "PING"
    ) {
        return None;
    }
    match command.args_iter().nth(1)? {
        redis::Arg::Simple(key) => Some(key),
        _ => None,
    }
}

fn cluster_slots() -> Cmd {
    let mut c = redis::cmd("CLUSTER");
    c.arg("SLOTS");
    c
}

/// The ranges of a `CLUSTER SLOTS` reply.
fn slot_ranges(reply: Value) -> Option<Vec<SlotRange>> {
    let Value::Array(entries) = reply else {
        return None;
    };
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let Value::Array(parts) = entry else {
            return None;
        };
        let first = u16::try_from(int(parts.first()?)?).ok()?;
        let last = u16::try_from(int(parts.get(1)?)?).ok()?;
        let Value::Array(master) = parts.get(2)? else {
            return None;
        };
        let host = match master.first()? {
            Value::BulkString(b) => String::from_utf8(b.clone()).ok()?,
            Value::SimpleString(s) => s.clone(),
            Value::Nil => String::new(),
            _ => return None,
        };
        let port = u16::try_from(int(master.get(1)?)?).ok()?;
        out.push((first, last, host, port));
    }
    Some(out)
}

/// A `SCAN` reply: the cursor and the keys.
fn scan_page(cursor: u64, keys: Vec<Vec<u8>>) -> Value {
    Value::Array(vec![
        Value::BulkString(cursor.to_string().into_bytes()),
        Value::Array(keys.into_iter().map(Value::BulkString).collect()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirections_name_slot_and_node() {
        let moved = redis::parse_redis_value(b"-MOVED 3999 127.0.0.1:6381\r\n").unwrap();
        assert!(matches!(
            redirection(&moved),
            Some((Redirect::Moved, 3999, ref h, 6381)) if h == "127.0.0.1"
        ));
        assert!(redirection(&Value::Okay).is_none());
    }

    #[test]
    fn commands_route_by_their_key() {
        let mut c = redis::cmd("RPUSH");
        c.arg(b"{user1}:list".as_slice()).arg("x");
        assert_eq!(key_of(&c), Some(b"{user1}:list".as_slice()));
        assert_eq!(key_of(&redis::cmd("TIME")), None);
    }
}
