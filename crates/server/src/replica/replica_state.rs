//! What the server shares about replication as a replica: the link's
//! state INFO reports, the loading flag, the generation REPLICAOF bumps
//! (the data [`crate::replica`] works on; a leaf the server's state
//! holds).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::watch;

/// Where the link to the master is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkPhase {
    /// Connecting or handshaking.
    Connecting,
    /// Receiving or loading the master's RDB.
    Syncing,
    /// Applying the command stream.
    Up,
    /// Not connected (waiting to retry).
    Down,
}

/// The replication state INFO reports and the link updates.
#[derive(Clone, Debug)]
pub struct LinkState {
    /// The master followed, if any (`None`: this server is a master).
    pub master: Option<(String, u16)>,
    /// Where the link is.
    pub phase: LinkPhase,
    /// When the last bytes came from the master.
    pub last_io: Option<Instant>,
    /// When the last command of the master's that may change the store
    /// was applied (not PING, REPLCONF, SELECT).
    pub last_write: Option<Instant>,
    /// When the link went down (`None` while up, or if it was never up
    /// since this server became a replica: Redis' -1).
    pub down_since: Option<Instant>,
    /// The replication ID of the data held (the master's after a sync).
    pub replid: String,
    /// The previous replication ID (after a `+CONTINUE` with a new ID).
    pub replid2: String,
    /// The offset up to which `replid2` is valid, plus one; -1 if none.
    pub second_offset: i64,
    /// Bytes of the stream applied (the replication offset); -1 before
    /// any sync.
    pub offset: i64,
    /// Bytes of the stream read (applied or buffered).
    pub read_offset: i64,
    /// RDB bytes announced (-1: diskless, unknown) and received so far.
    pub sync_total: i64,
    /// See [`LinkState::sync_total`].
    pub sync_read: i64,
    /// Why the last attempt failed, if it did.
    pub last_error: Option<String>,
    /// The database the master's stream last selected (kept across a
    /// partial resync; `None` after a full one: the master selects again).
    pub stream_db: Option<u64>,
    /// The master's commands this server does not have, by name, with how
    /// many were not applied since the last full copy: their keys differ
    /// from the master's.
    pub unknown_commands: BTreeMap<String, u64>,
}

impl LinkState {
    pub(crate) fn new(replid: &str) -> LinkState {
        LinkState {
            master: None,
            phase: LinkPhase::Down,
            last_io: None,
            last_write: None,
            down_since: None,
            replid: replid.to_string(),
            replid2: "0".repeat(40),
            second_offset: -1,
            offset: 0,
            read_offset: 0,
            sync_total: 0,
            sync_read: 0,
            last_error: None,
            stream_db: None,
            unknown_commands: BTreeMap::new(),
        }
    }
}

tokio::task_local! {
    /// The generation of the link task it is set in (see
    /// [`Replica::step`]).
    pub(crate) static LINK_GENERATION: u64;
}

/// What the server shares about replication (one field of
/// [`crate::state::Shared`]).
pub struct Replica {
    /// The link's state.
    pub state: Mutex<LinkState>,
    /// A full copy is being loaded: clients get `-LOADING`.
    pub loading: AtomicBool,
    /// Bumped by every REPLICAOF: the link task of an older generation
    /// stops.
    pub(crate) generation: watch::Sender<u64>,
    /// Whether the data held came from a master we could continue from
    /// (PSYNC replid offset+1), as opposed to `PSYNC ? -1`.
    pub(crate) can_continue: AtomicBool,
    /// Whether the skipping of a database's writes was reported.
    pub(crate) warned_skipped_db: AtomicBool,
    /// The state file for a partial resync after a restart.
    pub(crate) resume: ResumeState,
    /// Keys loaded so far by the full copy under way (progress).
    pub loaded_keys: AtomicU64,
    /// The link task, awaited at shutdown before the state is saved.
    pub(crate) task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Held while a step of a master's stream is applied and counted
    /// ([`Replica::step`]), and by REPLICAOF while it changes the
    /// generation: once REPLICAOF has it, no step of the old link runs.
    pub(crate) apply: Mutex<()>,
    /// Set by REPLICAOF on a master: the link's first PSYNC offers this
    /// server's own stream (its ID and offset), as Redis'
    /// `replicationCacheMasterUsingMyself`.
    pub(crate) offer_own_stream: AtomicBool,
}

impl Replica {
    /// A master's state (`replid`: its replication ID).
    pub fn new(replid: &str) -> Replica {
        Replica {
            state: Mutex::new(LinkState::new(replid)),
            loading: AtomicBool::new(false),
            generation: watch::channel(0).0,
            can_continue: AtomicBool::new(false),
            warned_skipped_db: AtomicBool::new(false),
            resume: ResumeState::default(),
            loaded_keys: AtomicU64::new(0),
            task: Mutex::new(None),
            apply: Mutex::new(()),
            offer_own_stream: AtomicBool::new(false),
        }
    }

    /// Runs `f`, one step of a master's stream (applying it and counting
    /// it), unless a REPLICAOF came since the link task started (`None`
    /// then): REPLICAOF takes [`Replica::apply`] to change the generation,
    /// so once it answers no step of the old link runs.
    pub(crate) fn step<T>(&self, f: impl FnOnce() -> T) -> Option<T> {
        let _applying = self.apply.lock();
        let mine = LINK_GENERATION.try_with(|g| *g).ok()?;
        (*self.generation.borrow() == mine).then(f)
    }

    /// Whether this server follows a master.
    pub fn is_replica(&self) -> bool {
        self.state.lock().master.is_some()
    }

    /// Whether a full copy is being loaded.
    pub fn is_loading(&self) -> bool {
        self.loading.load(Ordering::SeqCst)
    }

    /// Stops the current link task (if any) and returns the new
    /// generation.
    pub(crate) fn next_generation(&self) -> u64 {
        let mut next = 0;
        self.generation.send_modify(|g| {
            *g += 1;
            next = *g;
        });
        next
    }

    /// A full copy begins: no key loaded yet, and the master's commands
    /// not applied before it no longer matter (their keys are copied
    /// again).
    pub(crate) fn begin_full_copy(&self) {
        self.loaded_keys.store(0, Ordering::Relaxed);
        self.state.lock().unknown_commands.clear();
    }

    /// Counts a command of the master's that this server does not have
    /// (not applied); whether it is the first of its name.
    pub(crate) fn note_unknown(&self, name: &str) -> bool {
        let mut st = self.state.lock();
        let count = st.unknown_commands.entry(name.to_string()).or_insert(0);
        *count += 1;
        *count == 1
    }

    /// The master's commands not applied here, as `name=count,…` (empty:
    /// none).
    pub fn unknown_commands(&self) -> String {
        let st = self.state.lock();
        describe_unknown(&st.unknown_commands)
    }

    /// Records a failure: in INFO replication and on stderr.
    pub fn fail(&self, why: String) {
        let mut st = self.state.lock();
        // Once per new reason, not at every retry.
        if st.last_error.as_deref() != Some(why.as_str()) {
            eprintln!("redcodec serve: replication: {why}");
        }
        st.last_error = Some(why);
        // Down since now if it was up; a link never up stays at -1.
        if st.phase == LinkPhase::Up {
            st.down_since = Some(Instant::now());
        }
        st.phase = LinkPhase::Down;
    }
}

/// Whether the file is on disk (so it must go before the store changes).
#[derive(Debug, Default)]
pub struct ResumeState {
    pub(crate) on_disk: AtomicBool,
}

/// `name=count,…` of the master's commands not applied.
pub(crate) fn describe_unknown(unknown: &BTreeMap<String, u64>) -> String {
    unknown
        .iter()
        .map(|(name, n)| format!("{name}={n}"))
        .collect::<Vec<_>>()
        .join(",")
}
