//! The figures of a run as tables (Markdown, on stdout), CSV and JSON.

use std::fmt::Write as _;
use std::path::Path;

use super::figure::Figure;
use super::format_run::{DelResult, FormatResult};
use super::instructions::{Instructions, COMMANDS, RAW};
use super::measure::{Space, WriteAmp};
use super::raw::RawResult;
use super::scaling::{Scaling, THREADS};
use super::workload::{kind_of, Kind, Sizes, Timing, STEPS};
use crate::error::CompareError;
use num_format::{Locale, ToFormattedString};

/// Everything one `redcodec compare` measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The sizes of the run.
    pub sizes: Sizes,
    /// The raw RocksDB baseline.
    pub raw: RawResult,
    /// One result per format, in the order asked.
    pub formats: Vec<FormatResult>,
    /// SET with one and two writer threads: every format, then raw RocksDB.
    pub scaling: Vec<Scaling>,
    /// Instructions per operation (empty unless asked for).
    pub instructions: Vec<Instructions>,
    /// The performance goals, judged from this run.
    pub goals: Vec<Goal>,
    /// The machine and time of the run.
    pub machine: Machine,
}

/// Where and when a run took place.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Machine {
    /// Cores this process may use.
    pub cores: usize,
    /// The processor's model, where the system names it (`/proc/cpuinfo`).
    pub cpu: Option<String>,
    /// Operating system and architecture.
    pub os: String,
    /// When the run ended, UTC (RFC 3339).
    pub date: String,
}

impl Machine {
    /// This machine, now.
    pub fn here() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, m)| m.trim().to_string())
            });
        Machine {
            cores: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            cpu,
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        }
    }
}

/// Whether a run meets a goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// The figure is on the goal's side of the threshold, and so is its
    /// whole spread when it has one.
    Met,
    /// The figure misses the threshold, and so does its whole spread.
    NotMet,
    /// The threshold lies within the figure's spread: the runs disagree.
    WithinNoise,
}

impl GoalStatus {
    /// The status as the tables write it.
    pub fn label(self) -> &'static str {
        match self {
            GoalStatus::Met => "met",
            GoalStatus::NotMet => "not met",
            GoalStatus::WithinNoise => "within noise",
        }
    }

    /// Judges `ratio` against `threshold`: at least it, or at most it.
    pub fn judge(ratio: Figure, threshold: f64, at_most: bool) -> GoalStatus {
        if ratio.spread.is_some() && ratio.lo() <= threshold && threshold <= ratio.hi() {
            return GoalStatus::WithinNoise;
        }
        let met = if at_most {
            ratio.value <= threshold
        } else {
            ratio.value >= threshold
        };
        if met {
            GoalStatus::Met
        } else {
            GoalStatus::NotMet
        }
    }
}

/// What a goal's ratio divides by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Against {
    /// Raw RocksDB put (writes) or get (reads).
    Raw,
    /// The same format's SET.
    OwnSet,
    /// The same format's DEL of a small hash.
    SmallDel,
}

/// One performance goal and whether this run meets it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Goal {
    /// The goal.
    pub goal: String,
    /// The format it is set for.
    pub format: String,
    /// The command whose figure is judged.
    pub command: String,
    /// What the ratio divides by.
    pub against: Against,
    /// The ratio's threshold.
    pub threshold: f64,
    /// Whether the ratio must stay at most (not at least) the threshold.
    pub at_most: bool,
    /// The measured ratio, with its spread when the figures have one.
    pub ratio: Figure,
    /// What this run measured, in words.
    pub measured: String,
    /// Met, not met or within noise.
    pub status: GoalStatus,
    /// Whether it is met (`status` is `met`).
    pub met: bool,
}

impl Report {
    /// Builds the report and judges the goals.
    pub fn new(
        sizes: Sizes,
        raw: RawResult,
        formats: Vec<FormatResult>,
        scaling: Vec<Scaling>,
        instructions: Vec<Instructions>,
        machine: Machine,
    ) -> Report {
        let goals = goals(&raw, &formats);
        Report {
            sizes,
            raw,
            formats,
            scaling,
            instructions,
            goals,
            machine,
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

/// The timing of `command` in a format's run.
pub fn timing<'a>(f: &'a FormatResult, command: &str) -> Option<&'a Timing> {
    f.timings.iter().find(|t| t.command == command)
}

/// One ratio goal: `format`'s `command` over `base`, at least `threshold`.
struct RatioGoal<'a> {
    format: &'a str,
    command: &'a str,
    against: Against,
    threshold: f64,
    what: &'a str,
}

impl RatioGoal<'_> {
    fn judge(&self, ours: Option<&Timing>, base: &Timing) -> Option<Goal> {
        let ratio = ours?.ratio(base);
        let status = GoalStatus::judge(ratio, self.threshold, false);
        let spread = ratio
            .spread
            .map_or(String::new(), |s| format!(" ({:.2}–{:.2})", s.min, s.max));
        Some(Goal {
            goal: format!(
                "{} {} ≥ {}× {}",
                self.format, self.command, self.threshold, self.what
            ),
            format: self.format.to_string(),
            command: self.command.to_string(),
            against: self.against,
            threshold: self.threshold,
            at_most: false,
            ratio,
            measured: format!("{:.2}×{spread} {}", ratio.value, self.what),
            status,
            met: status == GoalStatus::Met,
        })
    }
}

/// The goals of the ratio charts: `(command, threshold)` of each format's
/// collection writes against its own SET.
pub const OWN_SET_GOALS: [(&str, f64); 2] = [("HSET", 0.6), ("ZADD", 0.4)];

/// The goals against raw RocksDB: `(format, command, threshold)`; no
/// format means every format.
pub const RAW_GOALS: [(Option<&str>, &str, f64); 4] = [
    (Some("kvrocks"), "SET", 0.9),
    (Some("kvrocks"), "GET", 0.9),
    (None, "LRANGE", 0.1),
    (None, "ZRANGEBYSCORE", 0.1),
];

/// The range reads of 100 elements, whose floor is raw RocksDB's scan of
/// 100 keys ([`RawResult::scan`]).
pub const RANGE_READS: [&str; 2] = ["LRANGE", "ZRANGEBYSCORE"];

/// How many times the DEL of the small hash the DEL of the big one may take
/// on a version-based format (where DEL drops the metadata alone).
pub const DEL_GOAL: f64 = 10.0;

/// The same, on a format that deletes the elements themselves (by range
/// deletes): the big hash holds 100 times the fields of the small one.
pub const RANGE_DEL_GOAL: f64 = 3.0;

fn goals(raw: &RawResult, formats: &[FormatResult]) -> Vec<Goal> {
    let mut out = Vec::new();
    for (name, command, threshold) in RAW_GOALS {
        for f in formats
            .iter()
            .filter(|f| name.is_none_or(|n| f.format == n))
        {
            let kind = kind_of(command).unwrap_or(Kind::Read);
            let (base, mut what) = match kind {
                Kind::Read => (&raw.get, "raw get".to_string()),
                Kind::Write => (&raw.put, "raw put".to_string()),
            };
            if RANGE_READS.contains(&command) {
                what.push_str(&format!(
                    " (raw RocksDB's own scan of 100: {:.2}× raw get)",
                    raw.scan.ratio(&raw.get).value
                ));
            }
            let goal = RatioGoal {
                format: &f.format,
                command,
                against: Against::Raw,
                threshold,
                what: &what,
            };
            out.extend(goal.judge(timing(f, command), base));
        }
    }
    for f in formats {
        let Some(set) = timing(f, "SET") else {
            continue;
        };
        for (command, threshold) in OWN_SET_GOALS {
            let goal = RatioGoal {
                format: &f.format,
                command,
                against: Against::OwnSet,
                threshold,
                what: "its SET",
            };
            out.extend(goal.judge(timing(f, command), set));
        }
    }
    out.extend(formats.iter().filter_map(del_goal));
    out
}

/// The DEL goal of one format: the big hash's DEL within [`DEL_GOAL`]
/// (version-based) or [`RANGE_DEL_GOAL`] times the small one's, and no
/// element record left after compaction.
fn del_goal(f: &FormatResult) -> Option<Goal> {
    let (small, big) = (f.del.first()?, f.del.last()?);
    if big.fields <= small.fields {
        return None;
    }
    let (threshold, what) = if f.version_based {
        (DEL_GOAL, "constant-time")
    } else {
        (RANGE_DEL_GOAL, "by range delete")
    };
    // Judged on the medians: the spread of a DEL is over the samples of
    // this run (the first one often cold), not over rounds, and the
    // quotient of two such spreads says little.
    let ratio = Figure::one(big.seconds).ratio(Figure::one(small.seconds));
    let status = if big.elements_left() > 0 {
        GoalStatus::NotMet
    } else {
        GoalStatus::judge(ratio, threshold, true)
    };
    Some(Goal {
        goal: format!("{} DEL of a big collection {what}", f.format),
        format: f.format.clone(),
        command: "DEL".into(),
        against: Against::SmallDel,
        threshold,
        at_most: true,
        ratio,
        measured: format!(
            "DEL of {} fields took {:.1}× the DEL of {} fields (met if ≤ {threshold}×); {} element records left after compaction",
            big.fields, ratio.value, small.fields, big.elements_left()
        ),
        status,
        met: status == GoalStatus::Met,
    })
}

/// Formats a rate with thousands separators.
pub fn rate(x: f64) -> String {
    if !x.is_finite() {
        return "inf".into();
    }
    crate::report::thousands(x.round() as u64)
}

/// A figure as `median (lowest–highest)`, or the value alone when it was
/// measured once.
pub fn spread_cell(figure: Figure, show: impl Fn(f64) -> String) -> String {
    match figure.spread {
        Some(s) => format!("{} ({}–{})", show(figure.value), show(s.min), show(s.max)),
        None => show(figure.value),
    }
}

/// A duration in µs, ms or s.
pub fn duration(seconds: f64) -> String {
    if seconds < 1e-3 {
        format!("{:.1} µs", seconds * 1e6)
    } else if seconds < 1.0 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    }
}

/// One table of figures: the same cells on stdout and in `report.html`.
#[derive(Clone, Debug)]
pub struct Table {
    /// The table's title.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// The cells, row by row.
    pub rows: Vec<Vec<String>>,
    /// Columns from this one on hold figures (right-aligned).
    pub right_from: usize,
}

impl Table {
    /// The table as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "#### {}\n", self.title);
        let _ = writeln!(out, "| {} |", self.header.join(" | "));
        let _ = writeln!(
            out,
            "|{}",
            (0..self.header.len())
                .map(|i| if i < self.right_from { "---|" } else { "---:|" })
                .collect::<String>()
        );
        for row in &self.rows {
            let _ = writeln!(out, "| {} |", row.join(" | "));
        }
        out.push('\n');
        out
    }
}

/// The tables of a report, one per metric.
#[derive(Clone, Debug)]
pub struct Tables {
    /// Operations per second.
    pub ops: Table,
    /// Ratios to raw RocksDB.
    pub ratio: Table,
    /// Collection writes against the format's own SET.
    pub own_set: Table,
    /// Space after a full compaction.
    pub space: Table,
    /// Write amplification.
    pub write_amp: Table,
    /// DEL of a big hash.
    pub del: Table,
    /// SET with one and two writer threads.
    pub scaling: Table,
    /// Instructions per operation (no rows unless counted).
    pub instructions: Table,
    /// The goals.
    pub goals: Table,
}

/// Appends a table whose figures start at column `right_from`.
fn table(
    out: &mut Vec<Table>,
    title: &str,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right_from: usize,
) {
    out.push(Table {
        title: title.to_string(),
        header,
        rows,
        right_from,
    });
}

/// Column names as owned strings.
fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(ToString::to_string).collect()
}

/// Each format's `(name, space, write amplification)`, then raw RocksDB's
/// under `raw_name`.
fn stores<'a>(
    report: &'a Report,
    raw_name: &'a str,
) -> impl Iterator<Item = (&'a str, &'a Space, &'a WriteAmp)> {
    report
        .formats
        .iter()
        .map(|f| (f.format.as_str(), &f.space, &f.write_amp))
        .chain([(raw_name, &report.raw.space, &report.raw.write_amp)])
}

/// One row per DEL of every format, made by `row` from the format's name.
fn del_rows(report: &Report, row: impl Fn(&str, &DelResult) -> Vec<String>) -> Vec<Vec<String>> {
    report
        .formats
        .iter()
        .flat_map(|f| f.del.iter().map(|d| row(&f.format, d)))
        .collect()
}

/// The run's sizes in one line.
pub fn settings_line(report: &Report) -> String {
    let s = &report.sizes;
    format!(
        "{} keys, {} elements per collection, {}-byte values, big hash of {} fields, {} interleaved rounds (figures: median, in brackets the slowest–fastest round)",
        s.keys, s.elements, s.value_size, s.big_hash, s.rounds
    )
}

/// The tables, one per metric, as Markdown.
pub fn tables(report: &Report) -> String {
    let mut out = format!("redcodec compare: {}\n\n", settings_line(report));
    let t = table_set(report);
    for table in [
        &t.ops,
        &t.ratio,
        &t.own_set,
        &t.space,
        &t.write_amp,
        &t.del,
        &t.scaling,
        &t.instructions,
        &t.goals,
    ] {
        if !table.rows.is_empty() {
            out.push_str(&table.markdown());
        }
    }
    out
}

/// The tables, one per metric.
pub fn table_set(report: &Report) -> Tables {
    let mut out = Vec::new();
    let command_and_formats = || {
        let mut header = vec!["command".to_string()];
        header.extend(report.formats.iter().map(|f| f.format.clone()));
        header
    };

    let mut header = command_and_formats();
    header.push("raw rocksdb (put / get)".into());
    let rows: Vec<Vec<String>> = STEPS
        .iter()
        .map(|step| {
            let mut row = vec![format!("{} — {}", step.name, step.what)];
            for f in &report.formats {
                row.push(timing(f, step.name).map_or("-".into(), |t| spread_cell(t.rate(), rate)));
            }
            let r = report.reference(step.kind);
            let mut cell = format!("{} {}", r.command, spread_cell(r.rate(), rate));
            if RANGE_READS.contains(&step.name) {
                let scan = &report.raw.scan;
                cell.push_str(&format!(
                    "; {} {}",
                    scan.command,
                    spread_cell(scan.rate(), rate)
                ));
            }
            row.push(cell);
            row
        })
        .collect();
    table(
        &mut out,
        "Operations per second (single thread)",
        header,
        rows,
        1,
    );

    let rows: Vec<Vec<String>> = STEPS
        .iter()
        .map(|step| {
            let mut row = vec![format!(
                "{} / raw {}",
                step.name,
                report.reference(step.kind).command
            )];
            let reference = report.reference(step.kind);
            for f in &report.formats {
                row.push(timing(f, step.name).map_or("-".into(), |t| {
                    spread_cell(t.ratio(reference), |r| format!("{r:.2}"))
                }));
            }
            row
        })
        .collect();
    table(
        &mut out,
        "Ratio to raw RocksDB (put for writes, get for reads)",
        command_and_formats(),
        rows,
        1,
    );

    let mut header = command_and_formats();
    header.push("goal".into());
    let rows: Vec<Vec<String>> = OWN_SET_GOALS
        .iter()
        .map(|&(command, threshold)| {
            let mut row = vec![format!("{command} / its SET")];
            for f in &report.formats {
                let ratio = timing(f, command)
                    .zip(timing(f, "SET"))
                    .map(|(c, set)| c.ratio(set));
                row.push(ratio.map_or("-".into(), |r| spread_cell(r, |x| format!("{x:.2}"))));
            }
            row.push(format!("≥ {threshold}"));
            row
        })
        .collect();
    table(
        &mut out,
        "Collection writes against the format's own SET",
        header,
        rows,
        1,
    );

    let header = columns(&[
        "store",
        "elements",
        "SST bytes",
        "bytes / element",
        "records",
        "records / element",
    ]);
    let rows = stores(report, RAW_SET_KEYS)
        .map(|(name, s, _)| {
            vec![
                name.to_string(),
                rate(s.elements as f64),
                rate(s.sst_bytes as f64),
                format!("{:.1}", s.bytes_per_element()),
                rate(s.records as f64),
                format!("{:.3}", s.records_per_element()),
            ]
        })
        .collect();
    table(&mut out, "Space after a full compaction", header, rows, 1);

    let header = columns(&[
        "store",
        "logical bytes written",
        "SST bytes written (flush + compaction)",
        "write amplification",
    ]);
    let rows = stores(report, RAW_SET_KEYS)
        .map(|(name, _, w)| {
            vec![
                name.to_string(),
                rate(w.logical_bytes as f64),
                w.sst_bytes_written.map_or("n/a".into(), |b| rate(b as f64)),
                w.amplification()
                    .map_or("n/a".into(), |a| format!("{a:.2}")),
            ]
        })
        .collect();
    table(&mut out, "Write amplification", header, rows, 1);

    let header = columns(&[
        "format",
        "hash fields",
        "DEL time (median)",
        "fastest – slowest",
        "samples",
        "records before",
        "records left after compaction",
        "of which metadata",
        "space back",
    ]);
    let rows = del_rows(report, |format, d| {
        vec![
            format.to_string(),
            rate(d.fields as f64),
            duration(d.seconds),
            d.seconds_spread.map_or("-".into(), |s| {
                format!("{} – {}", duration(s.min), duration(s.max))
            }),
            d.samples.to_string(),
            rate(d.records_before as f64),
            rate(d.records_left as f64),
            if d.meta_left { "1" } else { "0" }.into(),
            if d.elements_left() == 0 { "yes" } else { "no" }.into(),
        ]
    });
    table(&mut out, "DEL of a big hash", header, rows, 1);

    let header = columns(&[
        "store",
        "SET, 1 thread (ops/s)",
        "SET, 2 threads on different keys (ops/s)",
        "speedup",
        "speedup / raw RocksDB's",
    ]);
    let raw_speedup = report
        .scaling
        .iter()
        .find(|s| s.store == "raw rocksdb")
        .map(Scaling::speedup);
    let rows: Vec<Vec<String>> = report
        .scaling
        .iter()
        .map(|s| {
            let x = |v: f64| format!("{v:.2}");
            vec![
                s.store.clone(),
                spread_cell(s.one_thread.rate(), rate),
                spread_cell(s.two_threads.rate(), rate),
                spread_cell(s.speedup(), x),
                raw_speedup.map_or("-".into(), |r| x(s.speedup().value / r.value)),
            ]
        })
        .collect();
    table(
        &mut out,
        &format!("Writer threads: SET with 1 and {THREADS} threads"),
        header,
        rows,
        1,
    );

    let mut header = command_and_formats();
    header.push("raw rocksdb (put / get)".into());
    let count_of = |store: &str, command: &str| {
        report
            .instructions
            .iter()
            .find(|i| i.store == store && i.command == command)
            .map(|i| i.per_op)
    };
    let rows: Vec<Vec<String>> = if report.instructions.is_empty() {
        Vec::new()
    } else {
        COMMANDS
            .iter()
            .map(|&command| {
                let mut row = vec![command.to_string()];
                for f in &report.formats {
                    row.push(count_of(&f.format, command).map_or("-".into(), rate));
                }
                let kind = kind_of(command).unwrap_or(Kind::Write);
                let raw = if kind == Kind::Write { "put" } else { "get" };
                row.push(count_of(RAW, raw).map_or("-".into(), |n| format!("{raw} {}", rate(n))));
                row
            })
            .collect()
    };
    table(
        &mut out,
        "Instructions per operation (callgrind; the engine, the codec and RocksDB's foreground work)",
        header,
        rows,
        1,
    );

    let rows: Vec<Vec<String>> = report
        .goals
        .iter()
        .map(|g| vec![g.goal.clone(), g.measured.clone(), g.status.label().into()])
        .collect();
    table(
        &mut out,
        "Performance goals",
        columns(&["goal", "measured", "met"]),
        rows,
        3,
    );
    let mut it = out.into_iter();
    let mut next = || it.next().expect("nine tables");
    Tables {
        ops: next(),
        ratio: next(),
        own_set: next(),
        space: next(),
        write_amp: next(),
        del: next(),
        scaling: next(),
        instructions: next(),
        goals: next(),
    }
}

/// Raw RocksDB's name in the space and write amplification tables.
const RAW_SET_KEYS: &str = "raw rocksdb (SET keys only)";

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
    fn write(
        &mut self,
        name: &str,
        header: &[&str],
        rows: &[Vec<String>],
    ) -> Result<(), CompareError> {
        let path = self.dir.join(name);
        write_csv(&path, header, rows)?;
        self.written.push(path);
        Ok(())
    }
}

/// Prints the files a run wrote, on one line.
pub(crate) fn print_files(files: &[std::path::PathBuf]) {
    println!(
        "Files: {}",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
}

pub(crate) fn write_csv(
    path: &Path,
    header: &[&str],
    rows: &[Vec<String>],
) -> Result<(), CompareError> {
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
pub fn write_files(report: &Report, dir: &Path) -> Result<Vec<std::path::PathBuf>, CompareError> {
    let mut csv = CsvFiles {
        dir,
        written: Vec::new(),
    };
    let json = dir.join("report.json");
    let text = serde_json::to_string_pretty(report)
        .map_err(|e| crate::error::fail(format!("JSON: {e}")))?;
    std::fs::write(&json, text + "\n")?;
    csv.written.push(json);

    let mut rows = Vec::new();
    for f in &report.formats {
        for t in &f.timings {
            let kind = kind_of(&t.command).unwrap_or(t.kind);
            let r = report.reference(kind);
            let ratio = t.ratio(r);
            rows.push(vec![
                f.format.clone(),
                t.command.clone(),
                format!("{kind:?}").to_lowercase(),
                t.ops.to_string(),
                format!("{:.6}", t.seconds),
                format!("{:.1}", t.ops_per_sec()),
                format!("{:.1}", t.rate().lo()),
                format!("{:.1}", t.rate().hi()),
                r.command.clone(),
                format!("{:.1}", r.ops_per_sec()),
                format!("{:.4}", ratio.value),
                format!("{:.4}", ratio.lo()),
                format!("{:.4}", ratio.hi()),
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
            "ops_per_sec_min",
            "ops_per_sec_max",
            "raw_reference",
            "raw_ops_per_sec",
            "ratio_to_raw",
            "ratio_to_raw_min",
            "ratio_to_raw_max",
        ],
        &rows,
    )?;

    let rows = stores(report, "raw")
        .map(|(name, s, _)| {
            vec![
                name.to_string(),
                s.elements.to_string(),
                s.sst_bytes.to_string(),
                format!("{:.3}", s.bytes_per_element()),
                s.records.to_string(),
                format!("{:.4}", s.records_per_element()),
            ]
        })
        .collect::<Vec<_>>();
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

    let rows = stores(report, "raw")
        .map(|(name, _, w)| {
            vec![
                name.to_string(),
                w.logical_bytes.to_string(),
                opt(w.sst_bytes_written),
                opt(w.amplification().map(|a| format!("{a:.4}"))),
            ]
        })
        .collect::<Vec<_>>();
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

    let rows = del_rows(report, |format, d| {
        vec![
            format.to_string(),
            d.fields.to_string(),
            format!("{:.9}", d.seconds),
            d.samples.to_string(),
            d.records_before.to_string(),
            d.records_left.to_string(),
            d.meta_left.to_string(),
            d.elements_left().to_string(),
            d.sst_bytes_left.to_string(),
        ]
    });
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
        .map(|g| {
            vec![
                g.goal.clone(),
                g.measured.clone(),
                g.met.to_string(),
                g.status.label().into(),
            ]
        })
        .collect();
    csv.write("goals.csv", &["goal", "measured", "met", "status"], &rows)?;
    Ok(csv.written)
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    n.to_formatted_string(&Locale::en)
}

#[cfg(test)]
mod tests {
    use super::super::figure::Spread;
    use super::*;

    #[test]
    fn a_goal_inside_the_spread_is_within_noise() {
        let spread = |value, min, max| Figure {
            value,
            spread: Some(Spread { min, max }),
        };
        assert_eq!(
            GoalStatus::judge(Figure::one(0.81), 0.8, false),
            GoalStatus::Met
        );
        assert_eq!(
            GoalStatus::judge(Figure::one(0.79), 0.8, false),
            GoalStatus::NotMet
        );
        assert_eq!(
            GoalStatus::judge(spread(0.85, 0.78, 0.9), 0.8, false),
            GoalStatus::WithinNoise
        );
        assert_eq!(
            GoalStatus::judge(spread(0.85, 0.82, 0.9), 0.8, false),
            GoalStatus::Met
        );
        assert_eq!(
            GoalStatus::judge(spread(0.7, 0.6, 0.75), 0.8, false),
            GoalStatus::NotMet
        );
        assert_eq!(
            GoalStatus::judge(Figure::one(12.0), 10.0, true),
            GoalStatus::NotMet
        );
        assert_eq!(
            GoalStatus::judge(spread(9.0, 8.0, 11.0), 10.0, true),
            GoalStatus::WithinNoise
        );
    }
}
