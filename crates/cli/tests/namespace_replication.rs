//! Kvrocks' namespace replication (`repl-namespace-enabled yes`) between
//! redcodec nodes of the kvrocks format: the master keeps its tokens in
//! its store (the configuration file loses its `namespace.` lines), a
//! replica learns them from the full copy and then from the stream, keeps
//! them in its own store, refuses to change them, and both keep them over
//! a restart; a store holding tokens refuses the setting switched off.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod serve_support;
use serve_support::{connect, store_dir, Serve};

mod replica_compare;
use replica_compare::{wait_link_up, BOUND};

const PASS: &str = "pwd";

fn admin(s: &Serve) -> redis::Connection {
    connect(&format!("redis://:{PASS}@{}/", s.addr))
}

/// `NAMESPACE GET *`: namespace and token pairs, the default last.
fn tokens(c: &mut redis::Connection) -> Vec<String> {
    redis::cmd("NAMESPACE")
        .arg("GET")
        .arg("*")
        .query(c)
        .unwrap()
}

fn namespace(c: &mut redis::Connection, args: &[&str]) -> redis::RedisResult<redis::Value> {
    redis::cmd("NAMESPACE").arg(args).query(c)
}

/// Polls the replica until its tokens are the master's (an error, such as
/// `-LOADING` during a full copy, is no answer yet).
fn wait_tokens(m: &mut redis::Connection, r: &mut redis::Connection, what: &str) {
    let deadline = Instant::now() + BOUND;
    loop {
        let want = tokens(m);
        let got: Vec<String> = redis::cmd("NAMESPACE")
            .arg("GET")
            .arg("*")
            .query(r)
            .unwrap_or_default();
        if want == got {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the replica's tokens {got:?} never became the master's {want:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start(dir: &Path, conf: &Path, extra: &[&str]) -> Serve {
    let conf = conf.to_str().unwrap();
    let mut args = vec!["--config", conf];
    args.extend_from_slice(extra);
    Serve::start("kvrocks", dir, &args)
}

#[test]
fn namespace_tokens_follow_the_master_and_outlive_restarts() {
    let confs = tempfile::tempdir().unwrap();
    let mconf = confs.path().join("master.conf");
    let rconf = confs.path().join("replica.conf");
    std::fs::write(
        &mconf,
        format!("requirepass {PASS}\nrepl-namespace-enabled yes\nnamespace.fromfile tfile\n"),
    )
    .unwrap();
    std::fs::write(
        &rconf,
        format!("requirepass {PASS}\nmasterauth {PASS}\nrepl-namespace-enabled yes\n"),
    )
    .unwrap();
    let (_m_tmp, mdir) = store_dir();
    let (_r_tmp, rdir) = store_dir();

    let master = start(&mdir, &mconf, &[]);
    // Kvrocks' start: the file's tokens move to the store.
    let text = std::fs::read_to_string(&mconf).unwrap();
    assert!(!text.contains("namespace."), "{text}");
    let mut m = admin(&master);
    namespace(&mut m, &["ADD", "early", "tearly"]).unwrap();
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut m).unwrap();
    assert_eq!(
        tokens(&mut m),
        ["early", "tearly", "fromfile", "tfile", "__namespace", PASS]
    );

    // The full copy carries the tokens.
    let replica = start(&rdir, &rconf, &["--replicaof", &master.addr]);
    let mut r = admin(&replica);
    wait_link_up(&mut r, "replica");
    wait_tokens(&mut m, &mut r, "after the full copy");

    // Then the stream: an added, a changed and a removed token.
    namespace(&mut m, &["ADD", "n1", "t1"]).unwrap();
    namespace(&mut m, &["SET", "early", "tearly2"]).unwrap();
    namespace(&mut m, &["DEL", "fromfile"]).unwrap();
    wait_tokens(&mut m, &mut r, "after the stream's changes");
    assert_eq!(
        tokens(&mut r),
        ["n1", "t1", "early", "tearly2", "__namespace", PASS]
    );
    // A learned token opens its namespace on the replica.
    let mut t1 = connect(&format!("redis://:t1@{}/", replica.addr));
    let _: () = redis::cmd("PING").query(&mut t1).unwrap();
    // The replica's tokens are its master's.
    let err = namespace(&mut r, &["ADD", "x", "y"]).unwrap_err();
    assert_eq!(
        (err.code(), err.detail()),
        (Some("ERR"), Some("namespace is read-only for slave"))
    );
    assert!(namespace(&mut r, &["GET", "n1"]).is_ok());
    // Tokens in the store keep the setting on.
    let err = redis::cmd("CONFIG")
        .arg("SET")
        .arg("repl-namespace-enabled")
        .arg("no")
        .query::<()>(&mut m)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot switch off repl_namespace_enabled when namespaces exist in db"),
        "{err}"
    );
    let on: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("repl-namespace-enabled")
        .query(&mut m)
        .unwrap();
    assert_eq!(on, ["repl-namespace-enabled", "yes"]);
    let before = tokens(&mut m);
    drop((m, r, t1));

    // Both keep them over a restart, from their stores.
    assert!(replica.signal("TERM").success());
    assert!(master.signal("TERM").success());
    let master = start(&mdir, &mconf, &[]);
    let mut m = admin(&master);
    assert_eq!(tokens(&mut m), before);
    // The replica's own store, before it follows again.
    let replica = start(&rdir, &rconf, &[]);
    let mut r = admin(&replica);
    assert_eq!(tokens(&mut r), before);
    let (host, port) = master.addr.rsplit_once(':').unwrap();
    let _: () = redis::cmd("REPLICAOF")
        .arg(host)
        .arg(port)
        .query(&mut r)
        .unwrap();
    wait_link_up(&mut r, "replica after the restarts");
    namespace(&mut m, &["DEL", "n1"]).unwrap();
    wait_tokens(&mut m, &mut r, "after the restarts");
    drop((m, r));
    assert!(replica.signal("TERM").success());
    assert!(master.signal("TERM").success());

    // A store holding tokens does not start with the setting off.
    let out = Command::new(env!("CARGO_BIN_EXE_redcodec"))
        .args(["serve", "--format", "kvrocks", "--port", "0", "--dir"])
        .arg(&mdir)
        .args(["--requirepass", PASS])
        .args(["--config-set", "repl-namespace-enabled=no"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot switch off repl_namespace_enabled when namespaces exist in db"),
        "{stderr}"
    );
}

#[test]
fn without_namespace_replication_the_tokens_stay_in_the_file_and_with_the_master() {
    let confs = tempfile::tempdir().unwrap();
    let mconf = confs.path().join("master.conf");
    let rconf = confs.path().join("replica.conf");
    std::fs::write(&mconf, format!("requirepass {PASS}\n")).unwrap();
    std::fs::write(&rconf, format!("requirepass {PASS}\nmasterauth {PASS}\n")).unwrap();
    let (_m_tmp, mdir) = store_dir();
    let (_r_tmp, rdir) = store_dir();
    let master = start(&mdir, &mconf, &[]);
    let replica = start(&rdir, &rconf, &["--replicaof", &master.addr]);
    let mut m = admin(&master);
    let mut r = admin(&replica);
    wait_link_up(&mut r, "replica");
    namespace(&mut m, &["ADD", "n1", "t1"]).unwrap();
    assert!(std::fs::read_to_string(&mconf)
        .unwrap()
        .contains("namespace.n1 t1"));
    // A write after the change has reached the replica: the change was
    // not sent.
    let _: () = redis::cmd("SET")
        .arg("after")
        .arg("1")
        .query(&mut m)
        .unwrap();
    let deadline = Instant::now() + BOUND;
    while redis::cmd("EXISTS")
        .arg("after")
        .query::<i64>(&mut r)
        .unwrap()
        == 0
    {
        assert!(Instant::now() < deadline, "the write never arrived");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        namespace(&mut r, &["GET", "n1"]).unwrap(),
        redis::Value::Nil
    );
    // The replica's own tokens may change (kept in its file).
    namespace(&mut r, &["ADD", "mine", "tmine"]).unwrap();
    assert!(std::fs::read_to_string(&rconf)
        .unwrap()
        .contains("namespace.mine tmine"));
}
