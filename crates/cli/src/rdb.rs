//! `redcodec export` and `redcodec import`: a store as an RDB file that
//! redis-server loads, and an RDB file redis-server wrote as a store of
//! any format.
//!
//! Databases map as `SELECT` maps them on `redcodec serve`: on a format
//! whose namespaces are column families (ardb), database `n` is namespace
//! `n`; on any other format, database 0 is the store (kvrocks: the
//! namespace `--namespace` names, `__namespace` by default) and keys of
//! other databases are left out, counted and reported.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;

use clap::Args;
use redcodec_codec::{Codec, Namespaces};
use redcodec_engine::{Engine, OpenMode};
use redcodec_formats::AnyCodec;
use redcodec_migrate::rdb_file::{self, Exporter, Loaded};
use redcodec_rdb::file_reader::{validate, Entry};
use redcodec_rdb::file_writer::FileInfo;

use crate::error::CliError;
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

fn fail(message: String) -> CliError {
    CliError::Io(std::io::Error::other(message))
}

/// Whether database indexes are namespaces on this store's format.
fn databases_are_namespaces(store: &StoreArgs) -> Result<bool, CliError> {
    Ok(matches!(
        store.codec()?.capabilities().namespaces,
        Namespaces::ColumnFamily
    ))
}

/// The store's options in the namespace database `db` maps to.
fn in_database(store: &StoreArgs, db: u64) -> StoreArgs {
    StoreArgs {
        namespace: Some(db.to_string()),
        ..store.clone()
    }
}

/// Writes the store as an RDB file: aside first, renamed once complete.
pub fn export(args: &ExportArgs) -> Result<(), CliError> {
    let parts: Vec<(u32, StoreArgs)> = if databases_are_namespaces(&args.store)? {
        let mut parts = Vec::new();
        for store in args.store.each_namespace()? {
            let name = store.namespace.clone().unwrap_or_else(|| "0".into());
            match name.parse::<u32>() {
                Ok(db) if db < 16 => parts.push((db, store)),
                _ => eprintln!(
                    "redcodec export: namespace '{name}' is not a database index (0-15): left out"
                ),
            }
        }
        parts.sort_by_key(|(db, _)| *db);
        parts
    } else {
        vec![(0, args.store.clone())]
    };
    let aside = args.rdb.with_extension("rdb.part");
    let ctime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut export = Exporter::new(BufWriter::new(File::create(&aside)?), &FileInfo::new(ctime))
        .map_err(|e| fail(e.to_string()))?;
    for (db, store) in &parts {
        let engine = store.open(OpenMode::ReadOnly, None)?;
        export
            .database(*db, &engine)
            .map_err(|e| fail(e.to_string()))?;
    }
    let (out, counts) = export.finish().map_err(|e| fail(e.to_string()))?;
    let file = out.into_inner().map_err(|e| CliError::Io(e.into_error()))?;
    file.sync_all()?;
    std::fs::rename(&aside, &args.rdb)?;
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

/// The engine of the database being loaded, reopened when the file moves
/// to another database (one store is open once at a time).
struct Databases<'a> {
    store: &'a StoreArgs,
    by_namespace: bool,
    open: Option<(u64, Engine<AnyCodec>)>,
    failed: Option<CliError>,
}

impl Databases<'_> {
    fn write(&mut self, db: u64, entries: &[Entry], loaded: &mut Loaded) {
        if entries.is_empty() || self.failed.is_some() {
            return;
        }
        if !self.by_namespace && db != 0 || db >= 16 {
            loaded.skipped += entries.len() as u64;
            return;
        }
        if self.open.as_ref().is_none_or(|(at, _)| *at != db) {
            self.open = None;
            let store = if self.by_namespace {
                in_database(self.store, db)
            } else {
                self.store.clone()
            };
            match store.open(OpenMode::CreateIfMissing, None) {
                Ok(engine) => self.open = Some((db, engine)),
                Err(e) => {
                    self.failed = Some(e);
                    return;
                }
            }
        }
        if let Some((_, engine)) = &self.open {
            rdb_file::load_batch(engine, entries, loaded);
        }
    }
}

/// Reads the RDB file into the store: the whole file is checked first
/// (checksum included), so a bad file changes nothing; the destination
/// must hold no key.
pub fn import(args: &ImportArgs) -> Result<(), CliError> {
    let open = |path: &PathBuf| -> Result<BufReader<File>, CliError> {
        File::open(path)
            .map(|f| BufReader::with_capacity(1 << 20, f))
            .map_err(|e| fail(format!("{}: {e}", args.rdb.display())))
    };
    let keys = validate(open(&args.rdb)?)
        .map_err(|e| fail(format!("{}: {e}; nothing was written", args.rdb.display())))?;
    let by_namespace = databases_are_namespaces(&args.store)?;
    let targets = if by_namespace {
        (0..16).map(|db| in_database(&args.store, db)).collect()
    } else {
        vec![args.store.clone()]
    };
    for store in &targets {
        if store.dir.exists() {
            let engine = store.open(OpenMode::ReadOnly, None);
            if let Ok(engine) = engine {
                if engine.execute(&["DBSIZE"]).to_string() != "(integer) 0" {
                    return Err(fail(format!(
                        "the destination already holds keys{}: import into an empty store",
                        store
                            .namespace
                            .as_ref()
                            .map(|ns| format!(" (namespace {ns})"))
                            .unwrap_or_default()
                    )));
                }
            }
        }
    }
    let mut dbs = Databases {
        store: &args.store,
        by_namespace,
        open: None,
        failed: None,
    };
    let loaded = rdb_file::import(open(&args.rdb)?, |db, entries, loaded| {
        dbs.write(db, entries, loaded);
    })
    .map_err(|e| fail(e.to_string()))?;
    if let Some(e) = dbs.failed {
        return Err(e);
    }
    if let Some((_, engine)) = dbs.open.take() {
        engine.store().flush()?;
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "imported {} of {keys} keys from {}",
        loaded.keys,
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
            if by_namespace {
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
