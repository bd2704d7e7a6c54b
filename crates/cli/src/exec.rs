//! `redcodec exec`: run commands, print replies as redis-cli does.

use std::io::{BufRead, Write};

use redcodec_engine::cmdline::split_args;
use redcodec_engine::OpenMode;

use crate::error::CliError;
use crate::store_args::StoreArgs;

/// Runs `command`, or every line of stdin when it is empty.
pub fn run(store: &StoreArgs, command: &[String]) -> Result<(), CliError> {
    let engine = store.open(OpenMode::CreateIfMissing)?;
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
