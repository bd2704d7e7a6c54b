//! `redcodec export` and `redcodec import`: the command line of
//! [`redcodec_migrate::rdb_store`] (a store as an RDB file that
//! redis-server loads, and an RDB file redis-server wrote as a store of
//! any format), and what they print.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use redcodec_migrate::rdb_store;

use crate::error::{fail, CliError};
use crate::store_args::StoreArgs;

/// The options of `redcodec export`.
#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The RDB file to write (replaced if it exists, once complete).
    #[arg(long, value_name = "FILE")]
    rdb: PathBuf,
}

/// The options of `redcodec import`.
#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// The RDB file to read (as redis-server's SAVE or BGSAVE writes it).
    #[arg(long, value_name = "FILE")]
    rdb: PathBuf,
    #[command(flatten)]
    store: StoreArgs,
}

/// Writes the store as an RDB file.
pub fn export(args: &ExportArgs) -> Result<(), CliError> {
    let databases = rdb_store::databases(&args.store.spec())?;
    for name in &databases.left_out {
        eprintln!("redcodec export: namespace '{name}' is not a database index (0-15): left out");
    }
    let counts = rdb_store::export(&databases.parts, &args.rdb)?;
    println!(
        "exported {} keys ({} bytes) to {}",
        counts.keys,
        counts.bytes,
        args.rdb.display()
    );
    if counts.unreadable > 0 {
        println!(
            "left out {} keys whose metadata does not decode (redcodec check names them)",
            counts.unreadable
        );
    }
    Ok(())
}

/// Reads the RDB file into the store and prints what was loaded and left
/// out; fails when a key could not be stored.
pub fn import(args: &ImportArgs) -> Result<(), CliError> {
    let imported = rdb_store::import(&args.rdb, &args.store.spec())?;
    let loaded = &imported.loaded;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "imported {} of {} keys from {}",
        loaded.keys,
        imported.keys,
        args.rdb.display()
    )?;
    if loaded.expired > 0 {
        writeln!(out, "left out {} keys already expired", loaded.expired)?;
    }
    if loaded.skipped > 0 {
        writeln!(
            out,
            "left out {} keys of databases this format does not hold{}",
            loaded.skipped,
            if imported.by_namespace {
                " (16 and above)"
            } else {
                " (other than 0)"
            }
        )?;
    }
    for refused in &loaded.refused {
        writeln!(
            out,
            "refused key '{}': {}",
            String::from_utf8_lossy(&refused.key),
            refused.reason
        )?;
    }
    if loaded.refused_count > 0 {
        return Err(fail(format!(
            "{} keys could not be stored in the {} format",
            loaded.refused_count, args.store.format
        )));
    }
    Ok(())
}
