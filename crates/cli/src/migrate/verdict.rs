//! The verdict of `redcodec verify` (and `migrate --verify`), with a
//! store or a server on either side.

use redcodec_migrate::{summary, VerifyReport};

use crate::error::{fail, CliError};

/// Prints a verification's verdict; fails on any difference.
pub(super) fn print_verify(report: &VerifyReport) -> Result<(), CliError> {
    summary::write_verify(&mut std::io::stdout().lock(), report)?;
    if report.is_equal() {
        return Ok(());
    }
    Err(fail(format!(
        "verify found {} differences",
        report.differences
    )))
}
