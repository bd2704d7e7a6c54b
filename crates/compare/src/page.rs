//! `report.html`: one self-contained page (inline SVG and CSS, no script,
//! nothing fetched) with the run's settings and machine, the goals, every
//! chart beside its table, and notes on where the differences come from.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::charts::{color_of, Drawn};
use super::report::{settings_line, table_set, GoalStatus, Report, Table};

/// Where a difference comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// The on-disk layout of the real system the format reproduces.
    Layout,
    /// redcodec's own code (engine, codecs).
    Code,
}

impl Origin {
    fn label(self) -> &'static str {
        match self {
            Origin::Layout => "layout",
            Origin::Code => "our code",
        }
    }
}

const STYLE: &str = r"
body { font: 14px/1.45 sans-serif; color: #222; margin: 24px 32px; }
h1 { font-size: 24px; margin: 0 0 8px; }
h2 { font-size: 18px; margin: 32px 0 10px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
dl.settings { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0; }
dl.settings dt { color: #555; }
dl.settings dd { margin: 0; }
.pair { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
figure.chart { margin: 0; flex: none; }
.table { flex: 1 1 420px; min-width: min-content; overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 6px; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
th { background: #f4f4f4; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 6px; }
.status { display: inline-block; padding: 0 8px; border-radius: 9px; font-size: 12px; white-space: nowrap; }
.status.met { background: #d8f0e0; color: #14532d; }
.status.not_met { background: #fbe0d6; color: #7c2d12; }
.status.within_noise { background: #ececec; color: #333; }
.summary { margin: 0 0 12px; }
.summary .status { margin-right: 8px; font-size: 13px; }
ul.notes { margin: 10px 0 0; padding-left: 18px; max-width: 1100px; }
ul.notes li { margin: 4px 0; }
.origin { display: inline-block; min-width: 64px; font-size: 12px; font-weight: 600; }
.origin.layout { color: #0b5394; }
.origin.code { color: #7c2d12; }
";

fn status_class(s: GoalStatus) -> &'static str {
    match s {
        GoalStatus::Met => "met",
        GoalStatus::NotMet => "not_met",
        GoalStatus::WithinNoise => "within_noise",
    }
}

fn table(t: &Table) -> Markup {
    html! {
        table {
            thead { tr { @for h in &t.header { th { (h) } } } }
            tbody {
                @for row in &t.rows {
                    tr {
                        @for (i, cell) in row.iter().enumerate() {
                            @if i >= t.right_from { td.num { (cell) } } @else { td { (cell) } }
                        }
                    }
                }
            }
        }
    }
}

fn notes(notes: &[(Origin, String)]) -> Markup {
    html! {
        @if !notes.is_empty() {
            ul.notes {
                @for (origin, text) in notes {
                    li {
                        span class={ "origin " (if *origin == Origin::Layout { "layout" } else { "code" }) } {
                            (origin.label())
                        }
                        " " (text)
                    }
                }
            }
        }
    }
}

/// The notes on each chart: which differences the layouts explain, which
/// our code does.
fn notes_of(report: &Report, id: &str) -> Vec<(Origin, String)> {
    let names = |pred: &dyn Fn(&super::format_run::FormatResult) -> bool| {
        report
            .formats
            .iter()
            .filter(|f| pred(f))
            .map(|f| f.format.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let has = |name: &str| report.formats.iter().any(|f| f.format == name);
    let mut out = Vec::new();
    match id {
        "ops_per_sec" | "ratio_to_raw" => {
            out.push((
                Origin::Code,
                "SET and GET: every format stores a string as one record, as raw RocksDB does; \
                 the gap to raw put and get is the engine's work per command (parsing, dispatch, \
                 building and decoding the metadata key) and the longer key and value header each \
                 format writes."
                    .to_string(),
            ));
            out.push((
                Origin::Layout,
                "Collection commands read the collection's metadata record before touching an \
                 element, so they pay at least two RocksDB operations where raw put and get pay one."
                    .to_string(),
            ));
            if has("nemo") {
                out.push((
                    Origin::Layout,
                    "nemo's LINDEX walks linked list nodes from the nearer end: its cost grows with \
                     the list, where the other formats seek one element by index."
                        .to_string(),
                ));
            }
            if has("ardb") {
                out.push((
                    Origin::Layout,
                    "ardb's collections pay for ardb.comparator, which decodes both keys on every \
                     memtable and SST comparison."
                        .to_string(),
                ));
            }
        }
        "own_set" => {
            out.push((
                Origin::Layout,
                "A new field or member costs two point reads (metadata, then the element, to \
                 count what is new) and a two-record batch, where SET is one blind put."
                    .to_string(),
            ));
            if has("ardb") {
                out.push((
                    Origin::Layout,
                    "ardb's ZADD writes three records (score, sort key, metadata with the \
                     min and max members)."
                        .to_string(),
                ));
            }
        }
        "bytes_per_element" | "records_per_element" => {
            let per = report
                .formats
                .iter()
                .map(|f| format!("{} {:.2}", f.format, f.space.records_per_element()))
                .collect::<Vec<_>>()
                .join(", ");
            out.push((
                Origin::Layout,
                format!(
                    "Records per element ({per}) and their key and value headers are set by each \
                     real system's layout; the baseline holds string keys only."
                ),
            ));
        }
        "write_amp" => out.push((
            Origin::Layout,
            "Bytes RocksDB writes to SST files by flushes and compactions follow from the records \
             each layout writes and their sizes; the engine adds no write of its own."
                .to_string(),
        )),
        "del_big_hash" => {
            let versioned = names(&|f| f.version_based);
            let per_element = names(&|f| !f.version_based);
            if !versioned.is_empty() {
                out.push((
                    Origin::Layout,
                    format!(
                        "{versioned}: a DEL drops or resets the metadata record only; compaction \
                         removes the elements later, so the time does not grow with the hash."
                    ),
                ));
            }
            if !per_element.is_empty() {
                out.push((
                    Origin::Layout,
                    format!(
                        "{per_element}: a DEL removes every element record, so its time grows \
                         with the hash."
                    ),
                ));
            }
        }
        _ => {}
    }
    out
}

/// The table that goes beside chart `id`.
fn table_of<'a>(tables: &'a super::report::Tables, id: &str) -> &'a Table {
    match id {
        "ops_per_sec" => &tables.ops,
        "ratio_to_raw" => &tables.ratio,
        "own_set" => &tables.own_set,
        "bytes_per_element" | "records_per_element" => &tables.space,
        "write_amp" => &tables.write_amp,
        _ => &tables.del,
    }
}

/// The whole page.
pub fn html(report: &Report, charts: &[Drawn]) -> Markup {
    let tables = table_set(report);
    let m = &report.machine;
    let count = |s: GoalStatus| report.goals.iter().filter(|g| g.status == s).count();
    let rounds = report
        .formats
        .iter()
        .any(|f| f.timings.iter().any(|t| t.ops_per_sec_spread.is_some()));
    let del_samples = report
        .formats
        .iter()
        .flat_map(|f| &f.del)
        .map(|d| d.samples)
        .max()
        .unwrap_or(0);
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { "redcodec compare" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "redcodec compare" }
                dl.settings {
                    dt { "workload" } dd { (settings_line(report)) }
                    dt { "formats" } dd {
                        @for f in &report.formats {
                            span.swatch style={ "background:" (color_of(&f.format).to_hex()) } {}
                            (f.format) " "
                        }
                        "— against raw RocksDB, same options, one thread (and two, in the writer-threads table)"
                    }
                    dt { "machine" } dd {
                        (m.cores) " cores"
                        @if let Some(cpu) = &m.cpu { ", " (cpu) }
                        ", " (m.os)
                    }
                    dt { "RocksDB" } dd { (report.raw.rocksdb_version.as_deref().unwrap_or("unknown")) }
                    dt { "date" } dd { (m.date) }
                    dt { "figures" } dd {
                        @if rounds {
                            "medians over the rounds; whiskers span the lowest and highest round"
                        } @else {
                            "one timed pass per command (no spread to show)"
                        }
                        @if del_samples > 1 {
                            "; DEL times are medians of up to " (del_samples)
                            " DELs, whiskers span the fastest and slowest"
                        }
                    }
                }
                section #goals {
                    h2 { "Goals" }
                    p.summary {
                        @for s in [GoalStatus::Met, GoalStatus::NotMet, GoalStatus::WithinNoise] {
                            span class={ "status " (status_class(s)) } { (count(s)) " " (s.label()) }
                        }
                    }
                    table {
                        thead { tr { th { "goal" } th { "measured" } th { "status" } } }
                        tbody {
                            @for g in &report.goals {
                                tr {
                                    td { (g.goal) }
                                    td { (g.measured) }
                                    td { span class={ "status " (status_class(g.status)) } { (g.status.label()) } }
                                }
                            }
                        }
                    }
                }
                @for d in charts {
                    section.metric id=(d.chart.id) {
                        h2 { (d.chart.title) }
                        div.pair {
                            figure.chart id={ "chart-" (d.chart.id) } data-chart=(d.chart.id) {
                                (PreEscaped(&d.svg))
                            }
                            div.table { (table(table_of(&tables, d.chart.id))) }
                        }
                        (notes(&notes_of(report, d.chart.id)))
                    }
                }
                section.metric #scaling {
                    h2 { (tables.scaling.title) }
                    div.table { (table(&tables.scaling)) }
                }
                @if !tables.instructions.rows.is_empty() {
                    section.metric #instructions {
                        h2 { (tables.instructions.title) }
                        div.table { (table(&tables.instructions)) }
                    }
                }
            }
        }
    }
}

trait Hex {
    fn to_hex(&self) -> String;
}

impl Hex for plotters::style::RGBColor {
    fn to_hex(&self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}
