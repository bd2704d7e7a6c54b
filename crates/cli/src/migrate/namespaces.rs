//! `--all-namespaces`: a migration or verification of every namespace of a
//! Kvrocks or Ardb source, as [`redcodec_migrate::namespaces`] splits it,
//! on the command line's two sides.

use redcodec_engine::OpenMode;
use redcodec_migrate::namespaces::{checkpoint_file, every_namespace};

use super::pair::PairArgs;
use crate::error::CliError;

/// One namespace's share of the job.
pub struct Part {
    /// The stores, with the namespaces set.
    pub pair: PairArgs,
    /// The source namespace, when the job covers several (for the report
    /// and the checkpoint's name).
    pub namespace: Option<String>,
}

impl Part {
    /// The checkpoint file of this part, in the destination directory.
    pub fn checkpoint_name(&self) -> String {
        checkpoint_file(self.namespace.as_deref())
    }
}

/// The parts of the job `pair` describes: itself, or one per namespace of
/// the source with `--all-namespaces`.
pub fn parts(pair: &PairArgs) -> Result<Vec<Part>, CliError> {
    let single = |pair: PairArgs| Part {
        pair,
        namespace: None,
    };
    if !pair.all_namespaces {
        return Ok(vec![single(pair.clone())]);
    }
    let source = pair.store(&pair.from, pair.src_dir()?, None, pair.src_cluster);
    let Some(found) = every_namespace(&source.spec(), &pair.to)? else {
        return Ok(vec![single(PairArgs {
            all_namespaces: false,
            ..pair.clone()
        })]);
    };
    Ok(found
        .into_iter()
        .map(|job| Part {
            pair: PairArgs {
                src_namespace: Some(job.src.clone()),
                dst_namespace: job.dst,
                all_namespaces: false,
                ..pair.clone()
            },
            namespace: Some(job.src),
        })
        .collect())
}

/// Whether the destination namespace of `part` already holds keys (a part
/// an earlier, interrupted `--all-namespaces` run completed).
pub fn destination_holds_keys(part: &Part) -> bool {
    part.pair
        .open_destination(OpenMode::ReadOnly, None)
        .is_ok_and(|engine| engine.execute(&["DBSIZE"]).to_string() != "(integer) 0")
}
