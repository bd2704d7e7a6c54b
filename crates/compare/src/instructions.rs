//! Instructions per operation, counted by valgrind's callgrind: a figure
//! that a busy machine does not move, so progress shows without timing
//! noise.
//!
//! For every store and command, `compare` starts itself under callgrind as
//! `redcodec compare-probe`. The probe opens a fresh store, runs the steps
//! of the workload that come before the command without counting, then the
//! command's operations inside [`measured`] (or [`measured_put`] /
//! [`measured_get`] for raw RocksDB), the one function callgrind counts
//! (`--toggle-collect`): the engine, the codec and RocksDB's foreground
//! work, not its background threads.

use std::path::Path;
use std::process::Command;

use clap::Args;
use redcodec_engine::Engine;
use redcodec_formats::{AnyCodec, Format};
use rocksdb::DB;

use super::raw::db_err;
use super::workload::{run_all, setup_args, step_args, string_key, Sizes, STEPS};
use crate::error::CompareError;

/// The commands counted on every format.
pub const COMMANDS: [&str; 4] = ["SET", "GET", "HSET", "ZADD"];

/// The store name of the raw RocksDB baseline (commands `put` and `get`).
pub const RAW: &str = "raw rocksdb";

/// Operations counted per probe (the average is exact to the instruction
/// whatever their number; more only makes the probe slower).
const OPS: usize = 2_000;

/// One count.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Instructions {
    /// A format's name, or [`RAW`].
    pub store: String,
    /// The command (`put` / `get` on raw RocksDB).
    pub command: String,
    /// Operations counted.
    pub ops: u64,
    /// Instructions per operation, averaged over them.
    pub per_op: f64,
}

/// The arguments of the hidden `compare-probe` command.
#[derive(Args, Debug, Clone)]
pub struct ProbeArgs {
    /// A format's name, or `raw` for raw RocksDB.
    #[arg(long)]
    pub store: String,
    /// The command whose operations are counted (`put` or `get` on raw).
    #[arg(long)]
    pub command: String,
    /// Operations, as `compare --keys`.
    #[arg(long, default_value_t = OPS)]
    pub keys: usize,
    /// Elements per collection, as `compare --elements`.
    #[arg(long, default_value_t = 100)]
    pub elements: usize,
    /// Bytes of every value.
    #[arg(long, default_value_t = 16)]
    pub value_size: usize,
}

/// Runs the commands of one probe; only the inside of this function is
/// counted.
#[inline(never)]
pub fn measured(engine: &Engine<AnyCodec>, all: &[Vec<Vec<u8>>]) -> usize {
    all.iter()
        .filter(|args| engine.execute(args).is_error())
        .count()
}

/// Raw RocksDB puts; only the inside of this function is counted.
#[inline(never)]
pub fn measured_put(db: &DB, keys: &[Vec<u8>], value: &[u8]) -> Result<(), rocksdb::Error> {
    keys.iter().try_for_each(|k| db.put(k, value))
}

/// Raw RocksDB gets; only the inside of this function is counted.
#[inline(never)]
pub fn measured_get(db: &DB, keys: &[Vec<u8>]) -> Result<usize, rocksdb::Error> {
    keys.iter()
        .try_fold(0, |found, k| Ok(found + usize::from(db.get(k)?.is_some())))
}

/// The probe itself (run under callgrind by [`count`]).
pub fn probe(args: &ProbeArgs) -> Result<(), CompareError> {
    let sizes = Sizes {
        keys: args.keys,
        elements: args.elements,
        value_size: args.value_size,
        big_hash: 1,
        rounds: 1,
    };
    let dir = tempfile::tempdir()?;
    let value = sizes.value();
    if args.store == "raw" {
        let db = super::raw::open(dir.path())?;
        let keys: Vec<Vec<u8>> = (0..sizes.keys).map(string_key).collect();
        match args.command.as_str() {
            "put" => measured_put(&db, &keys, &value).map_err(db_err)?,
            "get" => {
                keys.iter()
                    .try_for_each(|k| db.put(k, &value))
                    .map_err(db_err)?;
                if measured_get(&db, &keys).map_err(db_err)? != keys.len() {
                    return Err(crate::error::fail(
                        "raw rocksdb: a written key is missing".into(),
                    ));
                }
            }
            other => return Err(crate::error::fail(format!("no raw probe for {other:?}"))),
        }
        return Ok(());
    }
    let engine = super::format_run::open(args.store.parse()?, dir.path())?;
    let target = STEPS
        .iter()
        .position(|s| s.name == args.command)
        .ok_or_else(|| crate::error::fail(format!("no workload step {:?}", args.command)))?;
    // The steps before the command fill the store, uncounted; then the
    // command's own step runs inside `measured`.
    for (i, step) in STEPS[..=target].iter().enumerate() {
        if step.name == "HSET" {
            run_all(&engine, &setup_args(&sizes, &value))?;
        }
        let all = step_args(step, &sizes, &value);
        if i < target {
            run_all(&engine, &all)?;
        } else {
            let errors = measured(&engine, &all);
            if errors > 0 {
                return Err(crate::error::fail(format!(
                    "{errors} {} commands failed",
                    step.name
                )));
            }
        }
    }
    Ok(())
}

/// Whether valgrind can be run here.
pub fn valgrind_available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Counts every command of [`COMMANDS`] on every format of `formats`, and
/// raw RocksDB's put and get, each in its own callgrind run.
/// `progress(what)` is called before each.
pub fn count(
    formats: &[Format],
    elements: usize,
    value_size: usize,
    mut progress: impl FnMut(&str),
) -> Result<Vec<Instructions>, CompareError> {
    let exe = std::env::current_exe()?;
    let mut probes: Vec<(String, String)> = ["put", "get"]
        .iter()
        .map(|c| ("raw".to_string(), (*c).to_string()))
        .collect();
    for f in formats {
        probes.extend(
            COMMANDS
                .iter()
                .map(|c| (f.name().to_string(), (*c).to_string())),
        );
    }
    let out_dir = tempfile::tempdir()?;
    let mut counts = Vec::with_capacity(probes.len());
    for (i, (store, command)) in probes.into_iter().enumerate() {
        progress(&format!("instructions: {store} {command}"));
        let out = out_dir.path().join(format!("callgrind.{i}"));
        let ir = run_probe(&exe, &out, &store, &command, elements, value_size)?;
        counts.push(Instructions {
            store: if store == "raw" {
                RAW.to_string()
            } else {
                store
            },
            command,
            ops: OPS as u64,
            per_op: ir as f64 / OPS as f64,
        });
    }
    Ok(counts)
}

fn run_probe(
    exe: &Path,
    out: &Path,
    store: &str,
    command: &str,
    elements: usize,
    value_size: usize,
) -> Result<u64, CompareError> {
    let function = if store != "raw" {
        "measured"
    } else if command == "put" {
        "measured_put"
    } else {
        "measured_get"
    };
    let run = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect=*instructions::{function}"))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg("--quiet")
        .arg(exe)
        .args(["compare-probe", "--store", store, "--command", command])
        .args(["--keys", &OPS.to_string()])
        .args(["--elements", &elements.to_string()])
        .args(["--value-size", &value_size.to_string()])
        .output()?;
    // valgrind's own warnings (e.g. an fcntl it does not model) are shown
    // only when the probe fails.
    if !run.status.success() {
        return Err(crate::error::fail(format!(
            "callgrind probe of {store} {command} failed ({}): {}",
            run.status,
            String::from_utf8_lossy(&run.stderr)
        )));
    }
    let text = std::fs::read_to_string(out)?;
    let total = total_instructions(&text).ok_or_else(|| {
        crate::error::fail(format!(
            "no instruction total in {} for {store} {command}",
            out.display()
        ))
    })?;
    if total == 0 {
        return Err(crate::error::fail(format!(
            "callgrind counted nothing in {function} for {store} {command}"
        )));
    }
    Ok(total)
}

/// The instruction total of a callgrind output file (its `totals:` or
/// `summary:` line; the first event is `Ir`).
pub fn total_instructions(callgrind_out: &str) -> Option<u64> {
    callgrind_out.lines().rev().find_map(|line| {
        let rest = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_is_read_from_totals_or_summary() {
        let file = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\n\nfn=(1) x\n3 10\n\ntotals: 12345\n";
        assert_eq!(total_instructions(file), Some(12345));
        assert_eq!(total_instructions("events: Ir\nsummary: 77 8\n"), Some(77));
        assert_eq!(total_instructions("events: Ir\n"), None);
    }
}
