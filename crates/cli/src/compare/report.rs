//! The figures of a run as tables (Markdown, on stdout), CSV and JSON.

use std::fmt::Write as _;
use std::path::Path;

use super::format_run::FormatResult;
use super::raw::RawResult;
use super::workload::{Kind, Sizes, Timing, STEPS};
use crate::error::CliError;

/// Everything one `redcodec compare` measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The sizes of the run.
    pub sizes: Sizes,
    /// The raw RocksDB baseline.
    pub raw: RawResult,
    /// One result per format, in the order asked.
    pub formats: Vec<FormatResult>,
    /// The performance goals, judged from this run.
    pub goals: Vec<Goal>,
}

/// One performance goal and whether this run meets it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Goal {
    /// The goal.
    pub goal: String,
    /// What this run measured.
    pub measured: String,
    /// Whether it is met.
    pub met: bool,
}

impl Report {
    /// Builds the report and judges the goals.
    pub fn new(sizes: Sizes, raw: RawResult, formats: Vec<FormatResult>) -> Report {
        let goals = goals(&raw, &formats);
        Report {
            sizes,
            raw,
            formats,
            goals,
        }
    }

    /// The raw reference of a command: put for writes, get for reads.
    pub fn reference(&self, kind: Kind) -> &Timing {
        match kind {
            Kind::Write => &self.raw.put,
            Kind::Read => &self.raw.get,
        }
    }
}

fn timing<'a>(f: &'a FormatResult, command: &str) -> Option<&'a Timing> {
    f.timings.iter().find(|t| t.command == command)
}

fn goals(raw: &RawResult, formats: &[FormatResult]) -> Vec<Goal> {
    let mut out = Vec::new();
    let mut vs = |goal: String, ours: Option<f64>, theirs: f64, min: f64, what: &str| {
        if let Some(ours) = ours {
            let r = ours / theirs;
            out.push(Goal {
                goal,
                measured: format!("{r:.2}× {what}"),
                met: r >= min,
            });
        }
    };
    for f in formats {
        if f.format == "kvrocks" {
            let set = timing(f, "SET").map(Timing::ops_per_sec);
            let get = timing(f, "GET").map(Timing::ops_per_sec);
            vs(
                "kvrocks SET ≥ 0.8× raw put".into(),
                set,
                raw.put.ops_per_sec(),
                0.8,
                "raw put",
            );
            vs(
                "kvrocks GET ≥ 0.8× raw get".into(),
                get,
                raw.get.ops_per_sec(),
                0.8,
                "raw get",
            );
        }
    }
    for f in formats {
        let Some(set) = timing(f, "SET").map(Timing::ops_per_sec) else {
            continue;
        };
        let hset = timing(f, "HSET").map(Timing::ops_per_sec);
        let zadd = timing(f, "ZADD").map(Timing::ops_per_sec);
        vs(
            format!("{} HSET ≥ 0.5× its SET", f.format),
            hset,
            set,
            0.5,
            "SET",
        );
        vs(
            format!("{} ZADD ≥ 0.35× its SET", f.format),
            zadd,
            set,
            0.35,
            "SET",
        );
    }
    for f in formats.iter().filter(|f| f.version_based) {
        if let (Some(small), Some(big)) = (f.del.first(), f.del.last()) {
            if big.fields > small.fields {
                let r = big.seconds / small.seconds.max(1e-9);
                out.push(Goal {
                    goal: format!("{} DEL of a big collection constant-time", f.format),
                    measured: format!(
                        "DEL of {} fields took {r:.1}× the DEL of {} fields (met if ≤ 10×); {} element records left after compaction",
                        big.fields, small.fields, big.elements_left()
                    ),
                    met: r <= 10.0 && big.elements_left() == 0,
                });
            }
        }
    }
    out
}

/// Formats a rate with thousands separators.
fn rate(x: f64) -> String {
    if !x.is_finite() {
        return "inf".into();
    }
    let n = x.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn duration(seconds: f64) -> String {
    if seconds < 1e-3 {
        format!("{:.1} µs", seconds * 1e6)
    } else if seconds < 1.0 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    }
}

/// A Markdown table; columns from `right_from` on are right-aligned.
fn table(
    out: &mut String,
    title: &str,
    header: &[String],
    rows: &[Vec<String>],
    right_from: usize,
) {
    let _ = writeln!(out, "#### {title}\n");
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        header
            .iter()
            .enumerate()
            .map(|(i, _)| if i < right_from { "---|" } else { "---:|" })
            .collect::<String>()
    );
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}

/// The tables, one per metric, as Markdown.
pub fn tables(report: &Report) -> String {
    let mut out = String::new();
    let s = &report.sizes;
    let _ = writeln!(
        out,
        "redcodec compare: {} keys, {} elements per collection, {}-byte values, big hash of {} fields\n",
        s.keys, s.elements, s.value_size, s.big_hash
    );
    let names: Vec<String> = report.formats.iter().map(|f| f.format.clone()).collect();

    let mut header = vec!["command".to_string()];
    header.extend(names.iter().cloned());
    header.push("raw rocksdb (put / get)".into());
    let rows: Vec<Vec<String>> = STEPS
        .iter()
        .map(|step| {
            let mut row = vec![format!("{} — {}", step.name, step.what)];
            for f in &report.formats {
                row.push(timing(f, step.name).map_or("-".into(), |t| rate(t.ops_per_sec())));
            }
            let r = report.reference(step.kind);
            row.push(format!("{} ({})", rate(r.ops_per_sec()), r.command));
            row
        })
        .collect();
    table(
        &mut out,
        "Operations per second (single thread)",
        &header,
        &rows,
        1,
    );

    let mut header = vec!["command".to_string()];
    header.extend(names.iter().cloned());
    let rows: Vec<Vec<String>> = STEPS
        .iter()
        .map(|step| {
            let mut row = vec![format!(
                "{} / raw {}",
                step.name,
                report.reference(step.kind).command
            )];
            let reference = report.reference(step.kind).ops_per_sec();
            for f in &report.formats {
                row.push(timing(f, step.name).map_or("-".into(), |t| {
                    format!("{:.2}", t.ops_per_sec() / reference)
                }));
            }
            row
        })
        .collect();
    table(
        &mut out,
        "Ratio to raw RocksDB (put for writes, get for reads)",
        &header,
        &rows,
        1,
    );

    let header: Vec<String> = [
        "store",
        "elements",
        "SST bytes",
        "bytes / element",
        "records",
        "records / element",
    ]
    .map(String::from)
    .to_vec();
    let mut rows: Vec<Vec<String>> = report
        .formats
        .iter()
        .map(|f| space_row(&f.format, &f.space))
        .collect();
    rows.push(space_row("raw rocksdb (SET keys only)", &report.raw.space));
    table(&mut out, "Space after a full compaction", &header, &rows, 1);

    let header: Vec<String> = [
        "store",
        "logical bytes written",
        "SST bytes written (flush + compaction)",
        "write amplification",
    ]
    .map(String::from)
    .to_vec();
    let mut rows: Vec<Vec<String>> = report
        .formats
        .iter()
        .map(|f| amp_row(&f.format, &f.write_amp))
        .collect();
    rows.push(amp_row(
        "raw rocksdb (SET keys only)",
        &report.raw.write_amp,
    ));
    table(&mut out, "Write amplification", &header, &rows, 1);

    let header: Vec<String> = [
        "format",
        "hash fields",
        "DEL time (median)",
        "samples",
        "records before",
        "records left after compaction",
        "of which metadata",
        "space back",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = report
        .formats
        .iter()
        .flat_map(|f| {
            f.del.iter().map(|d| {
                vec![
                    f.format.clone(),
                    rate(d.fields as f64),
                    duration(d.seconds),
                    d.samples.to_string(),
                    rate(d.records_before as f64),
                    rate(d.records_left as f64),
                    if d.meta_left { "1" } else { "0" }.into(),
                    if d.elements_left() == 0 { "yes" } else { "no" }.into(),
                ]
            })
        })
        .collect();
    table(&mut out, "DEL of a big hash", &header, &rows, 1);

    let header: Vec<String> = ["goal", "measured", "met"].map(String::from).to_vec();
    let rows: Vec<Vec<String>> = report
        .goals
        .iter()
        .map(|g| {
            vec![
                g.goal.clone(),
                g.measured.clone(),
                if g.met { "met" } else { "not met" }.into(),
            ]
        })
        .collect();
    table(&mut out, "Performance goals", &header, &rows, 3);
    out
}

fn space_row(name: &str, s: &super::measure::Space) -> Vec<String> {
    vec![
        name.to_string(),
        rate(s.elements as f64),
        rate(s.sst_bytes as f64),
        format!("{:.1}", s.bytes_per_element()),
        rate(s.records as f64),
        format!("{:.3}", s.records_per_element()),
    ]
}

fn amp_row(name: &str, w: &super::measure::WriteAmp) -> Vec<String> {
    vec![
        name.to_string(),
        rate(w.logical_bytes as f64),
        w.sst_bytes_written.map_or("n/a".into(), |b| rate(b as f64)),
        w.amplification()
            .map_or("n/a".into(), |a| format!("{a:.2}")),
    ]
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The files a report writes into one directory, in writing order.
struct CsvFiles<'a> {
    dir: &'a Path,
    written: Vec<std::path::PathBuf>,
}

impl CsvFiles<'_> {
    /// Writes `name` with one header line and one line per row.
    fn write(&mut self, name: &str, header: &[&str], rows: &[Vec<String>]) -> Result<(), CliError> {
        let path = self.dir.join(name);
        write_csv(&path, header, rows)?;
        self.written.push(path);
        Ok(())
    }
}

fn write_csv(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<(), CliError> {
    let mut text = header.join(",");
    text.push('\n');
    for row in rows {
        text.push_str(
            &row.iter()
                .map(|f| csv_field(f))
                .collect::<Vec<_>>()
                .join(","),
        );
        text.push('\n');
    }
    std::fs::write(path, text)?;
    Ok(())
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// Writes `report.json`, `ops.csv`, `space.csv`, `write_amp.csv`, `del.csv`
/// and `goals.csv` into `dir`; returns the files written.
pub fn write_files(report: &Report, dir: &Path) -> Result<Vec<std::path::PathBuf>, CliError> {
    let mut csv = CsvFiles {
        dir,
        written: Vec::new(),
    };
    let json = dir.join("report.json");
    let text =
        serde_json::to_string_pretty(report).map_err(|e| super::fail(format!("JSON: {e}")))?;
    std::fs::write(&json, text + "\n")?;
    csv.written.push(json);

    let mut rows = Vec::new();
    for f in &report.formats {
        for t in &f.timings {
            let kind = STEPS
                .iter()
                .find(|s| s.name == t.command)
                .map_or(t.kind, |s| s.kind);
            let r = report.reference(kind);
            rows.push(vec![
                f.format.clone(),
                t.command.clone(),
                format!("{kind:?}").to_lowercase(),
                t.ops.to_string(),
                format!("{:.6}", t.seconds),
                format!("{:.1}", t.ops_per_sec()),
                r.command.clone(),
                format!("{:.1}", r.ops_per_sec()),
                format!("{:.4}", t.ops_per_sec() / r.ops_per_sec()),
            ]);
        }
    }
    csv.write(
        "ops.csv",
        &[
            "format",
            "command",
            "kind",
            "ops",
            "seconds",
            "ops_per_sec",
            "raw_reference",
            "raw_ops_per_sec",
            "ratio_to_raw",
        ],
        &rows,
    )?;

    let space = |name: &str, s: &super::measure::Space| {
        vec![
            name.to_string(),
            s.elements.to_string(),
            s.sst_bytes.to_string(),
            format!("{:.3}", s.bytes_per_element()),
            s.records.to_string(),
            format!("{:.4}", s.records_per_element()),
        ]
    };
    let mut rows: Vec<Vec<String>> = report
        .formats
        .iter()
        .map(|f| space(&f.format, &f.space))
        .collect();
    rows.push(space("raw", &report.raw.space));
    csv.write(
        "space.csv",
        &[
            "store",
            "elements",
            "sst_bytes",
            "bytes_per_element",
            "records",
            "records_per_element",
        ],
        &rows,
    )?;

    let amp = |name: &str, w: &super::measure::WriteAmp| {
        vec![
            name.to_string(),
            w.logical_bytes.to_string(),
            opt(w.sst_bytes_written),
            opt(w.amplification().map(|a| format!("{a:.4}"))),
        ]
    };
    let mut rows: Vec<Vec<String>> = report
        .formats
        .iter()
        .map(|f| amp(&f.format, &f.write_amp))
        .collect();
    rows.push(amp("raw", &report.raw.write_amp));
    csv.write(
        "write_amp.csv",
        &[
            "store",
            "logical_bytes",
            "sst_bytes_written",
            "write_amplification",
        ],
        &rows,
    )?;

    let rows: Vec<Vec<String>> = report
        .formats
        .iter()
        .flat_map(|f| {
            f.del.iter().map(|d| {
                vec![
                    f.format.clone(),
                    d.fields.to_string(),
                    format!("{:.9}", d.seconds),
                    d.samples.to_string(),
                    d.records_before.to_string(),
                    d.records_left.to_string(),
                    d.meta_left.to_string(),
                    d.elements_left().to_string(),
                    d.sst_bytes_left.to_string(),
                ]
            })
        })
        .collect();
    csv.write(
        "del.csv",
        &[
            "format",
            "fields",
            "del_seconds",
            "samples",
            "records_before",
            "records_left",
            "meta_left",
            "element_records_left",
            "sst_bytes_left",
        ],
        &rows,
    )?;

    let rows: Vec<Vec<String>> = report
        .goals
        .iter()
        .map(|g| vec![g.goal.clone(), g.measured.clone(), g.met.to_string()])
        .collect();
    csv.write("goals.csv", &["goal", "measured", "met"], &rows)?;
    Ok(csv.written)
}
