//! `redcodec`: run Redis commands on a store of any format, dump the exact
//! bytes it holds, compare the formats, and migrate stores between them.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod allocator;
mod analyze;
mod check;
mod dump;
mod error;
mod exec;
mod generate;
mod migrate;
mod rdb;
mod serve;
mod serve_kvrocks;
mod store_args;

use store_args::StoreArgs;

/// Redis data types on RocksDB, in the on-disk format of your choice.
#[derive(Parser)]
#[command(name = "redcodec", version, about, args_override_self = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one command (after `--`), or commands from stdin one per line
    /// with redis-cli quoting; print each reply as `redis-cli --no-raw` does.
    Exec {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        access: exec::ExecAccess,
        /// The command and its arguments.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Print every stored pair (the store is opened read-only) as `<instance>\t<column family>\t<key hex>\t<value hex>`,
    /// in layout order and each column family's own order.
    Dump {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Read a whole store read-only and report every fault: undecodable
    /// records, counts that disagree with the elements, orphaned
    /// elements, keys in several types. Exit status 1 on any finding.
    Check {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Run a standard workload on every chosen format and on raw RocksDB,
    /// in temporary stores; print one table per metric and write CSV, JSON
    /// and SVG charts into `--out`.
    Compare(redcodec_compare::CompareArgs),
    /// One callgrind probe of `compare --instructions` (run by it).
    #[command(hide = true)]
    CompareProbe(redcodec_compare::instructions::ProbeArgs),
    /// Copy every live key (type, expiry, elements) of a store into a store
    /// of another format, in batches, with a progress bar and a checkpoint
    /// to --resume from after an interruption.
    Migrate(migrate::MigrateArgs),
    /// Compare every key of two stores (e.g. after a migration) by a digest
    /// of its type, expiry and elements; exit status 1 on any difference.
    Verify(migrate::VerifyArgs),
    /// Time a migration against a raw RocksDB write of the same data and
    /// measure its peak memory.
    MigrateBench(redcodec_compare::migrate_bench::BenchArgs),
    /// Write the store as an RDB file (Redis 7.0, version 10) that
    /// redis-server loads; the store is opened read-only.
    Export(rdb::ExportArgs),
    /// Read an RDB file redis-server wrote (SAVE, BGSAVE, any object
    /// encoding) into an empty store of any format; the whole file is
    /// checked before anything is written.
    Import(rdb::ImportArgs),
    /// Write a realistic dataset (seeded; sizes from a stated distribution,
    /// big keys, TTLs) into an empty store of any format.
    Generate(generate::GenerateArgs),
    /// Report, read-only, the biggest keys, bytes per type and prefix, TTLs,
    /// stale records not yet compacted, and bytes per column family and level.
    Analyze(analyze::AnalyzeArgs),
    /// Serve the store to Redis clients (RESP2 and RESP3) until SHUTDOWN,
    /// SIGTERM or SIGINT; then flush it and close.
    Serve(serve::ServeArgs),
}

/// With `REDCODEC_ABORT_ON_PANIC` set (the tests set it), a panic on any
/// thread ends the process after its message, so that a panic in one of
/// a server's tasks, which the runtime would otherwise survive, shows as
/// a crash.
fn abort_on_panic_if_asked() {
    if std::env::var_os("REDCODEC_ABORT_ON_PANIC").is_none() {
        return;
    }
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::abort();
    }));
}

fn main() -> ExitCode {
    abort_on_panic_if_asked();
    let args = match redcodec_server::config_file::expand(std::env::args().collect()) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("redcodec: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Exec {
            store,
            access,
            command,
        } => exec::run(&store, &access, &command),
        Command::Dump { store } => dump::run(&store),
        Command::Check { store } => check::run(&store),
        Command::Compare(args) => redcodec_compare::run(&args).map_err(error::CliError::from),
        Command::CompareProbe(args) => {
            redcodec_compare::instructions::probe(&args).map_err(error::CliError::from)
        }
        Command::Migrate(args) => migrate::run(&args),
        Command::Export(args) => rdb::export(&args),
        Command::Import(args) => rdb::import(&args),
        Command::Verify(args) => migrate::run_verify(&args),
        Command::MigrateBench(args) => {
            redcodec_compare::migrate_bench::run(&args).map_err(error::CliError::from)
        }
        Command::Serve(args) => serve::run(&args),
        Command::Generate(args) => generate::run(&args),
        Command::Analyze(args) => analyze::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("redcodec: {e}");
            ExitCode::FAILURE
        }
    }
}
