//! Scripts side by side: a pipelined group of EVAL scripts
//! ([`crate::group_commit`]) runs in a [`Lane`] — a Lua state of its
//! own — holding only the keys its scripts declared, as a group of
//! keyed commands holds its keys, while other connections' groups and
//! commands run on other keys. The scripts of one group still run one
//! after the other, each alone on its keys.
//!
//! A Redis script may touch keys it did not declare, and run commands
//! that take the whole keyspace (`KEYS`, `FLUSHALL`). A script in a lane
//! that reaches for one gives up before the command runs: the lane's
//! group is abandoned (nothing of it reaches the store or the
//! replication stream, and its replies are dropped), then runs again
//! holding the engine whole, as every script did before. So does a run
//! that lasts [`redcodec_scripting::control::LONG_RUN`]: BUSY, SCRIPT
//! KILL and FUNCTION STATS concern scripts that hold the engine whole.
//! A cached script that reached past its keys once is marked
//! ([`redcodec_scripting::Scripting::mark_stray`]) and gives up its lane
//! at once afterwards, before running anything.
//!
//! What an abandoned run leaves: `redis.log` lines and `math.random`
//! draws, INFO commandstats counts for the commands its scripts called
//! (the scripts themselves are counted once), and the keys it wrote seen
//! as modified by WATCH (a watcher's EXEC aborts, which is safe); the
//! run then happens once more. Its MONITOR lines are held back until the
//! group commits, and dropped when it is abandoned.

use std::cell::{Cell, RefCell};

use bytes::Bytes;
use redcodec_engine::internals::dispatch::Flags;
use redcodec_scripting::Lane;

use crate::command_spec::Spec;
use crate::scripts::Scripts;

/// The most lanes a server keeps (one per thread that runs a group of
/// scripts at once); a group finding none free holds the engine whole.
const MAX_LANES: usize = 16;

/// The lane a thread runs a group of scripts in, and the keys the group
/// holds.
struct Installed {
    lane: Lane,
    locked: Vec<Bytes>,
}

thread_local! {
    /// The lane of the group this thread runs (`None`: scripts run in
    /// the EVAL cache's state, the engine held whole).
    static CURRENT: RefCell<Option<Installed>> = const { RefCell::new(None) };
}

/// Whether requests of `spec` may run in a lane ([`Flags::LANE`]: EVAL
/// and EVALSHA, and their `_RO` forms). Functions live in their own Lua
/// state, shared by every library: FCALL holds the engine whole.
pub(crate) fn runs_in_lane(spec: &Spec) -> bool {
    spec.has(Flags::LANE)
}

/// Whether the request `args` of `spec` is an EVALSHA of a script known
/// to reach past its keys ([`redcodec_scripting::Scripting::mark_stray`]):
/// its group skips the lanes. Not known when another holds the cache
/// (a script running with the engine whole): a thread does not wait here.
pub(crate) fn known_stray(scripts: &Scripts, spec: &Spec, args: &[Bytes]) -> bool {
    spec.has(Flags::BY_SHA)
        && args.get(1).is_some_and(|sha| {
            scripts
                .scripting
                .try_lock()
                .is_some_and(|s| s.is_stray(sha))
        })
}

impl Scripts {
    /// A free lane, made if none is and fewer than [`MAX_LANES`] exist.
    fn take_lane(&self) -> Option<Lane> {
        let mut lanes = self.lanes.lock();
        if let Some(lane) = lanes.free.pop() {
            return Some(lane);
        }
        if lanes.made >= MAX_LANES {
            return None;
        }
        let lane = self.scripting.lock().lane().ok()?;
        lanes.made += 1;
        Some(lane)
    }

    fn give_back(&self, lane: Lane) {
        self.lanes.lock().free.push(lane);
    }
}

/// A lane installed on this thread for a group holding `locked`; given
/// back to the pool when dropped.
pub(crate) struct LaneGroup<'a> {
    scripts: &'a Scripts,
}

impl<'a> LaneGroup<'a> {
    /// Takes a lane and installs it on this thread for a group holding
    /// `locked` (`None`: no lane is free).
    pub(crate) fn install(scripts: &'a Scripts, locked: &[&[u8]]) -> Option<LaneGroup<'a>> {
        let lane = scripts.take_lane()?;
        let locked = locked.iter().map(|k| Bytes::copy_from_slice(k)).collect();
        CURRENT.set(Some(Installed { lane, locked }));
        Some(LaneGroup { scripts })
    }
}

/// Whether a script of the lane group this thread runs gave up: its
/// reply means nothing, is not counted, and the group must be abandoned.
pub(crate) fn gave_up() -> bool {
    CURRENT.with_borrow(|c| c.as_ref().is_some_and(|i| i.lane.control().gave_up()))
}

impl Drop for LaneGroup<'_> {
    fn drop(&mut self) {
        if let Some(installed) = CURRENT.take() {
            self.scripts.give_back(installed.lane);
        }
    }
}

/// The keys a lane's script may touch, and its lane's control.
pub(crate) struct LaneKeys<'a> {
    locked: &'a [Bytes],
    control: &'a redcodec_scripting::RunControl,
    strayed: Cell<bool>,
}

impl LaneKeys<'_> {
    /// Whether a command of `spec` (`args`, name first) may run in the
    /// lane: it names its keys by position and each is held. If not, the
    /// script gives up.
    pub(crate) fn admits(&self, spec: &Spec, args: &[Bytes]) -> bool {
        let held = spec.groups(args.len())
            && spec
                .keys_of(args)
                .iter()
                .all(|k| self.locked.iter().any(|l| l.as_ref() == *k));
        if !held {
            self.strayed.set(true);
            self.control.give_up();
        }
        !self.control.gave_up()
    }

    /// Whether the script gave up for a command past the lane's keys
    /// (not for its time).
    pub(crate) fn strayed(&self) -> bool {
        self.strayed.get()
    }

    /// The lane's run control: where the script's writes are noted (a
    /// lane's run is not killable), and where it gives up.
    pub(crate) fn control(&self) -> &redcodec_scripting::RunControl {
        self.control
    }
}

/// Whether a lane is installed on this thread ([`with_lane`] runs).
pub(crate) fn installed() -> bool {
    CURRENT.with(|current| current.borrow().is_some())
}

/// Runs `f` with this thread's lane and the keys its group holds, if a
/// lane is installed (`None` otherwise). `f` gets the lane and the keys;
/// the lane stays installed.
pub(crate) fn with_lane<T>(f: impl FnOnce(&mut Lane, LaneKeys<'_>) -> T) -> Option<T> {
    let mut installed = CURRENT.take()?;
    let Installed { lane, locked } = &mut installed;
    // The control is shared with the lane's Lua hook; the keys are read
    // while the lane runs.
    let control = lane.control_handle();
    let out = f(
        lane,
        LaneKeys {
            locked,
            control: &control,
            strayed: Cell::new(false),
        },
    );
    CURRENT.set(Some(installed));
    Some(out)
}

/// The error a script that gave up its lane gets, and its reply: never
/// seen (its group is abandoned and runs again).
pub(crate) const GAVE_UP: &str = "ERR the script needs more than its lane holds";
