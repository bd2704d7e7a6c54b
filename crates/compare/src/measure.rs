//! Figures read from a store after a run: space after a full compaction,
//! RocksDB records, and the bytes RocksDB wrote to SST files (from its LOG).

use std::collections::HashSet;
use std::path::Path;

use crate::error::CompareError;

/// Space of a store after a full compaction.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Space {
    /// Elements the run wrote.
    pub elements: u64,
    /// Sum of the SST file sizes (`rocksdb.total-sst-files-size`).
    pub sst_bytes: u64,
    /// Stored key-value pairs, every column family.
    pub records: u64,
    /// SST bytes per element.
    pub bytes_per_element: f64,
    /// Records per element.
    pub records_per_element: f64,
}

impl Space {
    /// The space of `elements` elements in `sst_bytes` bytes and `records` records.
    pub fn new(elements: u64, sst_bytes: u64, records: u64) -> Space {
        Space {
            elements,
            sst_bytes,
            records,
            bytes_per_element: ratio(sst_bytes, elements),
            records_per_element: ratio(records, elements),
        }
    }

    /// SST bytes per element.
    pub fn bytes_per_element(&self) -> f64 {
        self.bytes_per_element
    }

    /// Records per element.
    pub fn records_per_element(&self) -> f64 {
        self.records_per_element
    }
}

/// Write amplification: bytes RocksDB wrote to SST files by flushes and
/// automatic compactions, over the logical bytes of the writes.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct WriteAmp {
    /// Bytes of the arguments of every write.
    pub logical_bytes: u64,
    /// Bytes of the SST files created by flushes and automatic compactions
    /// (`table_file_creation` events of RocksDB's LOG; the final manual
    /// compaction is not counted). `None` when the LOG could not be read.
    pub sst_bytes_written: Option<u64>,
    /// `sst_bytes_written / logical_bytes`; `None` (n/a) when unknown.
    pub write_amplification: Option<f64>,
}

impl WriteAmp {
    /// The amplification of `sst_bytes_written` over `logical_bytes`.
    pub fn new(logical_bytes: u64, sst_bytes_written: Option<u64>) -> WriteAmp {
        WriteAmp {
            logical_bytes,
            sst_bytes_written,
            write_amplification: sst_bytes_written
                .filter(|_| logical_bytes > 0)
                .map(|w| w as f64 / logical_bytes as f64),
        }
    }

    /// The amplification, if known.
    pub fn amplification(&self) -> Option<f64> {
        self.write_amplification
    }
}

/// `a / b`, 0 when `b` is 0.
pub fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Sums the sizes of the SST files created by flushes and by compactions
/// other than manual ones, from every RocksDB `LOG` under `root`. Read it
/// after the databases are closed (the LOG is buffered while open).
pub fn sst_bytes_written(root: &Path) -> Result<Option<u64>, CompareError> {
    let mut logs = Vec::new();
    find_logs(root, &mut logs)?;
    if logs.is_empty() {
        return Ok(None);
    }
    let mut total = 0u64;
    for log in logs {
        let text = std::fs::read_to_string(&log)?;
        let mut manual_jobs = HashSet::new();
        let mut created = Vec::new();
        for line in text.lines() {
            let Some(json) = line.split_once("EVENT_LOG_v1 ").map(|(_, j)| j) else {
                continue;
            };
            let Ok(event) = serde_json::from_str::<serde_json::Value>(json) else {
                return Ok(None);
            };
            let job = event.get("job").and_then(serde_json::Value::as_u64);
            match event.get("event").and_then(|e| e.as_str()) {
                Some("compaction_started") => {
                    let reason = event.get("compaction_reason").and_then(|r| r.as_str());
                    if reason == Some("ManualCompaction") {
                        manual_jobs.extend(job);
                    }
                }
                Some("table_file_creation") => {
                    let Some(size) = event.get("file_size").and_then(serde_json::Value::as_u64)
                    else {
                        return Ok(None);
                    };
                    created.push((job, size));
                }
                _ => {}
            }
        }
        total += created
            .into_iter()
            .filter(|(job, _)| !job.is_some_and(|j| manual_jobs.contains(&j)))
            .map(|(_, size)| size)
            .sum::<u64>();
    }
    Ok(Some(total))
}

/// The version RocksDB wrote at the head of a `LOG` under `root`
/// (`RocksDB version: 10.4.2`), if any.
pub fn rocksdb_version(root: &Path) -> Result<Option<String>, CompareError> {
    let mut logs = Vec::new();
    find_logs(root, &mut logs)?;
    for log in logs {
        let text = std::fs::read_to_string(&log)?;
        if let Some(version) = text
            .lines()
            .find_map(|l| l.split_once("RocksDB version: ").map(|(_, v)| v.trim()))
        {
            return Ok(Some(version.to_string()));
        }
    }
    Ok(None)
}

fn find_logs(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), CompareError> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            find_logs(&path, out)?;
        } else if entry
            .file_name()
            .to_str()
            .is_some_and(|n| n == "LOG" || n.starts_with("LOG.old"))
        {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sst_bytes_written_counts_flushes_and_automatic_compactions_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        std::fs::create_dir(&db).unwrap();
        let log = [
            "2026/11/22-03:00:00.000001 7f [db/flush_job.cc:900] [default] [JOB 2] Flushing",
            r#"2026/11/22-03:00:00.000002 7f EVENT_LOG_v1 {"time_micros": 1, "cf_name": "default", "job": 2, "event": "table_file_creation", "file_number": 9, "file_size": 1000}"#,
            r#"2026/11/22-03:00:00.000003 7f EVENT_LOG_v1 {"time_micros": 2, "job": 3, "event": "compaction_started", "compaction_reason": "LevelL0FilesNum"}"#,
            r#"2026/11/22-03:00:00.000004 7f EVENT_LOG_v1 {"time_micros": 3, "cf_name": "default", "job": 3, "event": "table_file_creation", "file_number": 10, "file_size": 200}"#,
            r#"2026/11/22-03:00:00.000005 7f EVENT_LOG_v1 {"time_micros": 4, "job": 4, "event": "compaction_started", "compaction_reason": "ManualCompaction"}"#,
            r#"2026/11/22-03:00:00.000006 7f EVENT_LOG_v1 {"time_micros": 5, "cf_name": "default", "job": 4, "event": "table_file_creation", "file_number": 11, "file_size": 30}"#,
        ]
        .join("\n");
        std::fs::write(db.join("LOG"), log).unwrap();
        assert_eq!(sst_bytes_written(dir.path()).unwrap(), Some(1200));
        assert_eq!(rocksdb_version(dir.path()).unwrap(), None);
        std::fs::write(
            db.join("LOG.old.1"),
            "2026/11/22-03:00:00.000000 7f RocksDB version: 10.4.2\n",
        )
        .unwrap();
        assert_eq!(
            rocksdb_version(dir.path()).unwrap().as_deref(),
            Some("10.4.2")
        );
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(sst_bytes_written(empty.path()).unwrap(), None);
    }

    #[test]
    fn write_amplification_is_unknown_without_the_log() {
        assert_eq!(WriteAmp::new(100, None).amplification(), None);
        assert_eq!(WriteAmp::new(100, Some(250)).amplification(), Some(2.5));
        assert_eq!(Space::new(4, 100, 6).bytes_per_element(), 25.0);
    }
}
