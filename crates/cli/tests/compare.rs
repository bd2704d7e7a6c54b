//! `redcodec compare` on a tiny workload: the tables are printed and every
//! file it writes exists and parses (`report_browser.rs` renders the page).
//! No timing is asserted.

mod common;
use common::tiny_compare;

#[test]
fn compare_prints_tables_and_writes_csv_json_svg_html() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = tiny_compare(out_dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for title in [
        "#### Operations per second (single thread)",
        "#### Ratio to raw RocksDB (put for writes, get for reads)",
        "#### Space after a full compaction",
        "#### Write amplification",
        "#### DEL of a big hash",
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
