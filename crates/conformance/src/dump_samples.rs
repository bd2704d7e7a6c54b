//! Values of every type and size class for the DUMP/RESTORE tests against
//! redis-server and `redcodec serve`: each with the commands that build
//! it, in the order that gives Redis' encoding for it.

use redcodec_engine::internals::number::format_score;
use redcodec_rdb::Value;

/// One value to build, dump and restore.
pub struct Sample {
    /// What it is (for failure messages).
    pub name: String,
    /// The value.
    pub value: Value,
}

impl Sample {
    /// The commands that build the value at `key` (after deleting it),
    /// elements in the sample's order, at most 100 per command.
    pub fn build(&self, key: &[u8]) -> Vec<Vec<Vec<u8>>> {
        let with = |name: &str, args: Vec<Vec<u8>>| {
            let mut c = vec![name.as_bytes().to_vec(), key.to_vec()];
            c.extend(args);
            c
        };
        let mut cmds = vec![vec![b"DEL".to_vec(), key.to_vec()]];
        let chunked = |name: &str, args: Vec<Vec<u8>>, per: usize| -> Vec<Vec<Vec<u8>>> {
            args.chunks(100 * per)
                .map(|c| with(name, c.to_vec()))
                .collect()
        };
        match &self.value {
            Value::String(s) => cmds.push(with("SET", vec![s.clone()])),
            Value::List(items) => cmds.extend(chunked("RPUSH", items.clone(), 1)),
            Value::Set(members) => cmds.extend(chunked("SADD", members.clone(), 1)),
            Value::ZSet(members) => cmds.extend(chunked(
                "ZADD",
                members
                    .iter()
                    .flat_map(|(m, s)| [format_score(*s).into_bytes(), m.clone()])
                    .collect(),
                2,
            )),
            Value::Hash(pairs) => cmds.extend(chunked(
                "HSET",
                pairs
                    .iter()
                    .flat_map(|(f, v)| [f.clone(), v.clone()])
                    .collect(),
                2,
            )),
        }
        cmds
    }

    /// Whether the encoder claims Redis' exact bytes for this value with
    /// compression off (not for hash table sets and hashes, whose order is
    /// Redis' seeded dict order).
    pub fn byte_exact(&self) -> bool {
        match &self.value {
            Value::Set(m) => {
                m.len() <= 512
                    && m.iter()
                        .all(|m| redcodec_engine::internals::number::parse_i64(m).is_some())
            }
            Value::Hash(p) => {
                p.len() <= 128 && p.iter().all(|(f, v)| f.len() <= 64 && v.len() <= 64)
            }
            _ => true,
        }
    }
}

/// A fixed pseudo-random byte source (xorshift), so the samples are the
/// same on every run.
struct Bytes(u64);

impl Bytes {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn binary(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    /// Text from a small alphabet: LZF compresses it.
    fn compressible(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| b'a' + (self.next() % 4) as u8).collect()
    }
}

fn named(name: impl Into<String>, value: Value) -> Sample {
    Sample {
        name: name.into(),
        value,
    }
}

/// Strings, lists, sets, sorted sets and hashes: small and large, on both
/// sides of every encoding threshold, with integer, binary and
/// compressible elements.
pub fn samples() -> Vec<Sample> {
    let mut b = Bytes(0x9e37_79b9_7f4a_7c15);
    let ints = |n: usize, step: i64| -> Vec<Vec<u8>> {
        (0..n as i64)
            .map(|i| (i * step - 7).to_string().into_bytes())
            .collect()
    };
    let mut out = Vec::new();
    for s in [
        &b"hello"[..],
        b"12",
        b"-300",
        b"100000",
        b"-2147483648",
        b"4294967296",
        b"012",
        b"",
    ] {
        out.push(named(format!("string {s:?}"), Value::String(s.to_vec())));
    }
    for n in [1, 20, 21, 100, 5000] {
        out.push(named(
            format!("binary string {n}"),
            Value::String(b.binary(n)),
        ));
        out.push(named(
            format!("compressible string {n}"),
            Value::String(b.compressible(n)),
        ));
    }
    out.push(named(
        "small list",
        Value::List(vec![
            b"a".to_vec(),
            b"1".to_vec(),
            b"-2".to_vec(),
            b"70000".to_vec(),
            b"9223372036854775807".to_vec(),
        ]),
    ));
    out.push(named("list of ints", Value::List(ints(300, 1_000_003))));
    out.push(named(
        "list over several nodes",
        Value::List(
            (0..400)
                .map(|i| {
                    if i % 3 == 0 {
                        b.binary(60)
                    } else {
                        b.compressible(40)
                    }
                })
                .collect(),
        ),
    ));
    out.push(named(
        "list with big elements",
        Value::List((0..6).map(|_| b.compressible(5000)).collect()),
    ));
    for (n, step) in [
        (3, 1),
        (512, 1),
        (513, 1),
        (40, 100_000),
        (40, 10_000_000_000),
    ] {
        out.push(named(
            format!("set of {n} ints step {step}"),
            Value::Set(ints(n, step)),
        ));
    }
    out.push(named(
        "set of strings",
        Value::Set((0..50).map(|i| format!("m{i}").into_bytes()).collect()),
    ));
    for n in [3, 128, 129] {
        let scores = [
            1.0,
            2.5,
            -3.0,
            0.1,
            1e20,
            f64::INFINITY,
            f64::NEG_INFINITY,
            4.611_686_018_427_388e18,
        ];
        out.push(named(
            format!("zset of {n}"),
            Value::ZSet(
                (0..n)
                    .map(|i| {
                        (
                            format!("member:{i}").into_bytes(),
                            scores[i % scores.len()] + i as f64,
                        )
                    })
                    .collect(),
            ),
        ));
    }
    out.push(named(
        "zset with a 65-byte member",
        Value::ZSet(vec![(b.compressible(65), 1.0), (b"x".to_vec(), 2.0)]),
    ));
    for n in [3, 128, 129] {
        out.push(named(
            format!("hash of {n}"),
            Value::Hash(
                (0..n)
                    .map(|i| {
                        (
                            format!("field:{i}").into_bytes(),
                            if i % 2 == 0 {
                                i.to_string().into_bytes()
                            } else {
                                b.binary(10)
                            },
                        )
                    })
                    .collect(),
            ),
        ));
    }
    out.push(named(
        "hash with a 65-byte value",
        Value::Hash(vec![
            (b"f".to_vec(), b.compressible(65)),
            (b"g".to_vec(), b"1".to_vec()),
        ]),
    ));
    out
}
