//! [`Model`]: the list model the format declares, forwarding every
//! [`ListOps`] operation to it from one dispatch point.

use crate::cursors::SubCursors;
use crate::store::KvStore;
use redcodec_codec::{Codec, ListModel};

use super::array::Array;
use super::linked::Linked;
use super::ops::{Insertion, List, ListOps, Side, ValueMut};
use super::sparse::Sparse;
use crate::error::CmdResult;
use crate::keyspace::Ctx;

/// The list algorithm chosen for the format.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Model {
    /// Consecutive integer indexes; `ListShift` picks the side that moves.
    Array(Array),
    /// Doubly linked nodes with never-reused sequence numbers.
    Linked(Linked),
    /// Numeric indexes, fractional after LINSERT.
    Sparse(Sparse),
}

impl Model {
    /// The algorithm for the format behind `ctx`. This is the only place
    /// that knows which list models are implemented.
    pub(crate) fn of<C: Codec, S: KvStore>(ctx: &Ctx<'_, C, S>) -> CmdResult<Model> {
        Ok(match ctx.caps().list_model {
            ListModel::Array { shift } => Model::Array(Array { shift }),
            ListModel::Linked => Model::Linked(Linked),
            ListModel::Sparse => Model::Sparse(Sparse),
        })
    }

    /// [`ListOps::visit`] from the head, reading on `cursors` (a walk in
    /// key order) where the model reads its records in index order; the
    /// linked model follows its links by point reads either way.
    pub(crate) fn visit_on<'e, C: Codec, S: KvStore, F: FnMut(&[u8]) -> bool>(
        &self,
        list: List<'_, 'e, C, S>,
        cursors: &mut SubCursors<'e, S>,
        visit: F,
    ) -> CmdResult<()> {
        match self {
            Model::Array(m) => m.visit_on(list, cursors, visit),
            Model::Sparse(m) => m.visit_on(list, cursors, visit),
            Model::Linked(m) => m.visit(list, Side::Left, visit),
        }
    }
}

/// Forwards one [`ListOps`] call to the model `Model` holds: the one
/// dispatch point over the list models (statically dispatched, no `dyn`).
macro_rules! forward {
    ($(fn $name:ident$(<$g:ident: $b:path>)?(&self, $($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        impl<C: Codec, S: KvStore> ListOps<C, S> for Model {
            $(
                #[inline]
                fn $name$(<$g: $b>)?(&self, $($arg: $ty),*) -> $ret {
                    match self {
                        Model::Array(m) => m.$name($($arg),*),
                        Model::Linked(m) => m.$name($($arg),*),
                        Model::Sparse(m) => m.$name($($arg),*),
                    }
                }
            )*
        }
    };
}

forward! {
    fn get(&self, list: List<'_, '_, C, S>, pos: u64) -> CmdResult<Vec<u8>>;
    fn range(&self, list: List<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<Vec<Vec<u8>>>;
    fn visit<F: FnMut(&[u8]) -> bool>(&self, list: List<'_, '_, C, S>, from: Side, visit: F) -> CmdResult<()>;
    fn push<V: AsRef<[u8]>>(&self, list: ValueMut<'_, '_, C, S>, side: Side, values: &[V]) -> CmdResult<()>;
    fn pop(&self, list: ValueMut<'_, '_, C, S>, side: Side, n: u64) -> CmdResult<Vec<Vec<u8>>>;
    fn set(&self, list: ValueMut<'_, '_, C, S>, pos: u64, value: &[u8]) -> CmdResult<()>;
    fn insert(&self, list: ValueMut<'_, '_, C, S>, new: Insertion<'_>) -> CmdResult<bool>;
    fn remove(&self, list: ValueMut<'_, '_, C, S>, count: i64, value: &[u8]) -> CmdResult<u64>;
    fn rotate(&self, list: ValueMut<'_, '_, C, S>, from: Side, to: Side) -> CmdResult<Vec<u8>>;
    fn trim(&self, list: ValueMut<'_, '_, C, S>, start: u64, stop: u64) -> CmdResult<()>;
}
