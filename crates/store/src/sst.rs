//! What an SST file says about itself: its table format version, block
//! checksum and compression, read from its footer and properties block
//! (RocksDB's block-based table format, `table/format.cc`). Used to tell
//! which RocksDB release can read a store, and by tests of `--compat`.
//!
//! Only the two meta blocks are read; data blocks stay untouched, so any
//! compression is fine. Errors name what is missing; nothing panics on
//! arbitrary bytes.

use std::path::Path;

/// The block-based table's magic number (the last 8 bytes of the file).
const BLOCK_BASED_MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
/// Footer length for format versions 1 and later.
const FOOTER_LEN: usize = 53;
/// Bytes after each block: compression type and checksum.
const BLOCK_TRAILER_LEN: u64 = 5;

/// Facts an SST file records about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SstFacts {
    /// `format_version` of the block-based table.
    pub format_version: u32,
    /// Block checksum: 0 none, 1 CRC32c, 2 xxHash, 3 xxHash64, 4 XXH3.
    pub checksum: u8,
    /// The `rocksdb.compression` property (e.g. `Snappy`, `NoCompression`).
    pub compression: String,
    /// The `rocksdb.column.family.name` property.
    pub column_family: String,
}

impl SstFacts {
    /// The oldest RocksDB release (major, minor) that reads this table:
    /// its format_version (`table.h` of RocksDB 11.8.1: 2 since 3.10, 3
    /// since 5.15, 4 since 5.16, 5 since 6.6, 6 since 8.6, 7 since 10.4)
    /// and its checksum (XXH3 since 6.27). `None` for a format_version this
    /// crate does not know.
    pub fn readable_since(&self) -> Option<(u32, u32)> {
        let format = match self.format_version {
            0 | 1 => (3, 0),
            2 => (3, 10),
            3 => (5, 15),
            4 => (5, 16),
            5 => (6, 6),
            6 => (8, 6),
            7 => (10, 4),
            _ => return None,
        };
        let checksum = if self.checksum == 4 { (6, 27) } else { (3, 0) };
        Some(format.max(checksum))
    }

    /// The checksum's name, as RocksDB's options spell it.
    pub fn checksum_name(&self) -> &'static str {
        match self.checksum {
            0 => "kNoChecksum",
            1 => "kCRC32c",
            2 => "kxxHash",
            3 => "kxxHash64",
            4 => "kXXH3",
            _ => "unknown",
        }
    }
}

/// Reads the facts of the SST file at `path`.
pub fn read_sst(path: &Path) -> Result<SstFacts, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_sst(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The facts of every SST file in the RocksDB directory `dir`, in file
/// name order (the files are only read).
pub fn survey(dir: &Path) -> Result<Vec<SstFacts>, String> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    files.sort();
    files.iter().map(|f| read_sst(f)).collect()
}

/// Parses the facts out of a whole SST file's bytes.
pub fn parse_sst(bytes: &[u8]) -> Result<SstFacts, String> {
    if bytes.len() < FOOTER_LEN {
        return Err("shorter than a table footer".into());
    }
    let footer = &bytes[bytes.len() - FOOTER_LEN..];
    let magic = u64::from_le_bytes(footer[45..53].try_into().map_err(|_| "footer")?);
    if magic != BLOCK_BASED_MAGIC {
        return Err(format!(
            "magic {magic:#x} is not a block-based table's (format_version 0 or another table type)"
        ));
    }
    let format_version = u32::from_le_bytes(footer[41..45].try_into().map_err(|_| "footer")?);
    let checksum = footer[0];
    let footer_offset = (bytes.len() - FOOTER_LEN) as u64;
    let metaindex = if format_version >= 6 {
        // The metaindex block sits right before the footer; part 2 holds
        // its size after a 4-byte extended magic and two checksums.
        let size = u64::from(u32::from_le_bytes(
            footer[13..17].try_into().map_err(|_| "footer")?,
        ));
        let offset = footer_offset
            .checked_sub(size + BLOCK_TRAILER_LEN)
            .ok_or("metaindex size runs past the file's start")?;
        (offset, size)
    } else {
        let mut pos = 1;
        let offset = varint(footer, &mut pos)?;
        let size = varint(footer, &mut pos)?;
        (offset, size)
    };
    let metaindex = block(bytes, metaindex.0, metaindex.1)?;
    let handle = entries(metaindex)?
        .into_iter()
        .find(|(k, _)| k.as_slice() == b"rocksdb.properties")
        .ok_or("no properties block")?
        .1;
    let mut pos = 0;
    let offset = varint(&handle, &mut pos)?;
    let size = varint(&handle, &mut pos)?;
    let properties = entries(block(bytes, offset, size)?)?;
    let property = |name: &str| {
        properties
            .iter()
            .find(|(k, _)| k.as_slice() == name.as_bytes())
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default()
    };
    Ok(SstFacts {
        format_version,
        checksum,
        compression: property("rocksdb.compression"),
        column_family: property("rocksdb.column.family.name"),
    })
}

/// The block at `offset` of `size` bytes (its trailer excluded).
fn block(bytes: &[u8], offset: u64, size: u64) -> Result<&[u8], String> {
    let start = usize::try_from(offset).map_err(|_| "block offset")?;
    let end = start
        .checked_add(usize::try_from(size).map_err(|_| "block size")?)
        .ok_or("block size")?;
    bytes
        .get(start..end)
        .ok_or_else(|| format!("block {offset}+{size} runs past the file's end"))
}

/// One key and value of a block.
type Entry = (Vec<u8>, Vec<u8>);

/// The entries of an uncompressed block: prefix-compressed keys, then the
/// restart array and its length.
fn entries(block: &[u8]) -> Result<Vec<Entry>, String> {
    if block.len() < 4 {
        return Err("block shorter than its restart count".into());
    }
    let restarts = u32::from_le_bytes(block[block.len() - 4..].try_into().map_err(|_| "block")?);
    // The top bit marks a data-block hash index; meta blocks have none.
    let restarts = (restarts & 0x7fff_ffff) as usize;
    let data_end = restarts
        .checked_mul(4)
        .and_then(|n| block.len().checked_sub(4 + n))
        .ok_or("restart array larger than its block")?;
    let data = &block[..data_end];
    let mut out = Vec::new();
    let mut key: Vec<u8> = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let shared = varint(data, &mut pos)? as usize;
        let unshared = varint(data, &mut pos)? as usize;
        let value_len = varint(data, &mut pos)? as usize;
        if shared > key.len() {
            return Err("entry shares more than the previous key".into());
        }
        key.truncate(shared);
        let key_end = pos.checked_add(unshared).ok_or("entry key")?;
        key.extend_from_slice(
            data.get(pos..key_end)
                .ok_or("entry key runs past its block")?,
        );
        let value_end = key_end.checked_add(value_len).ok_or("entry value")?;
        let value = data
            .get(key_end..value_end)
            .ok_or("entry value runs past its block")?;
        out.push((key.clone(), value.to_vec()));
        pos = value_end;
    }
    Ok(out)
}

/// A little-endian base-128 varint (at most 64 bits).
fn varint(bytes: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*pos).ok_or("varint runs past its end")?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("varint longer than 64 bits".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arbitrary_bytes_are_errors_not_panics() {
        assert!(parse_sst(b"").is_err());
        assert!(parse_sst(&[0xff; 53]).is_err());
        let mut fake = vec![0x80u8; 100];
        fake[100 - 8..].copy_from_slice(&BLOCK_BASED_MAGIC.to_le_bytes());
        assert!(parse_sst(&fake).is_err());
        fake[100 - 12..100 - 8].copy_from_slice(&7u32.to_le_bytes());
        fake[100 - 53 + 13..100 - 53 + 17].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse_sst(&fake).is_err());
    }

    #[test]
    fn varints_decode() {
        let mut pos = 0;
        assert_eq!(varint(&[0xac, 0x02], &mut pos), Ok(300));
        assert_eq!(pos, 2);
        assert!(varint(&[0x80], &mut 0).is_err());
    }
}
