//! `compare --scale`: every format at every size gets a figure for every
//! command, from reads that found what `generate` wrote; a store that
//! does not hold the dataset fails the run instead of giving a figure.

use redcodec_compare::growth::{self, ScaleOptions, COMMANDS};
use redcodec_engine::{Engine, EngineOptions};
use redcodec_formats::{Format, FormatOptions};
use redcodec_migrate::generate::{self, GenerateOptions};
use redcodec_migrate::Quiet;

const SIZES: [u64; 2] = [400, 3_000];

#[test]
fn every_format_and_size_gets_every_commands_rate_and_the_files() {
    let out = tempfile::tempdir().expect("tempdir");
    let options = ScaleOptions {
        formats: Format::ALL.to_vec(),
        sizes: SIZES.to_vec(),
        ops: 150,
        direct_reads: false,
        block_cache_bytes: 8 << 20,
        out: out.path().to_path_buf(),
    };
    growth::run(&options).expect("the series runs");

    let csv = std::fs::read_to_string(out.path().join("scale.csv")).expect("scale.csv");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "format,records,elements,store_bytes,fill_seconds,settle_seconds,command,kind,ops,seconds,ops_per_sec"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), Format::ALL.len() * SIZES.len() * COMMANDS.len());
    for format in Format::ALL {
        for size in SIZES {
            for command in &COMMANDS {
                let row = rows
                    .iter()
                    .find(|r| {
                        r[0] == format.name() && r[1] == size.to_string() && r[6] == command.name
                    })
                    .unwrap_or_else(|| panic!("no {} row for {format} at {size}", command.name));
                let elements: u64 = row[2].parse().unwrap();
                let store_bytes: u64 = row[3].parse().unwrap();
                let ops: u64 = row[8].parse().unwrap();
                let rate: f64 = row[10].parse().unwrap();
                assert!(elements > size, "{format} {size}: {elements} elements");
                assert!(store_bytes > 0, "{format} {size}: an empty store");
                assert_eq!(ops, 150);
                assert!(rate > 0.0, "{format} {size} {}: {rate}", command.name);
            }
        }
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("scale.json")).unwrap())
            .expect("scale.json parses");
    assert_eq!(
        json["points"].as_array().map(Vec::len),
        Some(Format::ALL.len() * SIZES.len())
    );
    for (chart, command) in [("scale_reads.svg", "ZSCORE"), ("scale_writes.svg", "HSET")] {
        let svg = std::fs::read_to_string(out.path().join(chart)).expect(chart);
        for format in Format::ALL {
            assert!(svg.contains(&format!("{format}: {command}")), "{chart}");
        }
        assert!(svg.contains("3k records"), "{chart}");
    }
    // The stores were made in --out and removed after each point.
    let left: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("scale-store-"))
        .collect();
    assert!(left.is_empty(), "stores left behind: {left:?}");
}

#[test]
fn a_read_that_finds_nothing_fails_instead_of_giving_a_figure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let codec = Format::Kvrocks.codec(&FormatOptions::default()).unwrap();
    let engine = Engine::open(codec, dir.path(), EngineOptions::default()).unwrap();
    let options = GenerateOptions {
        records: 1_000,
        ..GenerateOptions::default()
    };
    generate::generate(&engine, &options, &mut Quiet).expect("generate");
    for command in COMMANDS
        .iter()
        .filter(|c| c.name != "SET" && c.name != "HSET")
    {
        // Drawn over the store it holds: every read finds its element.
        let held = growth::draws(1_000, command, 100, 7);
        growth::time(&engine, command, &held).expect("the reads find the dataset");
        // Drawn over ten times the keys: most are not in the store.
        let absent = growth::draws(10_000, command, 100, 7);
        let err = growth::time(&engine, command, &absent)
            .expect_err("a read of a key the store lacks fails the run")
            .to_string();
        assert!(err.contains("found nothing"), "{}: {err}", command.name);
    }
}

#[test]
fn stores_read_past_the_page_cache_give_the_same_rows() {
    let out = tempfile::tempdir().expect("tempdir");
    let options = ScaleOptions {
        formats: vec![Format::Kvrocks, Format::Ardb],
        sizes: vec![2_000],
        ops: 100,
        direct_reads: true,
        block_cache_bytes: 1 << 20,
        out: out.path().to_path_buf(),
    };
    growth::run(&options).expect("the series runs with direct reads");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("scale.json")).unwrap())
            .unwrap();
    assert_eq!(json["direct_reads"], true);
    assert_eq!(json["block_cache_bytes"], 1 << 20);
    for point in json["points"].as_array().unwrap() {
        let timings = point["timings"].as_array().unwrap();
        assert_eq!(timings.len(), COMMANDS.len(), "{point}");
        assert!(timings
            .iter()
            .all(|t| t["ops_per_sec"].as_f64() > Some(0.0)));
    }
}
