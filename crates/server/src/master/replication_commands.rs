//! The commands of the master side: REPLCONF, the checks of PSYNC and
//! SYNC before a connection becomes a replica link, WAIT, and the client
//! type CLIENT KILL filters on.

use bytes::Bytes;
use std::time::Duration;

use redcodec_engine::Reply;

use crate::clients::ClientInfo;
use crate::command_roles::Handover;
use crate::session::Session;
use crate::state::Shared;

const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";

fn parse_i64(arg: &[u8]) -> Option<i64> {
    std::str::from_utf8(arg).ok()?.parse().ok()
}

/// PSYNC's and SYNC's checks, with Redis' replies: a replica whose link
/// is down has nothing to serve (`-NOMASTERLINK`); PSYNC's offset must
/// be an integer (`getLongLongFromObjectOrReply`). `Ok` hands the
/// connection over to [`super::serve_replica`].
pub fn check_sync(shared: &Shared, handover: Handover, args: &[Bytes]) -> Result<(), Reply> {
    if let Some(refused) = crate::replica::replicaof::refuse_sync(shared) {
        return Err(refused);
    }
    if handover == Handover::Psync && parse_i64(&args[2]).is_none() {
        return Err(Reply::error(NOT_AN_INTEGER));
    }
    Ok(())
}

/// REPLCONF option value …, as Redis 7.0's `replconfCommand` answers a
/// connection that is not yet a replica: `listening-port`, `ip-address`
/// and `capa` are kept for its PSYNC; `ack` and `getack` get no reply.
pub fn replconf(shared: &Shared, session: &mut Session, args: &[Bytes]) -> Reply {
    if args.len().is_multiple_of(2) {
        return Reply::error("ERR syntax error");
    }
    let id = session.info.id;
    for pair in args[1..].chunks(2) {
        let (option, value) = (&pair[0], &pair[1]);
        let option = String::from_utf8_lossy(option).to_ascii_lowercase();
        match option.as_str() {
            "listening-port" => match parse_i64(value) {
                Some(port) => shared.repl.handshake(id, |h| h.port = port as u16),
                None => return Reply::error(NOT_AN_INTEGER),
            },
            "ip-address" => {
                if value.len() >= 46 {
                    return Reply::error(format!(
                        "ERR REPLCONF ip-address provided by replica instance is too long: {} bytes",
                        value.len()
                    ));
                }
                let ip = String::from_utf8_lossy(value).into_owned();
                shared.repl.handshake(id, |h| h.ip = Some(ip));
            }
            "capa" => {
                if value.eq_ignore_ascii_case(b"eof") {
                    shared.repl.handshake(id, |h| h.capa_eof = true);
                }
            }
            "ack" | "getack" => {
                session.silent = true;
                return Reply::ok();
            }
            _ => {
                return Reply::error(format!(
                    "ERR Unrecognized REPLCONF option: {}",
                    String::from_utf8_lossy(&pair[0])
                ))
            }
        }
    }
    Reply::ok()
}

/// Redis' client type name (`getClientTypeByName`), `replica` spelled
/// `slave`; `None` for a name Redis does not know.
pub fn type_name(name: &[u8]) -> Option<&'static str> {
    match String::from_utf8_lossy(name).to_ascii_lowercase().as_str() {
        "normal" => Some("normal"),
        "slave" | "replica" => Some("slave"),
        "master" => Some("master"),
        "pubsub" => Some("pubsub"),
        _ => None,
    }
}

/// The type of `client`: `master` for a replica's link to its master,
/// `slave` for a replica's link here, else `normal`.
pub fn client_type(shared: &Shared, client: &ClientInfo) -> &'static str {
    if client.master {
        "master"
    } else if shared.repl.is_replica(client.id) {
        "slave"
    } else {
        "normal"
    }
}

/// WAIT inside a transaction: how many replicas acknowledged the stream
/// up to its current end, without waiting (as Redis answers in MULTI).
pub fn wait_now(shared: &Shared) -> Reply {
    let core = shared.repl.core();
    Reply::Integer(core.acked_at_least(core.offset()) as i64)
}

/// WAIT numreplicas timeout: how many replicas acknowledged the stream
/// up to its current end, once `numreplicas` have or after `timeout`
/// milliseconds (0: no limit) — or at once when the client is killed or
/// the server shuts down.
pub async fn wait(shared: &Shared, client: &ClientInfo, args: &[Bytes]) -> Reply {
    let Some(wanted) = parse_i64(&args[1]) else {
        return Reply::error(NOT_AN_INTEGER);
    };
    let timeout = match parse_i64(&args[2]) {
        None => return Reply::error("ERR timeout is not an integer or out of range"),
        Some(t) if t < 0 => return Reply::error("ERR timeout is negative"),
        Some(t) => t as u64,
    };
    let target = shared.repl.offset();
    let core = shared.repl.core().clone();
    let count = core.acked_at_least(target);
    if count as i64 >= wanted {
        return Reply::Integer(count as i64);
    }
    core.request_acks();
    let deadline =
        (timeout > 0).then(|| tokio::time::Instant::now() + Duration::from_millis(timeout));
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        if *shutdown.borrow() || client.killed.load(std::sync::atomic::Ordering::SeqCst) {
            return Reply::Integer(core.acked_at_least(target) as i64);
        }
        let acked = core.acked.notified();
        tokio::pin!(acked);
        acked.as_mut().enable();
        let count = core.acked_at_least(target);
        if count as i64 >= wanted {
            return Reply::Integer(count as i64);
        }
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = acked => {}
            _ = shutdown.changed() => {}
            () = client.kill.notified() => {}
            () = sleep => return Reply::Integer(core.acked_at_least(target) as i64),
        }
    }
}
