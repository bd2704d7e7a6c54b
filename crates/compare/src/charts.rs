//! Horizontal bar charts of a report, drawn with plotters' SVG backend into
//! strings: written as `.svg` files and inlined in `report.html`.
//!
//! One row per command (or store), one bar per format in the format's own
//! colour on every chart, raw RocksDB as a black reference line, goals as
//! dashed lines, spreads (min–max) as whiskers when the figures have them.
//! A chart whose values span more than [`LOG_SPAN`]× uses a logarithmic
//! scale. The layout reserves room for every label from a conservative
//! width estimate (no fonts are read), so nothing is clipped.

use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use redcodec_formats::Format;

use super::figure::Figure;
use super::format_run::FormatResult;
use super::measure::Space;
use super::report::{timing, Against, Report, OWN_SET_GOALS};
use super::workload::STEPS;
use crate::error::CompareError;

/// Values spanning more than this factor are drawn on a logarithmic scale.
pub const LOG_SPAN: f64 = 20.0;

/// Colours of the formats, in [`Format::ALL`] order (Okabe–Ito, readable
/// with colour-blindness), then for any further series.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x00, 0x72, 0xb2),
    RGBColor(0xe6, 0x9f, 0x00),
    RGBColor(0x00, 0x9e, 0x73),
    RGBColor(0xcc, 0x79, 0xa7),
    RGBColor(0x56, 0xb4, 0xe9),
    RGBColor(0x8c, 0x56, 0x4b),
];
const GOAL: RGBColor = RGBColor(0xd5, 0x5e, 0x00);
const REFERENCE: RGBColor = BLACK;
const WHISKER: RGBColor = RGBColor(0x33, 0x33, 0x33);
const GRID: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);

/// Chart width, in pixels.
const WIDTH: u32 = 660;
const BAR: i32 = 12;
const BAR_GAP: i32 = 2;
const ROW_PAD: i32 = 7;
const LEFT_MARGIN: u32 = 8;
const RIGHT_MARGIN: u32 = 26;
const X_LABEL_AREA: u32 = 48;
const VALUE_GAP: f64 = 5.0;

/// The colour of the `i`-th series of a chart whose series are not
/// formats.
pub fn nth_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The colour of `format` on every chart.
pub fn color_of(format: &str) -> RGBColor {
    let i = Format::ALL
        .iter()
        .position(|f| f.name() == format)
        .unwrap_or(Format::ALL.len());
    PALETTE[i % PALETTE.len()]
}

/// How a chart writes its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Operations per second.
    Rate,
    /// A ratio (`0.85×`).
    Ratio,
    /// Bytes.
    Bytes,
    /// A plain number.
    Count,
    /// Seconds, written in µs, ms or s.
    Seconds,
}

impl Unit {
    /// `v` with at most three significant digits and the unit.
    pub fn label(self, v: f64) -> String {
        match self {
            Unit::Rate => {
                if v >= 1e6 {
                    format!("{}M", sig(v / 1e6))
                } else if v >= 1e3 {
                    format!("{}k", sig(v / 1e3))
                } else {
                    sig(v)
                }
            }
            Unit::Ratio => format!("{}×", sig(v)),
            Unit::Bytes => format!("{} B", sig(v)),
            Unit::Count => sig(v),
            Unit::Seconds => {
                if v >= 1.0 {
                    format!("{} s", sig(v))
                } else if v >= 1e-3 {
                    format!("{} ms", sig(v * 1e3))
                } else {
                    format!("{} µs", sig(v * 1e6))
                }
            }
        }
    }
}

/// At most three significant digits, no trailing zeros.
fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = 2 - v.abs().log10().floor() as i32;
    let text = format!("{:.*}", digits.max(0) as usize, v);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// One series of a chart: a format, its colour, one figure per row.
#[derive(Clone, Debug)]
pub struct Series {
    /// The series' name in the legend.
    pub name: String,
    /// Its colour.
    pub color: RGBColor,
    /// One figure per row; `None` draws no bar.
    pub values: Vec<Option<Figure>>,
}

/// A horizontal bar chart.
#[derive(Clone, Debug)]
pub struct Chart {
    /// File stem of the SVG, and the chart's id in `report.html`.
    pub id: &'static str,
    /// Title drawn above the chart.
    pub title: String,
    /// What the values are (the x axis' title, without the scale).
    pub axis: String,
    /// How values are written.
    pub unit: Unit,
    /// Row labels, top to bottom.
    pub rows: Vec<String>,
    /// The bars: one series per format.
    pub series: Vec<Series>,
    /// Raw RocksDB's figure per row, drawn as a reference line, and its
    /// name in the legend.
    pub reference: Option<(String, Vec<Option<f64>>)>,
    /// A goal per row (empty: none), drawn as a dashed line, and its name
    /// in the legend.
    pub goals: Option<(String, Vec<Option<f64>>)>,
}

/// A rough upper bound of the width of `text` at `px` pixels in a sans-serif
/// font (wide enough for DejaVu Sans, the widest common default).
pub fn text_width(text: &str, px: f64) -> f64 {
    text.chars()
        .map(|c| match c {
            'A'..='Z' | 'm' | 'w' | '–' | '—' | 'µ' => 0.82,
            '0'..='9' | 'a'..='z' | '×' | '≥' => 0.66,
            ' ' | '.' | ',' | ':' | '(' | ')' | '/' | '\'' | '-' => 0.4,
            _ => 0.75,
        })
        .sum::<f64>()
        * px
}

/// A plotters font of `px` pixels (plotters writes `size / 1.24` to SVG).
fn font(px: f64) -> FontDesc<'static> {
    ("sans-serif", px * 1.24).into_font()
}

fn chart_err<E: std::fmt::Display>(e: E) -> CompareError {
    crate::error::fail(format!("chart: {e}"))
}

/// One row's bars, in pixels from the plot's top.
struct RowLayout {
    top: i32,
    bottom: i32,
    /// `(series, centre)` of each bar.
    bars: Vec<(usize, i32)>,
}

const TITLE_PX: f64 = 15.0;
const LABEL_PX: f64 = 13.0;
const VALUE_PX: f64 = 11.0;
const LEGEND_PX: f64 = 12.0;

impl Chart {
    /// Whether the values span more than [`LOG_SPAN`]×.
    pub fn logarithmic(&self) -> bool {
        let values: Vec<f64> = self.figures().map(|f| f.value).collect();
        let max = values.iter().copied().fold(0.0, f64::max);
        let min = values
            .iter()
            .copied()
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        max > 0.0 && max / min > LOG_SPAN
    }

    fn figures(&self) -> impl Iterator<Item = Figure> + '_ {
        self.series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
    }

    fn lines(&self) -> impl Iterator<Item = f64> + '_ {
        [&self.reference, &self.goals]
            .into_iter()
            .flatten()
            .flat_map(|(_, v)| v.iter().flatten().copied())
    }

    fn layout(&self) -> (Vec<RowLayout>, i32) {
        let mut rows = Vec::new();
        let mut y = 0;
        for r in 0..self.rows.len() {
            let top = y;
            y += ROW_PAD;
            let mut bars = Vec::new();
            for (j, s) in self.series.iter().enumerate() {
                if s.values.get(r).copied().flatten().is_some() {
                    bars.push((j, y + BAR / 2));
                    y += BAR + BAR_GAP;
                }
            }
            if bars.is_empty() {
                y += BAR;
            } else {
                y -= BAR_GAP;
            }
            y += ROW_PAD;
            rows.push(RowLayout {
                top,
                bottom: y,
                bars,
            });
        }
        (rows, y)
    }

    /// The legend's entries: a swatch kind and a name.
    fn legend(&self) -> Vec<(Swatch, String)> {
        let mut out: Vec<(Swatch, String)> = self
            .series
            .iter()
            .filter(|s| s.values.iter().any(Option::is_some))
            .map(|s| (Swatch::Fill(s.color), s.name.clone()))
            .collect();
        if let Some((name, _)) = &self.reference {
            out.push((Swatch::Reference, name.clone()));
        }
        if let Some((name, _)) = &self.goals {
            out.push((Swatch::Goal, name.clone()));
        }
        if self.figures().any(|f| f.spread.is_some()) {
            out.push((Swatch::Whisker, "min–max".into()));
        }
        out
    }

    /// The legend laid out in lines within `width`: `(x, line, swatch, name)`.
    fn legend_layout(&self, width: f64) -> (Vec<(f64, usize, Swatch, String)>, usize) {
        let mut out = Vec::new();
        let (mut x, mut line) = (8.0, 0);
        for (swatch, name) in self.legend() {
            let w = 22.0 + text_width(&name, LEGEND_PX) + 12.0;
            if x > 8.0 && x + w > width - 8.0 {
                x = 8.0;
                line += 1;
            }
            out.push((x, line, swatch, name));
            x += w;
        }
        let lines = if out.is_empty() { 0 } else { line + 1 };
        (out, lines)
    }

    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String, CompareError> {
        let label_w = self
            .rows
            .iter()
            .map(|r| text_width(r, LABEL_PX))
            .fold(0.0, f64::max)
            + 16.0;
        let width = f64::from(WIDTH).max(text_width(&self.title, TITLE_PX) + 16.0);
        let (legend, legend_lines) = self.legend_layout(width);
        let header = 30.0 + legend_lines as f64 * 20.0 + 6.0;
        let (rows, plot_h) = self.layout();
        let height = header + f64::from(plot_h + 8) + f64::from(X_LABEL_AREA) + 8.0;
        let plot_w = width - f64::from(LEFT_MARGIN + RIGHT_MARGIN) - label_w.ceil();
        let size = (width.ceil() as u32, height.ceil() as u32);

        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
            root.fill(&WHITE).map_err(chart_err)?;
            let (top, body) = root.split_vertically(header.round() as u32);
            top.draw(&Text::new(
                self.title.clone(),
                (8, 8),
                TextStyle::from(font(TITLE_PX)).pos(Pos::new(HPos::Left, VPos::Top)),
            ))
            .map_err(chart_err)?;
            for (x, line, swatch, name) in &legend {
                let y = 30 + *line as i32 * 20 + 8;
                draw_swatch(&top, *swatch, (*x as i32, y))?;
                top.draw(&Text::new(
                    name.clone(),
                    (*x as i32 + 22, y),
                    TextStyle::from(font(LEGEND_PX)).pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(chart_err)?;
            }
            let frame = Frame {
                rows: &rows,
                plot_h,
                label_w: label_w.ceil() as u32,
            };
            if self.logarithmic() {
                let (lo, hi) = self.log_range(plot_w);
                let ticks = log_ticks(lo, hi);
                self.plot(&body, (lo..hi).log_scale().with_key_points(ticks), &frame)?;
            } else {
                let hi = self.linear_max(plot_w);
                let ticks = RangedCoordf64::from(0.0..hi).key_points(6usize);
                let step = ticks.get(1).zip(ticks.first()).map_or(hi, |(b, a)| b - a);
                self.plot(&body, (0.0..hi).step(step), &frame)?;
            }
            root.present().map_err(chart_err)?;
        }
        Ok(out)
    }

    /// Room for a value's label to the right of its bar, in pixels.
    fn label_room(&self, f: &Figure) -> f64 {
        VALUE_GAP + text_width(&self.unit.label(f.value), VALUE_PX) + 4.0
    }

    fn linear_max(&self, plot_w: f64) -> f64 {
        let mut hi = self.lines().fold(0.0, f64::max) * 1.08;
        for f in self.figures() {
            let end = f.hi().max(f.value).max(0.0);
            hi = hi.max(end * plot_w / (plot_w - self.label_room(&f)).max(1.0));
        }
        if hi > 0.0 {
            hi
        } else {
            1.0
        }
    }

    fn log_range(&self, plot_w: f64) -> (f64, f64) {
        let positive = self
            .figures()
            .flat_map(|f| [f.value, f.lo()])
            .chain(self.lines())
            .filter(|v| *v > 0.0);
        let min = positive.fold(f64::INFINITY, f64::min);
        let lo = 10f64.powf((min / 1.5).log10().floor());
        let mut hi_ln = (self.lines().fold(lo, f64::max) * 1.15).ln();
        for f in self.figures() {
            let end = f.hi().max(f.value).max(lo);
            let need =
                lo.ln() + (end.ln() - lo.ln()) * plot_w / (plot_w - self.label_room(&f)).max(1.0);
            hi_ln = hi_ln.max(need);
        }
        (lo, hi_ln.exp())
    }

    fn plot<X>(
        &self,
        area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        x: X,
        frame: &Frame<'_>,
    ) -> Result<(), CompareError>
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let lo = x.range().start;
        let log = self.logarithmic();
        let (rows, plot_h) = (frame.rows, frame.plot_h);
        let centres: Vec<i32> = rows
            .iter()
            .map(|r| plot_h - (r.top + r.bottom) / 2)
            .collect();
        let row_of = |y: i32| {
            centres
                .iter()
                .position(|c| *c == y)
                .map_or(String::new(), |i| self.rows[i].clone())
        };
        let unit = self.unit;
        let axis = if log {
            format!("{} (logarithmic scale)", self.axis)
        } else {
            self.axis.clone()
        };
        let mut chart = ChartBuilder::on(area)
            .margin_left(LEFT_MARGIN)
            .margin_right(RIGHT_MARGIN)
            .margin_top(0)
            .margin_bottom(8)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(frame.label_w)
            .build_cartesian_2d(x, (0..plot_h).with_key_points(centres.clone()))
            .map_err(chart_err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .x_label_formatter(&|v| unit.label(*v))
            .y_label_formatter(&|y| row_of(*y))
            .x_label_style(font(12.0))
            .y_label_style(font(LABEL_PX))
            .x_desc(axis)
            .axis_desc_style(font(12.0))
            .draw()
            .map_err(chart_err)?;

        // Bars and whiskers, then the reference and goal lines over them,
        // then the value labels over everything.
        let mut labels = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            for &(j, centre) in &row.bars {
                let s = &self.series[j];
                let Some(f) = s.values[r] else { continue };
                let y = plot_h - centre;
                let end = if f.value > lo { f.value } else { lo };
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(lo, y - BAR / 2), (end, y + BAR / 2)],
                        s.color.filled(),
                    )))
                    .map_err(chart_err)?;
                let mut label_at = end;
                if let Some(spread) = f.spread {
                    let (a, b) = (spread.min.max(lo), spread.max.max(lo));
                    let style = WHISKER.stroke_width(1);
                    chart
                        .draw_series([
                            PathElement::new(vec![(a, y), (b, y)], style),
                            PathElement::new(vec![(a, y - 4), (a, y + 4)], style),
                            PathElement::new(vec![(b, y - 4), (b, y + 4)], style),
                        ])
                        .map_err(chart_err)?;
                    label_at = label_at.max(b);
                }
                labels.push((label_at, y, f.value));
            }
        }

        // Reference and goal lines: one line over the whole plot when every
        // row has the same figure, else one per row.
        for (lines, color, dashed) in [
            (&self.reference, REFERENCE, false),
            (&self.goals, GOAL, true),
        ] {
            let Some((_, values)) = lines else { continue };
            let segments: Vec<(f64, i32, i32)> = if values.iter().all(|v| *v == values[0]) {
                values[0].map(|v| (v, 0, plot_h)).into_iter().collect()
            } else {
                rows.iter()
                    .zip(values)
                    .filter_map(|(row, v)| {
                        v.map(|v| (v, plot_h - row.bottom + 2, plot_h - row.top - 2))
                    })
                    .collect()
            };
            for (v, y0, y1) in segments {
                if dashed {
                    chart
                        .draw_series(std::iter::once(DashedPathElement::new(
                            vec![(v, y0), (v, y1)],
                            5,
                            3,
                            color.stroke_width(2),
                        )))
                        .map_err(chart_err)?;
                } else {
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(v, y0), (v, y1)],
                            color.stroke_width(2),
                        )))
                        .map_err(chart_err)?;
                }
            }
        }
        for (label_at, y, value) in labels {
            let label = self.unit.label(value);
            let w = text_width(&label, VALUE_PX) as i32;
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((label_at, y))
                        // A white ground keeps the label readable over a reference or goal line.
                        + Rectangle::new(
                            [(VALUE_GAP as i32 - 2, -BAR / 2 + 1), (VALUE_GAP as i32 + w, BAR / 2 - 1)],
                            WHITE.mix(0.85).filled(),
                        )
                        + Text::new(
                            label,
                            (VALUE_GAP as i32, 0),
                            TextStyle::from(font(VALUE_PX))
                                .pos(Pos::new(HPos::Left, VPos::Center)),
                        ),
                ))
                .map_err(chart_err)?;
        }
        Ok(())
    }
}

/// Where a chart's rows go.
struct Frame<'a> {
    rows: &'a [RowLayout],
    plot_h: i32,
    label_w: u32,
}

/// A legend entry's sample.
#[derive(Clone, Copy, Debug)]
enum Swatch {
    Fill(RGBColor),
    Reference,
    Goal,
    Whisker,
}

fn draw_swatch(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    swatch: Swatch,
    (x, y): (i32, i32),
) -> Result<(), CompareError> {
    match swatch {
        // A disc, not a rectangle: the chart's only filled rectangles are bars.
        Swatch::Fill(color) => area.draw(&Circle::new((x + 8, y), 6, color.filled())),
        Swatch::Reference => area.draw(&PathElement::new(
            vec![(x + 8, y - 7), (x + 8, y + 7)],
            REFERENCE.stroke_width(2),
        )),
        Swatch::Goal => area.draw(&DashedPathElement::new(
            vec![(x + 8, y - 7), (x + 8, y + 7)],
            4,
            2,
            GOAL.stroke_width(2),
        )),
        Swatch::Whisker => area.draw(&PathElement::new(
            vec![
                (x, y - 4),
                (x, y + 4),
                (x, y),
                (x + 16, y),
                (x + 16, y - 4),
                (x + 16, y + 4),
            ],
            WHISKER.stroke_width(1),
        )),
    }
    .map_err(chart_err)
}

/// Powers of ten from `lo` to `hi`, with 2× and 5× between them when there
/// are fewer than three.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let powers: Vec<f64> = (lo.log10().floor() as i32..=hi.log10().ceil() as i32)
        .map(|e| 10f64.powi(e))
        .collect();
    let mut ticks: Vec<f64> = if powers.iter().filter(|p| **p >= lo && **p <= hi).count() >= 3 {
        powers
    } else {
        powers.iter().flat_map(|p| [*p, 2.0 * p, 5.0 * p]).collect()
    };
    ticks.retain(|t| *t >= lo * 0.999 && *t <= hi * 1.001);
    ticks
}

fn format_series(
    report: &Report,
    value: impl Fn(&FormatResult) -> Vec<Option<Figure>>,
) -> Vec<Series> {
    report
        .formats
        .iter()
        .map(|f| Series {
            name: f.format.clone(),
            color: color_of(&f.format),
            values: value(f),
        })
        .collect()
}

/// One bar per store row: format `i`'s figure on row `i`.
fn per_store(report: &Report, value: impl Fn(&FormatResult) -> Option<Figure>) -> Vec<Series> {
    let n = report.formats.len();
    report
        .formats
        .iter()
        .enumerate()
        .map(|(i, f)| Series {
            name: f.format.clone(),
            color: color_of(&f.format),
            values: (0..n)
                .map(|r| if r == i { value(f) } else { None })
                .collect(),
        })
        .collect()
}

/// The charts of a report, in page order.
pub fn charts(report: &Report) -> Vec<Chart> {
    let commands: Vec<String> = STEPS.iter().map(|s| s.name.to_string()).collect();
    let stores: Vec<String> = report.formats.iter().map(|f| f.format.clone()).collect();
    let ops = Chart {
        id: "ops_per_sec",
        title: "Operations per second (single thread)".into(),
        axis: "operations per second".into(),
        unit: Unit::Rate,
        rows: commands.clone(),
        series: format_series(report, |f| {
            STEPS
                .iter()
                .map(|s| timing(f, s.name).map(super::workload::Timing::rate))
                .collect()
        }),
        reference: Some((
            "raw RocksDB put (writes) / get (reads)".into(),
            STEPS
                .iter()
                .map(|s| Some(report.reference(s.kind).ops_per_sec()))
                .collect(),
        )),
        goals: None,
    };
    let raw_goal = |command: &str| {
        report
            .goals
            .iter()
            .find(|g| g.against == Against::Raw && g.command == command)
            .map(|g| g.threshold)
    };
    let ratio = Chart {
        id: "ratio_to_raw",
        title: "Ratio to raw RocksDB: put for writes, get for reads".into(),
        axis: "× raw RocksDB".into(),
        unit: Unit::Ratio,
        rows: commands,
        series: format_series(report, |f| {
            STEPS
                .iter()
                .map(|s| timing(f, s.name).map(|t| t.ratio(report.reference(s.kind))))
                .collect()
        }),
        reference: Some(("raw RocksDB = 1×".into(), vec![Some(1.0); STEPS.len()])),
        goals: report
            .goals
            .iter()
            .any(|g| g.against == Against::Raw)
            .then(|| {
                (
                    "goals".into(),
                    STEPS.iter().map(|s| raw_goal(s.name)).collect(),
                )
            }),
    };
    let own_set = Chart {
        id: "own_set",
        title: "Collection writes against the format's own SET".into(),
        axis: "× the format's SET".into(),
        unit: Unit::Ratio,
        rows: OWN_SET_GOALS
            .iter()
            .map(|(c, _)| format!("{c} / SET"))
            .collect(),
        series: format_series(report, |f| {
            OWN_SET_GOALS
                .iter()
                .map(|(c, _)| {
                    timing(f, c)
                        .zip(timing(f, "SET"))
                        .map(|(c, set)| c.ratio(set))
                })
                .collect()
        }),
        reference: None,
        goals: Some((
            "goal (every format)".into(),
            OWN_SET_GOALS.iter().map(|(_, t)| Some(*t)).collect(),
        )),
    };
    // A figure per element of the compacted store, against raw RocksDB's
    // (the axis names it as the id does).
    let per_element = |id, what: &str, unit, figure: fn(&Space) -> f64, raw: &str| Chart {
        id,
        title: format!("{what} per element after a full compaction"),
        axis: id.replace('_', " "),
        unit,
        rows: stores.clone(),
        series: per_store(report, |f| Some(Figure::one(figure(&f.space)))),
        reference: Some((
            raw.into(),
            vec![Some(figure(&report.raw.space)); stores.len()],
        )),
        goals: None,
    };
    let bytes = per_element(
        "bytes_per_element",
        "SST bytes",
        Unit::Bytes,
        Space::bytes_per_element,
        "raw RocksDB (string keys only)",
    );
    let records = per_element(
        "records_per_element",
        "RocksDB records",
        Unit::Count,
        Space::records_per_element,
        "raw RocksDB (one record per key)",
    );
    let amp = Chart {
        id: "write_amp",
        title: "Write amplification (SST bytes written / logical bytes)".into(),
        axis: "write amplification".into(),
        unit: Unit::Ratio,
        rows: stores,
        series: per_store(report, |f| f.write_amp.amplification().map(Figure::one)),
        reference: report.raw.write_amp.amplification().map(|a| {
            (
                "raw RocksDB (string keys only)".to_string(),
                vec![Some(a); report.formats.len()],
            )
        }),
        goals: None,
    };
    let mut del_sizes: Vec<u64> = report
        .formats
        .iter()
        .flat_map(|f| f.del.iter().map(|d| d.fields))
        .collect();
    del_sizes.sort_unstable();
    del_sizes.dedup();
    let del = Chart {
        id: "del_big_hash",
        title: "DEL of a hash (median time)".into(),
        axis: "time of one DEL".into(),
        unit: Unit::Seconds,
        rows: del_sizes
            .iter()
            .map(|n| format!("{} fields", super::report::rate(*n as f64)))
            .collect(),
        series: format_series(report, |f| {
            del_sizes
                .iter()
                .map(|n| {
                    f.del
                        .iter()
                        .find(|d| d.fields == *n)
                        .map(super::format_run::DelResult::time)
                })
                .collect()
        }),
        reference: None,
        goals: None,
    };
    vec![ops, ratio, own_set, bytes, records, amp, del]
}

/// A chart and its SVG.
pub struct Drawn {
    /// The chart.
    pub chart: Chart,
    /// Its SVG document.
    pub svg: String,
}

/// Draws every chart of `report`, writes each as `<id>.svg` into `dir`;
/// returns the charts drawn and the files written.
pub fn draw(report: &Report, dir: &Path) -> Result<(Vec<Drawn>, Vec<PathBuf>), CompareError> {
    let mut drawn = Vec::new();
    let mut files = Vec::new();
    for chart in charts(report) {
        let svg = chart.svg()?;
        let path = dir.join(format!("{}.svg", chart.id));
        std::fs::write(&path, &svg)?;
        files.push(path);
        drawn.push(Drawn { chart, svg });
    }
    Ok((drawn, files))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_three_significant_digits() {
        assert_eq!(Unit::Rate.label(412_345.0), "412k");
        assert_eq!(Unit::Rate.label(1_234_567.0), "1.23M");
        assert_eq!(Unit::Ratio.label(0.0034), "0.0034×");
        assert_eq!(Unit::Ratio.label(1.0), "1×");
        assert_eq!(Unit::Seconds.label(3.2e-6), "3.2 µs");
        assert_eq!(Unit::Seconds.label(0.125), "125 ms");
        assert_eq!(Unit::Bytes.label(41.26), "41.3 B");
    }

    #[test]
    fn whiskers_only_when_a_figure_has_a_spread() {
        let chart = |spread| Chart {
            id: "t",
            title: "t".into(),
            axis: "x".into(),
            unit: Unit::Count,
            rows: vec!["SET".into()],
            series: vec![Series {
                name: "kvrocks".into(),
                color: color_of("kvrocks"),
                values: vec![Some(Figure { value: 2.0, spread })],
            }],
            reference: None,
            goals: None,
        };
        let plain = chart(None).svg().unwrap();
        let spread = Some(super::super::figure::Spread { min: 1.0, max: 3.0 });
        let whiskered = chart(spread).svg().unwrap();
        assert!(!plain.contains("min–max"));
        assert!(whiskered.contains("min–max"));
        // The whisker and its two caps, and the legend's sample.
        let whisker = "stroke=\"#333333\"";
        assert_eq!(plain.matches(whisker).count(), 0);
        assert_eq!(whiskered.matches(whisker).count(), 4);
    }

    #[test]
    fn a_span_over_20_is_logarithmic() {
        let chart = |values: &[f64]| Chart {
            id: "t",
            title: "t".into(),
            axis: "x".into(),
            unit: Unit::Count,
            rows: values.iter().map(ToString::to_string).collect(),
            series: vec![Series {
                name: "kvrocks".into(),
                color: color_of("kvrocks"),
                values: values.iter().map(|v| Some(Figure::one(*v))).collect(),
            }],
            reference: None,
            goals: None,
        };
        assert!(!chart(&[1.0, 20.0]).logarithmic());
        assert!(chart(&[1.0, 21.0]).logarithmic());
    }

    #[test]
    fn log_ticks_are_decades_or_1_2_5() {
        assert_eq!(log_ticks(1.0, 1000.0), vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(log_ticks(0.1, 3.0), vec![0.1, 0.2, 0.5, 1.0, 2.0]);
    }
}
