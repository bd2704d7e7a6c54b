//! Writer threads: SET of new keys with one thread and with two threads on
//! different keys, on raw RocksDB and on every format, each in a fresh
//! store. The quotient of the two rates says how a store scales with cores;
//! the engine should scale as raw RocksDB does.

use std::path::Path;
use std::time::Instant;

use redcodec_formats::Format;

use super::figure::Figure;
use super::workload::{string_key, Kind, Sizes, Timing};
use crate::error::CompareError;

/// The writer threads of the two-thread pass.
pub const THREADS: usize = 2;

/// One store's SET rate with one and with [`THREADS`] writer threads.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Scaling {
    /// `raw rocksdb` or the format's name.
    pub store: String,
    /// SET of new keys, one thread.
    pub one_thread: Timing,
    /// SET of as many new keys, [`THREADS`] threads on disjoint keys.
    pub two_threads: Timing,
}

impl Scaling {
    /// The two-thread rate over the one-thread rate.
    pub fn speedup(&self) -> Figure {
        self.two_threads.ratio(&self.one_thread)
    }

    /// One store's scaling over several rounds (medians and spreads).
    /// `rounds` must not be empty.
    pub fn of_rounds(rounds: &[Scaling]) -> Scaling {
        let pick = |f: fn(&Scaling) -> &Timing| {
            Timing::of_rounds(&rounds.iter().map(|s| f(s).clone()).collect::<Vec<_>>())
        };
        Scaling {
            store: rounds[0].store.clone(),
            one_thread: pick(|s| &s.one_thread),
            two_threads: pick(|s| &s.two_threads),
        }
    }
}

/// Times `sizes.keys` SETs of new keys spread over `threads` threads, each
/// thread writing its own keys through `set`.
fn timed_sets<F>(threads: usize, sizes: &Sizes, set: F) -> Result<Timing, CompareError>
where
    F: Fn(&[u8], &[u8]) -> Result<(), CompareError> + Sync,
{
    let value = sizes.value();
    let keys: Vec<Vec<u8>> = (0..sizes.keys).map(string_key).collect();
    let chunk = keys.len().div_ceil(threads).max(1);
    let started = Instant::now();
    std::thread::scope(|scope| {
        let workers: Vec<_> = keys
            .chunks(chunk)
            .map(|mine| {
                let (set, value) = (&set, &value);
                scope.spawn(move || mine.iter().try_for_each(|k| set(k, value)))
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().expect("a writer thread panicked"))
    })?;
    let seconds = started.elapsed().as_secs_f64();
    Ok(Timing::new("SET", Kind::Write, keys.len() as u64, seconds))
}

/// Raw RocksDB's scaling, in fresh stores under `dir`.
pub fn raw(dir: &Path, sizes: &Sizes) -> Result<Scaling, CompareError> {
    let pass = |threads: usize| -> Result<Timing, CompareError> {
        let db = super::raw::open(&dir.join(format!("raw-{threads}")))?;
        timed_sets(threads, sizes, |k, v| {
            db.put(k, v).map_err(super::raw::db_err)
        })
    };
    Ok(Scaling {
        store: "raw rocksdb".into(),
        one_thread: pass(1)?,
        two_threads: pass(THREADS)?,
    })
}

/// A format's scaling, in fresh stores under `dir`.
pub fn format(format: Format, dir: &Path, sizes: &Sizes) -> Result<Scaling, CompareError> {
    let pass = |threads: usize| -> Result<Timing, CompareError> {
        let engine = super::format_run::open(format, &dir.join(format!("{format}-{threads}")))?;
        timed_sets(threads, sizes, |k, v| {
            let reply = engine.execute(&[&b"SET"[..], k, v]);
            if reply.is_error() {
                return Err(crate::error::fail(format!("SET failed: {reply}")));
            }
            Ok(())
        })
    };
    Ok(Scaling {
        store: format.name().to_string(),
        one_thread: pass(1)?,
        two_threads: pass(THREADS)?,
    })
}
