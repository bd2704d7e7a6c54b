//! Serving a store to Redis clients from code: what `redcodec serve` does,
//! in a program of your own. The server speaks RESP2 and RESP3 on a store
//! of any format until a client sends SHUTDOWN (or the process gets
//! SIGTERM or SIGINT); then it flushes and closes the store.
//!
//! `cargo run --release --example serve`

use std::io::{Read, Write};
use std::net::TcpStream;

use redcodec::server::{Opener, Server, ServerConfig};
use redcodec::{Engine, EngineOptions, Format, OpenFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("redcodec-serve-{}", std::process::id()));
    let config = ServerConfig {
        port: 0, // any free port
        ..ServerConfig::new(dir.display().to_string())
    };
    // The server opens the store through this (again for each namespace a
    // client selects, for the formats that have namespaces).
    let store = dir.clone();
    let opener: Opener = Box::new(move |_namespace: &str| {
        Ok(Engine::open_format(
            Format::Floyd,
            &store,
            EngineOptions::default(),
        )?)
    });

    let runtime = tokio::runtime::Runtime::new()?;
    let server = runtime.block_on(Server::bind(config, opener))?;
    let addr = server.local_addr()?;
    println!("serving a floyd store on {addr}");
    let serving = runtime.spawn(server.serve());

    // Any Redis client works; here, inline commands over a plain socket.
    let mut client = TcpStream::connect(addr)?;
    client
        .write_all(b"SET greeting hello\r\nGET greeting\r\nZADD board 1.5 alice\r\nSHUTDOWN\r\n")?;
    let mut replies = String::new();
    client.read_to_string(&mut replies)?; // until SHUTDOWN closes the connection
    print!("{}", replies.replace("\r\n", "\n"));

    runtime.block_on(serving)??;
    println!("store flushed and closed");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
