//! CLIENT ID SETNAME GETNAME SETINFO LIST KILL UNBLOCK.

use redcodec_engine::Reply;

use crate::session::Session;
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

fn unknown_sub(args: &[Vec<u8>]) -> Reply {
    Reply::error(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
        String::from_utf8_lossy(&args[1])
    ))
}

/// CLIENT subcommand ….
pub fn client(shared: &Shared, session: &mut Session, args: &[Vec<u8>]) -> Reply {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    match (sub.as_str(), args.len()) {
        ("id", 2) => Reply::Integer(session.info.id as i64),
        ("setname", 3) => match set_name(session, &args[2]) {
            Ok(()) => Reply::ok(),
            Err(e) => e,
        },
        ("getname", 2) => {
            let name = session.info.live.lock().name.clone();
            if name.is_empty() {
                Reply::Nil
            } else {
                Reply::Bulk(name)
            }
        }
        ("setinfo", 4) => {
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
        ("list", _) => {
            let mut text = String::new();
            for c in shared.clients.all() {
                text.push_str(&c.list_line());
                text.push('\n');
            }
            Reply::Bulk(text.into_bytes())
        }
        ("info", 2) => Reply::Bulk(format!("{}\n", session.info.list_line()).into_bytes()),
        ("kill", 3) => {
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
        ("kill", n) if n.is_multiple_of(2) => kill_filtered(shared, session, &args[2..]),
        ("unblock", 3 | 4) => unblock(shared, args),
        ("tracking" | "no-evict" | "no-touch" | "reply", _) => Reply::ok(),
        _ => unknown_sub(args),
    }
}

/// CLIENT KILL with filters (ID, ADDR, LADDR, SKIPME): how many closed.
fn kill_filtered(shared: &Shared, session: &mut Session, filters: &[Vec<u8>]) -> Reply {
    let mut id = None;
    let mut addr = None;
    let mut laddr = None;
    let mut skipme = true;
    for pair in filters.chunks(2) {
        let name = String::from_utf8_lossy(&pair[0]).to_ascii_lowercase();
        let value = String::from_utf8_lossy(&pair[1]).into_owned();
        match name.as_str() {
            "id" => match value.parse::<u64>() {
                Ok(n) => id = Some(n),
                Err(_) => return Reply::error("ERR client-id should be greater than 0"),
            },
            "addr" => addr = Some(value),
            "laddr" => laddr = Some(value),
            "skipme" => match value.to_ascii_lowercase().as_str() {
                "yes" => skipme = true,
                "no" => skipme = false,
                _ => return Reply::error("ERR syntax error"),
            },
            "type" | "user" | "maxage" => {}
            _ => return Reply::error("ERR syntax error"),
        }
    }
    let mut killed = 0;
    for c in shared.clients.all() {
        let me = c.id == session.info.id;
        if (me && skipme)
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
fn unblock(shared: &Shared, args: &[Vec<u8>]) -> Reply {
    let Some(id) = std::str::from_utf8(&args[2])
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        return Reply::error("ERR value is not an integer or out of range");
    };
    let as_error = match args
        .get(3)
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
    {
        None => false,
        Some(m) if m == "timeout" => false,
        Some(m) if m == "error" => true,
        Some(_) => return Reply::error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"),
    };
    let Some(client) = shared.clients.get(id) else {
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
