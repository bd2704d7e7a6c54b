//! Migration from code: a Kvrocks store copied into Pika 3's blackwidow
//! format, with progress reported by an `Observer`, then verified key by
//! key. `redcodec migrate --from kvrocks --src … --to blackwidow --dst …
//! --verify` does the same from the command line.
//!
//! `cargo run --release --example migrate`

use redcodec::migrate::{self, MigrateOptions, Observer, Plan, Tally, VerifyOptions};
use redcodec::{Engine, EngineOptions, Format, OpenFormat};

/// Prints the plan and every 10,000th element. The planning pass runs on a
/// thread of its own while the first batch fills, so the plan may come
/// after the first progress.
struct Progress {
    next: u64,
}

impl Observer for Progress {
    fn planned(&mut self, plan: &Plan) {
        println!("plan: {} keys, {} elements", plan.keys, plan.elements);
    }

    fn progressed(&mut self, done: &Tally) {
        while done.elements >= self.next {
            println!("progress: {} elements", self.next);
            self.next += 10_000;
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::temp_dir().join(format!("redcodec-migrate-{}", std::process::id()));
    let src = Engine::open_format(
        Format::Kvrocks,
        root.join("kvrocks"),
        EngineOptions::default(),
    )?;
    for i in 0..100 {
        let key = format!("hash:{i}");
        let mut args = vec!["HSET".to_string(), key];
        for f in 0..250 {
            args.extend([format!("field{f}"), format!("value{f}")]);
        }
        src.execute(&args);
    }
    src.execute(&["SET", "greeting", "hello"]);

    let dst = Engine::open_format(
        Format::Blackwidow,
        root.join("blackwidow"),
        EngineOptions::default(),
    )?;
    let mut progress = Progress { next: 10_000 };
    let report = migrate::migrate(&src, &dst, &MigrateOptions::default(), &mut progress)?;
    println!(
        "migrated {} keys, {} elements",
        report.migrated.keys, report.migrated.elements
    );

    let check = migrate::verify(&src, &dst, &VerifyOptions::default())?;
    println!(
        "verify: {} keys compared, {} equal, {} differ",
        check.source_keys, check.matching, check.differences
    );
    println!(
        "blackwidow says: {}",
        dst.execute(&["HGET", "hash:42", "field7"])
    );

    drop((src, dst));
    std::fs::remove_dir_all(&root)?;
    Ok(())
}
