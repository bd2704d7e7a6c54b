//! The scale page's charts (`docs/src/scale/*.svg`) are drawn from its
//! figures file (`docs/src/scale/figures.tsv`): this test redraws them and
//! fails when a committed chart is not what the figures give.
//! `REDCODEC_UPDATE_CHARTS=1` rewrites them after the figures change.

use std::path::PathBuf;

use redcodec_compare::scale_chart::{parse_runs, scale_svgs};

#[test]
fn committed_scale_charts_match_their_figures() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/scale");
    let figures = std::fs::read_to_string(dir.join("figures.tsv")).expect("figures.tsv");
    let runs = parse_runs(&figures).expect("figures parse");
    assert!(
        runs.iter().any(|r| r.records >= 10_000_000),
        "the figures hold a store of 10M records or more"
    );
    let update = std::env::var("REDCODEC_UPDATE_CHARTS").is_ok_and(|v| v == "1");
    for (stem, svg) in scale_svgs(&runs).expect("charts draw") {
        let path = dir.join(format!("{stem}.svg"));
        if update {
            std::fs::write(&path, &svg).expect("write chart");
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == svg,
            "{} is not drawn from figures.tsv: run REDCODEC_UPDATE_CHARTS=1 cargo test --release -p redcodec-compare --test scale_charts",
            path.display()
        );
    }
}
