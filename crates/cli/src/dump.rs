//! `redcodec dump`: every stored pair, as hex. The store is opened
//! read-only: none of its files changes.

use std::io::Write;

use redcodec_engine::OpenMode;

use crate::error::CliError;
use crate::store_args::StoreArgs;

/// Prints `<instance>\t<column family>\t<key hex>\t<value hex>` per pair.
pub fn run(store: &StoreArgs) -> Result<(), CliError> {
    let engine = store.open(OpenMode::ReadOnly, None)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    engine.store().dump(&mut out)?;
    out.flush()?;
    Ok(())
}
