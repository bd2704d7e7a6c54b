//! SLOWLOG: the clients' commands that ran for at least
//! `slowlog-log-slower-than` microseconds (negative: none), newest first,
//! at most `slowlog-max-len` of them, as Redis 7.0 keeps them
//! (`slowlog.c`).
//!
//! An entry holds an id (counted from the start, never reset), the unix
//! time, the microseconds the command ran (a blocking pop's wait and a
//! command's wait for others' keys left out, as INFO commandstats counts
//! it), its arguments (at most 32: the 32nd says how many more there were;
//! each cut to 128 bytes, with how many more; secrets `(redacted)` as
//! MONITOR redacts them), the client's address and its name. EXEC is not
//! logged, the commands it ran are; a script's commands are not, the
//! script is.
//!
//! A leaf: the client loop hands it what it logs.
//!
//! A command that is not slow costs one atomic load.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use parking_lot::Mutex;

use redcodec_engine::Reply;

use crate::clients::ClientInfo;
use crate::command_roles::Redaction;

/// Redis' `SLOWLOG_ENTRY_MAX_ARGC`.
const MAX_ARGS: usize = 32;
/// Redis' `SLOWLOG_ENTRY_MAX_STRING`.
const MAX_STRING: usize = 128;

/// The slow log.
pub struct SlowLog {
    /// `slowlog-log-slower-than`, in microseconds.
    slower_than: AtomicI64,
    entries: Mutex<Entries>,
}

struct Entries {
    /// `slowlog-max-len`.
    max_len: usize,
    /// The id of the next entry.
    next_id: i64,
    newest_first: VecDeque<Entry>,
}

/// One slow command.
struct Entry {
    id: i64,
    unix_seconds: i64,
    micros: i64,
    args: Vec<Bytes>,
    peer: String,
    name: Vec<u8>,
}

impl Default for SlowLog {
    /// Redis' defaults: commands of 10 ms or more, 128 of them.
    fn default() -> SlowLog {
        SlowLog {
            slower_than: AtomicI64::new(10_000),
            entries: Mutex::new(Entries {
                max_len: 128,
                next_id: 0,
                newest_first: VecDeque::new(),
            }),
        }
    }
}

impl SlowLog {
    /// Takes `slowlog-log-slower-than` (microseconds) and
    /// `slowlog-max-len`; a shorter log drops its oldest entries (Redis
    /// drops them after the next command, the CONFIG SET itself).
    pub fn configure(&self, slower_than: i64, max_len: i64) {
        self.slower_than.store(slower_than, Ordering::Relaxed);
        let max_len = usize::try_from(max_len).unwrap_or(0);
        let mut entries = self.entries.lock();
        entries.max_len = max_len;
        entries.newest_first.truncate(max_len);
    }

    /// Logs the command `args` that `client` ran for `took`, if that is
    /// slow, with the secrets `redaction` names redacted (EXEC is not
    /// given: Redis' `skip_slowlog`).
    pub fn note(&self, client: &ClientInfo, redaction: Redaction, args: &[Bytes], took: Duration) {
        let threshold = self.slower_than.load(Ordering::Relaxed);
        let micros = i64::try_from(took.as_micros()).unwrap_or(i64::MAX);
        if threshold < 0 || micros < threshold {
            return;
        }
        let redacted = redaction.positions(args);
        let args = logged_args(args, &redacted);
        let unix_seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let peer = client.addr.to_string();
        let name = client.live.lock().name.clone();
        let mut entries = self.entries.lock();
        let id = entries.next_id;
        entries.next_id += 1;
        entries.newest_first.push_front(Entry {
            id,
            unix_seconds,
            micros,
            args,
            peer,
            name,
        });
        let max_len = entries.max_len;
        entries.newest_first.truncate(max_len);
    }

    /// SLOWLOG GET `[count]`, LEN, RESET (HELP and the arity answered
    /// before, by the subcommands' table); `None` for a subcommand with
    /// the wrong number of arguments (Redis' syntax error).
    pub fn command(&self, args: &[Bytes]) -> Option<Reply> {
        let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
        Some(match (sub.as_str(), args.len()) {
            ("reset", 2) => {
                self.entries.lock().newest_first.clear();
                Reply::ok()
            }
            ("len", 2) => Reply::Integer(self.entries.lock().newest_first.len() as i64),
            ("get", 2 | 3) => {
                let count = match args.get(2).map(|c| parse_count(c)) {
                    None => 10,
                    Some(Some(-1)) => usize::MAX,
                    Some(Some(n)) => usize::try_from(n).unwrap_or(usize::MAX),
                    Some(None) => {
                        return Some(Reply::error(
                            "ERR count should be greater than or equal to -1",
                        ))
                    }
                };
                let entries = self.entries.lock();
                Reply::Array(
                    entries
                        .newest_first
                        .iter()
                        .take(count)
                        .map(Entry::reply)
                        .collect(),
                )
            }
            _ => return None,
        })
    }
}

impl Entry {
    fn reply(&self) -> Reply {
        Reply::Array(vec![
            Reply::Integer(self.id),
            Reply::Integer(self.unix_seconds),
            Reply::Integer(self.micros),
            Reply::Array(self.args.iter().map(|a| Reply::Bulk(a.to_vec())).collect()),
            Reply::bulk(self.peer.as_str()),
            Reply::Bulk(self.name.clone()),
        ])
    }
}

/// SLOWLOG GET's count: an integer of at least -1.
fn parse_count(text: &[u8]) -> Option<i64> {
    redcodec_engine::internals::number::parse_i64(text).filter(|n| *n >= -1)
}

/// The arguments an entry keeps (`slowlogCreateEntry`): at most
/// [`MAX_ARGS`], the last of them then `... (N more arguments)`; each
/// longer than [`MAX_STRING`] bytes cut there, with `... (N more bytes)`;
/// those at `redacted` as `(redacted)`.
fn logged_args(args: &[Bytes], redacted: &[usize]) -> Vec<Bytes> {
    let kept = args.len().min(MAX_ARGS);
    (0..kept)
        .map(|i| {
            if kept != args.len() && i == kept - 1 {
                Bytes::from(format!("... ({} more arguments)", args.len() - kept + 1))
            } else if redacted.contains(&i) {
                Bytes::from_static(b"(redacted)")
            } else if args[i].len() > MAX_STRING {
                let mut cut = args[i][..MAX_STRING].to_vec();
                cut.extend_from_slice(
                    format!("... ({} more bytes)", args[i].len() - MAX_STRING).as_bytes(),
                );
                Bytes::from(cut)
            } else {
                args[i].clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::frame::args_of as args;

    #[test]
    fn long_commands_are_cut_as_redis_cuts_them() {
        let words: Vec<String> = (0..34).map(|i| i.to_string()).collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let logged = logged_args(&args(&words), &[]);
        assert_eq!(logged.len(), 32);
        assert_eq!(logged[30], "30");
        assert_eq!(logged[31], "... (3 more arguments)");
        let long = "A".repeat(129);
        let logged = logged_args(&args(&["sadd", "set", &long]), &[]);
        assert_eq!(logged[2], format!("{}... (1 more bytes)", "A".repeat(128)));
        let exactly = "A".repeat(128);
        assert_eq!(logged_args(&args(&["get", &exactly]), &[])[1], exactly);
        let logged = logged_args(&args(&["auth", "user", "secret"]), &[1, 2]);
        assert_eq!(logged, args(&["auth", "(redacted)", "(redacted)"]));
    }

    #[test]
    fn the_count_of_get_is_at_least_minus_one() {
        assert_eq!(parse_count(b"-1"), Some(-1));
        assert_eq!(parse_count(b"0"), Some(0));
        assert_eq!(parse_count(b"-2"), None);
        assert_eq!(parse_count(b"ten"), None);
    }
}
