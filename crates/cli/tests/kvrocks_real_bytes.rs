//! Byte for byte against a real Apache Kvrocks 2.10.1: the script of
//! tests/fixtures/kvrocks-2.10/bytes.meta ran through the real server under a
//! frozen clock (its pairs before and after `COMPACT` are committed) is
//! replayed through `redcodec exec --fixed-clock` at the same clocks, and
//! every stored pair is compared: replies equal, pairs equal except the
//! differences formats-spec/kvrocks.md §11 declares, each with its reason.
//! The `cluster` fixture's script gives the same pairs in cluster mode.
//!
//! The other direction: the same script written with `--compat
//! kvrocks-2.10` (tests/fixtures/kvrocks-2.10/from-redcodec) was opened by
//! Kvrocks 2.10.1, which answered its read-back, then writes and `COMPACT`,
//! then the read-back again. redcodec answers all of it alike, and rebuilding
//! the store at the fixed clock gives the committed pairs. With a Kvrocks
//! binary named by `REDCODEC_KVROCKS_BIN` (else a recorded skip, a failure
//! with `REDCODEC_REQUIRE_KVROCKS=1`) the rebuilt store is served by it and
//! the same read-back, writes and read-back again are compared live.
//!
//! Versions are compared by their time part (`version >> 11`); their counter
//! part is renamed consistently: Kvrocks seeds its counter with `rand()` at
//! start-up and spends it on reads too, redcodec's fixed clock starts it at
//! 0 (formats-spec/kvrocks.md §4, §11).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

mod common;
use common::*;

mod kvrocks_support;
use kvrocks_support::{kvrocks_bin, Kvrocks};

/// The script's phases: first line (1-based) and clock in ms. Kvrocks was
/// restarted between them (PROVENANCE.md).
const PHASES: [(usize, &str); 2] = [(1, "1700000000000"), (104, "1700000050000")];

/// The clock of Kvrocks' `COMPACT` (five minutes' grace included, the
/// subkeys of keys expired by then are collected).
const COMPACT_CLOCK: &str = "1700000500000";

/// Pairs that differ before compaction: (side that holds it, family, key
/// hex, value hex), versions shown as `V`. See formats-spec/kvrocks.md §11.
const BEFORE: &[(&str, &str, &str, &str)] = &[
    // HINCRBYFLOAT: Kvrocks stores std::to_string ("%f"), Redis' text is "2.5".
    (
        "kvrocks",
        "default",
        "0b5f5f6e616d6573706163650000000a686173683a736d616c6cV666c",
        "322e353030303030",
    ),
    (
        "redcodec",
        "default",
        "0b5f5f6e616d6573706163650000000a686173683a736d616c6cV666c",
        "322e35",
    ),
    // SPOP of the last member: Kvrocks rewrites the record with size 0.
    (
        "kvrocks",
        "metadata",
        "0b5f5f6e616d6573706163657365743a73706f70",
        "840000000000000000V0000000000000000",
    ),
    // INCRBYFLOAT: as HINCRBYFLOAT.
    (
        "kvrocks",
        "metadata",
        "0b5f5f6e616d6573706163657374723a666c6f6174",
        "810000000000000000312e353030303030",
    ),
    (
        "redcodec",
        "metadata",
        "0b5f5f6e616d6573706163657374723a666c6f6174",
        "810000000000000000312e35",
    ),
    // PEXPIREAT in the past: Kvrocks writes the past expiry, Redis deletes.
    (
        "kvrocks",
        "metadata",
        "0b5f5f6e616d6573706163657374723a70617374",
        "8100000174876e800076",
    ),
];

/// After compaction only the float texts remain.
const AFTER: &[(&str, &str, &str, &str)] = &[BEFORE[0], BEFORE[1], BEFORE[3], BEFORE[4]];

fn meta(file: &str) -> String {
    meta_of("bytes", file)
}

/// A file of `tests/fixtures/kvrocks-2.10/<name>.meta/`.
fn meta_of(name: &str, file: &str) -> String {
    let path = fixture("kvrocks-2.10", &format!("{name}.meta")).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The read clock of the store redcodec wrote, at which Kvrocks read it,
/// wrote to it and compacted it (from-redcodec.meta/PROVENANCE.md).
const OPEN_CLOCK: &str = "1700000100000";

/// Replays script.txt into a new kvrocks store at `dir` as Kvrocks ran it:
/// each phase at its clock, `AUTH <token>` selecting the namespace (answered
/// OK), `NAMESPACE ADD` answered OK (with `repl-namespace-enabled no` it
/// writes nothing to the store); the replies in order.
fn replay(dir: &Path, extra: &[&str]) -> String {
    let tokens = tokens();
    let mut replies = String::new();
    let mut namespace = "__namespace".to_string();
    let mut clock = PHASES[0].1;
    let mut pending = String::new();
    let flush = |ns: &str, clock: &str, pending: &mut String, replies: &mut String| {
        if pending.is_empty() {
            return;
        }
        let (ok, stdout, stderr) = run(
            &Args::new("exec")
                .store("kvrocks", dir)
                .fixed_clock(clock)
                .with(&["--namespace", ns])
                .with(extra),
            pending,
        );
        assert!(ok, "{stderr}");
        replies.push_str(&stdout);
        pending.clear();
    };
    for (n, line) in meta("script.txt").lines().enumerate() {
        if let Some(&(_, at)) = PHASES.iter().find(|p| p.0 == n + 1) {
            flush(&namespace, clock, &mut pending, &mut replies);
            clock = at;
        }
        if let Some(token) = line.strip_prefix("AUTH ") {
            flush(&namespace, clock, &mut pending, &mut replies);
            namespace = tokens[token].clone();
            replies.push_str("OK\n");
        } else if line.starts_with("NAMESPACE ") {
            flush(&namespace, clock, &mut pending, &mut replies);
            replies.push_str("OK\n");
        } else {
            pending.push_str(line);
            pending.push('\n');
        }
    }
    flush(&namespace, clock, &mut pending, &mut replies);
    replies
}

/// Kvrocks' tokens and the namespace each selects.
fn tokens() -> BTreeMap<String, String> {
    meta("namespaces.txt")
        .lines()
        .map(|l| {
            let (t, n) = l.split_once('\t').expect("token\\tnamespace");
            (t.to_string(), n.to_string())
        })
        .collect()
}

/// A pair with its versions cut out: (family, key hex, value hex) with `V`
/// where a version was, the namespace, and the versions.
type Template = (String, String, String);

fn template(line: &str) -> (Template, Vec<u8>, Vec<u64>) {
    template_in(line, 0)
}

/// As `template`, for keys with `slot` bytes after the namespace (2 in
/// cluster mode).
fn template_in(line: &str, slot: usize) -> (Template, Vec<u8>, Vec<u64>) {
    let mut fields = line.split('\t');
    let (_, cf) = (fields.next(), fields.next().expect("cf").to_string());
    let key = hex::decode(fields.next().expect("key")).expect("hex");
    let value = hex::decode(fields.next().expect("value")).expect("hex");
    let ns = key[1..1 + key[0] as usize].to_vec();
    let version = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
    match cf.as_str() {
        // A collection's metadata: flags, expire, version, ... (new layout).
        "metadata" if value[0] & 0x0f != 1 => {
            let v = version(&value[9..17]);
            let shown = format!("{}V{}", hex::encode(&value[..9]), hex::encode(&value[17..]));
            ((cf, hex::encode(&key), shown), ns, vec![v])
        }
        "default" | "zset_score" | "stream" => {
            let at = 1 + key[0] as usize + slot;
            let len = u32::from_be_bytes(key[at..at + 4].try_into().unwrap()) as usize;
            let v_at = at + 4 + len;
            let v = version(&key[v_at..v_at + 8]);
            let shown = format!(
                "{}V{}",
                hex::encode(&key[..v_at]),
                hex::encode(&key[v_at + 8..])
            );
            ((cf, shown, hex::encode(&value)), ns, vec![v])
        }
        _ => ((cf, hex::encode(&key), hex::encode(&value)), ns, vec![]),
    }
}

/// Compares two dumps; returns the pairs held by one side only, as
/// (side, family, key, value), and checks that the versions of the pairs
/// both hold agree: equal time parts, and one renaming of the counter part
/// per namespace, the same in both directions.
fn compare(kvrocks: &str, ours: &str) -> Vec<(String, String, String, String)> {
    compare_in(kvrocks, ours, 0)
}

/// As `compare`, for keys with `slot` bytes after the namespace.
fn compare_in(kvrocks: &str, ours: &str, slot: usize) -> Vec<(String, String, String, String)> {
    type Side = BTreeMap<Template, Vec<(Vec<u8>, Vec<u64>)>>;
    let collect = |dump: &str| {
        let mut side = Side::new();
        for line in dump.lines() {
            let (t, ns, v) = template_in(line, slot);
            side.entry(t).or_default().push((ns, v));
        }
        for list in side.values_mut() {
            list.sort();
        }
        side
    };
    let (real, mine) = (collect(kvrocks), collect(ours));
    let mut only = Vec::new();
    let mut renaming: BTreeMap<(Vec<u8>, u64), u64> = BTreeMap::new();
    let mut reverse: BTreeMap<(Vec<u8>, u64), u64> = BTreeMap::new();
    let templates: std::collections::BTreeSet<&Template> = real.keys().chain(mine.keys()).collect();
    for t in templates {
        let (a, b) = (
            real.get(t).map_or(&[][..], |v| v),
            mine.get(t).map_or(&[][..], |v| v),
        );
        if a.len() != b.len() {
            let (side, n) = if a.len() > b.len() {
                ("kvrocks", a.len() - b.len())
            } else {
                ("redcodec", b.len() - a.len())
            };
            for _ in 0..n {
                only.push((side.into(), t.0.clone(), t.1.clone(), t.2.clone()));
            }
            continue;
        }
        for ((ns, theirs), (_, mine)) in a.iter().zip(b) {
            for (&x, &y) in theirs.iter().zip(mine) {
                assert_eq!(x >> 11, y >> 11, "{t:?}: version time {x:#x} vs {y:#x}");
                let to = *renaming.entry((ns.clone(), x)).or_insert(y);
                let from = *reverse.entry((ns.clone(), y)).or_insert(x);
                assert!(
                    to == y && from == x,
                    "{t:?}: version {x:#x} is {y:#x} here, {to:#x} elsewhere"
                );
            }
        }
    }
    only.sort();
    only
}

/// A list of differences, sorted as `compare` sorts its own.
fn declared(list: &[(&str, &str, &str, &str)]) -> Vec<(String, String, String, String)> {
    let mut out: Vec<_> = list
        .iter()
        .map(|&(a, b, c, d)| (a.into(), b.into(), c.into(), d.into()))
        .collect();
    out.sort();
    out
}

fn dump(dir: &Path) -> String {
    let (ok, stdout, stderr) = run(&Args::new("dump").store("kvrocks", dir), "");
    assert!(ok, "{stderr}");
    stdout
}

#[test]
fn a_script_writes_the_pairs_kvrocks_wrote_but_the_declared_differences() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("kv");
    assert_eq!(replay(&dir, &[]), meta("replies.txt"), "replies differ");

    let before = compare(&meta("rawdump.txt"), &dump(&dir));
    assert_eq!(before, declared(BEFORE), "pairs before compaction");

    // Compact at Kvrocks' compaction clock (--compat compacts when done).
    let (ok, _, stderr) = run(
        &Args::new("exec")
            .store("kvrocks", &dir)
            .fixed_clock(COMPACT_CLOCK)
            .with(&["--compat", "kvrocks-2.10", "--", "PING"]),
        "",
    );
    assert!(ok, "{stderr}");
    let after = compare(&meta("rawdump-compacted.txt"), &dump(&dir));
    assert_eq!(after, declared(AFTER), "pairs after compaction");
}

#[test]
fn the_comparison_sees_a_changed_byte() {
    // The comparison itself: one value byte or one version's time part
    // changed in Kvrocks' dump is found.
    let real = meta("rawdump-compacted.txt");
    let first = real.lines().next().expect("a pair");
    let changed = real.replacen(first, &format!("{first}00"), 1);
    assert_eq!(compare(&real, &real), vec![]);
    assert_eq!(compare(&changed, &real).len(), 2);
    let (t, _, v) = template(first);
    assert_eq!(v.len(), 1, "{t:?}");
    let shifted = real.replacen(
        &format!("{:016x}", v[0]),
        &format!("{:016x}", v[0] + (1 << 11)),
        1,
    );
    let caught = std::panic::catch_unwind(|| compare(&shifted, &real));
    assert!(caught.is_err(), "a version time changed unnoticed");
}

/// Runs a file of the from-redcodec fixture as Kvrocks ran it, at the open
/// clock: `AUTH <token>` selects the namespace (answered OK), `COMPACT`
/// compacts (`--compat` compacts when done; answered OK), the other lines
/// run in the namespace; read-only unless `write`.
fn run_as_kvrocks(dir: &Path, file: &str, write: bool) -> String {
    run_as_kvrocks_at(dir, file, write, Some(OPEN_CLOCK))
}

/// As `run_as_kvrocks`, at `clock` (ms), or at the real clock.
fn run_as_kvrocks_at(dir: &Path, file: &str, write: bool, clock: Option<&str>) -> String {
    let clock: &[&str] = match &clock {
        Some(ms) => &["--fixed-clock", ms],
        None => &[],
    };
    let tokens = tokens();
    let mut replies = String::new();
    let mut section: Option<(String, String)> = None;
    let flush = |section: &mut Option<(String, String)>, replies: &mut String| {
        if let Some((ns, script)) = section.as_mut().filter(|s| !s.1.is_empty()) {
            let mode: &[&str] = if write { &[] } else { &["--read-only"] };
            let (ok, stdout, stderr) = run(
                &Args::new("exec")
                    .with(mode)
                    .store("kvrocks", dir)
                    .with(clock)
                    .with(&["--namespace", ns]),
                script,
            );
            assert!(ok, "{stderr}");
            replies.push_str(&stdout);
            script.clear();
        }
    };
    for line in meta_of("from-redcodec", file).lines() {
        if let Some(token) = line.strip_prefix("AUTH ") {
            flush(&mut section, &mut replies);
            section = Some((tokens[token].clone(), String::new()));
            replies.push_str("OK\n");
        } else if line == "COMPACT" {
            flush(&mut section, &mut replies);
            let (ok, _, stderr) = run(
                &Args::new("exec").store("kvrocks", dir).with(clock).with(&[
                    "--compat",
                    "kvrocks-2.10",
                    "--",
                    "PING",
                ]),
                "",
            );
            assert!(ok, "{stderr}");
            replies.push_str("OK\n");
        } else {
            let (_, script) = section.as_mut().expect("AUTH first");
            script.push_str(line);
            script.push('\n');
        }
    }
    flush(&mut section, &mut replies);
    replies
}

#[test]
fn rebuilding_the_store_kvrocks_opened_gives_the_committed_pairs() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("kv");
    assert_eq!(
        replay(&dir, &["--compat", "kvrocks-2.10"]),
        meta("replies.txt"),
        "replies differ"
    );
    assert!(
        dump(&dir) == meta_of("from-redcodec", "rawdump.txt"),
        "the pairs of a --compat kvrocks-2.10 store changed: Kvrocks 2.10.1 opened the committed ones"
    );
    assert!(
        dump(&fixture("kvrocks-2.10", "from-redcodec")) == meta_of("from-redcodec", "rawdump.txt"),
        "the committed store and its pairs disagree"
    );
}

#[test]
fn kvrocks_answers_on_a_store_redcodec_wrote_are_redcodecs() {
    let store = fixture("kvrocks-2.10", "from-redcodec");
    let before = std::fs::read_dir(store.join("db"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.clone(), std::fs::read(p).unwrap())
        })
        .collect::<BTreeMap<_, _>>();
    assert_eq!(
        run_as_kvrocks(&store, "readback.txt", false),
        meta_of("from-redcodec", "readback.expected")
    );
    // Kvrocks' writes and COMPACT, then the read-back again, on a copy.
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("kv");
    copy_dir(&store, &copy);
    assert_eq!(
        run_as_kvrocks(&copy, "writes.txt", true),
        meta_of("from-redcodec", "writes.replies")
    );
    assert_eq!(
        run_as_kvrocks(&copy, "readback.txt", false),
        meta_of("from-redcodec", "readback-after.expected")
    );
    let after = std::fs::read_dir(store.join("db"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.clone(), std::fs::read(p).unwrap())
        })
        .collect::<BTreeMap<_, _>>();
    assert!(before == after, "the committed store changed");
}

#[test]
fn cluster_mode_pairs_equal_kvrocks_own() {
    // The `cluster` fixture's script (all at 1700000000, `COMPACT` in the
    // middle), without the keys of unmodelled types (named `um:*`), replayed
    // with --cluster: every reply and every pair of the modelled keys equal.
    let clock = "1700000000000";
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("kv");
    let script = meta_of("cluster", "script.txt");
    let replies = meta_of("cluster", "replies.txt");
    let (mut ours, mut theirs, mut pending) = (String::new(), String::new(), String::new());
    let exec = |extra: &[&str], stdin: &str| {
        let (ok, stdout, stderr) = run(
            &Args::new("exec")
                .store("kvrocks", &dir)
                .with(&["--cluster"])
                .fixed_clock(clock)
                .with(extra),
            stdin,
        );
        assert!(ok, "{stderr}");
        stdout
    };
    for (line, reply) in script.lines().zip(replies.lines()) {
        if line == "COMPACT" {
            ours.push_str(&exec(&[], &pending));
            pending.clear();
            exec(&["--compat", "kvrocks-2.10", "--", "PING"], "");
        } else if !(line.starts_with("AUTH ")
            || line.starts_with("CLUSTERX ")
            || line.contains("um:"))
        {
            pending.push_str(line);
            pending.push('\n');
            theirs.push_str(reply);
            theirs.push('\n');
        }
    }
    ours.push_str(&exec(&[], &pending));
    assert_eq!(ours, theirs, "replies");
    let modelled: String = meta_of("cluster", "rawdump.txt")
        .lines()
        .filter(|l| !l.split('\t').nth(2).unwrap().contains("756d3a"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (ok, mine, stderr) = run(
        &Args::new("dump")
            .store("kvrocks", &dir)
            .with(&["--cluster"]),
        "",
    );
    assert!(ok, "{stderr}");
    assert_eq!(modelled.lines().count(), 19);
    assert_eq!(compare_in(&modelled, &mine, 2), vec![]);
}

/// A real Kvrocks server on `dir` (which holds `db/`) with the
/// fixtures' password and the `ns1` token, at the real clock.
fn kvrocks_on(bin: &Path, dir: &Path) -> Kvrocks {
    Kvrocks::start_on(
        bin,
        Some(dir),
        "requirepass admin-pass\nnamespace.ns1 tok-ns1\n",
        Some("admin-pass"),
    )
}

/// `redis-cli --no-raw` against `k` with `script` on its standard input.
fn cli(k: &Kvrocks, script: &str) -> String {
    let mut child = Command::new("redis-cli")
        .args(["-p", &k.port.to_string(), "--no-raw"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-cli runs (needed with REDCODEC_KVROCKS_BIN)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    text(&child.wait_with_output().unwrap().stdout)
}

/// Equal line for line, but TTLs read a moment apart: both `(integer)`
/// above 100 (no count in this data is) and within 5 s of each other.
fn assert_same_answers(kvrocks: &str, redcodec: &str, what: &str) {
    assert_eq!(kvrocks.lines().count(), redcodec.lines().count(), "{what}");
    for (n, (a, b)) in kvrocks.lines().zip(redcodec.lines()).enumerate() {
        if a == b {
            continue;
        }
        let ttl = |l: &str| l.strip_prefix("(integer) ")?.parse::<i64>().ok();
        match (ttl(a), ttl(b)) {
            (Some(x), Some(y)) if x > 100 && y > 100 && (x - y).abs() <= 5 => {}
            _ => panic!("{what} line {}: kvrocks {a:?}, redcodec {b:?}", n + 1),
        }
    }
}

#[test]
fn a_real_kvrocks_opens_the_rebuilt_store_and_answers_as_redcodec() {
    // Needs a Kvrocks 2.8-2.10 server binary (REDCODEC_KVROCKS_BIN) and
    // redis-cli. Both run at the real clock: keys that expired in 2023 are
    // missing on both sides, TTLs of the far ones may differ by a moment.
    let Some(bin) = kvrocks_bin("a_real_kvrocks_opens_the_rebuilt_store_and_answers_as_redcodec")
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (served, ours) = (work.path().join("served"), work.path().join("ours"));
    replay(&served, &["--compat", "kvrocks-2.10"]);
    copy_dir(&served, &ours);
    let readback = meta_of("from-redcodec", "readback.txt");
    let ours_before = run_as_kvrocks_at(&ours, "readback.txt", false, None);
    let kvrocks = kvrocks_on(&bin, &served);
    assert_same_answers(&cli(&kvrocks, &readback), &ours_before, "read-back");
    let writes = meta_of("from-redcodec", "writes.txt");
    assert_eq!(
        cli(&kvrocks, &writes),
        run_as_kvrocks_at(&ours, "writes.txt", true, None),
        "writes"
    );
    let ours_after = run_as_kvrocks_at(&ours, "readback.txt", false, None);
    assert_same_answers(
        &cli(&kvrocks, &readback),
        &ours_after,
        "read-back after writes and COMPACT",
    );
}
