//! Memory while serving, measured by counting every heap allocation of
//! this test process (server and clients alike; RocksDB's own C++
//! allocations are not counted):
//!
//! - a huge HGETALL, LRANGE, KEYS or GET is held once, not twice: the
//!   reply leaves the server as it is encoded;
//! - many clients pipelining thousands of requests each do not grow the
//!   server's memory with the replies they have not read yet;
//! - a SET's value is copied once, by its encoding: the request's
//!   arguments are slices of the connection's read buffer, and the
//!   engine encodes them as they came (the copies of HSET's, LPUSH's and
//!   SADD's are counted too: a set member reaches its record's key
//!   uncopied).
//!
//! The tests measure one at a time (the heap counters are the process').

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread;

use redcodec_formats::Format;
use support::{bulk_len, elements, load, request, Client, Served};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Allocations of a size in `SIZED_FROM..SIZED_TO` (none while 0) are
/// counted in `SIZED`.
static SIZED_FROM: AtomicUsize = AtomicUsize::new(0);
static SIZED_TO: AtomicUsize = AtomicUsize::new(0);
static SIZED: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = IN_USE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

/// Notes an allocation of `size` bytes.
fn allocated(size: usize) {
    grew(size);
    if (SIZED_FROM.load(Ordering::Relaxed)..SIZED_TO.load(Ordering::Relaxed)).contains(&size) {
        SIZED.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters only observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as it is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            allocated(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
            allocated(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Measures one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the heap counters for one test.
fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How far the heap grew above its size at the start, while `f` ran.
fn heap_growth(f: impl FnOnce()) -> usize {
    let start = IN_USE.load(Ordering::Relaxed);
    PEAK.store(start, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed).saturating_sub(start)
}

/// How many allocations of a size in `sizes` were made while `f` ran.
fn allocations_sized(sizes: Range<usize>, f: impl FnOnce()) -> usize {
    SIZED.store(0, Ordering::Relaxed);
    SIZED_TO.store(sizes.end, Ordering::Relaxed);
    SIZED_FROM.store(sizes.start, Ordering::Relaxed);
    f();
    SIZED_FROM.store(0, Ordering::Relaxed);
    SIZED_TO.store(0, Ordering::Relaxed);
    SIZED.load(Ordering::Relaxed)
}

/// A command, its reply, and its value-sized allocations per format.
type Copies<'a> = (&'a [&'a [u8]], &'a str, [usize; 5]);

/// A command, its reply's length and its first bytes.
type Case<'a> = (&'a [&'a [u8]], usize, Vec<u8>);

const ELEMENTS: usize = 10_000;
const ELEMENT_LEN: usize = 800;

#[test]
fn a_huge_reply_is_held_once() {
    let _serial = serial();
    for &format in Format::ALL {
        let served = Served::start(format);
        let mut c = served.client();
        let items = elements(ELEMENTS, ELEMENT_LEN);
        let data = ELEMENTS * ELEMENT_LEN;
        // A hash of short fields and long values, a list, many long keys,
        // one long string.
        let mut loads = Vec::new();
        for chunk in items.chunks(500) {
            let mut hset: Vec<&[u8]> = vec![b"HSET", b"h"];
            let mut rpush: Vec<&[u8]> = vec![b"RPUSH", b"l"];
            let mut mset: Vec<&[u8]> = vec![b"MSET"];
            for e in chunk {
                hset.extend([&e[..8], &e[..]]);
                rpush.push(e);
                mset.extend([&e[..], b"v".as_slice()]);
            }
            loads.extend([request(&hset), request(&rpush), request(&mset)]);
        }
        load(&mut c, &loads);
        drop(loads);

        let hash_reply = format!("*{}\r\n", 2 * ELEMENTS).len()
            + items
                .iter()
                .map(|e| bulk_len(8) + bulk_len(e.len()))
                .sum::<usize>();
        let list_reply = format!("*{ELEMENTS}\r\n").len()
            + items.iter().map(|e| bulk_len(e.len())).sum::<usize>();
        let cases: [Case; 4] = [
            (
                &[b"HGETALL", b"h"],
                hash_reply,
                format!("*{}\r\n", 2 * ELEMENTS).into_bytes(),
            ),
            (
                &[b"LRANGE", b"l", b"0", b"-1"],
                list_reply,
                format!("*{ELEMENTS}\r\n").into_bytes(),
            ),
            // Every key but h and l: KEYS 0*.
            (
                &[b"KEYS", b"0*"],
                list_reply,
                format!("*{ELEMENTS}\r\n").into_bytes(),
            ),
            (
                &[b"GET", b"s"],
                bulk_len(data),
                format!("${data}\r\n").into_bytes(),
            ),
        ];
        for (args, len, head) in cases {
            if args[0] == b"GET" {
                // Written last: walking the keys (KEYS) reads each
                // string's value, a copy of this one's for a moment.
                load(&mut c, &[request(&[b"SET", b"s", &vec![b's'; data]])]);
            }
            let growth = heap_growth(|| {
                c.send(args);
                c.expect(len, &head);
            });
            let name = String::from_utf8_lossy(args[0]);
            eprintln!(
                "{format} {name}: {} bytes of elements, the heap grew {growth} bytes ({:.2}×)",
                data,
                growth as f64 / data as f64
            );
            // Held twice (the collection and its encoding) would be 2×.
            assert!(
                growth < data * 3 / 2,
                "{format} {name}: {growth} bytes for {data} bytes of elements"
            );
        }
        assert_eq!(c.call(&[b"PING"]), "+PONG\r\n");
    }
}

#[test]
fn pipelining_clients_do_not_grow_the_server() {
    let _serial = serial();
    const CLIENTS: usize = 8;
    const REQUESTS: usize = 2_000;
    const VALUE: usize = 16 * 1024;
    let served = Served::start(Format::Kvrocks);
    let mut c = served.client();
    load(&mut c, &[request(&[b"SET", b"v", &vec![b'x'; VALUE]])]);
    let clients: Vec<Client> = (0..CLIENTS).map(|_| served.client()).collect();
    let batch: Vec<u8> = (0..REQUESTS)
        .flat_map(|_| request(&[b"GET", b"v"]))
        .collect();
    let head = format!("${VALUE}\r\n").into_bytes();
    let growth = heap_growth(|| {
        thread::scope(|s| {
            for mut client in clients {
                let batch = &batch;
                let head = &head;
                s.spawn(move || {
                    let mut writer = client.0.try_clone().unwrap();
                    let w = thread::spawn({
                        let batch = batch.clone();
                        move || writer.write_all(&batch).unwrap()
                    });
                    client.expect(REQUESTS * bulk_len(VALUE), head);
                    w.join().unwrap();
                });
            }
        });
    });
    let replies = CLIENTS * REQUESTS * bulk_len(VALUE);
    eprintln!("{CLIENTS} clients pipelining {REQUESTS} GETs of {VALUE} bytes ({replies} bytes of replies): the heap grew {growth} bytes");
    // The clients' own buffers: a copy of the batch and 64 KiB each;
    // the server: its buffers, a few chunks per client.
    let bound = CLIENTS * (batch.len() + 64 * 1024) + CLIENTS * 4 * 64 * 1024 + (1 << 20);
    assert!(
        growth < bound,
        "the heap grew {growth} bytes (bound {bound})"
    );
    assert_eq!(c.call(&[b"PING"]), "+PONG\r\n");
}

#[test]
fn a_written_value_is_copied_as_the_table_says() {
    let _serial = serial();
    // Far from a power of two: the read buffer grows by doubling.
    const VALUE: usize = 3_000_007;
    let value = vec![b'v'; VALUE];
    // Allocations sized as the value, or as the value and a format's
    // header, while each command runs on a new connection: its
    // encoding, and each copy of the value. In `Format::ALL`'s order
    // (kvrocks, blackwidow, nemo, ardb, floyd). A value reaches its
    // encoding as a slice of the read buffer, but for a node of nemo's
    // linked lists (kept to relink its neighbours); a set member reaches
    // its record's key as it came, and that key is made once to look the
    // member up and to write it (ardb also keeps the member as the set's
    // two bounds, and its metadata's encoding grows through their size);
    // a sorted-set member is in the keys of its two records, its member
    // record and its score-index entry.
    let table: [Copies; 5] = [
        (&[b"SET", b"big", &value], "+OK", [1, 1, 1, 1, 1]),
        (&[b"HSET", b"h", b"f", &value], ":1", [1, 1, 1, 1, 1]),
        (&[b"LPUSH", b"l", &value], ":1", [1, 1, 2, 1, 1]),
        (&[b"SADD", b"s", &value], ":1", [1, 1, 1, 4, 1]),
        (&[b"ZADD", b"z", b"1", &value], ":1", [2, 2, 2, 5, 2]),
    ];
    for (at, &format) in Format::ALL.iter().enumerate() {
        let served = Served::start(format);
        for (args, reply, counts) in &table {
            let mut c = served.client();
            let set = request(args);
            let copies = allocations_sized(VALUE..VALUE + 256, || {
                c.0.write_all(&set).unwrap();
                assert_eq!(c.line(), format!("{reply}\r\n"));
            });
            let name = String::from_utf8_lossy(args[0]);
            eprintln!("{format} {name}: {copies} allocations the size of the value");
            assert_eq!(copies, counts[at], "{format} {name}");
        }
        let mut c = served.client();
        c.send(&[b"STRLEN", b"big"]);
        assert_eq!(c.line(), format!(":{VALUE}\r\n"));
    }
}
