//! Lists as records: the [`ListOps`] operations every list command goes
//! through, implemented by the array ([`mod@array`]), linked ([`linked`]) and
//! sparse ([`sparse`]) models, with [`Model`] choosing the format's; and
//! lists as whole values.

mod array;
mod linked;
#[cfg(test)]
mod linked_tests;
mod model;
mod ops;
mod sparse;
#[cfg(test)]
mod sparse_tests;

use crate::cursors::SubCursors;
use crate::store::KvStore;
use redcodec_codec::{Codec, Meta};

pub(crate) use self::model::Model;
pub(crate) use self::ops::{Insertion, List, ListOps, Side};
pub(crate) use super::ValueMut;
use crate::error::CmdResult;
use crate::keyspace::Ctx;

/// Every element of the live list `key`, head first (RENAME, migration).
pub(crate) fn read_all<C: Codec, S: KvStore>(
    ctx: &Ctx<'_, C, S>,
    key: &[u8],
    meta: &Meta,
) -> CmdResult<Vec<Vec<u8>>> {
    if meta.size == 0 {
        return Ok(Vec::new());
    }
    Model::of(ctx)?.range(List::new(ctx, key, meta), 0, meta.size - 1)
}

/// Calls `visit` with each element of the live list `key`, head first,
/// until it returns `false`; reads as it goes (migration streams lists),
/// on `cursors` when given (a walk in key order) where the model reads
/// its records in order.
pub(crate) fn visit_all<'e, C: Codec, S: KvStore>(
    ctx: &Ctx<'e, C, S>,
    cursors: Option<&mut SubCursors<'e, S>>,
    key: &[u8],
    meta: &Meta,
    visit: impl FnMut(&[u8]) -> bool,
) -> CmdResult<()> {
    if meta.size == 0 {
        return Ok(());
    }
    let list = List::new(ctx, key, meta);
    match cursors {
        Some(cursors) => Model::of(ctx)?.visit_on(list, cursors, visit),
        None => Model::of(ctx)?.visit(list, Side::Left, visit),
    }
}

/// Appends `values` in order to the fresh list metadata `meta`, as RPUSH
/// would, updating its size and bounds; the caller saves the metadata.
pub(crate) fn write_all<C: Codec, S: KvStore>(
    list: ValueMut<'_, '_, C, S>,
    values: &[Vec<u8>],
) -> CmdResult<()> {
    Model::of(list.ctx)?.push(list, Side::Right, values)
}
