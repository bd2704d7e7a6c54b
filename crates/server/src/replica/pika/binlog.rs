//! One binlog item of a Pika master (`PikaBinlogTransverter`, type
//! `TypeFirst`): a 34-byte little-endian header (type u16 = 1, exec time
//! u32, term u32, logic id u64, file number u32, offset u64, content
//! length u32), then the content: the command in RESP, as Pika writes it
//! to its binlog (`Cmd::ToRedisProtocol`).
//!
//! A few of the commands there are Pika's own, and become the Redis
//! command that does the same ([`translate`]): `pksetexat key unix-seconds
//! value` (what Pika logs for SET with EX/PX, SETEX, PSETEX, INCR,
//! INCRBY, INCRBYFLOAT and APPEND) is `SET key value EXAT unix-seconds`,
//! `SET key value` for a time of 0 (no expiry) and `DEL key` for a
//! negative one (Pika stores the key as expired); `padding` (the filler Pika writes at the end of a
//! binlog block) is nothing.

use bytes::Bytes;
use redcodec_protocol::{parse_request, Limits};

/// The header's length.
pub const HEADER_LEN: usize = 34;

/// The only item type Pika writes (`TypeFirst`).
const TYPE_FIRST: u16 = 1;

/// A decoded item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Seconds since the epoch when the master ran the command.
    pub exec_time: u32,
    /// The consensus term.
    pub term: u32,
    /// The logic id.
    pub logic_id: u64,
    /// The commands of the content (one in every item Pika writes; none
    /// in a padding item).
    pub commands: Vec<Vec<Bytes>>,
}

/// Why an item cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BinlogError {
    /// Fewer bytes than a header.
    #[error("a binlog item of {0} bytes is shorter than its 34-byte header")]
    Short(usize),
    /// Another item type.
    #[error("a binlog item of type {0} (Pika writes type 1 only)")]
    Type(u16),
    /// The content is not complete RESP commands.
    #[error("the command of a binlog item does not parse: {0}")]
    Command(String),
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Decodes an item. As Pika's replica does, the content is everything
/// after the header (the length field is not relied on).
pub fn decode(item: &[u8]) -> Result<Item, BinlogError> {
    if item.len() < HEADER_LEN {
        return Err(BinlogError::Short(item.len()));
    }
    let kind = u16::from_le_bytes([item[0], item[1]]);
    if kind != TYPE_FIRST {
        return Err(BinlogError::Type(kind));
    }
    let mut content = &item[HEADER_LEN..];
    let header = |commands| Item {
        exec_time: u32_at(item, 2),
        term: u32_at(item, 6),
        logic_id: u64_at(item, 10),
        commands,
    };
    // Pika's filler: its parameter's length is written with leading
    // zeros (`$00042`), which a RESP parser refuses.
    if content.starts_with(PADDING) {
        return Ok(header(Vec::new()));
    }
    let limits = Limits {
        max_bulk_len: i64::MAX,
    };
    let mut commands = Vec::new();
    while !content.is_empty() {
        match parse_request(content, &limits) {
            Ok(Some((request, used))) if used > 0 => {
                content = &content[used..];
                if !request.args.is_empty() {
                    commands.push(request.args);
                }
            }
            Ok(_) => return Err(BinlogError::Command("incomplete command".into())),
            Err(e) => return Err(BinlogError::Command(e.to_string())),
        }
    }
    if commands.is_empty() {
        return Err(BinlogError::Command("no command".into()));
    }
    Ok(header(commands))
}

/// How a padding item's content starts (`ConstructPaddingBinlog`).
const PADDING: &[u8] = b"*2\r\n$7\r\npadding\r\n";

/// The Redis command that does what a command of Pika's binlog does
/// (`None`: nothing to run).
pub fn translate(mut args: Vec<Bytes>) -> Option<Vec<Bytes>> {
    let name = args.first()?.to_ascii_lowercase();
    match name.as_slice() {
        b"padding" => None,
        b"pksetexat" if args.len() == 4 => {
            let value = args.pop()?;
            let at = args.pop()?;
            let key = args.pop()?;
            // Pika's `Storage::PKSetexAt`: 0 is no expiry, a negative
            // time an expired key.
            match std::str::from_utf8(&at)
                .ok()
                .and_then(|t| t.parse::<i64>().ok())
            {
                Some(0) => Some(vec![Bytes::from_static(b"SET"), key, value]),
                Some(t) if t < 0 => Some(vec![Bytes::from_static(b"DEL"), key]),
                _ => Some(vec![
                    Bytes::from_static(b"SET"),
                    key,
                    value,
                    Bytes::from_static(b"EXAT"),
                    at,
                ]),
            }
        }
        _ => Some(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: u16, content: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&kind.to_le_bytes());
        b.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&9u64.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&77u64.to_le_bytes());
        b.extend_from_slice(&u32::try_from(content.len()).unwrap().to_le_bytes());
        b.extend_from_slice(content);
        b
    }

    #[test]
    fn an_item_decodes_to_its_command() {
        let it = decode(&item(1, b"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n")).unwrap();
        assert_eq!(it.exec_time, 1_700_000_000);
        assert_eq!(it.term, 2);
        assert_eq!(it.logic_id, 9);
        assert_eq!(
            it.commands,
            vec![vec![b"set".to_vec(), b"k".to_vec(), b"v".to_vec()]]
        );
    }

    #[test]
    fn malformed_items_are_errors_not_panics() {
        assert_eq!(decode(b""), Err(BinlogError::Short(0)));
        assert_eq!(decode(&[1; 33]), Err(BinlogError::Short(33)));
        assert_eq!(
            decode(&item(2, b"*1\r\n$4\r\nping\r\n")),
            Err(BinlogError::Type(2))
        );
        for bad in [
            &b""[..],
            b"*2\r\n$3\r\nset\r\n",
            b"*x\r\n",
            b"*1\r\n$99\r\nab\r\n",
        ] {
            assert!(decode(&item(1, bad)).is_err(), "{bad:?}");
        }
        // Every prefix and every single-byte corruption of a good item.
        let good = item(1, b"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n");
        for n in 0..good.len() {
            let _ = decode(&good[..n]);
            let mut bad = good.clone();
            bad[n] ^= 0xff;
            let _ = decode(&bad);
        }
    }

    #[test]
    fn pika_commands_become_redis_ones() {
        use crate::frame::args_of as args;
        assert_eq!(
            translate(args(&["pksetexat", "k", "1900000000", "v"])),
            Some(args(&["SET", "k", "v", "EXAT", "1900000000"]))
        );
        assert_eq!(
            translate(args(&["pksetexat", "k", "0", "12"])),
            Some(args(&["SET", "k", "12"]))
        );
        assert_eq!(
            translate(args(&["pksetexat", "k", "-1", "12"])),
            Some(args(&["DEL", "k"]))
        );
        assert_eq!(translate(args(&["padding", "***"])), None);
        let padding = decode(&item(1, b"*2\r\n$7\r\npadding\r\n$00003\r\n***\r\n")).unwrap();
        assert!(padding.commands.is_empty());
        assert_eq!(
            translate(args(&["hset", "h", "f", "v"])),
            Some(args(&["hset", "h", "f", "v"]))
        );
        assert_eq!(translate(Vec::new()), None);
    }
}
