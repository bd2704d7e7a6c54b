//! The external sort: the capture's writes, sorted in their family's order
//! (then by number), spilled as one run file per family and spill; then,
//! per family, a k-way merge of its runs that yields each key's last
//! write once, in order, with memory bounded by one entry and one read
//! buffer per run.
//!
//! A run file holds a sequence of entries, each a tag byte then: for a
//! put (0), key length (u32 LE), key, number (u64 LE), value length (u32
//! LE), value; for a delete (1), key length, key, number; for the end
//! (2), the count of entries before it (u64 LE). The entries are either
//! one LZ4 frame (with its content checksum), or raw: [`RAW_MAGIC`], the
//! entries, and the XXH3-64 of every byte before it (u64 LE). The
//! first bytes say which ([`Encoding`]; the job chooses per run, see
//! [`crate::RunCompression`]). A run is read to its end entry and
//! checksum or not at all: a file cut short, even where the frame's
//! blocks end, is an error, never a shorter run. Compressed (sorted
//! records share their prefixes), a migration's runs and tables together
//! peak at about 1.7 times the destination's size, where raw runs take
//! 2.9 times: the scratch space a bulk migration needs.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use lz4_flex::frame::{BlockMode, BlockSize, FrameDecoder, FrameEncoder, FrameInfo};
use redcodec_codec::Place;
use redcodec_engine::store::Order;
use xxhash_rust::xxh3::Xxh3;

use super::capture::Entry;

/// Read buffer of each run (of its compressed bytes) during a merge.
const READ_BUFFER: usize = 64 << 10;

/// Write buffer of a run's compressed bytes.
const WRITE_BUFFER: usize = 1 << 20;

/// The longest key or value read into a buffer of its full length at
/// once.
const SMALL: u32 = 1 << 20;

/// The tag of a put entry.
const PUT: u8 = 0;
/// The tag of a delete entry.
const DELETE: u8 = 1;
/// The tag of a run's end entry (the count of entries before it).
const END: u8 = 2;

/// The first bytes of a raw run.
const RAW_MAGIC: &[u8; 8] = b"RCRUN\0\0\x01";

/// The first bytes of an LZ4 frame.
const LZ4_MAGIC: [u8; 4] = 0x184D_2204_u32.to_le_bytes();

/// How a run's entries are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Lz4,
    Raw,
}

/// The LZ4 frame of a run: blocks of 256 KiB, each compressed with the
/// one before as its dictionary (sorted keys repeat across blocks), and
/// a checksum of the whole content.
fn frame() -> FrameInfo {
    FrameInfo::new()
        .block_size(BlockSize::Max256KB)
        .block_mode(BlockMode::Linked)
        .content_checksum(true)
}

/// The run file of spill `run` for `place`.
pub(crate) fn run_path(work: &Path, run: u64, place: Place) -> PathBuf {
    work.join(format!("run-{run:06}-{}-{}", place.instance, place.cf))
}

/// Sorts each family's entries and writes them, encoded as `encoding`
/// says, as run number `run` (with `sync`, synced to disk).
pub(crate) fn spill(
    work: &Path,
    run: u64,
    entries: HashMap<Place, Vec<Entry>>,
    order: impl Fn(Place) -> Order,
    encoding: Encoding,
    sync: bool,
) -> io::Result<()> {
    for (place, mut entries) in entries {
        let cmp = order(place);
        entries.sort_unstable_by(|a, b| cmp(&a.key, &b.key).then(a.seq.cmp(&b.seq)));
        let file = File::create(run_path(work, run, place))?;
        let file = match encoding {
            Encoding::Lz4 => {
                let out = BufWriter::with_capacity(WRITE_BUFFER, file);
                let mut out = FrameEncoder::with_frame_info(frame(), out);
                write_entries(&mut out, &entries)?;
                out.finish()
                    .map_err(io::Error::from)?
                    .into_inner()
                    .map_err(io::IntoInnerError::into_error)?
            }
            Encoding::Raw => {
                let hashing = Hashing {
                    inner: file,
                    hasher: Box::new(Xxh3::new()),
                    left: u64::MAX,
                };
                let mut out = BufWriter::with_capacity(WRITE_BUFFER, hashing);
                out.write_all(RAW_MAGIC)?;
                write_entries(&mut out, &entries)?;
                let Hashing {
                    inner: mut file,
                    hasher,
                    ..
                } = out.into_inner().map_err(io::IntoInnerError::into_error)?;
                file.write_all(&hasher.digest().to_le_bytes())?;
                file
            }
        };
        if sync {
            file.sync_all()?;
        }
    }
    Ok(())
}

/// Writes `entries` and the end entry.
fn write_entries(out: &mut impl Write, entries: &[Entry]) -> io::Result<()> {
    for e in entries {
        out.write_all(&[if e.value.is_some() { PUT } else { DELETE }])?;
        out.write_all(&len32(e.key.len())?.to_le_bytes())?;
        out.write_all(&e.key)?;
        out.write_all(&e.seq.to_le_bytes())?;
        if let Some(v) = &e.value {
            out.write_all(&len32(v.len())?.to_le_bytes())?;
            out.write_all(v)?;
        }
    }
    out.write_all(&[END])?;
    out.write_all(&(entries.len() as u64).to_le_bytes())
}

/// A file read or written with the XXH3-64 of its bytes: all of them when
/// written; when read, the first `left` (a raw run's own checksum, its
/// last 8 bytes, is not part of what it sums).
struct Hashing<F> {
    inner: F,
    /// Boxed: its state is several hundred bytes.
    hasher: Box<Xxh3>,
    left: u64,
}

impl<F: Write> Write for Hashing<F> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<F: Read> Read for Hashing<F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let summed = n.min(usize::try_from(self.left).unwrap_or(usize::MAX));
        self.hasher.update(&buf[..summed]);
        self.left -= summed as u64;
        Ok(n)
    }
}

/// A run file's entries, as they are stored.
enum Input {
    Lz4(FrameDecoder<BufReader<File>>),
    Raw(BufReader<Hashing<File>>),
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Lz4(input) => input.read(buf),
            Input::Raw(input) => input.read(buf),
        }
    }
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
    input: Input,
    path: PathBuf,
    /// Entries read so far.
    read: u64,
    /// The end entry was read.
    ended: bool,
}

impl RunReader {
    fn open(path: &Path) -> io::Result<RunReader> {
        let bad = |e: io::Error| io::Error::other(format!("run file {}: {e}", path.display()));
        let mut file = File::open(path).map_err(bad)?;
        let len = file.metadata().map_err(bad)?.len();
        let mut magic = [0u8; RAW_MAGIC.len()];
        let input = match file.read_exact(&mut magic) {
            Ok(()) if magic == *RAW_MAGIC => {
                let Some(left) = len.checked_sub(RAW_MAGIC.len() as u64 + 8) else {
                    return Err(bad(io::Error::other("truncated")));
                };
                let mut hasher = Box::new(Xxh3::new());
                hasher.update(RAW_MAGIC);
                let hashing = Hashing {
                    inner: file,
                    hasher,
                    left,
                };
                Input::Raw(BufReader::with_capacity(READ_BUFFER, hashing))
            }
            Ok(()) if magic[..4] == LZ4_MAGIC => {
                file.seek(SeekFrom::Start(0)).map_err(bad)?;
                Input::Lz4(FrameDecoder::new(BufReader::with_capacity(
                    READ_BUFFER,
                    file,
                )))
            }
            Ok(()) => return Err(bad(io::Error::other("not a run (unknown first bytes)"))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Err(bad(io::Error::other("truncated")))
            }
            Err(e) => return Err(bad(e)),
        };
        Ok(RunReader {
            input,
            path: path.to_path_buf(),
            read: 0,
            ended: false,
        })
    }

    fn next(&mut self) -> io::Result<Option<Entry>> {
        if self.ended {
            return Ok(None);
        }
        let tag = self.array::<1>()?[0];
        if tag == END {
            let count = u64::from_le_bytes(self.array()?);
            if count != self.read {
                return Err(self.bad(io::Error::other(format!(
                    "it ends after {} entries but says {count}",
                    self.read
                ))));
            }
            // A raw run's checksum follows; reading past the end entry
            // of a frame reads the frame's end and checks its content
            // checksum.
            let sum = match self.input {
                Input::Raw(_) => Some(u64::from_le_bytes(self.array()?)),
                Input::Lz4(_) => None,
            };
            let mut past = [0u8; 1];
            match self.input.read(&mut past) {
                Ok(0) => {}
                Ok(_) => return Err(self.bad(io::Error::other("bytes after its end entry"))),
                Err(e) => return Err(self.bad(e)),
            }
            if let (Some(sum), Input::Raw(input)) = (sum, &self.input) {
                let hashing = input.get_ref();
                if hashing.left != 0 || hashing.hasher.digest() != sum {
                    return Err(self.bad(io::Error::other("its checksum does not match")));
                }
            }
            self.ended = true;
            return Ok(None);
        }
        if tag != PUT && tag != DELETE {
            return Err(self.bad(io::Error::other(format!("unknown entry tag {tag}"))));
        }
        let len = u32::from_le_bytes(self.array()?);
        let key = self.bytes(len)?;
        let seq = u64::from_le_bytes(self.array()?);
        let value = if tag == PUT {
            let len = u32::from_le_bytes(self.array()?);
            Some(self.bytes(len)?)
        } else {
            None
        };
        self.read += 1;
        Ok(Some(Entry { key, seq, value }))
    }

    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut buf = [0u8; N];
        self.fill(&mut buf)?;
        Ok(buf)
    }

    fn bytes(&mut self, len: u32) -> io::Result<Vec<u8>> {
        if len <= SMALL {
            let mut buf = vec![0; len as usize];
            self.fill(&mut buf)?;
            return Ok(buf);
        }
        // A long record grows its buffer as its bytes come: a length
        // damaged into gigabytes fails at the run's end, not allocating.
        let mut buf = Vec::new();
        (&mut self.input)
            .take(u64::from(len))
            .read_to_end(&mut buf)
            .map_err(|e| self.bad(e))?;
        if buf.len() != len as usize {
            return Err(self.bad(io::Error::other("truncated")));
        }
        Ok(buf)
    }

    /// Reads exactly `buf.len()` bytes: the frame ending first (a file
    /// cut short) is an error, as is a frame that does not decode.
    fn fill(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.input.read_exact(buf).map_err(|e| {
            let e = match e.kind() {
                io::ErrorKind::UnexpectedEof => io::Error::other("truncated"),
                _ => e,
            };
            self.bad(e)
        })
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
            merge.runs.push(RunReader::open(path)?);
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

    const BYTEWISE: Order = <[u8]>::cmp as Order;

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
            // Runs of both encodings merge together.
            let encoding = [Encoding::Lz4, Encoding::Raw][n % 2];
            spill(work.path(), n as u64, map, |_| BYTEWISE, encoding, false).unwrap();
        }
        let paths: Vec<_> = (0..3).map(|n| run_path(work.path(), n, place)).collect();
        let mut merge = Merge::open(&paths, BYTEWISE, Voids(vec![(4, 5)])).unwrap();
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

    /// `n` entries of sorted keys sharing prefixes, values of 40 bytes
    /// that compress as little as a hash's field values do.
    fn sorted_entries(n: u64) -> Vec<Entry> {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        (0..n)
            .map(|i| {
                let value: Vec<u8> = (0..40)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        b'a' + (state % 26) as u8
                    })
                    .collect();
                Entry {
                    key: format!("h\x00\x00\x00\x08user:1000{}:field:{i:08}", i / 1000)
                        .into_bytes(),
                    seq: i,
                    value: (i % 97 != 0).then_some(value),
                }
            })
            .collect()
    }

    /// Keys and values, in order.
    type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

    fn merged(paths: &[PathBuf]) -> io::Result<Pairs> {
        let mut merge = Merge::open(paths, <[u8]>::cmp as Order, Voids::default())?;
        let mut out = Vec::new();
        while let Some(pair) = merge.next()? {
            out.push(pair);
        }
        Ok(out)
    }

    /// A run of 20,000 sorted entries written as `encoding` says: its
    /// directory, its path, the bytes of its entries and the pairs it
    /// holds.
    fn spilled(encoding: Encoding) -> (tempfile::TempDir, PathBuf, usize, Pairs) {
        let work = tempfile::tempdir().unwrap();
        let place = Place::new(0, 1);
        let entries = sorted_entries(20_000);
        let raw: usize = entries
            .iter()
            .map(|e| 1 + 4 + e.key.len() + 8 + e.value.as_ref().map_or(0, |v| 4 + v.len()))
            .sum();
        let mut want: Vec<_> = entries
            .iter()
            .filter_map(|e| Some((e.key.clone(), e.value.clone()?)))
            .collect();
        want.sort();
        let map = HashMap::from([(place, entries)]);
        spill(work.path(), 0, map, |_| BYTEWISE, encoding, false).unwrap();
        let path = run_path(work.path(), 0, place);
        (work, path, raw, want)
    }

    #[test]
    fn a_run_is_compressed_and_reads_back_whole() {
        let (_work, path, raw, want) = spilled(Encoding::Lz4);
        let size = std::fs::metadata(&path).unwrap().len() as usize;
        // The keys' shared prefixes go; random letters compress to about
        // 4.7 bits each.
        assert!(size * 10 < raw * 7, "{size} bytes on disk for {raw} raw");
        assert_eq!(merged(&[path]).unwrap(), want);
    }

    #[test]
    fn a_raw_run_is_its_entries_between_a_mark_and_a_checksum() {
        let (_work, path, raw, want) = spilled(Encoding::Raw);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], RAW_MAGIC);
        // The entries, the end entry (tag and count), the checksum.
        assert_eq!(bytes.len(), 8 + raw + 9 + 8);
        let (summed, sum) = bytes.split_at(bytes.len() - 8);
        let sum = u64::from_le_bytes(sum.try_into().unwrap());
        assert_eq!(sum, xxhash_rust::xxh3::xxh3_64(summed));
        assert_eq!(merged(&[path]).unwrap(), want);
    }

    #[test]
    fn a_run_cut_short_or_damaged_is_an_error_never_a_shorter_run() {
        for encoding in [Encoding::Lz4, Encoding::Raw] {
            cut_short_or_damaged(encoding);
        }
    }

    fn cut_short_or_damaged(encoding: Encoding) {
        let work = tempfile::tempdir().unwrap();
        let place = Place::new(0, 1);
        let map = HashMap::from([(place, sorted_entries(20_000))]);
        spill(work.path(), 0, map, |_| BYTEWISE, encoding, false).unwrap();
        let path = run_path(work.path(), 0, place);
        let whole = std::fs::read(&path).unwrap();
        let cut = work.path().join("cut");
        // Every length in the last 64 bytes (the end entry, the frame's
        // end mark and checksum), and cuts through the blocks before.
        let lengths = (whole.len() - 64..whole.len()).chain((0..whole.len()).step_by(4999));
        for len in lengths {
            std::fs::write(&cut, &whole[..len]).unwrap();
            let read = merged(std::slice::from_ref(&cut));
            // An LZ4 frame's end mark and checksum alone may be missing:
            // every entry and the count were read.
            if encoding == Encoding::Lz4 && len >= whole.len() - 8 {
                continue;
            }
            let e = read.expect_err(&format!(
                "a {encoding:?} run cut to {len} of {} bytes",
                whole.len()
            ));
            assert!(e.to_string().starts_with("run file "), "{e}");
        }
        for at in (0..whole.len()).step_by(7919) {
            let mut damaged = whole.clone();
            damaged[at] ^= 0x5a;
            std::fs::write(&cut, &damaged).unwrap();
            assert!(
                merged(std::slice::from_ref(&cut)).is_err(),
                "a {encoding:?} run with byte {at} of {} changed",
                whole.len()
            );
        }
    }
}
