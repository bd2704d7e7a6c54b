//! Choosing the format at run time, from a string: a configuration value,
//! a command-line argument. `Format` parses the names the command line
//! uses (any case); `Format::codec` makes the codec, with a namespace or
//! cluster mode for the formats that have them.
//!
//! `cargo run --release --example format_by_name -- nemo`

use redcodec::{Codec, Engine, EngineOptions, Format, FormatOptions, OpenFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "floyd".to_string());
    let format: Format = name.parse()?;

    // A name no format has is an error that lists the known ones.
    if let Err(e) = "pika9".parse::<Format>() {
        println!("{e}");
    }

    // The layout the real system uses: instances (RocksDB directories) and
    // their column families.
    let codec = format.codec(&FormatOptions::default())?;
    for instance in &codec.layout().instances {
        let families: Vec<&str> = instance.column_families.iter().map(|cf| cf.name).collect();
        println!(
            "{format}: instance {:?}, column families {}",
            instance.dir,
            families.join(" ")
        );
    }

    // Kvrocks keeps a namespace in every key; Pika's formats have none.
    let tenant = FormatOptions {
        namespace: Some(b"tenant".to_vec()),
        cluster: false,
    };
    if let Err(e) = Format::Blackwidow.codec(&tenant) {
        println!("{e}");
    }

    let dir = std::env::temp_dir().join(format!("redcodec-by-name-{}", std::process::id()));
    let engine =
        Engine::open_format_with(Format::Kvrocks, &tenant, &dir, EngineOptions::default())?;
    engine.execute(&["SET", "k", "in the tenant namespace"]);
    println!(
        "kvrocks, namespace tenant: {}",
        engine.execute(&["GET", "k"])
    );

    drop(engine);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
