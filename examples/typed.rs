//! An embedded store used through the typed API: hashes and sorted sets
//! without building command lines, whole values read and written at once,
//! expiries, and a walk over the keys.
//!
//! `cargo run --release --example typed`

use redcodec::{DataType, Engine, EngineOptions, Format, OpenFormat, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("redcodec-typed-{}", std::process::id()));
    let engine = Engine::open_format(Format::Blackwidow, &dir, EngineOptions::default())?;

    // A hash, field by field: HSET answers how many fields were new.
    let new = engine.hset("user:1", &[("name", "Ada"), ("lang", "en")])?;
    let lang = engine.hget("user:1", "lang")?;
    println!(
        "hset: {new} new fields; lang = {:?}",
        lang.as_deref().map(String::from_utf8_lossy)
    );

    // A sorted set: scores are exact f64s.
    engine.zadd("board", &[(1.5, "alice"), (3.0, "bob"), (2.25, "carol")])?;

    // Whole values: one read gives every element, in Redis' order.
    if let Some(stored) = engine.read("board")? {
        if let Value::ZSet(members) = stored.value {
            for (member, score) in members {
                println!("board: {} {score}", String::from_utf8_lossy(&member));
            }
        }
    }

    // Writing a whole value replaces the key atomically, with an absolute
    // expiry in unix milliseconds (0: none); PEXPIRE sets one relative to now.
    let fields = vec![(b"status".to_vec(), b"active".to_vec())];
    engine.write("session:9", &Value::Hash(fields), 0)?;
    engine.pexpire("session:9", 60_000)?;
    // Blackwidow keeps whole seconds, rounding an expiry up: the key lives
    // 60 to 61 s from now.
    let ttl = engine.pttl("session:9")?.flatten().unwrap_or(0);
    let about_a_minute = (59_000..=61_000).contains(&ttl);
    println!("session:9 expires in about a minute: {about_a_minute}");

    // Every live key with its type, in the store's key order.
    for (key, data_type) in engine.keys_after(None, 100)? {
        let name = data_type.map_or("unreadable", DataType::redis_name);
        println!("key {} ({name})", String::from_utf8_lossy(&key));
    }

    drop(engine);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
