//! `redcodec exec`: run commands, print replies as redis-cli does.

use std::io::{BufRead, Write};

use clap::Args;
use redcodec_codec::Namespaces;
use redcodec_engine::cmdline::split_args;
use redcodec_engine::{Compat, Engine, OpenMode, Reply};
use redcodec_formats::AnyCodec;

use crate::error::CliError;
use crate::store_args::StoreArgs;

/// How `exec` opens its store.
#[derive(Args, Debug, Clone)]
pub struct ExecAccess {
    /// Open an existing store read-only: none of its files changes (a
    /// running server's directory can be read); write commands fail.
    #[arg(long, conflicts_with = "compat")]
    pub read_only: bool,
    /// Write the store so that this release of the real system opens it:
    /// kvrocks-2.10, kvrocks-2.5 (--format kvrocks), pika-3.5 (--format
    /// blackwidow) or pika-4.0 (--format floyd). Compacted when the command
    /// ends.
    #[arg(long, value_name = "SYSTEM-VERSION")]
    pub compat: Option<Compat>,
}

/// Runs `command`, or every line of stdin when it is empty.
pub fn run(store: &StoreArgs, access: &ExecAccess, command: &[String]) -> Result<(), CliError> {
    let mode = if access.read_only {
        OpenMode::ReadOnly
    } else {
        OpenMode::CreateIfMissing
    };
    let mut engine = store.open(mode, access.compat)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if !command.is_empty() {
        let reply = engine.execute(command);
        writeln!(out, "{reply}")?;
        return Ok(());
    }
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line?;
        let args = split_args(&line).map_err(|e| CliError::Input {
            line: n + 1,
            message: e.to_string(),
        })?;
        if args.is_empty() {
            continue;
        }
        if args[0].eq_ignore_ascii_case(b"select") && args.len() == 2 {
            let (reply, switched) = select(&engine, store, mode, access, &args[1])?;
            if let Some(switched) = switched {
                engine = switched;
            }
            writeln!(out, "{reply}")?;
            continue;
        }
        let reply = engine.execute(&args);
        writeln!(out, "{reply}")?;
    }
    out.flush()?;
    Ok(())
}

/// `SELECT index`, as the real systems answer it on one connection: Ardb
/// keeps database `n` in the namespace (column family) `n`, so the store
/// is reopened there; Kvrocks answers OK and stays in its namespace (it
/// picks namespaces by AUTH token); a format without namespaces has only
/// database 0.
fn select(
    engine: &Engine<AnyCodec>,
    store: &StoreArgs,
    mode: OpenMode,
    access: &ExecAccess,
    index: &[u8],
) -> Result<(Reply, Option<Engine<AnyCodec>>), CliError> {
    let Some(n) = std::str::from_utf8(index)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
    else {
        return Ok((
            Reply::Error("ERR value is not an integer or out of range".into()),
            None,
        ));
    };
    match engine.capabilities().namespaces {
        Namespaces::ColumnFamily if n >= 0 => {
            let args = StoreArgs {
                namespace: Some(n.to_string()),
                ..store.clone()
            };
            Ok((Reply::ok(), Some(args.open(mode, access.compat)?)))
        }
        Namespaces::Prefix { .. } => Ok((Reply::ok(), None)),
        Namespaces::None if n == 0 => Ok((Reply::ok(), None)),
        _ => Ok((Reply::Error("ERR DB index is out of range".into()), None)),
    }
}
