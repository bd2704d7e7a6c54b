//! A replica of a Pika master continues after a restart from the binlog
//! positions it saved (`redcodec-replica-state`'s `pika` lines): after a
//! crash, from the last quiet moment of the stream (a message of only
//! keep-alives); after a clean stop, from the last item applied. The
//! master is a fake that speaks Pika's replication protocol (the framed
//! protobuf of `redcodec_server::replica::pika::messages`, binlog items
//! in Pika's layout) and records every request; no Pika binary is needed.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redcodec_server::replica::pika::messages::{
    frame, frame_len, unframe, BinlogOffset, BinlogSyncResponse, InnerRequest, InnerResponse,
    MetaDbInfo, MetaSyncResponse, Slot, StatusCode, TrySyncReplyCode, TrySyncResponse, Type,
};

mod serve_support;
use serve_support::{store_dir, Serve};

mod fake_pika;
use fake_pika::BINLOG_FILE_SIZE;

/// The master's replication ID.
const REPLICATION_ID: &str = "4f1c0ffee";
/// The session the master gives every TrySync.
const SESSION: i32 = 7;

/// Binlog items waiting to go out: file number, offset after the item,
/// command.
type Pending = Mutex<VecDeque<(u32, u64, Vec<&'static str>)>>;

/// A fake Pika master: what it was asked, and the binlog items it sends
/// next (file number, offset after the item, command).
struct FakePika {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
    pending: Arc<Pending>,
}

impl FakePika {
    fn start() -> FakePika {
        let (client, repl, port) = fake_pika::listeners();
        fake_pika::serve_clients(client, "3.5.5");
        let fake = FakePika {
            port,
            requests: Arc::default(),
            pending: Arc::default(),
        };
        let (requests, pending) = (fake.requests.clone(), fake.pending.clone());
        std::thread::spawn(move || {
            for stream in repl.incoming().flatten() {
                let (r, p) = (requests.clone(), pending.clone());
                std::thread::spawn(move || replicate(stream, &r, &p));
            }
        });
        fake
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Queues a binlog item; it goes out on the stream within 50 ms.
    fn send(&self, filenum: u32, offset: u64, command: &[&'static str]) {
        let item = (filenum, offset, command.to_vec());
        self.pending.lock().unwrap().push_back(item);
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// A binlog item as Pika writes it: the 34-byte header, then the command
/// in RESP.
fn binlog_item(filenum: u32, offset: u64, command: &[&str]) -> Vec<u8> {
    let mut content = format!("*{}\r\n", command.len());
    for word in command {
        content.push_str(&format!("${}\r\n{word}\r\n", word.len()));
    }
    let mut out = Vec::new();
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&1_700_000_000u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&filenum.to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(&(content.len() as u32).to_le_bytes());
    out.extend_from_slice(content.as_bytes());
    out
}

fn offset(filenum: u32, offset: u64) -> BinlogOffset {
    BinlogOffset {
        filenum,
        offset,
        term: Some(1),
        index: Some(0),
    }
}

fn db0() -> Slot {
    Slot {
        db_name: "db0".into(),
        slot_id: 0,
    }
}

/// One message of binlog items of db0 (an empty `binlog`: a keep-alive).
fn binlog_sync(items: Vec<(u32, u64, Vec<u8>)>) -> InnerResponse {
    InnerResponse {
        r#type: Type::BinlogSync as i32,
        code: StatusCode::Ok as i32,
        binlog_sync: items
            .into_iter()
            .map(|(filenum, at, binlog)| BinlogSyncResponse {
                slot: db0(),
                binlog_offset: offset(filenum, at),
                binlog,
                session_id: SESSION,
            })
            .collect(),
        ..InnerResponse::default()
    }
}

/// The replication port: MetaSync names db0, TrySync continues from any
/// position, DBSync is refused (no dump here); once the stream starts,
/// queued items go out each in a message of its own, followed by a
/// message of one keep-alive.
fn replicate(mut stream: TcpStream, requests: &Mutex<Vec<String>>, pending: &Pending) {
    stream
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut buf = Vec::new();
    let mut streaming = false;
    loop {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
        while let Ok(Some(end)) = frame_len(&buf) {
            let request: InnerRequest = unframe(&buf[4..end]).expect("a request");
            buf.drain(..end);
            let reply = answer(&request, requests, &mut streaming);
            if let Some(reply) = reply {
                if stream.write_all(&frame(&reply)).is_err() {
                    return;
                }
            }
        }
        if streaming {
            let items: Vec<_> = pending.lock().unwrap().drain(..).collect();
            if !items.is_empty() {
                for (filenum, at, command) in items {
                    let item = binlog_item(filenum, at, &command);
                    let message = binlog_sync(vec![(filenum, at, item)]);
                    if stream.write_all(&frame(&message)).is_err() {
                        return;
                    }
                }
                let keep_alive = binlog_sync(vec![(0, 0, Vec::new())]);
                if stream.write_all(&frame(&keep_alive)).is_err() {
                    return;
                }
            }
        }
    }
}

fn answer(
    request: &InnerRequest,
    requests: &Mutex<Vec<String>>,
    streaming: &mut bool,
) -> Option<InnerResponse> {
    let mut log = requests.lock().unwrap();
    let ok = |kind: Type| InnerResponse {
        r#type: kind as i32,
        code: StatusCode::Ok as i32,
        ..InnerResponse::default()
    };
    match Type::try_from(request.r#type) {
        Ok(Type::MetaSync) => {
            log.push("MetaSync".into());
            Some(InnerResponse {
                meta_sync: Some(MetaSyncResponse {
                    classic_mode: true,
                    dbs_info: vec![MetaDbInfo {
                        db_name: "db0".into(),
                        slot_num: 1,
                        db_instance_num: None,
                    }],
                    run_id: "fake".into(),
                    replication_id: Some(REPLICATION_ID.into()),
                }),
                ..ok(Type::MetaSync)
            })
        }
        Ok(Type::TrySync) => {
            let at = &request.try_sync.as_ref()?.binlog_offset;
            log.push(format!("TrySync {}:{}", at.filenum, at.offset));
            Some(InnerResponse {
                try_sync: Some(TrySyncResponse {
                    reply_code: TrySyncReplyCode::Ok as i32,
                    slot: db0(),
                    binlog_offset: None,
                    session_id: Some(SESSION),
                }),
                ..ok(Type::TrySync)
            })
        }
        Ok(Type::DbSync) => {
            log.push("DBSync".into());
            Some(InnerResponse {
                code: StatusCode::Error as i32,
                reply: Some("no dump here".into()),
                ..ok(Type::DbSync)
            })
        }
        Ok(Type::BinlogSync) => {
            let sync = request.binlog_sync.as_ref()?;
            if sync.first_send {
                let at = &sync.ack_range_start;
                log.push(format!("BinlogSync from {}:{}", at.filenum, at.offset));
                *streaming = true;
            }
            None
        }
        _ => None,
    }
}

fn state_file(dir: &Path) -> std::path::PathBuf {
    dir.join("redcodec-replica-state")
}

/// Polls until `what` holds.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !ready() {
        assert!(Instant::now() < deadline, "never {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn get(serve: &Serve, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query(&mut serve.conn()).unwrap()
}

/// Waits until the state file names db0 at `filenum:offset`.
fn saved_at(dir: &Path, filenum: u32, offset: u64) {
    let line = format!("pika-db db0 {filenum} {offset}\n");
    wait_until(&format!("saved at {filenum}:{offset}"), || {
        std::fs::read_to_string(state_file(dir)).is_ok_and(|t| t.contains(&line))
    });
}

/// Waits until the master was asked TrySync from `at` (and never DBSync).
fn continued_from(fake: &FakePika, at: &str) {
    let want = format!("TrySync {at}");
    wait_until(&format!("TrySync from {at}"), || {
        fake.requests().contains(&want)
    });
    assert!(
        !fake.requests().iter().any(|r| r == "DBSync"),
        "{:?}",
        fake.requests()
    );
}

#[test]
fn a_pika_replica_continues_from_its_saved_binlog_position_after_a_crash_and_a_stop() {
    let fake = FakePika::start();
    let (_tmp, dir) = store_dir();
    let replicaof = ["--replicaof", &fake.addr()];

    // A store, and the state a replica saved at 0:50 of the master's
    // binlog beside it.
    let serve = Serve::start("kvrocks", &dir, &[]);
    let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").query(&mut serve.conn());
    assert!(serve.wait().success());
    std::fs::write(
        state_file(&dir),
        format!(
            "redcodec-replica-state 1\nreplid {}\noffset 50\ndb -\npika {} {BINLOG_FILE_SIZE} {REPLICATION_ID}\npika-db db0 0 50\n",
            "0".repeat(40),
            fake.addr()
        ),
    )
    .unwrap();
    fake.send(0, 120, &["SET", "a", "1"]);
    let serve = Serve::start("kvrocks", &dir, &replicaof);
    continued_from(&fake, "0:50");
    wait_until("a applied", || get(&serve, "a").as_deref() == Some("1"));
    // The keep-alive after it: quiet, so the position is saved.
    saved_at(&dir, 0, 120);

    // A crash: the next start continues from the last quiet position.
    let pid = serve.pid().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap()
        .success());
    drop(serve);
    fake.send(0, 200, &["SET", "b", "2"]);
    let serve = Serve::start("kvrocks", &dir, &replicaof);
    continued_from(&fake, "0:120");
    wait_until("b applied", || get(&serve, "b").as_deref() == Some("2"));
    assert_eq!(get(&serve, "a").as_deref(), Some("1"));

    // A clean stop saves where the stream is; the next start goes on.
    let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").query(&mut serve.conn());
    assert!(serve.wait().success());
    saved_at(&dir, 0, 200);
    fake.send(1, 10, &["SET", "c", "3"]);
    let serve = Serve::start("kvrocks", &dir, &replicaof);
    continued_from(&fake, "0:200");
    wait_until("c applied", || get(&serve, "c").as_deref() == Some("3"));
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query(&mut serve.conn())
        .unwrap();
    // Pika's measure: file 1 × 1000 + 10.
    assert!(info.contains("slave_repl_offset:1010\r\n"), "{info}");
}

#[test]
fn a_store_copied_from_a_pika_dump_follows_its_master_from_the_dumps_binlog_position() {
    let fake = FakePika::start();
    // A Pika 3.5 dump of db0: a blackwidow store and the `info` file
    // Pika's BGSAVE writes (seconds, host, port, binlog file, offset).
    let dump = tempfile::tempdir().unwrap();
    let db0 = dump.path().join("db0");
    let exec = std::process::Command::new(env!("CARGO_BIN_EXE_redcodec"))
        .args(["exec", "--format", "blackwidow", "--dir"])
        .arg(&db0)
        .args(["--", "SET", "from-the-dump", "1"])
        .output()
        .unwrap();
    assert!(exec.status.success(), "{exec:?}");
    std::fs::write(
        db0.join("info"),
        format!("2s\n127.0.0.1\n{}\n3\n700\n", fake.port),
    )
    .unwrap();

    let (_tmp, dir) = store_dir();
    let migrate = std::process::Command::new(env!("CARGO_BIN_EXE_redcodec"))
        .args(["migrate", "--from", "blackwidow", "--src"])
        .arg(&db0)
        .args(["--to", "kvrocks", "--dst"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(migrate.status.success(), "{migrate:?}");
    let said = String::from_utf8_lossy(&migrate.stdout);
    assert!(
        said.contains(&format!(
            "the copy is at binlog db0 3:700 of the Pika master {}",
            fake.addr()
        )),
        "{said}"
    );

    fake.send(3, 800, &["SET", "from-the-binlog", "2"]);
    let serve = Serve::start("kvrocks", &dir, &["--replicaof", &fake.addr()]);
    continued_from(&fake, "3:700");
    wait_until("the binlog applied", || {
        get(&serve, "from-the-binlog").as_deref() == Some("2")
    });
    assert_eq!(get(&serve, "from-the-dump").as_deref(), Some("1"));
    // The master's replication ID is taken from now on.
    saved_at(&dir, 3, 800);
    let state = std::fs::read_to_string(state_file(&dir)).unwrap();
    assert!(
        state.contains(&format!("pika {} 1000 {REPLICATION_ID}\n", fake.addr())),
        "{state}"
    );
}
