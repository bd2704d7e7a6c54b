//! `redcodec check`: reads a whole store read-only, says what its tables
//! are (format, checksum, compression, the oldest RocksDB that reads them)
//! and reports every fault: undecodable records, counts that disagree with the elements,
//! orphaned elements, keys of types redcodec does not model, keys held in
//! several types; the lines are [`redcodec_migrate::check_report`]'s.

use std::io::Write;

use redcodec_engine::check::check;
use redcodec_engine::store::intent::INTENT_FILE;
use redcodec_engine::OpenMode;
use redcodec_migrate::check_report::{write_report, write_tables};

use crate::error::CliError;
use crate::store_args::StoreArgs;

/// Runs the check and prints its report; fails when anything was found.
/// Without `--namespace`, every namespace the store holds is checked.
pub fn run(store: &StoreArgs) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut findings = 0;
    let engine = store.open(OpenMode::ReadOnly, None)?;
    write_tables(&mut out, engine.store())?;
    drop(engine);
    for args in store.each_namespace()? {
        let engine = args.open(OpenMode::ReadOnly, None)?;
        let report = check(&engine)?;
        // A crash in the middle of a write that spans several instances:
        // this read-only view does not see it completed yet.
        let intent = engine.store().root().join(INTENT_FILE);
        if intent.exists() {
            writeln!(
                out,
                "pending-intent\t{}\ta write that spans several instances, completed at the next read-write open",
                intent.display()
            )?;
            findings += 1;
        }
        write_report(&mut out, &args.spec(), &report)?;
        findings += report.findings.len();
    }
    out.flush()?;
    if findings == 0 {
        Ok(())
    } else {
        Err(CliError::Findings(findings))
    }
}
