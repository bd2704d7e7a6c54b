//! The Pub/Sub commands ([`crate::pubsub`]): SUBSCRIBE, PSUBSCRIBE,
//! UNSUBSCRIBE, PUNSUBSCRIBE (one confirmation per name, written as they
//! are: RESP2 arrays or RESP3 pushes), PUBLISH and PUBSUB CHANNELS,
//! NUMSUB and NUMPAT.

use bytes::Bytes;
use redcodec_engine::Reply;

use crate::pubsub::{Change, Counts, Kind};
use crate::session::Session;
use crate::state::Shared;

/// SUBSCRIBE / PSUBSCRIBE `name…`, UNSUBSCRIBE / PUNSUBSCRIBE `[name…]`
/// (every one of the kind without names).
pub fn change(
    shared: &Shared,
    session: &mut Session,
    args: &[Bytes],
    what: (Change, Kind),
) -> Reply {
    let mut out = Vec::new();
    let id = session.info.id;
    let counts = shared
        .pubsub
        .change(id, session.protocol, what, &args[1..], &mut out);
    confirmations(session, counts, out)
}

/// The confirmations go out as encoded; the reply stands for them in the
/// statistics. CLIENT LIST shows the counts.
fn confirmations(session: &mut Session, counts: Counts, out: Vec<u8>) -> Reply {
    session.subscriptions = counts.0 + counts.1;
    session.info.live.lock().subscriptions = counts;
    session.raw_reply = Some(out);
    session.pushed = true;
    Reply::ok()
}

/// PUBLISH `channel message`: how many clients received it. A master
/// sends it on to its replicas, whose subscribers get it too, as Redis
/// does (a replica sends its clients' PUBLISH nowhere).
pub fn publish(shared: &Shared, args: &[Bytes]) -> Reply {
    let received = shared.pubsub.publish(&args[1], &args[2]);
    if !shared.replica.is_replica() {
        shared.repl.core.feed(&[vec![
            b"PUBLISH".to_vec(),
            args[1].to_vec(),
            args[2].to_vec(),
        ]]);
    }
    Reply::Integer(received as i64)
}

/// PUBSUB CHANNELS `[pattern]` | NUMSUB `[channel…]` | NUMPAT (the subcommand
/// and its arity checked before).
pub fn pubsub(shared: &Shared, args: &[Bytes]) -> Reply {
    let ps = &shared.pubsub;
    match String::from_utf8_lossy(&args[1])
        .to_ascii_lowercase()
        .as_str()
    {
        "channels" => Reply::Array(
            ps.channels(args.get(2).map(|p| &p[..]))
                .into_iter()
                .map(Reply::Bulk)
                .collect(),
        ),
        "numsub" => Reply::Array(
            args[2..]
                .iter()
                .flat_map(|c| {
                    [
                        Reply::Bulk(c.to_vec()),
                        Reply::Integer(ps.subscribers(c) as i64),
                    ]
                })
                .collect(),
        ),
        "numpat" => Reply::Integer(ps.patterns() as i64),
        _ => crate::commands::subcommands::container("pubsub")
            .expect("PUBSUB is a container")
            .help_reply(),
    }
}
