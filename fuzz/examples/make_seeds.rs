//! Writes the seed corpora `fuzz/seeds/<target>/` from the project's
//! golden data: the records the real systems wrote (the `rawdump.txt` and
//! `rawrecords.txt` of `tests/fixtures/*/*.meta`) and the records of the
//! formats' worked examples (`formats-spec/*.md`, built here through each
//! codec as the crates' `worked_examples` tests build them); for the
//! request parser and the quoting splitter, the requests and command lines
//! of the protocol crate's and the `serve` tests; for the glob matcher, the
//! patterns of its tests.
//!
//! ```sh
//! cd fuzz && cargo run --release --example make_seeds
//! ```
//!
//! Each file is named by the hash of its bytes, so rerunning rewrites the
//! same files; a few dozen per target.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use redcodec_codec::{Codec, DataType, ListBounds, Meta, SparseIndex, SubId, SubKind, SubValue};
use redcodec_fuzz::join_chunks;
use redcodec_testkit::{sub_records, unhex};

/// At most this many seeds per target.
const MAX_SEEDS: usize = 40;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One line of a dump: instance, column family, key, value, and the
/// record's kind where the file gives it (`put`, `merge`, `delete`).
type Line = (String, String, Vec<u8>, Vec<u8>, String);

/// A key's base value (if any) and its merge operands, oldest first.
type Merges = (Option<Vec<u8>>, Vec<Vec<u8>>);

/// Every line of a dump.
fn dump(path: &str) -> Vec<Line> {
    let text = fs::read_to_string(root().join(path)).expect(path);
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            (f.len() >= 4).then(|| {
                (
                    f[0].to_string(),
                    f[1].to_string(),
                    unhex(f[2]),
                    unhex(f[3]),
                    f.get(4).unwrap_or(&"").to_string(),
                )
            })
        })
        .collect()
}

/// Up to `n` items spread evenly over `items`, after the first `first` of
/// each group `group_of` names.
fn sample<T: Clone>(
    items: &[T],
    n: usize,
    first: usize,
    group_of: impl Fn(&T) -> String,
) -> Vec<T> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    let mut rest = Vec::new();
    for item in items {
        let count = seen.entry(group_of(item)).or_default();
        if *count < first {
            out.push(item.clone());
        } else {
            rest.push(item.clone());
        }
        *count += 1;
    }
    if out.len() < n && !rest.is_empty() {
        let want = n - out.len();
        let step = rest.len().div_ceil(want).max(1);
        out.extend(rest.into_iter().step_by(step).take(want));
    }
    out.truncate(n);
    out
}

fn write(target: &str, seeds: &[Vec<u8>]) {
    let dir = root().join("fuzz/seeds").join(target);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let mut unique: Vec<&Vec<u8>> = seeds.iter().collect();
    unique.sort();
    unique.dedup();
    for seed in unique.iter().take(MAX_SEEDS) {
        // FNV-1a: a stable name from the bytes.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in seed.iter() {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        fs::write(dir.join(format!("{h:016x}")), seed).unwrap();
    }
    println!("{target}: {} seeds", unique.len().min(MAX_SEEDS));
}

/// The selector of the decode targets that picks metadata of `t`.
fn type_sel(t: DataType) -> u8 {
    DataType::ALL.iter().position(|x| *x == t).unwrap() as u8
}

/// A codec's records for the worked-example keys: metadata values and
/// keys of every type, element keys, range bounds and values.
fn codec_records<C: Codec>(
    c: &C,
    metas: &[Meta],
    ids: &[(SubKind, SubId)],
) -> Vec<(DataType, Vec<u8>)> {
    let mut out = Vec::new();
    for m in metas {
        let t = m.data_type;
        out.push((t, c.encode_meta(m).unwrap()));
        out.push((t, c.meta_record(b"k", t).unwrap().key));
        let own: Vec<(SubKind, SubId)> = ids
            .iter()
            .filter(|(kind, _)| kind.owner_type() == t)
            .cloned()
            .collect();
        for key in sub_records(c, m, &own) {
            out.push((t, key));
        }
        for (kind, _) in &own {
            let value = match kind {
                SubKind::HashField => SubValue::Bytes(b"v".to_vec()),
                SubKind::ZSetMember => SubValue::Score(1.5),
                SubKind::ListItem if matches!(m.list, ListBounds::Linked { .. }) => {
                    SubValue::Node {
                        prev: 1,
                        next: 0,
                        value: b"a".to_vec(),
                    }
                }
                SubKind::ListItem => SubValue::Bytes(b"a".to_vec()),
                _ => SubValue::Empty,
            };
            out.push((t, c.encode_sub_value(kind.of(b"k", m), value.view())));
        }
    }
    out
}

fn metas<C: Codec>(c: &C, version: u64, list: ListBounds) -> Vec<Meta> {
    DataType::ALL
        .into_iter()
        .map(|t| {
            let mut m = c.new_meta(t, version);
            if t == DataType::String {
                m.value = b"bar".to_vec();
            } else {
                m.size = 1;
            }
            if t == DataType::List {
                m.list = list.clone();
            }
            m
        })
        .collect()
}

fn ids(list: SubId) -> Vec<(SubKind, SubId)> {
    vec![
        (SubKind::HashField, SubId::Name(b"f".to_vec())),
        (SubKind::SetMember, SubId::Name(b"m".to_vec())),
        (SubKind::ZSetMember, SubId::Name(b"m".to_vec())),
        (
            SubKind::ZSetScore,
            SubId::Scored {
                score: 1.5,
                member: b"m".to_vec(),
            },
        ),
        (SubKind::ListItem, list),
    ]
}

fn with_sel(records: &[(DataType, Vec<u8>)]) -> Vec<Vec<u8>> {
    records
        .iter()
        .map(|(t, bytes)| {
            let mut s = vec![type_sel(*t)];
            s.extend_from_slice(bytes);
            s
        })
        .collect()
}

fn main() {
    // Kvrocks and nemo: no store written by the real system ships with
    // the tests; the worked examples' records (at the specs' clock).
    let kv = redcodec_kvrocks::KvrocksCodec::default();
    let kv_list = ListBounds::Array {
        head: u64::MAX / 2,
        tail: u64::MAX / 2 + 1,
    };
    let mut kv_seeds = with_sel(&codec_records(
        &kv,
        &metas(&kv, 0x3051_20C0_F200_0000, kv_list),
        &ids(SubId::Index(u64::MAX / 2)),
    ));
    // §10's legacy (32-bit) string, selector 5: a legacy-variant metadata.
    kv_seeds.push([&[5u8][..], &unhex("01 00000000 626172")].concat());
    write("kvrocks_decode", &kv_seeds);

    let nemo = redcodec_nemo::NemoCodec::default();
    let nemo_list = ListBounds::Linked {
        left: 1,
        right: 1,
        next_seq: 2,
    };
    let mut nemo_seeds = with_sel(&codec_records(
        &nemo,
        &metas(&nemo, 1_700_000_000, nemo_list),
        &ids(SubId::Seq(1)),
    ));
    for (record, value) in nemo.bootstrap_records() {
        nemo_seeds.push([&[0u8][..], &record.key].concat());
        nemo_seeds.push([&[0u8][..], &value].concat());
    }
    write("nemo_decode", &nemo_seeds);

    // Blackwidow: the store Pika's own library wrote.
    let bw = dump("tests/fixtures/blackwidow/snappy-default.meta/rawdump.txt");
    let bw_type = |instance: &str| match instance {
        "strings" => DataType::String,
        "hashes" => DataType::Hash,
        "sets" => DataType::Set,
        "lists" => DataType::List,
        _ => DataType::ZSet,
    };
    let mut bw_seeds = Vec::new();
    for (inst, cf, key, value, _) in sample(&bw, MAX_SEEDS / 2, 2, |r| format!("{}/{}", r.0, r.1)) {
        let _ = cf;
        let sel = type_sel(bw_type(&inst));
        bw_seeds.push([&[sel][..], &key].concat());
        bw_seeds.push([&[sel][..], &value].concat());
    }
    write("blackwidow_decode", &bw_seeds);
    let keys_of = |cf_inst: (&str, &str)| -> Vec<Vec<u8>> {
        bw.iter()
            .filter(|r| r.0 == cf_inst.0 && r.1 == cf_inst.1)
            .map(|r| r.2.clone())
            .collect()
    };
    let mut cmp_seeds = Vec::new();
    for (sel, keys) in [
        (0u8, keys_of(("lists", "data_cf"))),
        (1u8, keys_of(("zsets", "score_cf"))),
    ] {
        let step = (keys.len() / 10).max(1);
        for i in (0..keys.len().saturating_sub(2)).step_by(step).take(10) {
            let parts: [&[u8]; 3] = [&keys[i], &keys[i + 1], &keys[(i * 7 + 2) % keys.len()]];
            cmp_seeds.push([&[sel][..], &join_chunks(&parts, 3)].concat());
        }
    }
    write("blackwidow_comparators", &cmp_seeds);

    // Ardb: the stores the real server wrote (with and without merges).
    let ardb = dump("tests/fixtures/ardb/compat.meta/rawdump.txt");
    let mut ardb_seeds = Vec::new();
    for (i, (_, _, key, value, _)) in sample(&ardb, MAX_SEEDS / 2, 0, |r| r.1.clone())
        .into_iter()
        .enumerate()
    {
        let sel = (i % 15) as u8;
        ardb_seeds.push([&[sel][..], &key].concat());
        ardb_seeds.push([&[sel][..], &value].concat());
    }
    let ac = redcodec_ardb::ArdbCodec::default();
    let ardb_list = ListBounds::Sparse {
        min: SparseIndex::Int(0),
        max: SparseIndex::Float(0.5),
        sequential: false,
    };
    ardb_seeds.extend(with_sel(&codec_records(
        &ac,
        &metas(&ac, 0, ardb_list),
        &ids(SubId::Sparse(SparseIndex::Float(0.5))),
    )));
    write(
        "ardb_decode",
        &sample(&ardb_seeds, MAX_SEEDS, 0, |_| String::new()),
    );
    let ak: Vec<Vec<u8>> = ardb.iter().map(|r| r.2.clone()).collect();
    let mut ardb_cmp = Vec::new();
    let step = (ak.len() / 30).max(1);
    for i in (0..ak.len().saturating_sub(2)).step_by(step).take(30) {
        let parts: [&[u8]; 3] = [&ak[i], &ak[i + 1], &ak[(i * 13 + 5) % ak.len()]];
        ardb_cmp.push(join_chunks(&parts, 3));
    }
    write("ardb_comparator", &ardb_cmp);

    // The merge operands Ardb left on disk, each key's operands oldest
    // first over its base (or none).
    let records = dump("tests/fixtures/ardb/merge.meta/rawrecords.txt");
    let mut by_key: BTreeMap<Vec<u8>, Merges> = BTreeMap::new();
    // Listed newest first: walk them backwards.
    for (_, _, key, value, kind) in records.iter().rev() {
        let entry = by_key.entry(key.clone()).or_default();
        match kind.as_str() {
            "merge" => entry.1.push(value.clone()),
            "put" => *entry = (Some(value.clone()), Vec::new()),
            _ => *entry = (None, Vec::new()),
        }
    }
    let mut merge_seeds = Vec::new();
    for (key, (base, operands)) in &by_key {
        if operands.is_empty() {
            continue;
        }
        let mut parts: Vec<&[u8]> = vec![key, base.as_deref().unwrap_or(&[])];
        parts.extend(operands.iter().take(6).map(Vec::as_slice));
        merge_seeds.push([&[u8::from(base.is_some())][..], &join_chunks(&parts, 8)].concat());
    }
    write("ardb_merge", &merge_seeds);
    protocol_seeds();
}

/// Requests as the server's tests send them (multibulk, inline, pipelined,
/// cut short, and every protocol error), and command lines in redis-cli's
/// quoting as the splitter's tests write them.
fn protocol_seeds() {
    let requests: [&[u8]; 24] = [
        b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n",
        b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
        b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nrest",
        b"*2\r\n$3\r\nGET\r\n$10\r\nk",
        b"*0\r\n",
        b"*-1\r\nPING\r\n",
        b"*1\r\n$0\r\n\r\n",
        b"PING\r\n",
        b"PING\n",
        b"\r\n",
        b"set k \"a b\"\r\n",
        b"SET k 'it\\'s' \"\\x00\\xff\"\r\nGET k\r\n",
        b"PING",
        b"*x\r\n",
        b"*3000000000\r\n",
        b"*1\r\nfoo\r\n",
        b"*1\r\n$-1\r\n",
        b"*1\r\n$-5\r\n",
        b"*1\r\n$2000000000\r\n",
        b"*1\r\n$01\r\na\r\n",
        b"set k \"unbalanced\r\n",
        b"set k \"a\"b\r\n",
        b"*2\r\n$4\r\nLLEN\r\n$3\r\nabc\r\nLLEN abc\r\n*1\r\n$4\r\nPING\r\n",
    ];
    // Each request under limit selectors 5 (Redis' default) and 3 (16
    // bytes), split at seeds 0 and 7.
    let mut seeds = Vec::new();
    for (i, r) in requests.iter().enumerate() {
        seeds.push([&[5u8, 0][..], r].concat());
        if i % 3 == 0 {
            seeds.push([&[3u8, 7][..], r].concat());
        }
    }
    write("resp_request", &seeds);

    let lines: [&[u8]; 24] = [
        b"SET foo bar",
        b"  GET   foo  ",
        b"a\tb\r\nc",
        b"",
        b"\x0ba\x0bb",
        b"a\x0cb c",
        br"a\*b \x41",
        br#"SET "a b" c"#,
        br#"a "" b"#,
        br#""\x00\xff\x41\x4a\x4B""#,
        br#""\x4" "\xZZ" "\x""#,
        br#""\n\r\t\b\a""#,
        br#""\"\\\v\f\q\0\'""#,
        br"'\x41\n' 'it\'s'",
        br#"'a "b" c'"#,
        br#"ab"cd ef" x'y z' w"#,
        br#""a"	b 'a'"#,
        br#"SET "foo"bar x"#,
        b"'a''b'",
        br#"SET "foo bar"#,
        br#""abc\""#,
        b"a b\0c d",
        "SET k \u{e9}t\u{e9}".as_bytes(),
        br#"HSET h "f\x01" 'v w' 3"#,
    ];
    write(
        "cmdline",
        &lines.iter().map(|l| l.to_vec()).collect::<Vec<_>>(),
    );
    // Patterns and strings as `[flags (bit 0: no case), pattern length,
    // pattern, string]`: the glob tests' forms, a nested-star pattern and
    // CONFIG GET names.
    let globs: [(u8, &[u8], &[u8]); 10] = [
        (0, b"h*llo", b"hello"),
        (0, b"h[^e]llo", b"hallo"),
        (0, b"h[a-b]llo", b"hbllo"),
        (0, br"h\*llo", b"h*llo"),
        (0, br"h[\]]llo", b"h]llo"),
        (0, b"[a-\xff]", b"^"),
        (0, b"*?*?*?*?*?*?#", b"aaaaaaaaaaaaaaaaaaaaaaaa"),
        (1, b"MAXMEMORY*", b"maxmemory-policy"),
        (1, b"[A-C]x", b"bx"),
        (1, br"[\A]", b"a"),
    ];
    write(
        "glob",
        &globs
            .iter()
            .map(|(flags, p, s)| [&[*flags, p.len() as u8][..], p, s].concat())
            .collect::<Vec<_>>(),
    );
    // DUMP objects (payloads without their footer, which the target
    // adds): bytes redis-server 7.0.15 DUMPed, and the encoder's objects
    // for the encodings past the compact thresholds.
    let redis_payloads: [&[u8]; 7] = [
        b"\x00\x05hello\n\x00cr\xdfve4 \n",
        b"\x00\xc1\xd4\xfe\n\x00\xc6\xc4\x86#\xfe\xbe\xde.",
        b"\x00\xc3\t(\x01aa\xe0\x1b\x00\x01aa\n\x00\xcf\t/\xaa\xae%\x83\x1d",
        b"\x12\x01\x02\x18\x18\x00\x00\x00\x05\x00\x81a\x02\x01\x01\xdf\xfe\x02\x82bb\x03\xf2p\x11\x01\x04\xff\n\x00r\x9a\xeb\xca \xb1\xbc\xbb",
        b"\x0b\x10\x04\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\xa0\x86\x01\x00\n\x00\xd7\xb5H\xc0\x07ye\x15",
        b"\x11\x1a\x1a\x00\x00\x00\x06\x00\x81c\x02\xdf\xfd\x02\x81a\x02\x01\x01\x81b\x02\x832.5\x04\xff\n\x00\xa6\x8a\x1a\xb1\xa9\xf2\xdc\xc2",
        b"\x10\x12\x12\x00\x00\x00\x04\x00\x81a\x02\x01\x01\x81b\x02\x81x\x02\xff\n\x00x\x07Lk\xd9\xd7\x05\x1f",
    ];
    let mut rdb_seeds: Vec<Vec<u8>> = redis_payloads
        .iter()
        .map(|p| p[..p.len() - 10].to_vec())
        .collect();
    use redcodec_rdb::{encode_object, EncodeOptions, Value};
    let big: Vec<Vec<u8>> = (0..200)
        .map(|i| format!("element:{i}").into_bytes())
        .collect();
    for value in [
        Value::ZSet(big.iter().map(|m| (m.clone(), 0.5)).collect()),
        Value::Hash(big.iter().map(|m| (m.clone(), m.clone())).collect()),
        Value::Set(big.clone()),
        Value::List(big.iter().cycle().take(900).cloned().collect()),
    ] {
        rdb_seeds.push(encode_object(&value, EncodeOptions { compression: false }));
    }
    write("rdb_payload", &rdb_seeds);

    // Scripts' replies: Lua values (selector 0: a string; an array with a
    // hole; {err=…}; a map; a double; a verbatim string) and replies as
    // the server writes them (selector 1).
    let lua_seeds: Vec<Vec<u8>> = vec![
        b"\x00\x00\x03abc".to_vec(),
        b"\x00\x06\x03\x00\x01a\x04\x05\x90".to_vec(),
        b"\x00\x07\x00\x0bERR failed".to_vec(),
        b"\x00\x0c\x02\x00\x01k\x05\x90\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x13".to_vec(),
        b"\x00\x09\x02\x00\x00\x00\x00\x00\x00\xf8\x7f".to_vec(),
        b"\x00\x0b\x00\x03txt\x00\x02hi".to_vec(),
        b"\x01*3\r\n:1\r\n$-1\r\n+OK\r\n".to_vec(),
        b"\x01%2\r\n$1\r\na\r\n,1.5\r\n$1\r\nb\r\n#t\r\n".to_vec(),
        b"\x01~2\r\n(123\r\n=7\r\ntxt:abc\r\n".to_vec(),
    ];
    write("lua_reply", &lua_seeds);
}
