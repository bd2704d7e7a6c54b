//! What CLIENT PAUSE holds ([`crate::client_pause`] keeps the pause;
//! CLIENT PAUSE and UNPAUSE are answered in [`crate::commands::client`]).

use bytes::Bytes;

use redcodec_engine::internals::dispatch::Flags;

use crate::command_spec::{Run, Spec};
use crate::session::Session;
use crate::state::Shared;

/// Whether the pause in force now holds the command `args` of `spec`
/// that `session` sends: `None` if it goes on, `Some(write)` if it waits,
/// `write` saying whether it may reach the replicas (what a WRITE pause
/// holds; an ALL pause holds every command).
pub fn held(shared: &Shared, session: &Session, spec: &Spec, args: &[Bytes]) -> Option<bool> {
    let pause = shared.client_pause.now()?;
    let write = may_replicate(shared, session, spec, args);
    (pause.all || write).then_some(write)
}

/// Whether a command may reach the replicas (Redis' `CMD_WRITE |
/// CMD_MAY_REPLICATE`, an EXEC's for what it queued, a script's for what
/// it declares): what CLIENT PAUSE WRITE holds.
fn may_replicate(shared: &Shared, session: &Session, spec: &Spec, args: &[Bytes]) -> bool {
    if matches!(spec.run, Run::Exec) {
        return session.queued.as_ref().is_some_and(|queued| {
            queued.iter().any(|q| {
                q.spec
                    .map(|id| crate::command_table::table().by_id(id))
                    .is_some_and(|spec| may_replicate(shared, session, spec, &q.args))
            })
        });
    }
    if spec.has(Flags::SCRIPT) {
        return spec.has(Flags::MAY_WRITE) && script_may_write(shared, spec, args);
    }
    spec.request_has(args, Flags::WRITE)
        || spec.has(Flags::SERVER_WRITE)
        || spec.has(Flags::BLOCKING)
        || spec.may_replicate()
}

/// Whether EVAL, EVALSHA or FCALL `args` runs a script that may write,
/// as its flags say before it runs (Redis' `evalGetCommandFlags`,
/// `fcallGetCommandFlags`): a script or function not known yet, or
/// whose shebang does not parse, may.
fn script_may_write(shared: &Shared, spec: &Spec, args: &[Bytes]) -> bool {
    let Some(named) = args.get(1) else {
        return true;
    };
    if !spec.has(Flags::LANE) {
        // FCALL: the function's flags, if the library is loaded.
        let Some(scripting) = shared.scripts.scripting.try_lock() else {
            return true;
        };
        return scripting
            .functions()
            .function_flags(named)
            .is_none_or(|flags| flags.may_write());
    }
    if spec.has(Flags::BY_SHA) {
        let Some(scripting) = shared.scripts.scripting.try_lock() else {
            return true;
        };
        let sha = String::from_utf8_lossy(named).to_ascii_lowercase();
        return scripting
            .script_flags(&sha)
            .is_none_or(|flags| flags.may_write());
    }
    redcodec_scripting::flags::parse_shebang(named).map_or(true, |(flags, _)| flags.may_write())
}
