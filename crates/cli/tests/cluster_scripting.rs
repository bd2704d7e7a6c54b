//! Scripts on a cluster node: declared keys are routed with EVAL and
//! FCALL themselves (one slot, served here), and every key a script's
//! commands touch is checked as Redis 7.0 checks it (`unit/cluster-scripting`
//! and `scriptVerifyClusterState`). The refusals inside scripts are
//! compared, reply for reply, with a real redis-server in cluster mode.

use std::path::Path;

mod serve_support;

mod cluster_support;
use cluster_support::{node_id, set_nodes, topology, Conn, Node, R};
use redcodec_conformance::target::RedisServer;

/// Keys in the slots both servers serve (0-8191), in two slots, and a
/// key of a slot neither serves (redcodec: another node's; redis-server:
/// no node's).
const LOCAL_A: &str = "bar"; // slot 5061
const LOCAL_B: &str = "hello"; // slot 866
const REMOTE: &str = "foo"; // slot 12182

/// A library whose function writes two slots, with the given flags.
fn cross_slot_library(flags: &str) -> String {
    format!(
        "#!lua name=crossslot\n\
         local function test_cross_slot(keys, args)\n\
         redis.call('set', '{LOCAL_A}', 'f1')\n\
         redis.call('set', '{LOCAL_B}', 'f2')\n\
         return 'OK'\n\
         end\n\
         redis.register_function{{function_name='test_cross_slot', callback=test_cross_slot, flags={{ {flags} }}}}"
    )
}

/// The commands compared, each with the reply both servers must give.
fn script_commands() -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
    let two_slots = format!(
        "redis.call('set', '{LOCAL_A}', '1')\nredis.call('set', '{LOCAL_B}', '2')\nreturn 'OK'"
    );
    vec![
        // Shebang scripts may not cross slots; scripts without one may.
        s(&["EVAL", &format!("#!lua\n{two_slots}"), "0"]),
        s(&["EVAL", &two_slots, "0"]),
        s(&[
            "EVAL",
            &format!("#!lua flags=allow-cross-slot-keys\n{two_slots}"),
            "0",
        ]),
        // A key that disagrees with the declared one.
        s(&[
            "EVAL",
            &format!("#!lua\nredis.call('set', '{LOCAL_A}', '3')\nreturn 'OK'"),
            "1",
            LOCAL_B,
        ]),
        // The declared key's slot, then an undeclared key of it.
        s(&[
            "EVAL",
            "#!lua\nredis.call('set', KEYS[1], '4')\nreturn redis.call('get', KEYS[1])",
            "1",
            LOCAL_A,
        ]),
        // A key no slot of this node holds, with call and pcall, and in
        // a read-only run.
        s(&[
            "EVAL",
            &format!("return redis.call('set', '{REMOTE}', '5')"),
            "0",
        ]),
        s(&[
            "EVAL",
            &format!("return redis.pcall('get', '{REMOTE}')"),
            "0",
        ]),
        s(&[
            "EVAL_RO",
            &format!("return redis.call('get', '{REMOTE}')"),
            "0",
        ]),
        // One command over two slots.
        s(&[
            "EVAL",
            &format!("return redis.call('mset', '{LOCAL_A}', '6', '{LOCAL_B}', '7')"),
            "0",
        ]),
        // A script flagged no-cluster.
        s(&["EVAL", "#!lua flags=no-cluster\nreturn 1", "0"]),
        s(&["EVAL", "return 1", "0"]),
        // Functions: no cross-slot access unless flagged.
        s(&["FUNCTION", "LOAD", "REPLACE", &cross_slot_library("")]),
        s(&["FCALL", "test_cross_slot", "0"]),
        s(&[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            &cross_slot_library("'allow-cross-slot-keys'"),
        ]),
        s(&["FCALL", "test_cross_slot", "0"]),
        s(&[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            &cross_slot_library("'no-cluster'"),
        ]),
        s(&["FCALL", "test_cross_slot", "0"]),
        // What the scripts left.
        s(&["GET", LOCAL_A]),
        s(&["GET", LOCAL_B]),
    ]
}

fn run(c: &mut Conn, commands: &[Vec<String>]) -> Vec<R> {
    commands
        .iter()
        .map(|cmd| {
            let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
            c.call(&args)
        })
        .collect()
}

/// A one-node redis-server cluster serving slots 0-8191.
fn redis_cluster(dir: &Path) -> Option<RedisServer> {
    let server = RedisServer::start_with_or_skip(
        "scripts_on_a_cluster_node_refuse_keys_as_redis_does",
        Some(dir),
        &[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-require-full-coverage",
            "no",
        ],
    )?;
    let mut c = Conn::open(&format!("127.0.0.1:{}", server.port()));
    assert_eq!(c.call(&["CLUSTER", "ADDSLOTSRANGE", "0", "8191"]), R::ok());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let R::Bulk(Some(info)) = c.call(&["CLUSTER", "INFO"]) else {
            panic!("CLUSTER INFO")
        };
        if String::from_utf8_lossy(&info).contains("cluster_state:ok") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "redis-server's cluster never became ok"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Some(server)
}

/// A redcodec node serving slots 0-8191 beside a node (never reached)
/// serving the rest.
fn redcodec_node() -> Node {
    let node = Node::start(0, &[]);
    let text = topology(&[
        (&node.id, node.port(), "0-8191"),
        (&node_id(1), 1, "8192-16383"),
    ]);
    set_nodes(std::slice::from_ref(&node), &text, 1);
    node
}

#[test]
fn scripts_on_a_cluster_node_refuse_keys_as_redis_does() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(redis) = redis_cluster(tmp.path()) else {
        return;
    };
    let node = redcodec_node();
    let mut c = node.conn();
    for (key, slot) in [(LOCAL_A, 5061), (LOCAL_B, 866), (REMOTE, 12182)] {
        assert_eq!(c.call(&["CLUSTER", "KEYSLOT", key]), R::Int(slot), "{key}");
    }
    let commands = script_commands();
    let theirs = run(
        &mut Conn::open(&format!("127.0.0.1:{}", redis.port())),
        &commands,
    );
    let ours = run(&mut c, &commands);
    for ((cmd, ours), theirs) in commands.iter().zip(&ours).zip(&theirs) {
        assert_eq!(ours, theirs, "{cmd:?}");
    }
    // The refusals are the ones Redis' cluster-scripting tests expect.
    let refused = |i: usize| match &ours[i] {
        R::Error(e) => e.clone(),
        other => panic!("{:?} answered {other:?}", commands[i]),
    };
    let cross = "ERR Script attempted to access keys that do not hash to the same slot";
    let non_local = "ERR Script attempted to access a non local key in a cluster node";
    for i in [0, 3, 12] {
        assert!(refused(i).starts_with(cross), "{}", refused(i));
    }
    for i in [5, 7, 8] {
        assert!(refused(i).starts_with(non_local), "{}", refused(i));
    }
    assert_eq!(
        refused(9),
        "ERR Can not run script on cluster, 'no-cluster' flag is set."
    );
    // Nothing of the remote key was written here.
    assert_eq!(c.call(&["DBSIZE"]), R::Int(2));
}

#[test]
fn declared_keys_are_routed_with_the_script() {
    let node = redcodec_node();
    let mut c = node.conn();
    let other = "MOVED 12182 127.0.0.1:1".to_string();
    for cmd in ["EVAL", "EVAL_RO"] {
        assert_eq!(
            c.call(&[cmd, "return 1", "1", REMOTE]),
            R::err(&other),
            "{cmd}"
        );
        assert_eq!(
            c.call(&[cmd, "return 1", "2", LOCAL_A, LOCAL_B]),
            R::err("CROSSSLOT Attempted to access keys that don't hash to the same slot"),
            "{cmd}"
        );
    }
    let R::Bulk(Some(sha)) = c.call(&["SCRIPT", "LOAD", "return KEYS[1]"]) else {
        panic!("SCRIPT LOAD")
    };
    let sha = String::from_utf8(sha).unwrap();
    assert_eq!(c.call(&["EVALSHA", &sha, "1", REMOTE]), R::err(&other));
    assert_eq!(c.call(&["EVALSHA", &sha, "1", LOCAL_A]), R::bulk(LOCAL_A));
    let lib = "#!lua name=k\nredis.register_function('k', function(keys) return keys[1] end)";
    assert_eq!(c.call(&["FUNCTION", "LOAD", lib]), R::bulk("k"));
    assert_eq!(c.call(&["FCALL", "k", "1", REMOTE]), R::err(&other));
    assert_eq!(c.call(&["FCALL_RO", "k", "1", REMOTE]), R::err(&other));
    assert_eq!(c.call(&["FCALL", "k", "1", LOCAL_B]), R::bulk(LOCAL_B));
    // In MULTI, the script is routed as it is queued, as any command; a
    // refused one aborts the transaction.
    assert_eq!(c.call(&["MULTI"]), R::ok());
    assert_eq!(c.call(&["EVAL", "return 1", "1", REMOTE]), R::err(&other));
    assert_eq!(
        c.call(&["EVAL", "return 1", "1", LOCAL_A]),
        R::Status("QUEUED".into())
    );
    assert_eq!(
        c.call(&["EXEC"]),
        R::err("EXECABORT Transaction discarded because of previous errors.")
    );
}
