//! The reading half of the copy, on its own thread: walks the source's
//! live keys, judges each against the destination's capabilities, and
//! streams keys and element chunks to the writing half through a bounded
//! channel, in packets (one message per element would cost more than the
//! element). Reading one store while writing the other keeps both cores
//! busy; the bound keeps memory constant. The writer sees items in the
//! source's key order, exactly as a single thread would produce them.

use std::sync::mpsc::{Receiver, SyncSender};

use redcodec_codec::{Codec, DataType, Meta};

use crate::options::TypeConflict;
use crate::represent::{self, Unrepresentable};
use crate::source::{stream_value, Limits};
use redcodec_engine::error::CmdError;
use redcodec_engine::internals::cursors::SubCursors;
use redcodec_engine::internals::keyspace::Ctx;
use redcodec_engine::internals::walk::KeyWalk;
use redcodec_engine::value::Value;
use redcodec_engine::Engine;

/// Packets in flight between the threads.
const PACKETS_IN_FLIGHT: usize = 4;

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

/// A packet of items, or the error that ended the reading.
pub(crate) type Packet = Result<Vec<Item>, CmdError>;

/// The channel the reader writes to, and the receiving end.
pub(crate) fn channel() -> (SyncSender<Packet>, Receiver<Packet>) {
    std::sync::mpsc::sync_channel(PACKETS_IN_FLIGHT)
}

/// Items gathered into a packet.
struct Packer {
    tx: SyncSender<Packet>,
    items: Vec<Item>,
    elements: usize,
    bytes: usize,
    limits: Limits,
}

/// The writer hung up: reading stops.
struct Gone;

impl From<CmdError> for Gone {
    fn from(_: CmdError) -> Gone {
        Gone
    }
}

impl Packer {
    fn push(&mut self, item: Item, elements: usize, bytes: usize) -> Result<(), Gone> {
        self.items.push(item);
        self.elements += elements;
        self.bytes += bytes;
        if self.items.len() >= PACKET_ITEMS
            || self.elements >= self.limits.elements
            || self.bytes >= self.limits.bytes
        {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Gone> {
        if self.items.is_empty() {
            return Ok(());
        }
        self.elements = 0;
        self.bytes = 0;
        let items = std::mem::take(&mut self.items);
        self.tx.send(Ok(items)).map_err(|_| Gone)
    }
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
    tx: SyncSender<Packet>,
) {
    let mut packer = Packer {
        tx,
        items: Vec::new(),
        elements: 0,
        bytes: 0,
        limits,
    };
    match walk(src, destination, after, conflicts, &mut packer) {
        Ok(()) => {
            let _ = packer.flush();
        }
        Err(Failure::Gone) => {}
        Err(Failure::Read(e)) => {
            if packer.flush().is_ok() {
                let _ = packer.tx.send(Err(e));
            }
        }
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
                packer.push(item, 0, 0)?;
                continue;
            }
            packer.push(Item::Unreadable(key), 0, 0)?;
            return Ok(());
        };
        if let Some(reason) = represent::check(&ctx, destination, &key, &meta, conflicts)? {
            let item = Item::Unrepresentable {
                key,
                data_type: Some(meta.data_type),
                reason,
            };
            packer.push(item, 0, 0)?;
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
            usize::from(!collection),
            key_bytes,
        )?;
        if collection {
            let chunk_limits = packer.limits;
            stream_value(
                &ctx,
                Some(&mut cursors),
                &key,
                &meta,
                chunk_limits,
                |chunk| -> Result<(), Failure> {
                    let (n, b) = (chunk.element_count(), chunk.byte_count());
                    packer.push(Item::Chunk(chunk), n as usize, b as usize)?;
                    Ok(())
                },
            )?;
        }
        packer.push(Item::EndKey, 0, 0)?;
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
