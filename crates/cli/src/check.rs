//! `redcodec check`: reads a whole store read-only and reports every
//! fault: undecodable records, counts that disagree with the elements,
//! orphaned elements, keys of types redcodec does not model, keys held in
//! several types.

use std::io::Write;

use redcodec_engine::check::{check, CheckReport, Finding};
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::{store::hex, OpenMode};

use crate::error::CliError;
use crate::store_args::StoreArgs;

/// Runs the check and prints its report; fails when anything was found.
/// Without `--namespace`, every namespace the store holds is checked.
pub fn run(store: &StoreArgs) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut findings = 0;
    for args in store.each_namespace()? {
        let engine = args.open(OpenMode::ReadOnly, None)?;
        let report =
            check(&engine).map_err(|e| CliError::Io(std::io::Error::other(e.to_string())))?;
        print_report(&mut out, &args, &report)?;
        findings += report.findings.len();
    }
    out.flush()?;
    if findings == 0 {
        Ok(())
    } else {
        Err(CliError::Findings(findings))
    }
}

/// The report, one finding a line, then a summary line.
fn print_report(
    out: &mut dyn Write,
    store: &StoreArgs,
    report: &CheckReport,
) -> std::io::Result<()> {
    for finding in &report.findings {
        writeln!(out, "{}", describe(finding))?;
    }
    for (instance, family) in &report.other_families {
        writeln!(
            out,
            "note\tcolumn family {instance}/{family} is not part of the {} layout (read as the format declares)",
            store.format
        )?;
    }
    let namespace = match &store.namespace {
        Some(ns) => format!(", namespace {}", quote_bytes(ns.as_bytes())),
        None => String::new(),
    };
    writeln!(
        out,
        "{} store {}{namespace}: {} live keys, {} metadata records, {} element records ({} for compaction to collect); {}",
        store.format,
        store.dir.display(),
        report.keys,
        report.meta_records,
        report.element_records,
        report.garbage,
        match report.findings.len() {
            0 => "no findings".to_string(),
            1 => "1 finding".to_string(),
            n => format!("{n} findings"),
        }
    )
}

/// One finding as a tab-separated line: its kind first.
fn describe(finding: &Finding) -> String {
    match finding {
        Finding::Undecodable { family, key, error } => {
            format!("undecodable\t{family}\t{}\t{error}", hex(key))
        }
        Finding::CountMismatch {
            key,
            data_type,
            stored,
            found,
        } => format!(
            "count\t{}\t{}: metadata says {stored} elements, {found} found",
            quote_bytes(key),
            data_type.redis_name()
        ),
        Finding::Unreadable {
            key,
            data_type,
            error,
        } => format!(
            "unreadable\t{}\t{}: {error}",
            quote_bytes(key),
            data_type.redis_name()
        ),
        Finding::Orphan { family, key } => {
            format!(
                "orphan\t{family}\t{}\tno metadata owns this element record",
                hex(key)
            )
        }
        Finding::Unmodelled { key, type_name } => format!(
            "unmodelled\t{}\t{type_name}: a type redcodec does not model (migrate lists it as unrepresentable)",
            quote_bytes(key)
        ),
        Finding::Foreign { instance, key } => format!(
            "unmodelled\t{}\t{instance}/: a record of an instance redcodec does not model (migrate lists it as unrepresentable)",
            quote_bytes(key)
        ),
        Finding::SeveralTypes { key, types } => {
            let names: Vec<&str> = types.iter().map(|t| t.redis_name()).collect();
            format!(
                "several-types\t{}\t{} (commands see the {})",
                quote_bytes(key),
                names.join(", "),
                names[0]
            )
        }
    }
}
