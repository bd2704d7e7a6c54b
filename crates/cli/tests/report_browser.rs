//! `report.html` as a browser shows it: a tiny `redcodec compare` run, its
//! page loaded in headless Chromium with two scripts added (`errors.js`
//! first, `layout.js` last) that report what the browser laid out, read
//! back with `--dump-dom`. Checked: nothing fails or is fetched, every chart
//! has one bar per figure of `report.json`, and no chart's text leaves the
//! chart or overlaps other text. A screenshot of the page is left in the
//! test's output directory (`report_browser/report.png` under Cargo's
//! `CARGO_TARGET_TMPDIR`).
//!
//! Without Chromium (Debian package `chromium`) the test is reported as
//! skipped, or fails when `REDCODEC_REQUIRE_CHROMIUM=1` (as CI sets).

use std::path::Path;
use std::process::{Command, Output};

use redcodec_conformance::skip;

mod common;
use common::tiny_compare;

const ERRORS_JS: &str = include_str!("report_browser/errors.js");
const LAYOUT_JS: &str = include_str!("report_browser/layout.js");
const WIDTH: u32 = 1400;

/// Runs headless Chromium on `page` with `args`, in a fresh profile.
fn headless(chromium: &str, page: &Path, args: &[String]) -> Output {
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .args(args)
    .arg(format!("file://{}", page.display()));
    common::succeeded(&mut cmd, "chromium")
}

/// The number of bars each chart must have, from `report.json`.
fn expected_bars(json: &serde_json::Value) -> Vec<(&'static str, usize)> {
    let formats = json["formats"].as_array().expect("formats");
    let timings: usize = formats
        .iter()
        .map(|f| f["timings"].as_array().expect("timings").len())
        .sum();
    let has = |f: &serde_json::Value, c: &str| {
        f["timings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["command"] == c)
    };
    let own_set = formats
        .iter()
        .filter(|f| has(f, "SET"))
        .map(|f| usize::from(has(f, "HSET")) + usize::from(has(f, "ZADD")))
        .sum();
    let amplified = formats
        .iter()
        .filter(|f| f["write_amp"]["write_amplification"].is_f64())
        .count();
    let dels = formats
        .iter()
        .map(|f| f["del"].as_array().expect("del").len())
        .sum();
    vec![
        ("ops_per_sec", timings),
        ("ratio_to_raw", timings),
        ("own_set", own_set),
        ("bytes_per_element", formats.len()),
        ("records_per_element", formats.len()),
        ("write_amp", amplified),
        ("del_big_hash", dels),
    ]
}

#[test]
fn report_html_renders_whole_in_chromium() {
    // Skipped without chromium, unless it is required.
    let Some(chromium) = skip::CHROMIUM.find("report.html in a browser") else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report_browser");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    tiny_compare(&dir);
    let report = dir.join("report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();

    // The page with the two measuring scripts, beside the original.
    let head = html.find("<head>").expect("<head>") + "<head>".len();
    let body_end = html.rfind("</body>").expect("</body>");
    let checked = format!(
        "{}<script>{ERRORS_JS}</script>{}<script>{LAYOUT_JS}</script>{}",
        &html[..head],
        &html[head..body_end],
        &html[body_end..]
    );
    let check_page = dir.join("report-check.html");
    std::fs::write(&check_page, checked).unwrap();
    let out = headless(
        chromium,
        &check_page,
        &[
            format!("--window-size={WIDTH},1000"),
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            "--dump-dom".into(),
        ],
    );
    let console: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(String::from)
        .collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .rfind("<pre id=\"layout-check\">")
        .expect("layout.js ran and wrote its findings")
        + "<pre id=\"layout-check\">".len();
    let end = start + dom[start..].find("</pre>").expect("</pre>");
    let found = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let found: serde_json::Value = serde_json::from_str(&found).expect("findings are JSON");

    assert_eq!(found["errors"], serde_json::json!([]), "page errors");
    assert_eq!(found["resources"], serde_json::json!([]), "nothing fetched");
    assert_eq!(found["external"], 0, "no external reference");
    assert_eq!(
        found["tables_overflowing"],
        serde_json::json!([]),
        "tables fit"
    );
    let charts = found["charts"].as_array().expect("charts");
    let expected = expected_bars(&json);
    assert_eq!(
        charts
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        expected.iter().map(|(id, _)| *id).collect::<Vec<_>>()
    );
    let formats = json["formats"].as_array().unwrap().len();
    for (chart, (id, bars)) in charts.iter().zip(&expected) {
        assert_eq!(chart["bars"], *bars, "bars of {id}");
        // One colour per format, on every chart.
        assert_eq!(chart["bar_colors"], formats, "colours of {id}");
        assert!(
            chart["texts"].as_array().unwrap().len() > *bars,
            "{id} has labels: {chart}"
        );
        assert_eq!(chart["outside"], serde_json::json!([]), "text outside {id}");
        assert_eq!(
            chart["overlaps"],
            serde_json::json!([]),
            "overlapping text in {id}"
        );
    }

    // The whole page as a person sees it.
    let height = found["height"].as_u64().expect("page height");
    let shot = dir.join("report.png");
    headless(
        chromium,
        &report,
        &[
            format!("--window-size={WIDTH},{height}"),
            format!("--screenshot={}", shot.display()),
        ],
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    eprintln!("screenshot: {}", shot.display());
}
