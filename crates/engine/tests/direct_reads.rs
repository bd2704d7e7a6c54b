//! `EngineOptions::direct_reads`: every instance of every format is
//! opened with RocksDB's direct reads when asked (its OPTIONS file says
//! so), reads what was written through them, and is opened without them
//! otherwise.

use redcodec_codec::Codec;
use redcodec_engine::{Engine, EngineOptions, Reply};
use redcodec_formats::{Format, FormatOptions};

/// The `use_direct_reads` of the newest OPTIONS file of every RocksDB
/// instance under `dir`.
fn direct_reads_of(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let mut options: Vec<std::path::PathBuf> = Vec::new();
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("OPTIONS-"))
            {
                options.push(path);
            }
        }
        // OPTIONS-<number>: the highest number is the one in force.
        if let Some(newest) = options.iter().max_by_key(|p| {
            p.file_name().unwrap().to_string_lossy()[8..]
                .parse::<u64>()
                .unwrap_or(0)
        }) {
            let text = std::fs::read_to_string(newest).expect("OPTIONS");
            let line = text
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with("use_direct_reads="))
                .expect("use_direct_reads in OPTIONS");
            found.push(line.to_string());
        }
    }
    found
}

#[test]
fn every_instance_reads_past_the_page_cache_when_asked() {
    for &format in Format::ALL {
        for direct_reads in [true, false] {
            let dir = tempfile::tempdir().expect("tempdir");
            let open = || {
                let codec = format.codec(&FormatOptions::default()).expect("codec");
                let options = EngineOptions {
                    direct_reads,
                    ..EngineOptions::default()
                };
                Engine::open(codec, dir.path(), options).expect("open")
            };
            {
                let engine = open();
                let set: Vec<Vec<u8>> = vec![b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()];
                assert!(!engine.execute(&set).is_error());
                engine.store().flush().expect("flush");
            }
            let engine = open();
            let get: Vec<Vec<u8>> = vec![b"GET".to_vec(), b"k".to_vec()];
            assert_eq!(engine.execute(&get), Reply::Bulk(b"v".to_vec()), "{format}");
            let lines = direct_reads_of(dir.path());
            let instances = engine.codec().layout().instances.len();
            assert_eq!(lines.len(), instances, "{format}: {lines:?}");
            let want = format!("use_direct_reads={direct_reads}");
            assert!(lines.iter().all(|l| *l == want), "{format}: {lines:?}");
        }
    }
}
