//! `INFO replication` on a replica, with Redis 7.0's fields in its order
//! (`genRedisInfoString`), and at the end, when the last attempt to follow
//! the master failed, `master_link_error:<why>`, and when the master sent
//! commands this server does not have (not applied since the last full
//! copy), `unknown_master_commands:<name>=<count>,…`.
//!
//! A replica here keeps no backlog of its own (it serves no replicas):
//! `repl_backlog_active:0`.

use std::fmt::Write;
use std::time::Instant;

use redcodec_engine::Reply;

use super::LinkPhase;
use crate::state::Shared;

fn seconds_since(at: Option<Instant>) -> i64 {
    at.map_or(-1, |t| {
        i64::try_from(t.elapsed().as_secs()).unwrap_or(i64::MAX)
    })
}

/// ROLE on a replica, as Redis 7.0's `roleCommand` answers it: `slave`,
/// the master's host and port, the link's state and the offset applied
/// (-1 before the stream is up); `None` on a master.
pub fn role(shared: &Shared) -> Option<Reply> {
    let st = shared.replica.state.lock().clone();
    let (host, port) = st.master?;
    let (state, offset) = match st.phase {
        LinkPhase::Down => ("connect", -1),
        LinkPhase::Connecting => ("connecting", -1),
        LinkPhase::Syncing => ("sync", -1),
        LinkPhase::Up => ("connected", st.offset),
    };
    Some(Reply::Array(vec![
        Reply::bulk("slave"),
        Reply::bulk(host),
        Reply::Integer(i64::from(port)),
        Reply::bulk(state),
        Reply::Integer(offset),
    ]))
}

/// Writes the replication section's fields when this server is a replica
/// (returns `false`, writing nothing, when it is a master).
pub fn write(shared: &Shared, s: &mut String) -> bool {
    let st = shared.replica.state.lock().clone();
    let Some((host, port)) = &st.master else {
        return false;
    };
    let up = st.phase == LinkPhase::Up;
    let syncing = st.phase == LinkPhase::Syncing;
    let _ = write!(
        s,
        "role:slave\r\nmaster_host:{host}\r\nmaster_port:{port}\r\nmaster_link_status:{}\r\nmaster_last_io_seconds_ago:{}\r\nmaster_sync_in_progress:{}\r\nslave_read_repl_offset:{}\r\nslave_repl_offset:{}\r\n",
        if up { "up" } else { "down" },
        if up { seconds_since(st.last_io) } else { -1 },
        u8::from(syncing),
        st.read_offset,
        st.offset,
    );
    if syncing {
        let perc = if st.sync_total > 0 {
            st.sync_read as f64 / st.sync_total as f64 * 100.0
        } else {
            0.0
        };
        let _ = write!(
            s,
            "master_sync_total_bytes:{}\r\nmaster_sync_read_bytes:{}\r\nmaster_sync_left_bytes:{}\r\nmaster_sync_perc:{perc:.2}\r\nmaster_sync_last_io_seconds_ago:{}\r\n",
            st.sync_total,
            st.sync_read,
            st.sync_total - st.sync_read,
            seconds_since(st.last_io).max(0),
        );
    }
    if !up {
        let _ = write!(
            s,
            "master_link_down_since_seconds:{}\r\n",
            seconds_since(st.down_since)
        );
    }
    let _ = write!(
        s,
        "slave_priority:100\r\nslave_read_only:1\r\nreplica_announced:1\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:{}\r\nmaster_repl_offset:{}\r\nsecond_repl_offset:{}\r\nrepl_backlog_active:0\r\nrepl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
        st.replid, st.replid2, st.offset, st.second_offset,
    );
    if let Some(e) = &st.last_error {
        let _ = write!(s, "master_link_error:{}\r\n", e.replace(['\r', '\n'], " "));
    }
    if !st.unknown_commands.is_empty() {
        let _ = write!(
            s,
            "unknown_master_commands:{}\r\n",
            super::replica_state::describe_unknown(&st.unknown_commands)
        );
    }
    true
}
