//! CLIENT ID SETNAME GETNAME SETINFO LIST INFO KILL UNBLOCK NO-EVICT
//! NO-TOUCH.

use bytes::Bytes;
use redcodec_engine::internals::number::parse_i64;
use redcodec_engine::Reply;
use std::time::{Duration, Instant};

use crate::session::{ReplyMode, Session};
use crate::state::Shared;

/// Sets the connection's name (no spaces or newlines, as Redis).
pub fn set_name(session: &Session, name: &[u8]) -> Result<(), Reply> {
    if name.iter().any(|&b| b <= b' ' || b > b'~') {
        return Err(Reply::error(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    session.info.live.lock().name = name.to_vec();
    Ok(())
}

fn unknown_type(name: &[u8]) -> Reply {
    Reply::error(format!(
        "ERR Unknown client type '{}'",
        String::from_utf8_lossy(name)
    ))
}

/// ON or OFF (CLIENT NO-EVICT, NO-TOUCH): accepted with OK, as nothing is
/// evicted and no access time is kept; anything else a syntax error.
fn on_off(arg: &[u8]) -> Reply {
    if arg.eq_ignore_ascii_case(b"on") || arg.eq_ignore_ascii_case(b"off") {
        Reply::ok()
    } else {
        Reply::error("ERR syntax error")
    }
}

/// CLIENT subcommand … (the subcommand and its arity checked before, by
/// [`super::subcommands`], which answers HELP).
pub fn client(shared: &Shared, session: &mut Session, args: &[Bytes]) -> Reply {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    match sub.as_str() {
        "id" => Reply::Integer(session.info.id as i64),
        "setname" => match set_name(session, &args[2]) {
            Ok(()) => Reply::ok(),
            Err(e) => e,
        },
        "getname" => {
            let name = session.info.live.lock().name.clone();
            if name.is_empty() {
                Reply::Nil
            } else {
                Reply::Bulk(name)
            }
        }
        "setinfo" => {
            let attr = String::from_utf8_lossy(&args[2]).to_ascii_lowercase();
            let value = String::from_utf8_lossy(&args[3]).into_owned();
            let mut live = session.info.live.lock();
            match attr.as_str() {
                "lib-name" => live.lib.0 = value,
                "lib-ver" => live.lib.1 = value,
                _ => {
                    return Reply::error(format!(
                        "ERR Unrecognized option '{}'",
                        String::from_utf8_lossy(&args[2])
                    ))
                }
            }
            Reply::ok()
        }
        "list" => list(shared, args),
        "info" => Reply::Bulk(format!("{}\n", session.info.list_line()).into_bytes()),
        "kill" if args.len() == 3 => {
            let addr = String::from_utf8_lossy(&args[2]).into_owned();
            match shared
                .clients
                .all()
                .into_iter()
                .find(|c| c.addr.to_string() == addr)
            {
                Some(c) => {
                    c.kill();
                    if c.id == session.info.id {
                        session.close = true;
                    }
                    Reply::ok()
                }
                None => Reply::error("ERR No such client"),
            }
        }
        "kill" => kill_filtered(shared, session, &args[2..]),
        "unblock" if args.len() <= 4 => unblock(shared, args),
        "pause" if args.len() <= 4 => client_pause(shared, args),
        "unpause" => client_unpause(shared),
        "no-evict" | "no-touch" => on_off(&args[2]),
        "reply" => reply(session, &args[2]),
        _ => super::subcommands::syntax_error(args),
    }
}

/// CLIENT LIST [TYPE type | ID id…]: the lines of every client, of the
/// clients of a type, or of the clients given by id in that order.
fn list(shared: &Shared, args: &[Bytes]) -> Reply {
    let mut text = String::new();
    if args.len() == 4 && args[2].eq_ignore_ascii_case(b"type") {
        let Some(of_type) = crate::master::type_name(&args[3]) else {
            return unknown_type(&args[3]);
        };
        for c in shared.clients.all() {
            if crate::master::client_type(shared, &c) == of_type {
                text.push_str(&c.list_line());
                text.push('\n');
            }
        }
    } else if args.len() > 3 && args[2].eq_ignore_ascii_case(b"id") {
        for id in &args[3..] {
            let Some(id) = parse_i64(id) else {
                return Reply::error("ERR Invalid client ID");
            };
            if let Some(c) = u64::try_from(id).ok().and_then(|id| shared.clients.get(id)) {
                text.push_str(&c.list_line());
                text.push('\n');
            }
        }
    } else if args.len() != 2 {
        return Reply::error("ERR syntax error");
    } else {
        for c in shared.clients.all() {
            text.push_str(&c.list_line());
            text.push('\n');
        }
    }
    Reply::Bulk(text.into_bytes())
}

/// CLIENT KILL with filters (ID, TYPE, ADDR, LADDR, USER, SKIPME), read as
/// Redis reads them: how many closed.
fn kill_filtered(shared: &Shared, session: &mut Session, filters: &[Bytes]) -> Reply {
    let mut id = None;
    let mut addr = None;
    let mut laddr = None;
    let mut of_type = None;
    let mut skipme = true;
    for pair in filters.chunks(2) {
        let [name, value] = pair else {
            return Reply::error("ERR syntax error");
        };
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        match name.as_str() {
            "id" => match parse_i64(value) {
                Some(n) if n >= 1 => id = Some(n as u64),
                _ => return Reply::error("ERR client-id should be greater than 0"),
            },
            "type" => match crate::master::type_name(value) {
                Some(t) => of_type = Some(t),
                None => return unknown_type(value),
            },
            "addr" => addr = Some(String::from_utf8_lossy(value).into_owned()),
            "laddr" => laddr = Some(String::from_utf8_lossy(value).into_owned()),
            // Every client is the `default` user, the only one.
            "user" if value[..] == b"default"[..] => {}
            "user" => {
                return Reply::error(format!(
                    "ERR No such user '{}'",
                    String::from_utf8_lossy(value)
                ))
            }
            "skipme" => match value.to_ascii_lowercase().as_slice() {
                b"yes" => skipme = true,
                b"no" => skipme = false,
                _ => return Reply::error("ERR syntax error"),
            },
            _ => return Reply::error("ERR syntax error"),
        }
    }
    let mut killed = 0;
    for c in shared.clients.all() {
        let me = c.id == session.info.id;
        if (me && skipme)
            || of_type.is_some_and(|t| t != crate::master::client_type(shared, &c))
            || id.is_some_and(|i| i != c.id)
            || addr.as_ref().is_some_and(|a| *a != c.addr.to_string())
            || laddr.as_ref().is_some_and(|a| *a != c.laddr.to_string())
        {
            continue;
        }
        c.kill();
        if me {
            session.close = true;
        }
        killed += 1;
    }
    Reply::Integer(killed)
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR].
fn unblock(shared: &Shared, args: &[Bytes]) -> Reply {
    let as_error = match args
        .get(3)
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
    {
        None => false,
        Some(m) if m == "timeout" => false,
        Some(m) if m == "error" => true,
        Some(_) => return Reply::error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"),
    };
    let Some(id) = parse_i64(&args[2]) else {
        return Reply::error("ERR value is not an integer or out of range");
    };
    let Some(client) = u64::try_from(id).ok().and_then(|id| shared.clients.get(id)) else {
        return Reply::Integer(0);
    };
    let Some(waiter) = client.live.lock().blocked.clone() else {
        return Reply::Integer(0);
    };
    let reply = if as_error {
        Reply::error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
    } else {
        waiter.op.timeout_reply()
    };
    Reply::Integer(i64::from(waiter.finish(reply)))
}

/// CLIENT REPLY ON|OFF|SKIP, as Redis 7.0's `clientCommand` takes it:
/// ON answers OK; OFF and SKIP are not answered, OFF silences every later
/// reply until ON, SKIP the next command's (ignored under OFF). Pub/Sub's
/// confirmations and messages are pushes and go out whatever is chosen.
fn reply(session: &mut Session, mode: &[u8]) -> Reply {
    match String::from_utf8_lossy(mode).to_ascii_lowercase().as_str() {
        "on" => {
            session.replies = ReplyMode::On;
            Reply::ok()
        }
        "off" => {
            session.replies = ReplyMode::Off;
            Reply::ok()
        }
        "skip" => {
            if session.replies != ReplyMode::Off {
                session.replies = ReplyMode::SkipNext;
            }
            Reply::ok()
        }
        _ => Reply::error("ERR syntax error"),
    }
}

/// CLIENT PAUSE `timeout [WRITE | ALL]` (the mode checked first, as Redis
/// does).
fn client_pause(shared: &Shared, args: &[Bytes]) -> Reply {
    let all = match args.get(3) {
        None => true,
        Some(mode) if mode.eq_ignore_ascii_case(b"write") => false,
        Some(mode) if mode.eq_ignore_ascii_case(b"all") => true,
        Some(_) => return Reply::error("ERR CLIENT PAUSE mode must be WRITE or ALL"),
    };
    let ms = match parse_i64(&args[2]) {
        None => return Reply::error("ERR timeout is not an integer or out of range"),
        Some(ms) if ms < 0 => return Reply::error("ERR timeout is negative"),
        Some(ms) => ms,
    };
    let until = Instant::now()
        .checked_add(Duration::from_millis(ms as u64))
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600));
    shared.client_pause.pause(until, all);
    // Nothing expires in the background meanwhile (no DEL reaches the
    // replicas), until the pause, with the later end kept, is over.
    let over = shared.client_pause.now().map(|p| p.until);
    shared.engines.pause_expiry(over);
    Reply::ok()
}

/// CLIENT UNPAUSE.
fn client_unpause(shared: &Shared) -> Reply {
    shared.client_pause.unpause();
    shared.engines.pause_expiry(None);
    Reply::ok()
}
