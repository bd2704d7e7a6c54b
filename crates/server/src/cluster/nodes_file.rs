//! `nodes.conf`: the topology a node keeps across restarts, in Kvrocks'
//! format (`Cluster::DumpClusterNodes` and `LoadClusterNodes`):
//!
//! ```text
//! version 3
//! id 0123…(40 hex digits)
//! node <id> <host> <port> master -  0-5460
//! node <id> <host> <port> slave <master-id>
//! ```

use std::path::Path;

use super::topology::{Topology, NODE_ID_LEN};

/// What `nodes.conf` holds.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Saved {
    /// The topology version (-1: none).
    pub version: i64,
    /// This node's id (empty: not set).
    pub myid: String,
    /// The `node` lines' values, one node a line (`SETNODES`' text).
    pub nodes: String,
}

/// Writes the file (through a `.tmp` file renamed over it).
pub fn dump(path: &Path, version: i64, myid: &str, topology: &Topology) -> Result<(), String> {
    let tmp = path.with_extension("conf.tmp");
    let text = format!("version {version}\nid {myid}\n{}", topology.conf_lines());
    std::fs::write(&tmp, text).map_err(|e| format!("write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("rename file encounter error: {e}"))
}

/// Reads the file; `None` when there is none.
pub fn load(path: &Path) -> Result<Option<Saved>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("error opening the file '{}': {e}", path.display())),
    };
    let mut saved = Saved {
        version: -1,
        ..Saved::default()
    };
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once(char::is_whitespace)
            .map_or((line, ""), |(k, v)| (k, v.trim()));
        if value.is_empty() {
            continue;
        }
        match key {
            "version" => {
                saved.version = value
                    .parse()
                    .map_err(|_| "Invalid cluster version".to_string())?;
            }
            "id" => {
                if value.len() != NODE_ID_LEN {
                    return Err("Invalid cluster node id".into());
                }
                saved.myid = value.to_string();
            }
            "node" => {
                saved.nodes.push_str(value);
                saved.nodes.push('\n');
            }
            other => return Err(format!("unknown key: {other}")),
        }
    }
    Ok(Some(saved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nodes.conf");
        assert_eq!(load(&path).unwrap(), None);
        let a = "a".repeat(40);
        let text = format!("{a} 127.0.0.1 7000 master - 0-16383");
        let t = Topology::parse(text.as_bytes()).unwrap();
        dump(&path, 4, &a, &t).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            written,
            format!("version 4\nid {a}\nnode {a} 127.0.0.1 7000 master -  0-16383\n")
        );
        let saved = load(&path).unwrap().unwrap();
        assert_eq!(saved.version, 4);
        assert_eq!(saved.myid, a);
        assert_eq!(
            Topology::parse(saved.nodes.as_bytes()).unwrap().slots,
            t.slots
        );
        std::fs::write(&path, "colour blue\n").unwrap();
        assert_eq!(load(&path).unwrap_err(), "unknown key: colour");
    }
}
