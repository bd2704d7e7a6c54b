//! The standard workload: which commands are timed, with which arguments,
//! and how a format's engine is driven through it.

use std::time::Instant;

use redcodec_engine::{Engine, Reply};
use redcodec_formats::AnyCodec;

use super::figure::{Figure, Spread};
use crate::error::CompareError;

/// The size of a run.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Sizes {
    /// Number of string keys, and of elements written by each collection write command.
    pub keys: usize,
    /// Elements per collection (hash, list, set, sorted set).
    pub elements: usize,
    /// Bytes of every string value, hash value and list element.
    pub value_size: usize,
    /// Fields of the big hash whose DEL is timed.
    pub big_hash: usize,
    /// Rounds: every timed pass (raw RocksDB and each format) runs once per
    /// round, interleaved, and a figure is the median of its rounds.
    pub rounds: usize,
}

impl Sizes {
    /// How many collections of each type the workload writes.
    pub fn collections(&self) -> usize {
        self.keys.div_ceil(self.elements.max(1)).max(1)
    }

    /// The value every write stores.
    pub fn value(&self) -> Vec<u8> {
        (0..self.value_size)
            .map(|i| b'a' + (i % 26) as u8)
            .collect()
    }
}

/// Whether a command writes or reads: its raw RocksDB reference is a put or a get.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Compared with raw RocksDB put.
    Write,
    /// Compared with raw RocksDB get.
    Read,
}

/// One timed command of the workload.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// The command's name, as in the tables.
    pub name: &'static str,
    /// What exactly is timed.
    pub what: &'static str,
    /// Write or read.
    pub kind: Kind,
    /// Operations run: `keys / divisor`.
    pub divisor: usize,
}

/// The timed commands, in the order they run (each one's data is the next one's input).
pub const STEPS: &[Step] = &[
    Step {
        name: "SET",
        what: "SET of a new string key",
        kind: Kind::Write,
        divisor: 1,
    },
    Step {
        name: "GET",
        what: "GET of an existing string key",
        kind: Kind::Read,
        divisor: 1,
    },
    Step {
        name: "HSET",
        what: "HSET of a new field in an existing hash",
        kind: Kind::Write,
        divisor: 1,
    },
    Step {
        name: "HGET",
        what: "HGET of an existing field",
        kind: Kind::Read,
        divisor: 1,
    },
    Step {
        name: "LPUSH",
        what: "LPUSH of one element",
        kind: Kind::Write,
        divisor: 1,
    },
    Step {
        name: "LINDEX",
        what: "LINDEX of the middle element of a list",
        kind: Kind::Read,
        divisor: 1,
    },
    Step {
        name: "LRANGE",
        what: "LRANGE 0 99",
        kind: Kind::Read,
        divisor: 10,
    },
    Step {
        name: "SADD",
        what: "SADD of a new member",
        kind: Kind::Write,
        divisor: 1,
    },
    Step {
        name: "SISMEMBER",
        what: "SISMEMBER of an existing member",
        kind: Kind::Read,
        divisor: 1,
    },
    Step {
        name: "ZADD",
        what: "ZADD of a new member",
        kind: Kind::Write,
        divisor: 1,
    },
    Step {
        name: "ZRANGEBYSCORE",
        what: "ZRANGEBYSCORE over 100 members",
        kind: Kind::Read,
        divisor: 10,
    },
    Step {
        name: "ZRANK",
        what: "ZRANK of an existing member",
        kind: Kind::Read,
        divisor: 10,
    },
    Step {
        name: "EXPIRE",
        what: "EXPIRE of an existing string key",
        kind: Kind::Write,
        divisor: 1,
    },
];

/// Whether the workload's step `command` writes or reads (`None`: no such step).
pub fn kind_of(command: &str) -> Option<Kind> {
    STEPS.iter().find(|s| s.name == command).map(|s| s.kind)
}

/// One command's timing.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Timing {
    /// Command name.
    pub command: String,
    /// Write or read.
    pub kind: Kind,
    /// Operations run.
    pub ops: u64,
    /// Wall time of all of them.
    pub seconds: f64,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Lowest and highest operations per second when the command was timed
    /// more than once; `None` after a single pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ops_per_sec_spread: Option<Spread>,
    /// Operations per second of every round, in the order the rounds ran
    /// (empty after a single pass).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<f64>,
}

impl Timing {
    /// A timing of `ops` operations in `seconds`.
    pub fn new(command: &str, kind: Kind, ops: u64, seconds: f64) -> Timing {
        Timing {
            command: command.to_string(),
            kind,
            ops,
            seconds,
            ops_per_sec: ops as f64 / seconds.max(1e-9),
            ops_per_sec_spread: None,
            rounds: Vec::new(),
        }
    }

    /// One timing from the same command timed in several rounds: the
    /// median rate with the fastest and slowest round, every round kept.
    /// `rounds` must not be empty.
    pub fn of_rounds(rounds: &[Timing]) -> Timing {
        let rates: Vec<f64> = rounds.iter().map(Timing::ops_per_sec).collect();
        let figure = Figure::of_samples(&rates);
        let first = &rounds[0];
        Timing {
            command: first.command.clone(),
            kind: first.kind,
            ops: first.ops,
            seconds: first.ops as f64 / figure.value.max(1e-9),
            ops_per_sec: figure.value,
            ops_per_sec_spread: figure.spread,
            rounds: if rounds.len() > 1 { rates } else { Vec::new() },
        }
    }

    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops_per_sec
    }

    /// Operations per second with their spread, if any.
    pub fn rate(&self) -> Figure {
        Figure {
            value: self.ops_per_sec,
            spread: self.ops_per_sec_spread,
        }
    }

    /// This rate over `base`'s. When both were timed in the same rounds
    /// (interleaved), the quotient is taken round by round and the figure
    /// is the median quotient with the lowest and highest: a machine that
    /// slows down during one round slows both sides of its quotient.
    /// Otherwise, the quotient of the two figures.
    pub fn ratio(&self, base: &Timing) -> Figure {
        if self.rounds.len() > 1 && self.rounds.len() == base.rounds.len() {
            let quotients: Vec<f64> = self
                .rounds
                .iter()
                .zip(&base.rounds)
                .map(|(a, b)| a / b.max(1e-12))
                .collect();
            Figure::of_samples(&quotients)
        } else {
            self.rate().ratio(base.rate())
        }
    }
}

/// Every step's timing over several rounds (`rounds[r][step]`): one
/// [`Timing::of_rounds`] per step.
pub fn merge_rounds(rounds: &[Vec<Timing>]) -> Vec<Timing> {
    (0..rounds.first().map_or(0, Vec::len))
        .map(|i| {
            let of_step: Vec<Timing> = rounds.iter().map(|r| r[i].clone()).collect();
            Timing::of_rounds(&of_step)
        })
        .collect()
}

/// What a run wrote, in the user's terms.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Written {
    /// Elements written: strings, hash fields, list elements, set and sorted-set members.
    pub elements: u64,
    /// Bytes of the arguments of every write (keys, fields, members, values, scores as text).
    pub logical_bytes: u64,
}

/// A visiting order of `0..n` that is not sequential (a stride coprime with `n`).
pub fn shuffled(n: usize) -> impl Iterator<Item = usize> {
    let stride = [7919usize, 104_729, 1_299_709]
        .into_iter()
        .find(|&p| gcd(p, n) == 1)
        .unwrap_or(1);
    (0..n).map(move |i| (i * stride) % n.max(1))
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The string key `i`.
pub fn string_key(i: usize) -> Vec<u8> {
    format!("s:{i:08}").into_bytes()
}

fn coll_key(prefix: &str, k: usize) -> Vec<u8> {
    format!("{prefix}:{k:06}").into_bytes()
}

fn member(i: usize) -> Vec<u8> {
    format!("m:{i:08}").into_bytes()
}

/// The argument vectors of step `step` (untimed to build).
pub fn step_args(step: &Step, sizes: &Sizes, value: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let n = sizes.keys;
    let c = sizes.collections();
    // Every collection holds `n / c` or `n / c + 1` elements.
    let per = (n / c).max(1);
    let ops = (n / step.divisor).max(1);
    let b = |s: &str| s.as_bytes().to_vec();
    let mut out = Vec::with_capacity(ops);
    match step.name {
        "SET" => {
            for i in 0..ops {
                out.push(vec![b("SET"), string_key(i), value.to_vec()]);
            }
        }
        "GET" => {
            for i in shuffled(ops) {
                out.push(vec![b("GET"), string_key(i)]);
            }
        }
        "HSET" => {
            for i in 0..ops {
                out.push(vec![
                    b("HSET"),
                    coll_key("h", i % c),
                    member(i),
                    value.to_vec(),
                ]);
            }
        }
        "HGET" => {
            for i in shuffled(ops) {
                out.push(vec![b("HGET"), coll_key("h", i % c), member(i)]);
            }
        }
        "LPUSH" => {
            for i in 0..ops {
                out.push(vec![b("LPUSH"), coll_key("l", i % c), value.to_vec()]);
            }
        }
        "LINDEX" => {
            for i in shuffled(ops) {
                out.push(vec![
                    b("LINDEX"),
                    coll_key("l", i % c),
                    (per / 2).to_string().into_bytes(),
                ]);
            }
        }
        "LRANGE" => {
            for i in shuffled(ops) {
                out.push(vec![b("LRANGE"), coll_key("l", i % c), b("0"), b("99")]);
            }
        }
        "SADD" => {
            for i in 0..ops {
                out.push(vec![b("SADD"), coll_key("st", i % c), member(i)]);
            }
        }
        "SISMEMBER" => {
            for i in shuffled(ops) {
                out.push(vec![b("SISMEMBER"), coll_key("st", i % c), member(i)]);
            }
        }
        "ZADD" => {
            for i in 0..ops {
                out.push(vec![
                    b("ZADD"),
                    coll_key("z", i % c),
                    (i / c).to_string().into_bytes(),
                    member(i),
                ]);
            }
        }
        "ZRANGEBYSCORE" => {
            let span = per.saturating_sub(99).max(1);
            for (j, i) in shuffled(ops).enumerate() {
                let from = (j * 37) % span;
                out.push(vec![
                    b("ZRANGEBYSCORE"),
                    coll_key("z", i % c),
                    from.to_string().into_bytes(),
                    (from + 99).to_string().into_bytes(),
                ]);
            }
        }
        "ZRANK" => {
            for i in shuffled(ops) {
                out.push(vec![b("ZRANK"), coll_key("z", i % c), member(i)]);
            }
        }
        "EXPIRE" => {
            for i in shuffled(ops) {
                out.push(vec![b("EXPIRE"), string_key(i), b("1000000")]);
            }
        }
        other => unreachable!("no arguments for {other}"),
    }
    out
}

/// Commands run before the timed ones, untimed: one seed field in every
/// hash, so that the timed HSETs add fields to existing hashes.
pub fn setup_args(sizes: &Sizes, value: &[u8]) -> Vec<Vec<Vec<u8>>> {
    (0..sizes.collections())
        .map(|k| {
            vec![
                b"HSET".to_vec(),
                coll_key("h", k),
                b"seed".to_vec(),
                value.to_vec(),
            ]
        })
        .collect()
}

/// Runs every command of `all` on `engine`, untimed; the first error fails.
pub fn run_all(engine: &Engine<AnyCodec>, all: &[Vec<Vec<u8>>]) -> Result<(), CompareError> {
    for args in all {
        check(engine.execute(args), args)?;
    }
    Ok(())
}

fn check(reply: Reply, args: &[Vec<u8>]) -> Result<(), CompareError> {
    if let Reply::Error(e) = reply {
        return Err(crate::error::fail(format!(
            "{} failed: {e}",
            String::from_utf8_lossy(&args[0])
        )));
    }
    Ok(())
}

fn count_written(all: &[Vec<Vec<u8>>], written: &mut Written) {
    for args in all {
        written.elements += 1;
        written.logical_bytes += args[1..].iter().map(|a| a.len() as u64).sum::<u64>();
    }
}

/// Runs every step on `engine`; `progress(step name)` is called before each.
pub fn run_engine(
    engine: &Engine<AnyCodec>,
    sizes: &Sizes,
    mut progress: impl FnMut(&str),
) -> Result<(Vec<Timing>, Written), CompareError> {
    let value = sizes.value();
    let mut written = Written::default();
    let mut timings = Vec::with_capacity(STEPS.len());
    for step in STEPS {
        progress(step.name);
        if step.name == "HSET" {
            let seeds = setup_args(sizes, &value);
            run_all(engine, &seeds)?;
            count_written(&seeds, &mut written);
        }
        let all = step_args(step, sizes, &value);
        let started = Instant::now();
        for args in &all {
            let reply = engine.execute(args);
            if reply.is_error() {
                check(reply, args)?;
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        if step.kind == Kind::Write && step.name != "EXPIRE" {
            count_written(&all, &mut written);
        }
        timings.push(Timing::new(step.name, step.kind, all.len() as u64, seconds));
    }
    Ok((timings, written))
}

/// Writes a hash of `fields` fields under `key`, 1,000 fields per HSET.
pub fn fill_hash(
    engine: &Engine<AnyCodec>,
    key: &[u8],
    fields: usize,
    value: &[u8],
) -> Result<(), CompareError> {
    let mut start = 0;
    while start < fields {
        let end = (start + 1000).min(fields);
        let mut args: Vec<Vec<u8>> = vec![b"HSET".to_vec(), key.to_vec()];
        for i in start..end {
            args.push(format!("field:{i:08}").into_bytes());
            args.push(value.to_vec());
        }
        check(engine.execute(&args), &args)?;
        start = end;
    }
    Ok(())
}
