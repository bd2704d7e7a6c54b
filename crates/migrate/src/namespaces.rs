//! A job over every namespace of a Kvrocks or Ardb source
//! (`--all-namespaces`): each into the destination namespace of the same
//! name (or, into a format without namespaces, of the source's only one),
//! each with a checkpoint of its own.

use redcodec_engine::store::hex;
use redcodec_formats::{Format, FormatOptions};

use crate::options::CHECKPOINT_FILE;
use crate::store_spec::{SpecError, StoreSpec};

/// One namespace of the source, and where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceJob {
    /// The source namespace.
    pub src: String,
    /// The destination namespace (none in a format without namespaces).
    pub dst: Option<String>,
}

/// The checkpoint file of the job on `namespace` (the one of a whole
/// store: [`CHECKPOINT_FILE`]), in the destination directory.
pub fn checkpoint_file(namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("redcodec-migrate.{}.checkpoint", hex(ns.as_bytes())),
        None => CHECKPOINT_FILE.to_string(),
    }
}

/// Every namespace `source` holds, each with its destination in a store
/// of the format named `to`; none when the source holds no namespace (a
/// format without them, or a store that holds none yet). Several
/// namespaces into a format without them are refused.
pub fn every_namespace(
    source: &StoreSpec,
    to: &str,
) -> Result<Option<Vec<NamespaceJob>>, SpecError> {
    let found: Vec<String> = source
        .each_namespace()?
        .into_iter()
        .filter_map(|s| s.namespace)
        .collect();
    if found.is_empty() {
        return Ok(None);
    }
    let format: Format = to.parse()?;
    let destination_has_namespaces = format
        .codec(&FormatOptions {
            namespace: Some(b"probe".to_vec()),
            cluster: false,
        })
        .is_ok();
    if !destination_has_namespaces && found.len() > 1 {
        return Err(SpecError::Namespaces(format!(
            "the {to} format has no namespaces, and the source holds {}: migrate one at a time with --src-namespace",
            found.join(", ")
        )));
    }
    Ok(Some(
        found
            .into_iter()
            .map(|ns| NamespaceJob {
                dst: destination_has_namespaces.then(|| ns.clone()),
                src: ns,
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use redcodec_engine::OpenMode;

    use super::*;

    fn kvrocks(dir: &std::path::Path) -> StoreSpec {
        StoreSpec {
            format: "kvrocks".into(),
            dir: dir.to_path_buf(),
            fixed_clock: Some(1_700_000_000_000),
            namespace: None,
            cluster: false,
            block_cache_bytes: redcodec_engine::store::DEFAULT_BLOCK_CACHE_BYTES,
            read_cache_bytes: 0,
        }
    }

    #[test]
    fn each_namespace_has_its_own_checkpoint() {
        assert_eq!(checkpoint_file(None), CHECKPOINT_FILE);
        assert_eq!(
            checkpoint_file(Some("ns")),
            "redcodec-migrate.6e73.checkpoint"
        );
    }

    #[test]
    fn namespaces_go_to_their_namesakes_or_one_at_a_time() {
        let tmp = tempfile::tempdir().unwrap();
        let store = kvrocks(&tmp.path().join("s"));
        drop(store.open(OpenMode::CreateIfMissing, None).unwrap());
        assert_eq!(every_namespace(&store, "kvrocks").unwrap(), None);
        for ns in ["a", "b"] {
            let engine = store
                .in_namespace(ns)
                .open(OpenMode::CreateIfMissing, None)
                .unwrap();
            engine.execute(&["SET", "k", ns]);
        }
        let jobs = every_namespace(&store, "ardb").unwrap().unwrap();
        let pairs: Vec<(&str, Option<&str>)> = jobs
            .iter()
            .map(|j| (j.src.as_str(), j.dst.as_deref()))
            .collect();
        assert_eq!(pairs, [("a", Some("a")), ("b", Some("b"))]);
        let refused = every_namespace(&store, "blackwidow").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the blackwidow format has no namespaces, and the source holds a, b: migrate one at a time with --src-namespace"
        );
        assert!(matches!(
            every_namespace(&store, "nosuch"),
            Err(SpecError::Format(_))
        ));
    }
}
