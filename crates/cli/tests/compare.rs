//! `redcodec compare` on a tiny workload: the tables are printed and every
//! file it writes exists and parses (`report_browser.rs` renders the page).
//! No timing is asserted.

mod common;
use common::{assert_contains, tiny_compare};

#[test]
fn compare_prints_tables_and_writes_csv_json_svg_html() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = tiny_compare(out_dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for title in [
        "#### Operations per second (single thread)",
        "#### Ratio to raw RocksDB (put for writes, get for reads)",
        "#### Space after a full compaction",
        "#### Write amplification",
        "#### DEL of a big hash",
        "#### Writer threads: SET with 1 and 2 threads",
        "#### Performance goals",
    ] {
        assert!(stdout.contains(title), "no table {title:?} in:\n{stdout}");
    }
    // Progress goes to stderr only when it is a terminal: here it is a pipe.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let dir = out_dir.path();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap())
            .expect("report.json parses");
    let formats: Vec<String> = json["formats"]
        .as_array()
        .expect("formats")
        .iter()
        .map(|f| f["format"].as_str().expect("format name").to_string())
        .collect();
    assert!(formats.iter().any(|f| f == "kvrocks"), "{formats:?}");
    assert!(json["raw"]["put"]["ops_per_sec"].as_f64().unwrap() > 0.0);
    // Three interleaved rounds: every timing keeps its three rates, and
    // reports their median with the slowest and fastest.
    let timings = json["formats"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["timings"].as_array().unwrap())
        .chain([
            &json["raw"]["put"],
            &json["raw"]["get"],
            &json["raw"]["scan"],
        ]);
    for t in timings {
        let mut rounds: Vec<f64> = t["rounds"]
            .as_array()
            .unwrap_or_else(|| panic!("no rounds in {t}"))
            .iter()
            .map(|r| r.as_f64().unwrap())
            .collect();
        assert_eq!(rounds.len(), 3, "{t}");
        rounds.sort_by(f64::total_cmp);
        assert_eq!(t["ops_per_sec"].as_f64().unwrap(), rounds[1], "{t}");
        assert_eq!(t["ops_per_sec_spread"]["min"].as_f64().unwrap(), rounds[0]);
        assert_eq!(t["ops_per_sec_spread"]["max"].as_f64().unwrap(), rounds[2]);
    }
    // One writer-threads row per format, and raw RocksDB's.
    let scaling = json["scaling"].as_array().expect("scaling");
    assert_eq!(scaling.len(), formats.len() + 1);
    assert_eq!(scaling.last().unwrap()["store"], "raw rocksdb");
    for s in scaling {
        assert_eq!(s["one_thread"]["ops"], s["two_threads"]["ops"]);
        assert!(s["two_threads"]["ops_per_sec"].as_f64().unwrap() > 0.0);
    }
    // Instructions are counted only when asked for.
    assert_eq!(json["instructions"].as_array().map(Vec::len), Some(0));

    let commands = [
        "SET",
        "GET",
        "HSET",
        "HGET",
        "LPUSH",
        "LINDEX",
        "LRANGE",
        "SADD",
        "SISMEMBER",
        "ZADD",
        "ZRANGEBYSCORE",
        "ZRANK",
        "EXPIRE",
    ];
    let ops = std::fs::read_to_string(dir.join("ops.csv")).unwrap();
    let mut lines = ops.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    assert_eq!(header[..2], ["format", "command"]);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), formats.len() * commands.len());
    for format in &formats {
        for command in commands {
            let row = rows
                .iter()
                .find(|r| r[0] == format && r[1] == command)
                .unwrap_or_else(|| panic!("no row for {format} {command}"));
            assert_eq!(row.len(), header.len());
            let rate: f64 = row[5].parse().expect("ops_per_sec is a number");
            assert!(rate > 0.0);
        }
    }
    for csv in ["space.csv", "write_amp.csv", "del.csv", "goals.csv"] {
        let text = std::fs::read_to_string(dir.join(csv)).unwrap();
        assert!(text.lines().count() >= 2, "{csv}: {text}");
    }
    for svg in [
        "ops_per_sec.svg",
        "ratio_to_raw.svg",
        "bytes_per_element.svg",
        "records_per_element.svg",
        "own_set.svg",
        "write_amp.svg",
        "del_big_hash.svg",
    ] {
        let text = std::fs::read_to_string(dir.join(svg)).unwrap();
        assert!(text.starts_with("<svg"), "{svg}");
        assert!(text.trim_end().ends_with("</svg>"), "{svg}");
        assert!(text.contains("<text"), "{svg} has labels");
    }
    // The page holds every chart inline; the browser test looks at it.
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert_eq!(page.matches("<svg").count(), 7);
    // Nothing is fetched: the only addresses are the SVG namespace.
    assert_eq!(
        page.matches("http").count(),
        page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
}

/// `--instructions` counts SET, GET, HSET and ZADD under callgrind: exact
/// figures, the same on every run of the same binary.
#[test]
fn compare_counts_instructions_under_callgrind() {
    if redcodec_conformance::skip::VALGRIND
        .find("compare --instructions")
        .is_none()
    {
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    let run = || {
        let mut compare = common::binary();
        compare.args([
            "compare",
            "--formats",
            "kvrocks",
            "--keys",
            "100",
            "--elements",
            "20",
            "--big-hash",
            "1000",
            "--rounds",
            "1",
            "--instructions",
            "--out",
            out_dir.path().to_str().expect("utf-8 path"),
        ]);
        let out = common::succeeded(&mut compare, "redcodec compare --instructions");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out_dir.path().join("report.json")).unwrap(),
        )
        .unwrap();
        (stdout, json["instructions"].clone())
    };
    let (stdout, counts) = run();
    assert_contains(&stdout, "#### Instructions per operation");
    let counts = counts.as_array().expect("instructions").clone();
    let per_op = |store: &str, command: &str| {
        counts
            .iter()
            .find(|c| c["store"] == store && c["command"] == command)
            .and_then(|c| c["per_op"].as_f64())
            .unwrap_or_else(|| panic!("no count for {store} {command}"))
    };
    for command in ["SET", "GET", "HSET", "ZADD"] {
        assert!(per_op("kvrocks", command) > 100.0, "{command}");
    }
    // A write through the engine costs more than RocksDB's own put, which
    // it includes; a new hash field (two reads, two records) more than a SET.
    assert!(per_op("kvrocks", "SET") > per_op("raw rocksdb", "put"));
    assert!(per_op("kvrocks", "HSET") > per_op("kvrocks", "SET"));
    // Counted, not timed: a second run gives the same figures to within a
    // fraction of a percent (RocksDB's background threads are not counted;
    // only allocation addresses differ).
    let (_, again) = run();
    for c in again.as_array().unwrap() {
        let (store, command) = (c["store"].as_str().unwrap(), c["command"].as_str().unwrap());
        let (a, b) = (per_op(store, command), c["per_op"].as_f64().unwrap());
        assert!((a - b).abs() / a < 0.01, "{store} {command}: {a} then {b}");
    }
}
