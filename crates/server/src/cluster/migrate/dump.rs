//! A key as the commands that rebuild it on another node (Kvrocks'
//! `migrateSimpleKey` and `migrateComplexKey`): `SET key value [PXAT ms]`
//! for a string; `RPUSH`, `HSET`, `SADD`, `ZADD` with at most 16 items a
//! command for the others, then `PEXPIREAT`.

use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

/// Items in one command of a collection (Kvrocks' `kMaxItemsInCommand`).
const ITEMS_PER_COMMAND: usize = 16;

fn bulks(reply: Reply) -> Vec<Vec<u8>> {
    match reply {
        Reply::Array(items) => items
            .into_iter()
            .filter_map(|r| match r {
                Reply::Bulk(b) => Some(b),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The commands that rebuild `key` as it is now: a missing key gives
/// none. `replace` puts a `DEL` first (a key sent again).
pub fn commands(engine: &Engine<AnyCodec>, key: &[u8], replace: bool) -> Vec<Vec<Vec<u8>>> {
    let run = |args: &[&[u8]]| engine.execute(args);
    let k = key.to_vec();
    let mut out: Vec<Vec<Vec<u8>>> = Vec::new();
    if replace {
        out.push(vec![b"DEL".to_vec(), k.clone()]);
    }
    let at = match run(&[b"pexpiretime".as_slice(), key]) {
        Reply::Integer(ms) if ms > 0 => Some(ms.to_string().into_bytes()),
        _ => None,
    };
    let Reply::Status(kind) = run(&[b"type".as_slice(), key]) else {
        return out;
    };
    let (cmd, items, width): (&[u8], Vec<Vec<u8>>, usize) = match kind.as_str() {
        "string" => {
            let Reply::Bulk(value) = run(&[b"get".as_slice(), key]) else {
                return out;
            };
            let mut set = vec![b"SET".to_vec(), k, value];
            if let Some(at) = at {
                set.push(b"PXAT".to_vec());
                set.push(at);
            }
            out.push(set);
            return out;
        }
        "list" => (
            b"RPUSH".as_slice(),
            bulks(run(&[b"lrange".as_slice(), key, b"0", b"-1"])),
            1,
        ),
        "hash" => (
            b"HSET".as_slice(),
            bulks(run(&[b"hgetall".as_slice(), key])),
            2,
        ),
        "set" => (
            b"SADD".as_slice(),
            bulks(run(&[b"smembers".as_slice(), key])),
            1,
        ),
        "zset" => {
            let flat = bulks(run(&[
                b"zrange".as_slice(),
                key,
                b"0",
                b"-1",
                b"withscores",
            ]));
            // member score … → score member …
            let swapped = flat
                .chunks(2)
                .filter(|p| p.len() == 2)
                .flat_map(|p| [p[1].clone(), p[0].clone()])
                .collect();
            (b"ZADD".as_slice(), swapped, 2)
        }
        _ => return out,
    };
    if items.is_empty() {
        return out;
    }
    for chunk in items.chunks(ITEMS_PER_COMMAND * width) {
        let mut c = vec![cmd.to_vec(), k.clone()];
        c.extend(chunk.iter().cloned());
        out.push(c);
    }
    if let Some(at) = at {
        out.push(vec![b"PEXPIREAT".to_vec(), k, at]);
    }
    out
}
