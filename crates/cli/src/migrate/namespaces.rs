//! `--all-namespaces`: a migration or verification of every namespace of a
//! Kvrocks or Ardb source, each into the destination namespace of the same
//! name (or, into a format without namespaces, of the source's only one).

use redcodec_engine::store::hex;
use redcodec_engine::OpenMode;
use redcodec_formats::{Format, FormatOptions};
use redcodec_migrate::CHECKPOINT_FILE;

use super::pair::PairArgs;
use crate::error::fail;
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
        match &self.namespace {
            Some(ns) => format!("redcodec-migrate.{}.checkpoint", hex(ns.as_bytes())),
            None => CHECKPOINT_FILE.to_string(),
        }
    }
}

/// The parts of the job `pair` describes: itself, or one per namespace of
/// the source with `--all-namespaces`.
pub fn parts(pair: &PairArgs) -> Result<Vec<Part>, CliError> {
    if !pair.all_namespaces {
        return Ok(vec![Part {
            pair: pair.clone(),
            namespace: None,
        }]);
    }
    let source = pair.store(&pair.from, pair.src_dir()?, None, pair.src_cluster);
    let found: Vec<String> = source
        .each_namespace()?
        .into_iter()
        .filter_map(|s| s.namespace)
        .collect();
    if found.is_empty() {
        // A format without namespaces, or a store that holds none yet.
        return Ok(vec![Part {
            pair: PairArgs {
                all_namespaces: false,
                ..pair.clone()
            },
            namespace: None,
        }]);
    }
    let to: Format = pair.to.parse()?;
    let destination_has_namespaces = to
        .codec(&FormatOptions {
            namespace: Some(b"probe".to_vec()),
            cluster: false,
        })
        .is_ok();
    if !destination_has_namespaces && found.len() > 1 {
        return Err(fail(format!(
            "the {} format has no namespaces, and the source holds {}: migrate one at a time with --src-namespace",
            pair.to,
            found.join(", ")
        )));
    }
    Ok(found
        .into_iter()
        .map(|ns| Part {
            pair: PairArgs {
                src_namespace: Some(ns.clone()),
                dst_namespace: destination_has_namespaces.then(|| ns.clone()),
                all_namespaces: false,
                ..pair.clone()
            },
            namespace: Some(ns),
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
