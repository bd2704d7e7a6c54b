//! MONITOR: clients that watch every command the server runs, as Redis
//! 7.0 feeds them (`replicationFeedMonitors`): one line per command,
//! `+<unix seconds>.<micros> [<db> <addr>] "arg" …` (`[<db> lua]` for a
//! script's commands), each argument quoted as `sdscatrepr` quotes it,
//! after the command ran (a script's EVAL or FCALL before its commands);
//! administrative commands are not shown and the passwords of AUTH,
//! HELLO … AUTH and MIGRATE … AUTH / AUTH2 are `(redacted)`. QUIT or RESET
//! ends it.
//!
//! Nothing is done for a command while nobody monitors (one atomic load).
//! A monitor that does not read its feed is disconnected once 256 MB wait
//! for it, Redis' default `client-output-buffer-limit` for the replica
//! class, which monitors belong to.

use bytes::Bytes;
use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use redcodec_engine::internals::dispatch::Flags;
use redcodec_engine::Reply;
use redcodec_protocol::cmdline::quote_bytes;

use crate::command_spec::Spec;
use crate::session::Session;
use crate::state::Shared;

thread_local! {
    /// How many scripts the thread is running commands for.
    static IN_SCRIPT: Cell<u32> = const { Cell::new(0) };
    /// The lines held back while the thread runs a group that may be
    /// abandoned ([`HeldLines`]; `None`: lines go out at once).
    static HELD: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// Holds back the lines of the commands the thread runs until
/// [`HeldLines::release`] sends them, in order; dropped unreleased, they
/// are discarded (a lane's group abandoned, to run again and be shown
/// then, [`crate::script_lane`]).
pub(crate) struct HeldLines(());

impl HeldLines {
    pub(crate) fn start() -> HeldLines {
        HELD.set(Some(Vec::new()));
        HeldLines(())
    }

    /// Sends the held lines to every monitor.
    pub(crate) fn release(self, shared: &Shared) {
        if let Some(lines) = HELD.take().filter(|l| !l.is_empty()) {
            shared.monitors.send(&lines);
        }
    }
}

impl Drop for HeldLines {
    fn drop(&mut self) {
        HELD.set(None);
    }
}

/// While alive, the commands the thread runs are a script's (`[db lua]`).
pub struct ScriptCalls(());

impl ScriptCalls {
    /// Marks the thread as running a script's commands until dropped.
    pub fn enter() -> ScriptCalls {
        IN_SCRIPT.with(|n| n.set(n.get() + 1));
        ScriptCalls(())
    }

    /// Whether the thread is running a script's commands now.
    pub fn active() -> bool {
        IN_SCRIPT.with(Cell::get) > 0
    }
}

impl Drop for ScriptCalls {
    fn drop(&mut self) {
        IN_SCRIPT.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// MONITOR: the connection becomes a monitor (`+OK`); again, nothing is
/// answered (Redis ignores it); inside EXEC, Redis' refusal.
pub fn monitor(shared: &Shared, session: &mut Session) -> Reply {
    if session.ready_keys.is_some() {
        return Reply::error("ERR MONITOR isn't allowed for DENY BLOCKING client");
    }
    if !shared.monitors.start(session.info.id) {
        session.silent = true;
    }
    Reply::ok()
}

/// Whether the command of `spec` is shown to monitors before it runs:
/// EVAL and FCALL before the script's commands, a blocking pop when it
/// starts waiting, as Redis shows them.
pub fn shown_first(spec: &Spec) -> bool {
    spec.has(Flags::SCRIPT) || spec.has(Flags::BLOCKING)
}

/// Runs the command `args` of `spec` for `session` with `run`, shown to
/// every monitor after it ran (EVAL and FCALL before).
pub fn around(
    shared: &Shared,
    session: &mut Session,
    spec: &Spec,
    args: &[Bytes],
    run: impl FnOnce(&mut Session) -> Reply,
) -> Reply {
    if shared.monitors.count.load(Ordering::Relaxed) == 0 {
        return run(session);
    }
    let first = shown_first(spec);
    if first {
        feed(shared, session, spec, args);
    }
    let reply = run(session);
    if !first {
        feed(shared, session, spec, args);
    }
    reply
}

/// Shows the command `args` that `session` runs to every monitor, if any.
pub fn feed(shared: &Shared, session: &Session, spec: &Spec, args: &[Bytes]) {
    if shared.monitors.count.load(Ordering::Relaxed) == 0 || spec.request_has(args, Flags::ADMIN) {
        return;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let source = if ScriptCalls::active() {
        "lua".to_string()
    } else {
        session.info.addr.to_string()
    };
    let mut line = format!(
        "+{}.{:06} [{} {source}]",
        now.as_secs(),
        now.subsec_micros(),
        session.db
    );
    let redacted = spec.redaction.positions(args);
    for (i, arg) in args.iter().enumerate() {
        line.push(' ');
        if redacted.contains(&i) {
            line.push_str("\"(redacted)\"");
        } else {
            line.push_str(&quote_bytes(arg));
        }
    }
    line.push_str("\r\n");
    let sent = HELD.with_borrow_mut(|held| match held {
        Some(held) => {
            held.extend_from_slice(line.as_bytes());
            false
        }
        None => true,
    });
    if sent {
        shared.monitors.send(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::frame::args_of as args;

    #[test]
    fn secrets_are_redacted_as_redis_does() {
        let of = |name: &str, words: &[&str]| {
            let spec = crate::commands::registry::get(name.as_bytes()).expect("a command");
            spec.redaction.positions(&args(words))
        };
        assert_eq!(of("auth", &["auth", "pw"]), [1]);
        assert_eq!(of("auth", &["AUTH", "u", "pw"]), [1, 2]);
        assert_eq!(of("hello", &["hello", "3", "AUTH", "u", "pw"]), [3, 4]);
        assert_eq!(
            of(
                "hello",
                &["hello", "3", "SETNAME", "auth", "AUTH", "u", "pw"]
            ),
            [5, 6]
        );
        assert!(of("hello", &["hello", "3"]).is_empty());
        assert!(of("get", &["get", "auth"]).is_empty());
    }

    #[test]
    fn admin_subcommands_are_not_shown() {
        let client = crate::commands::registry::get(b"client").expect("CLIENT");
        assert!(client.request_has(&args(&["client", "KILL", "1.2.3.4:5"]), Flags::ADMIN));
        assert!(client.request_has(&args(&["client", "list"]), Flags::ADMIN));
        assert!(!client.request_has(&args(&["client", "getname"]), Flags::ADMIN));
        assert!(!client.request_has(&args(&["client"]), Flags::ADMIN));
        let config = crate::commands::registry::get(b"config").expect("CONFIG");
        assert!(config.request_has(&args(&["config", "get", "x"]), Flags::ADMIN));
    }
}
