//! The charts of the book's scale page (`docs/src/scale.md`): what each
//! whole-store command costs per record as the store grows, and its peak
//! memory, drawn from the figures measured with `/usr/bin/time -v` and
//! kept in `docs/src/scale/figures.tsv`.
//!
//! The figures file has one measurement per line, tab-separated, `#`
//! starting a comment: format, records, command, CPU seconds (user +
//! system), wall-clock seconds, peak RSS in KiB. The charts use CPU time:
//! on a shared machine wall-clock time measures the other jobs as much as
//! the command. Linear time shows as bars of one length per command
//! whatever the store's size; flat memory as RSS bars of one length.

use super::charts::{nth_color, Chart, Series, Unit};
use super::figure::Figure;
use crate::error::{fail, CompareError};

/// The memory every command should stay under, whatever the store's size
/// (MiB).
pub const RSS_GOAL_MIB: f64 = 1024.0;

/// One measured run of a command over a whole store.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleRun {
    /// The store's format.
    pub format: String,
    /// Records (top-level keys) in the store.
    pub records: u64,
    /// What ran: `check`, `migrate → blackwidow`, `raw scan`, …
    pub command: String,
    /// CPU seconds, user + system.
    pub cpu_seconds: f64,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
    /// Peak resident set, in KiB.
    pub peak_rss_kib: u64,
}

/// Reads a figures file (see the module's documentation).
pub fn parse_runs(tsv: &str) -> Result<Vec<ScaleRun>, CompareError> {
    let mut runs = Vec::new();
    for (n, line) in tsv.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |what: &str| fail(format!("scale figures, line {}: {what}", n + 1));
        let fields: Vec<&str> = line.split('\t').collect();
        let [format, records, command, cpu, wall, rss] = fields[..] else {
            return Err(bad("expected 6 tab-separated fields"));
        };
        let records: u64 = records.parse().map_err(|_| bad("records"))?;
        let cpu_seconds: f64 = cpu.parse().map_err(|_| bad("CPU seconds"))?;
        let wall_seconds: f64 = wall.parse().map_err(|_| bad("wall-clock seconds"))?;
        if records == 0 || !(cpu_seconds > 0.0 && wall_seconds > 0.0) {
            return Err(bad("records and seconds must be positive"));
        }
        runs.push(ScaleRun {
            format: format.to_string(),
            records,
            command: command.to_string(),
            cpu_seconds,
            wall_seconds,
            peak_rss_kib: rss.parse().map_err(|_| bad("peak RSS"))?,
        });
    }
    Ok(runs)
}

/// `1M`, `10M`, `100k` records.
pub(crate) fn size_name(records: u64) -> String {
    match records {
        r if r >= 1_000_000 && r % 1_000_000 == 0 => format!("{}M records", r / 1_000_000),
        r if r >= 1_000 && r % 1_000 == 0 => format!("{}k records", r / 1_000),
        r => format!("{r} records"),
    }
}

/// The charts of the runs as SVG documents, each with its file stem:
/// `scale_time_per_record` and `scale_peak_rss`.
pub fn scale_svgs(runs: &[ScaleRun]) -> Result<Vec<(&'static str, String)>, CompareError> {
    scale_charts(runs)
        .into_iter()
        .map(|chart| Ok((chart.id, chart.svg()?)))
        .collect()
}

/// The two charts of the runs: time per record, and peak RSS, one row per
/// format and command (in the order first met), one bar per store size.
/// A run measured several times at one size keeps its last figure.
fn scale_charts(runs: &[ScaleRun]) -> Vec<Chart> {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut sizes: Vec<u64> = Vec::new();
    for run in runs {
        let row = (run.format.clone(), run.command.clone());
        if !rows.contains(&row) {
            rows.push(row);
        }
        if !sizes.contains(&run.records) {
            sizes.push(run.records);
        }
    }
    sizes.sort_unstable();
    let figure = |row: &(String, String), size: u64, of: fn(&ScaleRun) -> f64| {
        runs.iter()
            .rev()
            .find(|r| r.format == row.0 && r.command == row.1 && r.records == size)
            .map(|r| Figure::one(of(r)))
    };
    let series = |of: fn(&ScaleRun) -> f64| -> Vec<Series> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| Series {
                name: size_name(size),
                color: nth_color(i),
                values: rows.iter().map(|row| figure(row, size, of)).collect(),
            })
            .collect()
    };
    let labels: Vec<String> = rows.iter().map(|(f, c)| format!("{f}: {c}")).collect();
    vec![
        Chart {
            id: "scale_time_per_record",
            title: "CPU time per record as the store grows (equal bars: linear time)".into(),
            axis: "CPU time (user + system) per record".into(),
            unit: Unit::Seconds,
            rows: labels.clone(),
            series: series(|r| r.cpu_seconds / r.records as f64),
            reference: None,
            goals: None,
        },
        Chart {
            id: "scale_peak_rss",
            title: "Peak resident memory as the store grows".into(),
            axis: "peak RSS, MiB".into(),
            unit: Unit::Count,
            rows: labels.clone(),
            series: series(|r| r.peak_rss_kib as f64 / 1024.0),
            reference: None,
            goals: Some((
                format!("goal: under {RSS_GOAL_MIB} MiB"),
                vec![Some(RSS_GOAL_MIB); labels.len()],
            )),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUNS: &str = "# format\trecords\tcommand\tcpu\twall\tpeak RSS KiB\n\
        kvrocks\t1000000\tdump\t100\t300\t131072\n\
        kvrocks\t10000000\tdump\t1000\t2000\t262144\n\
        blackwidow\t1000000\tdump\t50\t60\t65536\n";

    #[test]
    fn reads_runs_and_skips_comments() {
        let runs = parse_runs(RUNS).unwrap();
        assert_eq!(runs.len(), 3);
        assert_eq!(runs[1].records, 10_000_000);
        assert_eq!(runs[1].peak_rss_kib, 262_144);
    }

    #[test]
    fn bad_lines_name_their_line() {
        let err = parse_runs("kvrocks\t1000\tdump\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
        let err = parse_runs("# c\nkvrocks\tmany\tdump\t1\t1\t1\n").unwrap_err();
        assert!(err.to_string().contains("line 2: records"), "{err}");
        assert!(parse_runs("kvrocks\t10\tdump\t0\t1\t1\n").is_err());
    }

    #[test]
    fn one_bar_per_size_and_a_row_per_command() {
        let charts = scale_charts(&parse_runs(RUNS).unwrap());
        let time = &charts[0];
        assert_eq!(time.rows, ["kvrocks: dump", "blackwidow: dump"]);
        let names: Vec<&str> = time.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["1M records", "10M records"]);
        // 100 s over 1M records and 1000 s over 10M: the same 100 µs.
        let per_record = |s: usize, r: usize| time.series[s].values[r].map(|f| f.value);
        assert_eq!(per_record(0, 0), Some(1e-4));
        assert_eq!(per_record(1, 0), Some(1e-4));
        assert_eq!(per_record(1, 1), None, "blackwidow has no 10M run");
        let rss = &charts[1];
        assert_eq!(rss.series[1].values[0].map(|f| f.value), Some(256.0));
        let svgs = scale_svgs(&parse_runs(RUNS).unwrap()).unwrap();
        assert_eq!(svgs[1].0, "scale_peak_rss");
        assert!(svgs[1].1.contains("10M records"));
    }
}
