//! The quick start: a store in Kvrocks' on-disk format, embedded.

use redcodec::{Engine, EngineOptions, Format, OpenFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A store in Kvrocks' on-disk format; any `Format` works the same.
    let dir = std::env::temp_dir().join(format!("redcodec-quickstart-{}", std::process::id()));
    let engine = Engine::open_format(Format::Kvrocks, &dir, EngineOptions::default())?;

    // Redis commands, answered as Redis 7 answers them, printed as redis-cli prints them.
    let reply = engine.execute(&["HSET", "user:1", "name", "Ada", "lang", "en"]);
    println!("{reply}");
    println!("{}", engine.execute(&["INCR", "user:1"]));

    // The same engine, typed.
    engine.zadd("board", &[(1.5, "alice"), (3.0, "bob")])?;
    let name = engine.hget("user:1", "name")?.unwrap_or_default();
    let score = engine.execute(&["ZSCORE", "board", "bob"]);
    println!("{} {score}", String::from_utf8(name)?);

    drop(engine); // closes the store
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
