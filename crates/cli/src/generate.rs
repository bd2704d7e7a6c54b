//! `redcodec generate`: the command line of
//! [`redcodec_migrate::generate`] (a dataset drawn from a stated
//! distribution, written into an empty store through the migration's
//! write path).

use std::time::Instant;

use clap::Args;
use redcodec_engine::OpenMode;
use redcodec_migrate::generate::{self, Distribution, GenerateOptions, Mix};

use crate::error::{fail, CliError};
use crate::migrate::progress::Bar;
use crate::store_args::StoreArgs;
use redcodec_migrate::summary::{human_bytes, thousands};

/// The options of `redcodec generate`.
#[derive(Args, Debug, Clone)]
pub struct GenerateArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Top-level keys to write.
    #[arg(long)]
    records: u64,
    /// Type weights, e.g. `string=50,hash=20,list=10,set=10,zset=10`
    /// (the default); types not named weigh 0.
    #[arg(long, default_value = "string=50,hash=20,list=10,set=10,zset=10")]
    mix: Mix,
    /// The seed: the same seed and size give the same keys and values.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One key in this many is a big collection (0: none).
    #[arg(long, default_value_t = 100_000)]
    big_every: u64,
    /// Elements of each big key.
    #[arg(long, default_value_t = 100_000)]
    big_elements: u64,
    /// Percentage of keys that expire (1 hour to 30 days from now).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u8).range(0..=100))]
    ttl_percent: u8,
}

/// Writes the dataset and prints what was written.
pub fn run(args: &GenerateArgs) -> Result<(), CliError> {
    let engine = args.store.open(OpenMode::CreateIfMissing, None)?;
    let options = GenerateOptions {
        records: args.records,
        distribution: Distribution {
            mix: args.mix,
            seed: args.seed,
            big_every: args.big_every,
            big_elements: args.big_elements,
            ttl_percent: args.ttl_percent,
        },
        ..GenerateOptions::default()
    };
    let started = Instant::now();
    let mut bar = Bar::new(None);
    let result = generate::generate(&engine, &options, &mut bar);
    bar.finish();
    let out = result.map_err(|e| fail(e.to_string()))?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "generated {} keys, {} elements, {} in {seconds:.1} s ({} keys/s)",
        thousands(out.tally.keys),
        thousands(out.tally.elements),
        human_bytes(out.tally.bytes),
        thousands((out.tally.keys as f64 / seconds.max(1e-3)) as u64)
    );
    let [s, h, l, st, z] = out.keys_by_type;
    println!(
        "by type: {} strings, {} hashes, {} lists, {} sets, {} zsets; {} with a TTL",
        thousands(s),
        thousands(h),
        thousands(l),
        thousands(st),
        thousands(z),
        thousands(out.with_ttl)
    );
    for (key, ty, elements) in &out.big_keys {
        println!(
            "big key {} ({}, {} elements)",
            String::from_utf8_lossy(key),
            ty.redis_name(),
            thousands(*elements)
        );
    }
    Ok(())
}
