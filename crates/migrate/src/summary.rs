//! What a migration, a verification or a generated dataset comes to, as
//! the lines `redcodec migrate`, `verify` and `generate` print when done:
//! the figures with thousands separators and bytes in binary units, the
//! keys left out, the verification's verdict.

use std::io::{self, Write};

use humansize::{format_size, BINARY};
use num_format::{Locale, ToFormattedString};

use crate::{Skipped, Tally, VerifyReport};

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    n.to_formatted_string(&Locale::en)
}

/// Bytes in B, KiB, MiB or GiB, one decimal.
pub fn human_bytes(n: u64) -> String {
    if n < 1024 {
        format!("{n} B")
    } else {
        format_size(n, BINARY.decimal_places(1).decimal_zeroes(1))
    }
}

/// The first line of a migration's summary: `verb` ("migrated", "stopped
/// after migrating") what `done` counts from `from` to `to` in `seconds`,
/// with the rate.
pub fn write_migrated(
    out: &mut dyn Write,
    verb: &str,
    done: &Tally,
    from: &str,
    to: &str,
    seconds: f64,
) -> io::Result<()> {
    writeln!(
        out,
        "{verb} {} keys, {} elements, {} from {from} to {to} in {seconds:.2} s ({} elements/s)",
        thousands(done.keys),
        thousands(done.elements),
        human_bytes(done.bytes),
        thousands((done.elements as f64 / seconds.max(1e-9)) as u64),
    )
}

/// The keys a migration did not copy as they were, after its first line:
/// how many expired meanwhile, the keys skipped (`skipped_why` completes
/// "skipped N keys …"), and the keys held in several types of which the
/// first type was migrated.
pub fn write_left_out(
    out: &mut dyn Write,
    expired: u64,
    skipped: &[Skipped],
    skipped_why: &str,
    first: &[Skipped],
) -> io::Result<()> {
    if expired > 0 {
        writeln!(
            out,
            "{expired} keys expired during the migration and were not copied"
        )?;
    }
    if !skipped.is_empty() {
        writeln!(out, "skipped {} keys {skipped_why}:", skipped.len())?;
        for s in skipped {
            writeln!(out, "  {s}")?;
        }
    }
    if !first.is_empty() {
        writeln!(
            out,
            "migrated the first type of {} keys the source holds in several types (--type-conflict first):",
            first.len()
        )?;
        for s in first {
            writeln!(out, "  {s}")?;
        }
    }
    Ok(())
}

/// A verification's verdict: one line, and every difference listed.
pub fn write_verify(out: &mut dyn Write, report: &VerifyReport) -> io::Result<()> {
    let mut extra = Vec::new();
    if report.unrepresentable > 0 {
        extra.push(format!(
            "{} unrepresentable in the destination",
            report.unrepresentable
        ));
    }
    if report.destination_only > 0 {
        extra.push(format!(
            "{} only in the destination (merged)",
            report.destination_only
        ));
    }
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!("; {}", extra.join(", "))
    };
    if report.is_equal() {
        return writeln!(
            out,
            "verify: {} keys compared, all equal{extra}",
            thousands(report.source_keys)
        );
    }
    writeln!(
        out,
        "verify: {} keys compared, {} differ{extra}:",
        thousands(report.source_keys),
        thousands(report.differences)
    )?;
    for d in &report.listed {
        writeln!(out, "  {d}")?;
    }
    if report.differences > report.listed.len() as u64 {
        writeln!(
            out,
            "  … and {} more",
            report.differences - report.listed.len() as u64
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_for_people() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(thousands(n), text);
        }
        for (n, text) in [(12, "12 B"), (1536, "1.5 KiB"), (3 << 20, "3.0 MiB")] {
            assert_eq!(human_bytes(n), text);
        }
    }
}
