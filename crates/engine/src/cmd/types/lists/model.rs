//! [`Model`]: the list model the format declares, forwarding every
//! [`ListOps`] operation to it from one dispatch point.

use crate::store::KvStore;
use redcodec_codec::{Codec, ListModel, Meta};

use super::array::Array;
use super::linked::Linked;
use super::ops::{ListOps, Side};
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
}

/// Forwards one [`ListOps`] call to the model `Model` holds: the one
/// dispatch point over the list models (statically dispatched, no `dyn`).
macro_rules! forward {
    ($(fn $name:ident<$($g:ident: $b:path),*>(&self, $($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        impl ListOps for Model {
            $(
                #[inline]
                fn $name<$($g: $b),*>(&self, $($arg: $ty),*) -> $ret {
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
    fn get<C: Codec, S: KvStore>(&self, ctx: &Ctx<'_, C, S>, key: &[u8], meta: &Meta, pos: u64) -> CmdResult<Vec<u8>>;
    fn range<C: Codec, S: KvStore>(&self, ctx: &Ctx<'_, C, S>, key: &[u8], meta: &Meta, start: u64, stop: u64) -> CmdResult<Vec<Vec<u8>>>;
    fn visit<C: Codec, S: KvStore>(&self, ctx: &Ctx<'_, C, S>, key: &[u8], meta: &Meta, from: Side, visit: impl FnMut(&[u8]) -> bool) -> CmdResult<()>;
    fn push<C: Codec, S: KvStore, V: AsRef<[u8]>>(&self, ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &mut Meta, side: Side, values: &[V]) -> CmdResult<()>;
    fn pop<C: Codec, S: KvStore>(&self, ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &mut Meta, side: Side, n: u64) -> CmdResult<Vec<Vec<u8>>>;
    fn set<C: Codec, S: KvStore>(&self, ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &Meta, pos: u64, value: &[u8]) -> CmdResult<()>;
    fn insert<C: Codec, S: KvStore>(&self, ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &mut Meta, pivot: &[u8], before: bool, value: &[u8]) -> CmdResult<bool>;
    fn remove<C: Codec, S: KvStore>(&self, ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &mut Meta, count: i64, value: &[u8]) -> CmdResult<u64>;
    fn rotate<C: Codec, S: KvStore>(&self, ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &mut Meta, from: Side, to: Side) -> CmdResult<Vec<u8>>;
    fn trim<C: Codec, S: KvStore>(&self, ctx: &mut Ctx<'_, C, S>, key: &[u8], meta: &mut Meta, start: u64, stop: u64) -> CmdResult<()>;
}
