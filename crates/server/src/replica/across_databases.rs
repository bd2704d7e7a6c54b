//! The master's `MOVE key db` and `COPY src dst DB db` on a replica: a
//! key between two of the master's databases, each mapped to a namespace
//! as the master's `SELECT` maps it ([`super::load::namespace_of`]), or to
//! none where the format holds database 0 only.
//!
//! | source's namespace | target's | MOVE | COPY … DB |
//! | --- | --- | --- | --- |
//! | held | the same (Kvrocks: one keyspace) | nothing moves | COPY without `DB` |
//! | held | none | `DEL key`: it left what is held | nothing held changes |
//! | held | another (Ardb) | as sent | as sent |
//! | none | held | skipped, said on stderr: its value was never copied | the same |
//! | none | none | nothing | nothing |

use bytes::Bytes;

use super::load::{namespace_of, SKIPPED_DB};
use crate::command_roles::InStream;
use crate::session::Session;
use crate::state::Shared;

/// The command to run for the master's `args` (`MOVE` or `COPY`, as
/// `kind` says), or `None` when it changes nothing held here.
pub(crate) fn map(
    shared: &Shared,
    session: &Session,
    kind: InStream,
    args: Vec<Bytes>,
) -> Option<Vec<Bytes>> {
    let db_at = match kind {
        InStream::MoveDb => Some(2).filter(|_| args.len() == 3),
        _ => (3..args.len().saturating_sub(1))
            .find(|&i| args[i].eq_ignore_ascii_case(b"db"))
            .map(|i| i + 1),
    };
    // No database named, or not a number: the command answers for itself.
    let Some(db) = db_at.and_then(|i| std::str::from_utf8(&args[i]).ok()?.parse::<u64>().ok())
    else {
        return Some(args);
    };
    let source = (session.namespace != SKIPPED_DB).then_some(session.namespace.as_str());
    let target = namespace_of(shared, db);
    match (source, target.as_deref()) {
        (None, None) => None,
        (None, Some(_)) => {
            eprintln!(
                "redcodec serve: replication: the master's {} of '{}' into database {db} is skipped: this format holds database 0 only, and the key's value in the master's other database was never copied",
                String::from_utf8_lossy(&args[0]),
                String::from_utf8_lossy(&args[1]),
            );
            None
        }
        (Some(_), None) => match kind {
            InStream::MoveDb => Some(vec![Bytes::from_static(b"DEL"), args[1].clone()]),
            _ => None,
        },
        (Some(source), Some(target)) if source == target => match kind {
            InStream::MoveDb => None,
            _ => {
                let at = db_at.expect("a database named");
                Some(
                    args.into_iter()
                        .enumerate()
                        .filter(|&(i, _)| i != at && i != at - 1)
                        .map(|(_, a)| a)
                        .collect(),
                )
            }
        },
        (Some(_), Some(_)) => Some(args),
    }
}
