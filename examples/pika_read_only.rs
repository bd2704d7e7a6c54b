//! Reading a real Pika 3.x data directory without changing a byte of it.
//! The store opens as a RocksDB secondary instance: no file of it changes,
//! its lock is not taken (a running Pika's directory can be read), and no
//! compaction runs. Write commands are refused.
//!
//! `cargo run --release --example pika_read_only -- [DIR [CLOCK_MS]]`
//!
//! DIR defaults to the store Pika's own blackwidow library wrote for the
//! tests (`tests/fixtures/blackwidow/snappy-default`); with a real Pika it
//! is one database below Pika's `db-path`, e.g. `/data/pika/db/db0`.
//! CLOCK_MS reads the store as of that unix time in milliseconds (which
//! keys have expired); the system clock without it.

use std::collections::BTreeMap;
use std::sync::Arc;

use redcodec::{Engine, EngineOptions, Format, ManualClock, OpenFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/blackwidow/snappy-default"
        )
        .to_string()
    });
    let mut options = EngineOptions::read_only();
    if let Some(ms) = args.next() {
        options.clock = Arc::new(ManualClock::at_ms(ms.parse()?));
    }
    let engine = Engine::open_format(Format::Blackwidow, &dir, options)?;

    // Every live key, page by page, counted by type.
    let mut types = BTreeMap::new();
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = engine.keys_after(after.as_deref(), 1000)?;
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        for (_, data_type) in &page {
            let name = data_type.map_or("unreadable", |t| t.redis_name());
            *types.entry(name).or_insert(0) += 1;
        }
    }
    println!("live keys by type: {types:?}");

    // Commands read as Redis would answer them; writes are refused.
    println!("HLEN hash:big: {}", engine.execute(&["HLEN", "hash:big"]));
    println!(
        "LRANGE list:big 0 2: {:?}",
        engine
            .execute(&["LRANGE", "list:big", "0", "2"])
            .to_string()
    );
    println!("SET x y: {}", engine.execute(&["SET", "x", "y"]));
    Ok(())
}
