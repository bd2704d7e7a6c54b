//! `redcodec migrate --from redis://… --follow`: the operator's cut-over
//! path. A full copy of a master into a store, then every write as it
//! happens, through the very replica `serve --replicaof` runs (this module
//! starts that server on a loopback port and watches it): the same
//! handshake, spooled RDB, stream, ACKs, partial resynchronisation, and
//! the replication state kept for a restart ([`super::resume`]).
//!
//! While it runs it reports on stderr: the phase, the RDB bytes received
//! and keys loaded, then the offset applied, the lag in bytes against the
//! master's `master_repl_offset` (read with `INFO replication` over a
//! second connection), the seconds since the last write was applied, and
//! the keys in the destination. With `until_caught_up` it stops once the
//! lag has stayed at 0 that long: every sample (four a second) found the
//! offset applied at the master's, and no write arrived meanwhile (the
//! master's keep-alive `PING`s move its offset but write nothing).

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redcodec_engine::Reply;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::LinkPhase;
use crate::config::ServerConfig;
use crate::engines::Opener;
use crate::error::ServerError;
use crate::server::Server;
use crate::state::Shared;
use humansize::{format_size, BINARY};
use num_format::{Locale, ToFormattedString};

/// How the follower runs.
#[derive(Clone, Debug, Default)]
pub struct FollowOptions {
    /// Stop once the lag has stayed at 0 this long (`None`: follow until
    /// stopped).
    pub until_caught_up: Option<Duration>,
    /// stderr is a terminal: one progress line rewritten in place, four
    /// times a second; otherwise a new line every few seconds.
    pub interactive: bool,
}

/// Where the follower stopped.
#[derive(Clone, Debug)]
pub struct FollowReport {
    /// The lag stayed at 0 for `until_caught_up` (otherwise it was
    /// stopped: a signal, or SHUTDOWN on its port).
    pub caught_up: bool,
    /// The replication offset applied to the store.
    pub offset: i64,
    /// The master's `master_repl_offset` last read, if it could be read.
    pub master_offset: Option<i64>,
    /// Keys in the destination (database 0), counted at the end when
    /// caught up, else the last count.
    pub keys: Option<u64>,
    /// The replication state was saved for a partial resync next time.
    pub state_saved: bool,
    /// The master's commands this server does not have, not applied
    /// since the last full copy, as `name=count,…` (empty: none): the
    /// destination differs from the master in their keys.
    pub unknown_commands: String,
}

impl FollowReport {
    /// Why the destination differs from the master although caught up in
    /// offsets: the master's commands it does not have, not applied
    /// (`None`: none). An operator must not cut over then.
    pub fn differs(&self) -> Option<String> {
        (!self.unknown_commands.is_empty()).then(|| {
            format!(
                "the master sent commands redcodec does not have, not applied: {}; the keys they wrote differ from the master's",
                self.unknown_commands
            )
        })
    }
}

/// The master's `master_repl_offset`, read over a connection of its own.
struct MasterProbe {
    host: String,
    port: u16,
    auth: Option<String>,
    conn: Option<BufReader<TcpStream>>,
}

impl MasterProbe {
    /// Sends a command and reads a bulk (or status) reply.
    async fn ask(conn: &mut BufReader<TcpStream>, args: &[&[u8]]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        redcodec_protocol::encode_request(args, &mut out);
        conn.get_mut().write_all(&out).await?;
        let mut line = String::new();
        conn.read_line(&mut line).await?;
        let line = line.trim_end();
        if let Some(len) = line.strip_prefix('$') {
            let len: usize = len
                .parse()
                .map_err(|_| std::io::Error::other(format!("bad reply '{line}'")))?;
            let mut body = vec![0u8; len + 2];
            conn.read_exact(&mut body).await?;
            body.truncate(len);
            return Ok(body);
        }
        if line.starts_with('+') {
            return Ok(line.as_bytes().to_vec());
        }
        Err(std::io::Error::other(format!(
            "the master answered '{line}'"
        )))
    }

    async fn connect(&self) -> std::io::Result<BufReader<TcpStream>> {
        let stream = TcpStream::connect((self.host.as_str(), self.port)).await?;
        let mut conn = BufReader::new(stream);
        if let Some(pass) = &self.auth {
            Self::ask(&mut conn, &[b"AUTH", pass.as_bytes()]).await?;
        }
        Ok(conn)
    }

    /// `master_repl_offset` from `INFO replication`; `None` when the
    /// master cannot be asked (connected again next time).
    async fn offset(&mut self) -> Option<i64> {
        let asked = tokio::time::timeout(Duration::from_secs(5), async {
            if self.conn.is_none() {
                self.conn = Some(self.connect().await?);
            }
            let conn = self.conn.as_mut().expect("connected");
            Self::ask(conn, &[b"INFO", b"replication"]).await
        })
        .await;
        match asked {
            Ok(Ok(text)) => {
                let text = String::from_utf8_lossy(&text);
                // A Pika master has no master_repl_offset: its own
                // measure is what its replica's offset counts
                // ([`super::pika`]).
                let name = if text.contains(":binlog_offset=") {
                    "slave_repl_offset:"
                } else {
                    "master_repl_offset:"
                };
                text.lines()
                    .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
            }
            _ => {
                self.conn = None;
                None
            }
        }
    }
}

/// Keys of database 0 in the destination (a walk of the store).
fn count_keys(shared: &Shared) -> Option<u64> {
    let engine = shared
        .engines
        .shared(&shared.config.default_namespace)
        .ok()?;
    match engine.execute(&[b"dbsize".as_slice()]) {
        Reply::Integer(n) => u64::try_from(n).ok(),
        _ => None,
    }
}

async fn count_keys_async(shared: &Arc<Shared>) -> Option<u64> {
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || count_keys(&shared))
        .await
        .ok()
        .flatten()
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    n.to_formatted_string(&Locale::en)
}

/// Bytes in B, KiB, MiB or GiB, one decimal.
fn human_bytes(n: i64) -> String {
    match n.unsigned_abs() {
        small if small < 1024 => format!("{n} B"),
        size => {
            let text = format_size(size, BINARY.decimal_places(1).decimal_zeroes(1));
            if n < 0 {
                format!("-{text}")
            } else {
                text
            }
        }
    }
}

/// What one progress line says, and which phase it is about.
struct Sample {
    phase: &'static str,
    line: String,
}

/// The line for the link's state now.
fn describe(
    shared: &Shared,
    master: &(String, u16),
    master_offset: Option<i64>,
    keys: Option<u64>,
) -> Sample {
    let replica = &shared.replica;
    let st = replica.state.lock().clone();
    let error = st
        .last_error
        .as_ref()
        .map_or(String::new(), |e| format!(" (last error: {e})"));
    match st.phase {
        LinkPhase::Connecting | LinkPhase::Down => Sample {
            phase: "connecting",
            line: format!("connecting to the master {}:{}{error}", master.0, master.1),
        },
        LinkPhase::Syncing if replica.is_loading() => Sample {
            phase: "loading",
            line: format!(
                "full copy: loading the RDB, {} keys loaded",
                thousands(replica.loaded_keys.load(Ordering::Relaxed))
            ),
        },
        LinkPhase::Syncing => {
            let total = if st.sync_total >= 0 {
                let perc = if st.sync_total > 0 {
                    st.sync_read as f64 / st.sync_total as f64 * 100.0
                } else {
                    100.0
                };
                format!(" of {} ({perc:.0}%)", human_bytes(st.sync_total))
            } else {
                " (diskless, size unknown)".to_string()
            };
            Sample {
                phase: "receiving",
                line: format!(
                    "full copy: receiving the RDB, {}{total}",
                    human_bytes(st.sync_read)
                ),
            }
        }
        LinkPhase::Up => {
            // A Kvrocks master's offset is its RocksDB sequence number,
            // which counts writes, not bytes.
            let kvrocks = super::kvrocks::current(shared).is_some();
            let lag = match master_offset {
                Some(m) if kvrocks => format!(
                    "lag {} writes (master sequence {m})",
                    thousands(u64::try_from(m - st.offset).unwrap_or(0))
                ),
                Some(m) => format!(
                    "lag {} (master_repl_offset {m})",
                    human_bytes((m - st.offset).max(0))
                ),
                None => "lag unknown (INFO replication unanswered)".to_string(),
            };
            let last = st
                .last_write
                .map_or("no write applied yet".to_string(), |t| {
                    format!("last write applied {:.1}s ago", t.elapsed().as_secs_f64())
                });
            let keys = keys.map_or("? keys".to_string(), |k| format!("{} keys", thousands(k)));
            Sample {
                phase: "streaming",
                line: format!("streaming: offset {}, {lag}, {last}, {keys}", st.offset),
            }
        }
    }
}

/// Progress on stderr: a line rewritten in place on a terminal, new
/// lines otherwise (at every change of phase, and every few seconds).
struct Reporter {
    interactive: bool,
    phase: &'static str,
    last: Instant,
    every: Duration,
    open_line: bool,
}

impl Reporter {
    fn new(interactive: bool) -> Reporter {
        Reporter {
            interactive,
            phase: "",
            last: Instant::now(),
            every: if interactive {
                Duration::ZERO
            } else {
                Duration::from_secs(2)
            },
            open_line: false,
        }
    }

    fn show(&mut self, sample: &Sample) {
        let changed = sample.phase != self.phase;
        if !changed && self.last.elapsed() < self.every {
            return;
        }
        self.phase = sample.phase;
        self.last = Instant::now();
        if self.interactive {
            if changed && self.open_line {
                eprintln!();
            }
            eprint!("\rfollow: {}\x1b[K", sample.line);
            self.open_line = true;
        } else {
            eprintln!("follow: {}", sample.line);
        }
    }

    fn end_line(&mut self) {
        if self.open_line {
            eprintln!();
            self.open_line = false;
        }
    }

    fn note(&mut self, text: &str) {
        self.end_line();
        eprintln!("follow: {text}");
    }
}

/// Runs the follower: `config` names the store and the master
/// (`config.replica.replicaof`); the store is served read-only on
/// `config.bind:config.port` meanwhile. Returns when caught up (with
/// `until_caught_up`), or once `stop` completes or a client sends
/// SHUTDOWN; every write applied is kept, and the replication state is
/// saved for a partial resync at the next run.
pub async fn run(
    config: ServerConfig,
    opener: Opener,
    options: FollowOptions,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<FollowReport, ServerError> {
    let Some(master) = config.replica.replicaof.clone() else {
        return Err(ServerError::Io(std::io::Error::other(
            "following needs a master (replicaof)",
        )));
    };
    let mut probe = MasterProbe {
        host: master.0.clone(),
        port: master.1,
        auth: config.replica.masterauth.clone(),
        conn: None,
    };
    let dir = config.dir.clone();
    let server = Server::bind(config, opener).await?;
    let shared = server.shared().clone();
    let addr = server.local_addr()?;
    let mut reporter = Reporter::new(options.interactive);
    reporter.note(&format!(
        "following {}:{} into {dir} (served read-only on {addr} meanwhile)",
        master.0, master.1
    ));
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_until(async move {
        tokio::select! {
            () = stop => {}
            _ = done_rx => {}
        }
    }));
    let mut shutdown = shared.shutdown.subscribe();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut master_offset = None;
    let mut keys: Option<u64> = None;
    let mut keys_counted: Option<Instant> = None;
    let mut zero_since: Option<Instant> = None;
    let started = Instant::now();
    let mut copy_reported = false;
    let caught_up = loop {
        tokio::select! {
            _ = shutdown.wait_for(|s| *s) => break false,
            _ = tick.tick() => {}
        }
        let up = shared.replica.state.lock().phase == LinkPhase::Up;
        if up {
            master_offset = probe.offset().await;
            if !copy_reported {
                copy_reported = true;
                let loaded = shared.replica.loaded_keys.load(Ordering::Relaxed);
                let copied = if loaded > 0 {
                    format!(" ({} keys loaded by the full copy)", thousands(loaded))
                } else {
                    String::new()
                };
                reporter.note(&format!(
                    "the stream is up after {:.1}s{copied}",
                    started.elapsed().as_secs_f64(),
                ));
            }
            if keys_counted.is_none_or(|t| t.elapsed() >= Duration::from_secs(10)) {
                keys = count_keys_async(&shared).await.or(keys);
                keys_counted = Some(Instant::now());
            }
        } else {
            copy_reported = false;
        }
        // The replica's offset is read after the master's: it reached the
        // master's offset of that moment. A write applied since the window
        // opened restarts it: the lag stays at 0 only while the master
        // takes no writes (its keep-alive PINGs do not count).
        let (applied, last_write) = {
            let st = shared.replica.state.lock();
            (st.offset, st.last_write)
        };
        let at_zero = up && master_offset.is_some_and(|m| applied >= m);
        let written_since = |since: Instant| last_write.is_some_and(|w| w > since);
        match zero_since {
            Some(since) if at_zero && !written_since(since) => {}
            _ if at_zero => zero_since = Some(Instant::now()),
            _ => zero_since = None,
        }
        reporter.show(&describe(&shared, &master, master_offset, keys));
        if let (Some(since), Some(wanted)) = (zero_since, options.until_caught_up) {
            if since.elapsed() >= wanted {
                keys = count_keys_async(&shared).await.or(keys);
                break true;
            }
        }
    };
    reporter.end_line();
    let _ = done_tx.send(());
    serving
        .await
        .map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))??;
    let offset = shared.replica.state.lock().offset;
    Ok(FollowReport {
        caught_up,
        offset,
        master_offset,
        keys,
        state_saved: super::resume_file::state_path(&shared).exists(),
        unknown_commands: shared.replica.unknown_commands(),
    })
}
