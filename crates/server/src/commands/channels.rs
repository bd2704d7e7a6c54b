//! The Pub/Sub commands ([`crate::pubsub`]): SUBSCRIBE, PSUBSCRIBE,
//! SSUBSCRIBE, UNSUBSCRIBE, PUNSUBSCRIBE, SUNSUBSCRIBE (one confirmation
//! per name, written as they are: RESP2 arrays or RESP3 pushes), PUBLISH,
//! SPUBLISH and PUBSUB CHANNELS, NUMSUB, NUMPAT, SHARDCHANNELS and
//! SHARDNUMSUB.

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
    session.subscriptions = counts.0 + counts.1 + counts.2;
    session.info.live.lock().subscriptions = counts;
    session.raw_reply = Some(out);
    session.pushed = true;
    Reply::ok()
}

/// PUBLISH `channel message`: how many clients received it.
pub fn publish(shared: &Shared, session: &Session, args: &[Bytes]) -> Reply {
    let received = shared.pubsub.publish(&args[1], &args[2]);
    to_replicas(shared, session, b"PUBLISH", args);
    Reply::Integer(received as i64)
}

/// SPUBLISH `shardchannel message`: how many clients received it.
pub fn spublish(shared: &Shared, session: &Session, args: &[Bytes]) -> Reply {
    let received = shared.pubsub.publish_shard(&args[1], &args[2]);
    to_replicas(shared, session, b"SPUBLISH", args);
    Reply::Integer(received as i64)
}

/// A master sends PUBLISH and SPUBLISH (`command`, with the channel and
/// message of `args`) on to its replicas, whose subscribers get the
/// message too, as Redis does; a replica sends on those of its master's
/// stream (`session` is then its link), as a Redis replica passes the
/// stream on, and its clients' nowhere.
fn to_replicas(shared: &Shared, session: &Session, command: &[u8], args: &[Bytes]) {
    if !shared.replica.is_replica() || session.info.master {
        shared
            .repl
            .core
            .feed(&[vec![command.to_vec(), args[1].to_vec(), args[2].to_vec()]]);
    }
}

/// PUBSUB CHANNELS | SHARDCHANNELS `[pattern]`, NUMSUB | SHARDNUMSUB
/// `[channel…]`, NUMPAT (the subcommand and its arity checked before).
pub fn pubsub(shared: &Shared, args: &[Bytes]) -> Reply {
    let ps = &shared.pubsub;
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    // SHARDCHANNELS and SHARDNUMSUB: CHANNELS and NUMSUB of the sharded
    // channels.
    let (kind, sub) = match sub.strip_prefix("shard") {
        Some(rest) => (Kind::Shard, rest),
        None => (Kind::Channel, sub.as_str()),
    };
    match sub {
        "channels" => Reply::Array(
            ps.channels(kind, args.get(2).map(|p| &p[..]))
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
                        Reply::Integer(ps.subscribers(kind, c) as i64),
                    ]
                })
                .collect(),
        ),
        "numpat" if kind == Kind::Channel => Reply::Integer(ps.patterns() as i64),
        _ => crate::commands::subcommands::container("pubsub")
            .expect("PUBSUB is a container")
            .help_reply(),
    }
}
