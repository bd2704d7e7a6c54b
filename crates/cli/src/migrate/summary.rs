//! What `redcodec migrate` and `redcodec verify` print when done: the
//! keys left out, the verification's verdict, numbers for people.

use redcodec_migrate::{Skipped, VerifyReport};

use crate::error::{fail, CliError};
use humansize::{format_size, BINARY};
use num_format::{Locale, ToFormattedString};

/// Prints the keys a migration did not copy as they were, after its
/// summary: how many expired meanwhile, the keys skipped (`skipped_why`
/// completes "skipped N keys …"), and the keys held in several types of
/// which the first type was migrated.
pub(crate) fn print_left_out(
    expired: u64,
    skipped: &[Skipped],
    skipped_why: &str,
    first: &[Skipped],
) {
    if expired > 0 {
        println!("{expired} keys expired during the migration and were not copied");
    }
    if !skipped.is_empty() {
        println!("skipped {} keys {skipped_why}:", skipped.len());
        for s in skipped {
            println!("  {s}");
        }
    }
    if !first.is_empty() {
        println!(
            "migrated the first type of {} keys the source holds in several types (--type-conflict first):",
            first.len()
        );
        for s in first {
            println!("  {s}");
        }
    }
}

pub(crate) fn print_verify(report: &VerifyReport) -> Result<(), CliError> {
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
        println!(
            "verify: {} keys compared, all equal{extra}",
            thousands(report.source_keys)
        );
        return Ok(());
    }
    println!(
        "verify: {} keys compared, {} differ{extra}:",
        thousands(report.source_keys),
        thousands(report.differences)
    );
    for d in &report.listed {
        println!("  {d}");
    }
    if report.differences > report.listed.len() as u64 {
        println!(
            "  … and {} more",
            report.differences - report.listed.len() as u64
        );
    }
    Err(fail(format!(
        "verify found {} differences",
        report.differences
    )))
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    n.to_formatted_string(&Locale::en)
}

/// Bytes in B, KiB, MiB or GiB, one decimal.
pub(crate) fn human_bytes(n: u64) -> String {
    if n < 1024 {
        format!("{n} B")
    } else {
        format_size(n, BINARY.decimal_places(1).decimal_zeroes(1))
    }
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
