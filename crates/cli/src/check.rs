//! `redcodec check`: reads a whole store read-only, says what its tables
//! are (format, checksum, compression, the oldest RocksDB that reads them)
//! and reports every fault: undecodable records, counts that disagree with the elements,
//! orphaned elements, keys of types redcodec does not model, keys held in
//! several types.

use std::collections::BTreeMap;
use std::io::Write;

use redcodec_engine::check::{check, CheckReport, Finding};
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::store::intent::INTENT_FILE;
use redcodec_engine::store::sst::survey;
use redcodec_engine::{store::hex, OpenMode};

use crate::error::CliError;
use crate::store_args::StoreArgs;

/// Runs the check and prints its report; fails when anything was found.
/// Without `--namespace`, every namespace the store holds is checked.
pub fn run(store: &StoreArgs) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut findings = 0;
    print_tables(&mut out, store)?;
    for args in store.each_namespace()? {
        let engine = args.open(OpenMode::ReadOnly, None)?;
        let report =
            check(&engine).map_err(|e| CliError::Io(std::io::Error::other(e.to_string())))?;
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

/// One line per instance: how many tables it holds, in which table
/// formats, checksums and compressions, and the oldest RocksDB that reads
/// them all (none for a store whose data is still only in its WAL).
fn print_tables(out: &mut dyn Write, store: &StoreArgs) -> Result<(), CliError> {
    let engine = store.open(OpenMode::ReadOnly, None)?;
    let layout = engine.store().layout().clone();
    for instance in &layout.instances {
        let dir = store.dir.join(instance.dir);
        let facts = survey(&dir).map_err(|e| CliError::Io(std::io::Error::other(e)))?;
        if facts.is_empty() {
            writeln!(
                out,
                "tables\t{}\tnone (the data is in the WAL)",
                instance.dir
            )?;
            continue;
        }
        let mut kinds: BTreeMap<(u32, &str, &str), usize> = BTreeMap::new();
        for f in &facts {
            *kinds
                .entry((f.format_version, f.checksum_name(), f.compression.as_str()))
                .or_default() += 1;
        }
        let described: Vec<String> = kinds
            .iter()
            .map(|((fv, sum, comp), n)| format!("{n} × format_version {fv}, {sum}, {comp}"))
            .collect();
        let oldest = facts
            .iter()
            .map(redcodec_engine::store::sst::SstFacts::readable_since)
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().max());
        let readers = match oldest {
            Some((major, minor)) => format!("readable by RocksDB {major}.{minor} and later"),
            None => "a table format this version of redcodec does not know".into(),
        };
        let legacy = if facts.iter().any(|f| f.format_version < 2) {
            "; format_version 0/1 tables need a RocksDB older than 11 to rewrite them"
        } else {
            ""
        };
        writeln!(
            out,
            "tables\t{}\t{} ({readers}{legacy})",
            instance.dir,
            described.join("; ")
        )?;
    }
    Ok(())
}
