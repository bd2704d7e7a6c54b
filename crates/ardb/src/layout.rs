//! §5 of `formats-spec/ardb.md`: one RocksDB instance, `rocksdb`
//! (`<data-dir>/rocksdb`, `src/db/db.cpp`), whose column families are
//! namespaces (`src/db/rocksdb/rocksdb_engine.cpp`).
//!
//! - `default`: opened by Ardb, never written, hidden from `ListNameSpaces`.
//! - one family per namespace, named by the namespace string (`"0"` unless
//!   the client `SELECT`s another), created lazily by Ardb on first write.
//!
//! Every family is opened with `ardb.comparator` and the merge operator
//! `ardb.merger` (`RocksDBEngine::Init` sets both on the options of every
//! family).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use redcodec_codec::{CfSpec, GcRule, InstanceSpec, Layout, Place};

use crate::{comparator, merge};

/// The directory of the instance.
pub const DIR: &str = "rocksdb";

/// `default`: empty.
pub const DEFAULT: Place = Place::new(0, 0);

/// The namespace's family: every record of the codec's namespace.
pub const NAMESPACE: Place = Place::new(0, 1);

/// The layout for the namespace family `cf_name`.
///
/// - `default` keeps everything: it holds nothing.
/// - The namespace family's rule is [`GcRule::Metadata`]: every record goes
///   through [`crate::gc::compaction_filter`], which drops empty values only.
pub fn layout(cf_name: &'static str) -> Layout {
    let cf = |name, gc, created_on_first_write| CfSpec {
        name,
        comparator: Some(comparator::SPEC),
        gc,
        merge: Some(merge::SPEC),
        created_on_first_write,
    };
    Layout {
        instances: vec![InstanceSpec {
            dir: DIR,
            column_families: vec![
                // `default` exists from the start; the namespace's family is
                // created on the first write (Ardb's `create_if_notexist`).
                cf("default", GcRule::KeepAll, false),
                cf(cf_name, GcRule::Metadata, true),
            ],
            refused: &[],
            // The other namespaces of the store: opened with
            // `ardb.comparator`, as RocksDB requires, and otherwise left
            // alone.
            other_families: Some(comparator::SPEC),
        }],
    }
}

/// A `'static` copy of a namespace name, as [`CfSpec::name`] needs one.
/// Each distinct name is allocated once per process.
pub fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let names = NAMES.get_or_init(|| Mutex::new(HashSet::new()));
    // A poisoned lock still holds a valid set: the insert below cannot panic
    // half-way.
    let mut names = names
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(existing) = names.get(name) {
        return existing;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_and_comparators() {
        let l = layout("0");
        assert_eq!(l.instances.len(), 1);
        assert_eq!(l.instances[0].dir, "rocksdb");
        let names: Vec<_> = l.instances[0]
            .column_families
            .iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["default", "0"]);
        for cf in &l.instances[0].column_families {
            assert_eq!(cf.comparator.map(|c| c.name), Some("ardb.comparator"));
            assert_eq!(cf.merge.map(|m| m.name), Some("ardb.merger"));
        }
        assert_eq!(l.cf(DEFAULT).gc, GcRule::KeepAll);
        assert_eq!(l.cf(NAMESPACE).gc, GcRule::Metadata);
        assert!(l.cf(NAMESPACE).created_on_first_write);
        assert!(!l.cf(DEFAULT).created_on_first_write);
        assert_eq!(
            l.instances[0].other_families.map(|s| s.name),
            Some("ardb.comparator")
        );
    }

    #[test]
    fn interning_reuses_names() {
        let a = intern("tenant-1");
        let b = intern(&String::from("tenant-1"));
        assert!(std::ptr::eq(a, b));
        assert_eq!(intern("x"), "x");
    }
}
