//! The reading half of the copy, on its own thread: walks the source's
//! live keys, judges each against the destination's capabilities, and
//! streams keys and element chunks to the writing half through a bounded
//! channel, in packets (one message per element would cost more than the
//! element). Reading one store while writing the other keeps both cores
//! busy; the bound keeps memory constant. The writer sees items in the
//! source's key order, exactly as a single thread would produce them.

use redcodec_codec::{Codec, DataType, Meta};

use crate::batches::{self, BatchLimits, BatchSender, Batches, Gone};
use crate::options::TypeConflict;
use crate::represent::{self, Unrepresentable};
use crate::source::{stream_value, Limits};
use redcodec_engine::error::CmdError;
use redcodec_engine::internals::cursors::SubCursors;
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::internals::walk::KeyWalk;
use redcodec_engine::value::Value;
use redcodec_engine::Engine;

/// Items per packet at most (besides the byte and element limits).
const PACKET_ITEMS: usize = 1024;

/// What the reader hands over, in the source's key order.
pub(crate) enum Item {
    /// A live key the destination can hold; its elements follow as
    /// [`Item::Chunk`]s (none for a string: the value is in `meta`), then
    /// [`Item::EndKey`].
    Key {
        /// The key.
        key: Vec<u8>,
        /// Its source metadata.
        meta: Meta,
        /// Other types the source holds it in ([`super::TypeConflict::First`]).
        shadowed: Vec<DataType>,
    },
    /// Some of the current key's elements.
    Chunk(Value),
    /// The current key's elements are complete.
    EndKey,
    /// A live key the destination cannot hold (nothing follows for it).
    Unrepresentable {
        /// The key.
        key: Vec<u8>,
        /// Its type.
        data_type: Option<DataType>,
        /// Why.
        reason: Unrepresentable,
    },
    /// A key whose metadata does not decode; the reader stops after it.
    Unreadable(Vec<u8>),
}

/// The reader's end of the channel: items gathered into packets.
pub(crate) type Packer = BatchSender<Item, CmdError>;

/// The writer's end: the items in the source's key order.
pub(crate) type Packets = Batches<Item, CmdError>;

/// The channel the reader writes to (packets of at most `limits`), and
/// the receiving end.
pub(crate) fn channel(limits: Limits) -> (Packer, Packets) {
    batches::channel(BatchLimits {
        items: PACKET_ITEMS,
        loads: [limits.elements, limits.bytes],
    })
}

/// Reads every live key of `src` after `after` (exclusive), with chunks
/// and packets of at most `limits`, and sends them on `tx`. Returns when
/// the walk ends, on an error (sent as the last packet), or when the
/// receiver is dropped.
pub(crate) fn read<A: Codec, B: Codec>(
    src: &Engine<A>,
    destination: &B,
    after: Option<&[u8]>,
    limits: Limits,
    conflicts: TypeConflict,
    mut packer: Packer,
) {
    match walk(src, destination, after, limits, conflicts, &mut packer) {
        Ok(()) => {
            let _ = packer.flush();
        }
        Err(Failure::Gone) => {}
        Err(Failure::Read(e)) => packer.fail(e),
    }
}

/// Why the walk ended early.
enum Failure {
    Gone,
    Read(CmdError),
}

impl From<Gone> for Failure {
    fn from(_: Gone) -> Failure {
        Failure::Gone
    }
}

impl From<CmdError> for Failure {
    fn from(e: CmdError) -> Failure {
        Failure::Read(e)
    }
}

fn walk<A: Codec, B: Codec>(
    src: &Engine<A>,
    destination: &B,
    after: Option<&[u8]>,
    chunk_limits: Limits,
    conflicts: TypeConflict,
    packer: &mut Packer,
) -> Result<(), Failure> {
    let ctx = Ctx::new(src);
    let mut walk = KeyWalk::new(&ctx, after);
    let mut cursors = SubCursors::new();
    while let Some((key, meta)) = walk.next()? {
        let Some(meta) = meta else {
            // A key of a type redcodec does not model is unrepresentable
            // (listed, or skipped on request); any other undecodable key
            // stops the migration.
            if let Some(type_name) = unmodelled(&ctx, &key) {
                let item = Item::Unrepresentable {
                    key,
                    data_type: None,
                    reason: Unrepresentable::Unmodelled { type_name },
                };
                packer.push(item, [0, 0])?;
                continue;
            }
            packer.push(Item::Unreadable(key), [0, 0])?;
            return Ok(());
        };
        if let Some(reason) = represent::check(&ctx, destination, &key, &meta, conflicts)? {
            let item = Item::Unrepresentable {
                key,
                data_type: Some(meta.data_type),
                reason,
            };
            packer.push(item, [0, 0])?;
            continue;
        }
        let key_bytes = key.len() + meta.value.len();
        let collection = meta.data_type.is_collection();
        packer.push(
            Item::Key {
                key: key.clone(),
                meta: meta.clone(),
                shadowed: ctx.shadowed_types(&key),
            },
            [usize::from(!collection), key_bytes],
        )?;
        if collection {
            stream_value(
                &ctx,
                Some(&mut cursors),
                &key,
                &meta,
                chunk_limits,
                |chunk| -> Result<(), Failure> {
                    let (n, b) = (chunk.element_count(), chunk.byte_count());
                    packer.push(Item::Chunk(chunk), [n as usize, b as usize])?;
                    Ok(())
                },
            )?;
        }
        packer.push(Item::EndKey, [0, 0])?;
    }
    Ok(())
}

/// The type name of `key` when it holds a type redcodec does not model.
pub(crate) fn unmodelled<C: Codec>(ctx: &Ctx<'_, C>, key: &[u8]) -> Option<String> {
    match ctx.live(key) {
        Err(CmdError::Unmodelled { type_name, .. }) => Some(type_name.to_string()),
        _ => None,
    }
}
