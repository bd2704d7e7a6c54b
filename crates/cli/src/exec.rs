//! `redcodec exec`: run commands, print replies as redis-cli does.

use std::io::{BufRead, Write};

use clap::Args;
use redcodec_engine::cmdline::split_args;
use redcodec_engine::{Compat, OpenMode};

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
    /// kvrocks-2.10, kvrocks-2.5 (--format kvrocks) or pika-3.5 (--format
    /// blackwidow). Compacted when the command ends.
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
    let engine = store.open(mode, access.compat)?;
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
        let reply = engine.execute(&args);
        writeln!(out, "{reply}")?;
    }
    out.flush()?;
    Ok(())
}
