//! What `redcodec check` reports, as text: the tables of every instance
//! (table format, checksum, compression, the oldest RocksDB that reads
//! them), one tab-separated line per finding of
//! [`redcodec_engine::check`], and a summary line per namespace.

use std::collections::BTreeMap;
use std::io::{self, Write};

use redcodec_engine::check::{CheckReport, Finding};
use redcodec_engine::reply::quote_bytes;
use redcodec_engine::store::hex;
use redcodec_engine::store::sst::{survey, SstFacts};
use redcodec_engine::store::Store;

use crate::store_spec::StoreSpec;

/// The report of the store `store` names, one finding a line, then a
/// summary line.
pub fn write_report(
    out: &mut dyn Write,
    store: &StoreSpec,
    report: &CheckReport,
) -> io::Result<()> {
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
pub fn describe(finding: &Finding) -> String {
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

/// One line per instance of `store` (whose directory is `dir`): how many
/// tables it holds, in which table formats, checksums and compressions,
/// and the oldest RocksDB that reads them all (none for a store whose
/// data is still only in its WAL).
pub fn write_tables(out: &mut dyn Write, store: &Store) -> io::Result<()> {
    for instance in &store.layout().instances {
        let dir = store.root().join(instance.dir);
        let facts = survey(&dir).map_err(io::Error::other)?;
        if facts.is_empty() {
            writeln!(
                out,
                "tables\t{}\tnone (the data is in the WAL)",
                instance.dir
            )?;
            continue;
        }
        writeln!(out, "tables\t{}\t{}", instance.dir, tables(&facts))?;
    }
    Ok(())
}

/// The tables of one instance, counted by kind, with their readers.
fn tables(facts: &[SstFacts]) -> String {
    let mut kinds: BTreeMap<(u32, &str, &str), usize> = BTreeMap::new();
    for f in facts {
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
        .map(SstFacts::readable_since)
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
    format!("{} ({readers}{legacy})", described.join("; "))
}
