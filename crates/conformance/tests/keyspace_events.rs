//! Keyspace notifications against a real redis-server: every command of
//! the corpus (`scenarios/`) runs on redis-server, whose
//! `__keyevent@0__:*` messages a second connection reads, and on an
//! engine of each format, whose events a sink gathers; both publish the
//! classes `A` and `n`, and after each command the two lists of (event,
//! key) must be equal, in order.
//!
//! redis-server runs with its active expiry off (`DEBUG
//! SET-ACTIVE-EXPIRE 0`), so a key whose time ran out is announced
//! `expired` when a command meets it, as the engine announces it, and not
//! at a moment of redis-server's own choosing.
//!
//! Needs `redis-server` on PATH. Without it the test is skipped, unless
//! `REDCODEC_REQUIRE_REDIS=1`, where it fails.

use std::sync::{Arc, Mutex};

use redcodec_conformance::corpus_dir;
use redcodec_conformance::scenario::{self, Scenario, Step};
use redcodec_conformance::target::{EngineTarget, RedisServer, ServerTarget, Target};
use redcodec_engine::key_events::{EventClasses, KeyEvent, KeyEventSink};
use redcodec_engine::Reply;
use redcodec_formats::Format;

/// The classes both sides publish.
const CLASSES: &str = "EAn";

/// Cases whose events differ from redis-server's, and why.
const KNOWN: &[(&str, &str, &str)] = &[
    (
        "strings.txt",
        "set exat in the past deletes",
        "SET with an expiry already past stores nothing and announces \
         `expired` at once; redis-server stores the key expired and \
         announces `expired` when it next meets it",
    ),
    ("strings.txt", "set pxat in the past", "as above"),
];

/// One event as both sides are compared: its name and key.
type Seen = (String, Vec<u8>);

/// Gathers an engine's events.
struct Gather {
    classes: EventClasses,
    seen: Mutex<Vec<Seen>>,
}

impl KeyEventSink for Gather {
    fn classes(&self) -> EventClasses {
        self.classes
    }

    fn publish(&self, events: &[KeyEvent]) {
        let mut seen = self.seen.lock().expect("not poisoned");
        seen.extend(events.iter().map(|e| (e.event.to_string(), e.key.clone())));
    }
}

/// redis-server's events so far (on `__keyevent@0__:<event>`, the key).
fn redis_events(sub: &mut ServerTarget) -> Vec<Seen> {
    let messages = sub.messages().expect("subscriber reads");
    messages
        .into_iter()
        .map(|(channel, key)| {
            let event = channel
                .strip_prefix(b"__keyevent@0__:")
                .expect("a key-event channel");
            (String::from_utf8_lossy(event).into_owned(), key)
        })
        .collect()
}

/// Shows a list of events.
fn show(seen: &[Seen]) -> String {
    let items: Vec<String> = seen
        .iter()
        .map(|(e, k)| format!("{e} {}", String::from_utf8_lossy(k)))
        .collect();
    format!("[{}]", items.join(", "))
}

/// Runs every case of `scenarios` on redis-server and on `format`; the
/// mismatches, as lines.
fn compare(
    redis: &mut RedisServer,
    sub: &mut ServerTarget,
    format: Format,
    scenarios: &[Scenario],
    commands: &mut usize,
) -> Vec<String> {
    let mut engine = EngineTarget::new(format).expect("engine opens");
    let gather = Arc::new(Gather {
        classes: EventClasses::parse(CLASSES).expect("classes"),
        seen: Mutex::new(Vec::new()),
    });
    assert!(engine.engine().publish_key_events_to(gather.clone()));
    let caps = engine.expiry_caps();
    let redis_caps = redis.expiry_caps();
    let flush = vec![b"FLUSHALL".to_vec()];
    let mut mismatches = Vec::new();
    for scenario in scenarios {
        for case in &scenario.cases {
            // A case of a format's own expiry (whole seconds, a bounded
            // range) is not Redis behaviour; nor are the differences known.
            if case
                .requires
                .iter()
                .any(|r| !r.met_by(&caps) || !r.met_by(&redis_caps))
                || KNOWN
                    .iter()
                    .any(|(file, name, _)| scenario.file == *file && case.name == *name)
            {
                continue;
            }
            redis.execute(&flush).expect("redis flushes");
            engine.execute(&flush).expect("engine flushes");
            engine.begin_case();
            redis_events(sub);
            gather.seen.lock().expect("not poisoned").clear();
            for step in &case.steps {
                match step {
                    Step::Sleep(ms) => {
                        redis.advance_ms(*ms);
                        engine.advance_ms(*ms);
                    }
                    Step::State { .. } => {}
                    Step::Command {
                        line, text, args, ..
                    } => {
                        *commands += 1;
                        redis.execute(args).expect("redis runs");
                        engine.execute(args).expect("engine runs");
                        let mut want = redis_events(sub);
                        let mut got =
                            std::mem::take(&mut *gather.seen.lock().expect("not poisoned"));
                        // SCAN meets keys in redis-server's hash order.
                        if args[0].eq_ignore_ascii_case(b"scan") {
                            want.sort();
                            got.sort();
                        }
                        if want != got {
                            mismatches.push(format!(
                                "{format} {}:{line} ({}): {text}\n  redis:  {}\n  engine: {}",
                                scenario.file,
                                case.name,
                                show(&want),
                                show(&got)
                            ));
                        }
                    }
                }
            }
        }
    }
    mismatches
}

#[test]
fn every_format_publishes_the_events_redis_publishes() {
    let Some(mut redis) = RedisServer::start_with_or_skip(
        "keyspace notifications against real Redis",
        None,
        &["--enable-debug-command", "yes"],
    ) else {
        return;
    };
    for setting in [
        vec!["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
        vec!["CONFIG", "SET", "notify-keyspace-events", CLASSES],
    ] {
        let args: Vec<Vec<u8>> = setting.iter().map(|w| w.as_bytes().to_vec()).collect();
        assert_eq!(redis.execute(&args).expect("redis answers"), Reply::ok());
    }
    let mut sub = ServerTarget::connect("subscriber", redis.port()).expect("subscriber connects");
    sub.send(&[b"PSUBSCRIBE".to_vec(), b"__keyevent@0__:*".to_vec()])
        .expect("PSUBSCRIBE sent");
    sub.read_reply().expect("PSUBSCRIBE answered");
    let scenarios = scenario::load_dir(&corpus_dir()).expect("corpus parses");
    let mut mismatches = Vec::new();
    let mut commands = 0;
    for &format in Format::ALL {
        mismatches.extend(compare(
            &mut redis,
            &mut sub,
            format,
            &scenarios,
            &mut commands,
        ));
    }
    println!(
        "{commands} commands compared, {} mismatches",
        mismatches.len()
    );
    assert!(commands > 3000, "{commands} commands");
    let shown: Vec<&String> = mismatches.iter().take(400).collect();
    assert!(
        mismatches.is_empty(),
        "{} commands' events differ from redis-server's:\n{}",
        mismatches.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
