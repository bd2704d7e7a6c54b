//! What the fuzz targets check, shared by `fuzz_targets/*.rs` (one line
//! each) and by `examples/make_seeds.rs`, which writes their seed corpora.
//!
//! - [`decode`]: arbitrary bytes through every decoding entry point of a
//!   format — the [`redcodec_codec::Codec`] methods (through
//!   [`redcodec_testkit::feed_decoders`]) and the format crate's public
//!   decoding functions. No panic, no unbounded allocation; metadata that
//!   decodes re-encodes to bytes that decode to the same metadata.
//! - [`order`]: the custom comparators on arbitrary byte triples — no panic,
//!   reflexive, antisymmetric, transitive, and equal only where the
//!   comparator's documentation says distinct keys are equal.
//! - [`merge`]: Ardb's merge operator on arbitrary keys, bases and operands.
//! - [`roundtrip`]: structured records (keys, metadata, element ids and
//!   values) encoded, decoded and compared; every encoded key lies in the
//!   range the codec gives for it.
//! - [`protocol`]: the request parser (whole and in pieces) and redis-cli's
//!   quoting splitter.
//! - [`rdb`]: DUMP payloads and objects through the decoder, and what
//!   decodes through the encoder and back.
//! - [`lua_reply`]: scripts' replies through the Lua/RESP conversions.
//! - [`store_reads`]: a store of arbitrary and damaged records of every
//!   format, in memory, and every read command on it.
//!
//! Input layouts (what the seed files hold) are described by each module.

pub mod decode;
pub mod lua_reply;
pub mod merge;
pub mod order;
pub mod protocol;
pub mod rdb;
pub mod roundtrip;
pub mod store_reads;

/// Splits `data` into length-prefixed chunks: a `u16` little-endian length,
/// then that many bytes (fewer if `data` ends first). The last chunk is
/// whatever remains when `n` chunks have been read. Always `n` chunks.
pub fn chunks(mut data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if i + 1 == n {
            out.push(data);
            break;
        }
        let len = match data {
            [a, b, rest @ ..] => {
                data = rest;
                usize::from(u16::from_le_bytes([*a, *b]))
            }
            _ => {
                data = &[];
                0
            }
        };
        let (chunk, rest) = data.split_at(len.min(data.len()));
        out.push(chunk);
        data = rest;
    }
    out
}

/// The inverse of [`chunks`] for `n` chunks, for writing seeds: `parts`
/// padded with empty ones to `n`, every one but the last length-prefixed
/// (longer parts are cut to `u16::MAX` bytes; parts beyond `n` dropped).
pub fn join_chunks(parts: &[&[u8]], n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let part = parts.get(i).copied().unwrap_or(&[]);
        if i + 1 == n {
            out.extend_from_slice(part);
        } else {
            let len = part.len().min(usize::from(u16::MAX));
            out.extend_from_slice(&(len as u16).to_le_bytes());
            out.extend_from_slice(&part[..len]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_round_trip() {
        let parts: [&[u8]; 3] = [b"ab", b"", b"xyz"];
        assert_eq!(chunks(&join_chunks(&parts, 3), 3), parts.to_vec());
        assert_eq!(
            chunks(&join_chunks(&parts[..1], 3), 3),
            vec![&b"ab"[..], &[][..], &[][..]]
        );
        assert_eq!(chunks(&[5, 0, 1], 3), vec![&[1][..], &[][..], &[][..]]);
    }
}
