//! The external sort: the capture's writes, sorted in their family's order
//! (then by number), spilled as one run file per family and spill; then,
//! per family, a k-way merge of its runs that yields each key's last
//! write once, in order, with memory bounded by one entry and one read
//! buffer per run.
//!
//! A run file is a sequence of entries: key length (u32 LE), key, number
//! (u64 LE), then 0 and value length (u32 LE) and value for a put, or 1
//! for a delete.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use redcodec_codec::Place;
use redcodec_engine::store::Order;

use super::capture::Entry;

/// Read buffer of each run during a merge.
const READ_BUFFER: usize = 64 << 10;

/// The run file of spill `run` for `place`.
pub(crate) fn run_path(work: &Path, run: u64, place: Place) -> PathBuf {
    work.join(format!("run-{run:06}-{}-{}", place.instance, place.cf))
}

/// Sorts each family's entries and writes them as run number `run` (with
/// `sync`, synced to disk).
pub(crate) fn spill(
    work: &Path,
    run: u64,
    entries: HashMap<Place, Vec<Entry>>,
    order: impl Fn(Place) -> Order,
    sync: bool,
) -> io::Result<()> {
    for (place, mut entries) in entries {
        let cmp = order(place);
        entries.sort_unstable_by(|a, b| cmp(&a.key, &b.key).then(a.seq.cmp(&b.seq)));
        let file = File::create(run_path(work, run, place))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        for e in &entries {
            out.write_all(&len32(e.key.len())?.to_le_bytes())?;
            out.write_all(&e.key)?;
            out.write_all(&e.seq.to_le_bytes())?;
            match &e.value {
                Some(v) => {
                    out.write_all(&[0])?;
                    out.write_all(&len32(v.len())?.to_le_bytes())?;
                    out.write_all(v)?;
                }
                None => out.write_all(&[1])?,
            }
        }
        let file = out
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        if sync {
            file.sync_all()?;
        }
    }
    Ok(())
}

/// Removes the run files of spills `from` and later (written by an
/// interrupted run after its last checkpoint).
pub(crate) fn remove_runs_from(work: &Path, from: u64) -> io::Result<()> {
    for entry in std::fs::read_dir(work)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let run = name
            .strip_prefix("run-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|n| n.parse::<u64>().ok());
        if run.is_some_and(|run| run >= from) {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

fn len32(len: usize) -> io::Result<u32> {
    u32::try_from(len).map_err(|_| io::Error::other("a record longer than 4 GiB"))
}

/// Numbers whose writes are void: written by a run that was interrupted
/// in the middle of a key (that key is written again after the resume).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Voids(pub Vec<(u64, u64)>);

impl Voids {
    fn contains(&self, seq: u64) -> bool {
        self.0.iter().any(|&(a, b)| a <= seq && seq < b)
    }
}

/// Reads one run file.
struct RunReader {
    input: BufReader<File>,
    path: PathBuf,
}

impl RunReader {
    fn next(&mut self) -> io::Result<Option<Entry>> {
        let mut len = [0u8; 4];
        match self.input.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let key = self.bytes(u32::from_le_bytes(len))?;
        let mut seq = [0u8; 8];
        self.input.read_exact(&mut seq).map_err(|e| self.bad(e))?;
        let mut tag = [0u8; 1];
        self.input.read_exact(&mut tag).map_err(|e| self.bad(e))?;
        let value = match tag[0] {
            0 => {
                self.input.read_exact(&mut len).map_err(|e| self.bad(e))?;
                Some(self.bytes(u32::from_le_bytes(len))?)
            }
            1 => None,
            t => return Err(self.bad(io::Error::other(format!("unknown entry tag {t}")))),
        };
        Ok(Some(Entry {
            key,
            seq: u64::from_le_bytes(seq),
            value,
        }))
    }

    fn bytes(&mut self, len: u32) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; len as usize];
        self.input.read_exact(&mut buf).map_err(|e| {
            let e = match e.kind() {
                io::ErrorKind::UnexpectedEof => io::Error::other("truncated"),
                _ => e,
            };
            self.bad(e)
        })?;
        Ok(buf)
    }

    fn bad(&self, e: io::Error) -> io::Error {
        io::Error::other(format!("run file {}: {e}", self.path.display()))
    }
}

/// A merge's head entry from run `from`.
struct Head {
    entry: Entry,
    from: usize,
    order: Order,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Head {
    /// Reversed: the heap's top is the smallest key, the lowest number.
    fn cmp(&self, other: &Self) -> Ordering {
        (self.order)(&other.entry.key, &self.entry.key).then(other.entry.seq.cmp(&self.entry.seq))
    }
}

/// The merge of one family's runs: each key's last write, in order.
pub(crate) struct Merge {
    runs: Vec<RunReader>,
    heap: BinaryHeap<Head>,
    order: Order,
    voids: Voids,
}

impl Merge {
    /// The merge of the run files `paths` (in `order`), without the
    /// writes numbered in `voids`.
    pub(crate) fn open(paths: &[PathBuf], order: Order, voids: Voids) -> io::Result<Merge> {
        let mut merge = Merge {
            runs: Vec::with_capacity(paths.len()),
            heap: BinaryHeap::with_capacity(paths.len()),
            order,
            voids,
        };
        for path in paths {
            let file = File::open(path)
                .map_err(|e| io::Error::other(format!("run file {}: {e}", path.display())))?;
            merge.runs.push(RunReader {
                input: BufReader::with_capacity(READ_BUFFER, file),
                path: path.clone(),
            });
            let from = merge.runs.len() - 1;
            merge.refill(from)?;
        }
        Ok(merge)
    }

    /// Pushes run `from`'s next entry that is not void.
    fn refill(&mut self, from: usize) -> io::Result<()> {
        while let Some(entry) = self.runs[from].next()? {
            if !self.voids.contains(entry.seq) {
                self.heap.push(Head {
                    entry,
                    from,
                    order: self.order,
                });
                break;
            }
        }
        Ok(())
    }

    /// The next key and its value (keys whose last write is a delete are
    /// left out).
    pub(crate) fn next(&mut self) -> io::Result<Option<(Vec<u8>, Vec<u8>)>> {
        loop {
            let Some(Head {
                mut entry, from, ..
            }) = self.heap.pop()
            else {
                return Ok(None);
            };
            self.refill(from)?;
            // Later writes of the same key replace this one.
            while let Some(top) = self.heap.peek() {
                if (self.order)(&top.entry.key, &entry.key) != Ordering::Equal {
                    break;
                }
                let Some(Head {
                    entry: later, from, ..
                }) = self.heap.pop()
                else {
                    break;
                };
                self.refill(from)?;
                entry = later;
            }
            if let Some(value) = entry.value {
                return Ok(Some((entry.key, value)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, seq: u64, value: Option<&str>) -> Entry {
        Entry {
            key: key.as_bytes().to_vec(),
            seq,
            value: value.map(|v| v.as_bytes().to_vec()),
        }
    }

    #[test]
    fn the_merge_yields_each_keys_last_write_in_order() {
        let work = tempfile::tempdir().unwrap();
        let place = Place::new(0, 0);
        let bytewise = <[u8]>::cmp as Order;
        let runs = [
            vec![entry("b", 0, Some("b0")), entry("a", 1, Some("a1"))],
            vec![
                entry("b", 2, Some("b2")),
                entry("c", 3, Some("c3")),
                entry("d", 4, Some("void")),
            ],
            vec![entry("c", 5, None), entry("a", 6, Some("a6"))],
        ];
        for (n, run) in runs.into_iter().enumerate() {
            let map = HashMap::from([(place, run)]);
            spill(work.path(), n as u64, map, |_| bytewise, false).unwrap();
        }
        let paths: Vec<_> = (0..3).map(|n| run_path(work.path(), n, place)).collect();
        let mut merge = Merge::open(&paths, bytewise, Voids(vec![(4, 5)])).unwrap();
        let mut out = Vec::new();
        while let Some((k, v)) = merge.next().unwrap() {
            out.push((String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()));
        }
        let want = [("a", "a6"), ("b", "b2")];
        let want: Vec<_> = want
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(out, want);
    }
}
