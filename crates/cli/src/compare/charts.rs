//! SVG bar charts of a report, drawn with plotters' SVG backend only (no
//! system fonts: text is written as SVG `<text>` and laid out with
//! plotters' built-in size estimate, so labels render in any viewer).

use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::report::Report;
use super::workload::STEPS;
use crate::error::CliError;

const COLORS: [RGBColor; 6] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
];

/// One series of a grouped bar chart: a name and one value per category.
struct Series {
    name: String,
    values: Vec<f64>,
}

fn chart_err<E: std::fmt::Display>(e: E) -> CliError {
    super::fail(format!("chart: {e}"))
}

/// A grouped bar chart: one group per category, one bar per series.
fn bars(
    path: &Path,
    title: &str,
    y_desc: &str,
    categories: &[String],
    series: &[Series],
) -> Result<(), CliError> {
    let k = series.len().max(1);
    let slots = k + 1; // bars of a group, then a gap
    let total = categories.len() * slots;
    let width = (160 + total * 22).max(480) as u32;
    let ymax = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.15;
    let root = SVGBackend::new(path, (width, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(chart_err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(110)
        .y_label_area_size(90)
        .build_cartesian_2d((0..total).into_segmented(), 0f64..ymax)
        .map_err(chart_err)?;
    let label_of = |v: &SegmentValue<usize>| -> String {
        match v {
            SegmentValue::CenterOf(x) if x.is_multiple_of(slots) => {
                categories.get(x / slots).cloned().unwrap_or_default()
            }
            _ => String::new(),
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(total + 1)
        .x_label_formatter(&label_of)
        .x_label_style(
            TextStyle::from(
                ("sans-serif", 13)
                    .into_font()
                    .transform(FontTransform::Rotate90),
            )
            .pos(Pos::new(HPos::Left, VPos::Center)),
        )
        .y_desc(y_desc)
        .y_label_formatter(&|y| short(*y))
        .draw()
        .map_err(chart_err)?;
    for (j, s) in series.iter().enumerate() {
        let color = COLORS[j % COLORS.len()];
        chart
            .draw_series(s.values.iter().enumerate().map(|(i, &v)| {
                let x = i * slots + j;
                let v = if v.is_finite() { v } else { 0.0 };
                Rectangle::new(
                    [
                        (SegmentValue::Exact(x), 0.0),
                        (SegmentValue::Exact(x + 1), v),
                    ],
                    color.filled(),
                )
            }))
            .map_err(chart_err)?
            .label(s.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 12, y + 6)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(chart_err)?;
    root.present().map_err(chart_err)?;
    Ok(())
}

/// A figure with at most 3 significant digits and a k/M suffix.
fn short(y: f64) -> String {
    let a = y.abs();
    if a >= 1e6 {
        format!("{:.3}M", y / 1e6)
    } else if a >= 1e3 {
        format!("{:.3}k", y / 1e3)
    } else if a >= 10.0 {
        format!("{y:.0}")
    } else {
        format!("{y:.2}")
    }
}

/// Draws every chart of `report` into `dir`; returns the files written.
pub fn draw(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut files = Vec::new();
    let commands: Vec<String> = STEPS.iter().map(|s| s.name.to_string()).collect();
    let rate = |f: &super::format_run::FormatResult, name: &str| {
        f.timings
            .iter()
            .find(|t| t.command == name)
            .map_or(0.0, super::workload::Timing::ops_per_sec)
    };

    let mut series: Vec<Series> = report
        .formats
        .iter()
        .map(|f| Series {
            name: f.format.clone(),
            values: STEPS.iter().map(|s| rate(f, s.name)).collect(),
        })
        .collect();
    series.push(Series {
        name: "raw rocksdb (put / get)".into(),
        values: STEPS
            .iter()
            .map(|s| report.reference(s.kind).ops_per_sec())
            .collect(),
    });
    let path = dir.join("ops_per_sec.svg");
    bars(&path, "Operations per second", "ops/s", &commands, &series)?;
    files.push(path);

    let series: Vec<Series> = report
        .formats
        .iter()
        .map(|f| Series {
            name: f.format.clone(),
            values: STEPS
                .iter()
                .map(|s| rate(f, s.name) / report.reference(s.kind).ops_per_sec())
                .collect(),
        })
        .collect();
    let path = dir.join("ratio_to_raw.svg");
    bars(
        &path,
        "Ratio to raw RocksDB put (writes) / get (reads)",
        "× raw",
        &commands,
        &series,
    )?;
    files.push(path);

    let mut stores: Vec<String> = report.formats.iter().map(|f| f.format.clone()).collect();
    stores.push("raw rocksdb".into());
    let mut spaces: Vec<&super::measure::Space> = report.formats.iter().map(|f| &f.space).collect();
    spaces.push(&report.raw.space);
    let path = dir.join("bytes_per_element.svg");
    bars(
        &path,
        "SST bytes per element after full compaction",
        "bytes",
        &stores,
        &[Series {
            name: "bytes / element".into(),
            values: spaces.iter().map(|s| s.bytes_per_element()).collect(),
        }],
    )?;
    files.push(path);
    let path = dir.join("records_per_element.svg");
    bars(
        &path,
        "RocksDB records per element after full compaction",
        "records",
        &stores,
        &[Series {
            name: "records / element".into(),
            values: spaces.iter().map(|s| s.records_per_element()).collect(),
        }],
    )?;
    files.push(path);

    let mut labels = Vec::new();
    let mut values = Vec::new();
    for f in &report.formats {
        for d in &f.del {
            labels.push(format!("{} {}", f.format, d.fields));
            values.push(d.seconds * 1e6);
        }
    }
    let path = dir.join("del_big_hash.svg");
    bars(
        &path,
        "DEL of a hash (median)",
        "µs",
        &labels,
        &[Series {
            name: "DEL time (µs)".into(),
            values,
        }],
    )?;
    files.push(path);
    Ok(files)
}
