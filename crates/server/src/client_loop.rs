//! One client's loop: read, answer every complete request in the buffer,
//! write the replies, repeat.
//!
//! Memory per connection stays bounded whatever the client sends: replies
//! go out whenever [`OUT_CHUNK`] bytes are waiting (a pipelining client
//! that does not read its replies stops being read, as TCP pushes back),
//! a huge reply is written a piece at a time ([`Streamer`]), and buffers
//! grown by one huge request or reply are given back once empty.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use redcodec_engine::Reply;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::clients::ClientInfo;
use crate::command_roles::BlockingPop;
use crate::commands::registry::{self, Run, Spec};
use crate::commands::{blocking as block_cmd, check_resolved, run_spec, Access};
use crate::config::SyncPolicy;
use crate::frame::{take_request, Limits};
use crate::group_commit;
use crate::master::replica_link::Handed;
use crate::reply::{encode, Next, Shape, Streamer};
use crate::session::{Answer, Session};
use crate::state::Shared;
use crate::waiters::{Blocked, WaitState};
use redcodec_engine::internals::dispatch::Flags;

/// Why a connection's loop stops waiting.
enum Stop {
    /// Keep going.
    Continue,
    /// Close the connection.
    Close,
}

pub use crate::reply::OUT_CHUNK;

/// A buffer's capacity when a connection starts; an empty buffer that
/// grew beyond [`KEEP_CAPACITY`] shrinks back to it.
const START_CAPACITY: usize = 16 * 1024;

/// The largest capacity an empty buffer keeps.
const KEEP_CAPACITY: usize = 1024 * 1024;

/// The connection's socket halves and buffers.
struct Io {
    rd: OwnedReadHalf,
    wr: OwnedWriteHalf,
    /// Bytes read and not yet parsed.
    buf: BytesMut,
    /// Replies not yet written.
    out: BytesMut,
    /// The command that makes this connection a replica's link (a PSYNC
    /// or SYNC, or Kvrocks' protocol), with its arguments.
    replica: Option<(Handed, Vec<Bytes>)>,
}

impl Io {
    /// Sends the replies waiting in the output buffer. Under
    /// `--sync always` the WAL reaches the disk first when the session
    /// wrote (in a sync shared with every connection waiting for one then:
    /// [`crate::wal_sync`]): no write is acknowledged before it is
    /// durable; if the sync fails, nothing is sent and the connection
    /// closes.
    async fn flush(&mut self, shared: &Shared, session: &mut Session) -> std::io::Result<()> {
        if session.wrote && shared.config.sync == SyncPolicy::Always {
            session.wrote = false;
            if let Err(e) = shared.wal_sync.wait().await {
                eprintln!("redcodec serve: closing a client: the WAL sync failed: {e}");
                return Err(std::io::Error::other(e.to_string()));
            }
        }
        if !self.out.is_empty() {
            self.wr.write_all(&self.out).await?;
            self.out.clear();
        }
        Ok(())
    }

    /// Writes `reply` a piece at a time, sending the output buffer
    /// whenever it holds [`OUT_CHUNK`] bytes.
    async fn send(
        &mut self,
        shared: &Shared,
        session: &mut Session,
        reply: Reply,
        shape: Shape,
    ) -> std::io::Result<()> {
        let mut streamer = Streamer::new(reply, shape, session.protocol);
        loop {
            match streamer.fill(&mut self.out, OUT_CHUNK) {
                Next::Done => return Ok(()),
                Next::Flush => self.flush(shared, session).await?,
                Next::Payload(bytes) => {
                    self.flush(shared, session).await?;
                    self.wr.write_all(&bytes).await?;
                }
            }
        }
    }

    /// Gives back the memory of buffers a huge request or reply grew.
    fn shrink(&mut self) {
        for buf in [&mut self.buf, &mut self.out] {
            if buf.is_empty() && buf.capacity() > KEEP_CAPACITY {
                *buf = BytesMut::with_capacity(START_CAPACITY);
            }
        }
    }
}

/// Serves one client until it leaves, is killed, or the server stops.
pub async fn serve(shared: Arc<Shared>, stream: TcpStream, info: Arc<ClientInfo>) {
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    let mut session = Session::new(&shared, info.clone());
    let mut shutdown = shared.shutdown.subscribe();
    let mut io = Io {
        rd,
        wr,
        buf: BytesMut::with_capacity(START_CAPACITY),
        out: BytesMut::with_capacity(START_CAPACITY),
        replica: None,
    };
    'conn: loop {
        let limits = Limits {
            max_bulk_len: shared.max_bulk_len.load(Ordering::Relaxed),
        };
        // Messages and MONITOR lines that came before the requests just
        // read go out before their replies, as from Redis' one buffer.
        let waiting = [
            shared.monitors.take(info.id),
            if session.subscriptions > 0 {
                shared.pubsub.take(info.id)
            } else {
                Some(Vec::new())
            },
        ];
        for bytes in waiting {
            match bytes {
                Some(bytes) => io.out.extend_from_slice(&bytes),
                None => break 'conn,
            }
        }
        loop {
            match take_request(&mut io.buf, &limits) {
                Ok(Some(request)) => {
                    if request.args.is_empty() {
                        continue;
                    }
                    let step = match group_commit::gather(
                        &shared,
                        &mut session,
                        request.args,
                        &mut io.buf,
                        &limits,
                    ) {
                        Ok(group) => send_group(&shared, &mut session, group, &mut io).await,
                        Err(args) => {
                            handle(&shared, &mut session, args, &mut io, &mut shutdown).await
                        }
                    };
                    if matches!(step, Stop::Close) || session.close {
                        session.close = true;
                        break;
                    }
                    if io.out.len() >= OUT_CHUNK && io.flush(&shared, &mut session).await.is_err() {
                        break 'conn;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let reply = Reply::Error(e.reply_text());
                    shared.error_stats.note(&reply);
                    encode(&reply, Shape::Plain, session.protocol, &mut io.out);
                    session.close = true;
                    break;
                }
            }
        }
        if !io.out.is_empty() {
            // The other connections the worker has ready run first, and
            // the replies go out together: a client that pipelines
            // nothing then gets its reply in one wakeup with others', and
            // their next requests arrive together (`-P 1`: up to a
            // quarter more requests/s, docs/src/performance.md).
            tokio::task::yield_now().await;
        }
        if io.flush(&shared, &mut session).await.is_err() {
            break;
        }
        io.shrink();
        if session.close || info.killed.load(Ordering::SeqCst) || *shutdown.borrow() {
            break;
        }
        tokio::select! {
            read = io.rd.read_buf(&mut io.buf) => match read {
                Ok(0) | Err(_) => break 'conn,
                Ok(_) => {}
            },
            _ = shutdown.changed() => break,
            () = info.kill.notified() => break,
            lines = shared.monitors.next(info.id) => match lines {
                Some(lines) => io.out.extend_from_slice(&lines),
                None => break,
            },
            messages = shared.pubsub.next(info.id), if session.subscriptions > 0 => match messages {
                Some(messages) => io.out.extend_from_slice(&messages),
                None => break,
            },
        }
    }
    shared.monitors.stop(info.id);
    shared.pubsub.forget(info.id);
    match io.replica.take() {
        Some((handed, args)) => {
            let info = info.clone();
            crate::master::serve_replica(shared.clone(), info, io.rd, io.wr, io.buf, handed, args)
                .await;
        }
        None => {
            let _ = io.wr.shutdown().await;
        }
    }
    session.unwatch(&shared);
    shared.cluster.disconnected(&shared, info.id);
    shared.clients.remove(info.id);
}

/// Answers one request into `out`.
async fn handle(
    shared: &Shared,
    session: &mut Session,
    args: Vec<Bytes>,
    io: &mut Io,
    shutdown: &mut watch::Receiver<bool>,
) -> Stop {
    // The one lookup of the command: everything after reads its spec.
    let spec = registry::get_at_edge(&args[0]);
    {
        let mut live = session.info.live.lock();
        live.last_cmd.clear();
        match spec {
            Some(spec) => live.last_cmd.push_str(spec.name),
            None => live
                .last_cmd
                .push_str(&String::from_utf8_lossy(&args[0]).to_ascii_lowercase()),
        }
        live.last_seen = Instant::now();
    }
    // The RESP3 shape, worked out before the arguments move on (it is
    // ignored under RESP2; HELLO may switch protocols on the way).
    let shape = spec.map_or(Shape::Plain, |spec| spec.shape(&args));
    let answer = answer(shared, session, spec, args, io, shutdown).await;
    // Counted before the reply goes out: a pipelined INFO after it sees it.
    match &answer {
        Some(Answer::One(reply)) => shared.error_stats.note(reply),
        Some(Answer::Exec(replies)) => {
            for (reply, _) in replies {
                shared.error_stats.note(reply);
            }
        }
        None => {}
    }
    if answer.is_some() && !session.reply_goes_out() {
        session.raw_reply = None;
        session.silent = false;
        return Stop::Continue;
    }
    let sent = match answer {
        Some(Answer::One(reply)) => {
            if std::mem::take(&mut session.silent) {
                Ok(())
            } else if let Some(raw) = session.raw_reply.take() {
                io.out.extend_from_slice(&raw);
                Ok(())
            } else {
                io.send(shared, session, reply, shape).await
            }
        }
        Some(Answer::Exec(replies)) => {
            session.raw_reply = None;
            io.out
                .extend_from_slice(format!("*{}\r\n", replies.len()).as_bytes());
            let mut sent = Ok(());
            for (reply, shape) in replies {
                sent = io.send(shared, session, reply, shape).await;
                if sent.is_err() {
                    break;
                }
            }
            sent
        }
        None => return Stop::Close,
    };
    match sent {
        Ok(()) => Stop::Continue,
        Err(_) => Stop::Close,
    }
}

/// Runs a group ([`group_commit`]) a part at a time, sending each
/// part's replies (errors counted) once it has committed.
async fn send_group(
    shared: &Shared,
    session: &mut Session,
    mut group: group_commit::Gathered,
    io: &mut Io,
) -> Stop {
    while !group.is_done() {
        for (reply, shape) in group_commit::run(shared, session, &mut group).await {
            shared.error_stats.note(&reply);
            if !session.reply_goes_out() {
                continue;
            }
            if io.send(shared, session, reply, shape).await.is_err() {
                return Stop::Close;
            }
        }
        if io.out.len() >= OUT_CHUNK && io.flush(shared, session).await.is_err() {
            return Stop::Close;
        }
    }
    Stop::Continue
}

/// Refuses a request before it runs: counted as a rejected call, and a
/// transaction being queued aborts at EXEC.
fn refuse(
    shared: &Shared,
    session: &mut Session,
    spec: Option<&Spec>,
    args: &[Bytes],
    e: Reply,
) -> Answer {
    // An unknown command is counted nowhere.
    if let Some(spec) = spec {
        shared.command_stats.rejected(spec.name, args);
    }
    if session.queued.is_some() {
        session.queue_failed = true;
    }
    Answer::One(e)
}

/// The answer to one request; `None` when the connection must close at
/// once (killed or shut down while blocked). A command that runs is
/// counted in INFO commandstats here (inside EXEC, each queued one in
/// [`Session::exec`]), one that is refused in [`refuse`].
async fn answer(
    shared: &Shared,
    session: &mut Session,
    spec: Option<&'static Spec>,
    args: Vec<Bytes>,
    io: &mut Io,
    shutdown: &mut watch::Receiver<bool>,
) -> Option<Answer> {
    if let Some(k) =
        spec.and_then(|spec| crate::master::kvrocks::intercept(shared, session, spec, &args))
    {
        return match k {
            crate::master::kvrocks::Intercepted::Reply(r) => Some(Answer::One(r)),
            crate::master::kvrocks::Intercepted::TakeOver(command) => {
                io.replica = Some((Handed::Kvrocks(command), args));
                None
            }
        };
    }
    // Kvrocks' replication commands are unknown inside MULTI, as Redis'
    // checks answer there.
    let spec = spec.filter(|spec| !spec.has(Flags::KVROCKS_MASTER));
    // Redis' order: the command and its arity, then authentication.
    let spec = match check_resolved(spec, &args) {
        Ok(spec) => spec,
        Err(e) => return Some(refuse(shared, session, spec, &args, e)),
    };
    if !session.authenticated && !spec.has(Flags::NO_AUTH) {
        let e = Reply::error("NOAUTH Authentication required.");
        return Some(refuse(shared, session, Some(spec), &args, e));
    }
    // The checks that refuse at once; a command CLIENT PAUSE holds takes
    // them again once it goes on, as Redis processes it again (a slot
    // may have moved meanwhile).
    let _moving = loop {
        if let Some(e) = crate::scripting::busy_gate(shared, session, spec, &args) {
            return Some(refuse(shared, session, Some(spec), &args, e));
        }
        // Kvrocks' slot check (MOVED, CROSSSLOT…); held while the command runs.
        let moving = match shared.cluster.route(shared, session, spec, &args) {
            Ok(moving) => moving,
            Err(e) => return Some(refuse(shared, session, Some(spec), &args, e)),
        };
        // A subscribed RESP2 connection runs only what Redis allows there.
        if session.subscribed_resp2() && !spec.has(Flags::WHILE_SUBSCRIBED) {
            let e = Reply::Error(format!(
                "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                spec.name
            ));
            return Some(refuse(shared, session, Some(spec), &args, e));
        }
        // A replica's refusals (READONLY, LOADING), after the redirections
        // as in Redis' processCommand.
        if let Some(e) = crate::replica::gate(shared, session, spec, &args) {
            return Some(refuse(shared, session, Some(spec), &args, e));
        }
        // CLIENT PAUSE (Redis' BLOCKED_POSTPONE), with no slot held.
        let Some(write) = crate::pause_gate::held(shared, session, spec, &args) else {
            break moving;
        };
        drop(moving);
        if !shared
            .client_pause
            .wait(&session.info, shutdown, write)
            .await
        {
            return None;
        }
    };
    if session.queued.is_some() && !spec.has(Flags::TRANSACTION) {
        if spec.has(Flags::NO_MULTI) {
            let e = Reply::error("ERR Command not allowed inside a transaction");
            return Some(refuse(shared, session, Some(spec), &args, e));
        }
        return Some(Answer::One(crate::commands::transaction::queue_resolved(
            session,
            Some(spec),
            args,
        )));
    }
    let started = Instant::now();
    let mut waited = Duration::ZERO;
    // The commands run_spec does not run (EXEC, a blocking wait) are
    // shown to the monitors here.
    let unmonitored = matches!(spec.run, Run::Exec | Run::Blocking(_) | Run::Wait);
    if unmonitored && crate::monitor::shown_first(spec) {
        crate::monitor::feed(shared, session, spec, &args);
    }
    let answer = match spec.run {
        Run::ReplicaSync(handover) => match crate::master::check_sync(shared, handover, &args) {
            Ok(()) => {
                io.replica = Some((Handed::Redis(handover), args));
                return None;
            }
            Err(e) => Some(Answer::One(e)),
        },
        Run::Wait => Some(Answer::One(
            crate::master::wait(shared, &session.info, &args).await,
        )),
        Run::Exec => {
            // Its time waiting for another's hold of the engine is not
            // its own.
            let _admitted = shared.admission.exclusive().await;
            waited = started.elapsed();
            Some(crate::commands::transaction::exec(shared, session))
        }
        Run::Blocking(pop) => block(shared, session, pop, &args, io, shutdown, &mut waited)
            .await
            .map(Answer::One),
        Run::Engine | Run::Server(_) | Run::KvrocksMaster(_) => {
            // Its time waiting for other commands (on its keys, or a
            // script's or EXEC's hold of the engine) is not its own.
            let admitted = if spec.groups(args.len()) {
                Some(shared.admission.admit(&spec.keys_of(&args)).await)
            } else if spec.has(Flags::SCRIPT) {
                Some(shared.admission.exclusive().await)
            } else {
                None
            };
            if admitted.is_some() {
                waited = started.elapsed();
            }
            let access = Access::Shared(&shared.engines);
            Some(Answer::One(run_spec(shared, session, &access, spec, &args)))
        }
    };
    if unmonitored && !crate::monitor::shown_first(spec) {
        crate::monitor::feed(shared, session, spec, &args);
    }
    let failed = matches!(&answer, Some(Answer::One(reply)) if reply.is_error());
    let took = started.elapsed().saturating_sub(waited);
    spec.ran(shared, &session.info, &args, took, failed);
    answer
}

/// A blocking pop: answered at once when a key holds something, else
/// after a write serves it, its timeout, or CLIENT UNBLOCK; `waited`
/// gets the time it spent waiting.
async fn block(
    shared: &Shared,
    session: &mut Session,
    pop: BlockingPop,
    args: &[Bytes],
    io: &mut Io,
    shutdown: &mut watch::Receiver<bool>,
    waited: &mut Duration,
) -> Option<Reply> {
    let request = match block_cmd::parse(pop, args) {
        Ok(r) => r,
        Err(e) => return Some(e),
    };
    let deadline = request.timeout.map(|t| tokio::time::Instant::now() + t);
    let ns = session.namespace.clone();
    let blocked = {
        let engine = match shared.engines.shared(&ns) {
            Ok(e) => e,
            Err(e) => return Some(e),
        };
        // The engine may be new here (opened in this namespace just now):
        // a pop it serves at once goes to replicas like any write.
        shared.repl.attach(shared, &engine, &ns);
        shared
            .waiters
            .block(&engine, &shared.watch, &ns, request.keys, request.op)
    };
    let waiter = match blocked {
        Blocked::Now(reply) => {
            if !reply.is_error() {
                session.wrote = true;
                shared.saves.note_change();
            }
            return Some(reply);
        }
        Blocked::Wait(w) => w,
    };
    // Replies to earlier requests go out before the wait.
    if io.flush(shared, session).await.is_err() {
        return None;
    }
    session.info.live.lock().blocked = Some(waiter.clone());
    let wait_started = Instant::now();
    let mut close = false;
    loop {
        if *waiter.state.lock() != WaitState::Waiting {
            break;
        }
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = waiter.wake.notified() => {}
            () = sleep => break,
            _ = shutdown.changed() => { close = true; break }
            () = session.info.kill.notified() => { close = true; break }
            // Requests sent meanwhile wait in the buffer; a closed
            // socket ends the wait.
            read = io.rd.read_buf(&mut io.buf) => if matches!(read, Ok(0) | Err(_)) {
                close = true;
                break;
            },
        }
    }
    *waited = wait_started.elapsed();
    session.info.live.lock().blocked = None;
    let state = std::mem::replace(&mut *waiter.state.lock(), WaitState::Abandoned);
    shared.waiters.remove(&waiter);
    match state {
        WaitState::Done(reply) => {
            session.close |= close;
            if !reply.is_error() {
                session.wrote = true;
                shared.saves.note_change();
            }
            Some(reply)
        }
        _ if close => None,
        _ => Some(waiter.op.timeout_reply()),
    }
}
