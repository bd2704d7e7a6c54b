//! Which instance holds a key (`Storage::GetDBInstance`, `src/storage.cc`):
//! `(crc32(tag) mod slot_num) mod instances`, the codis slot rule of
//! `GetSlotsID` (`src/pstd/src/pika_codis_slot.cc`) and
//! `SlotIndexer::GetInstanceID`.

/// zlib's CRC-32 (reflected polynomial `0xEDB88320`), as `crc32(0L, …)`
/// computes it.
pub fn crc32(bytes: &[u8]) -> u32 {
    const ZLIB: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
    ZLIB.checksum(bytes)
}

/// The bytes hashed for `key` (`GetSlotsTag`): between the first `{` and
/// the first `}` after it, even when that is empty; the whole key when
/// there is no such pair.
pub fn tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    let rest = &key[open + 1..];
    match rest.iter().position(|&b| b == b'}') {
        Some(close) => &rest[..close],
        None => key,
    }
}

/// The slot of `key` among `slot_num` slots (`GetSlotID`).
pub fn slot(key: &[u8], slot_num: u32) -> u32 {
    crc32(tag(key)) % slot_num.max(1)
}

/// The instance of `key` (`slot mod instances`).
pub fn instance(key: &[u8], slot_num: u32, instances: usize) -> usize {
    slot(key, slot_num) as usize % instances.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_zlibs() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"foo"), 0x8c73_6521);
    }

    #[test]
    fn tags_as_codis_takes_them() {
        assert_eq!(tag(b"{user}a"), b"user");
        assert_eq!(tag(b"a{user}b{x}"), b"user");
        assert_eq!(tag(b"{}x"), b"");
        assert_eq!(tag(b"x{y"), b"x{y");
        assert_eq!(tag(b"x}y{"), b"x}y{");
        assert_eq!(tag(b""), b"");
    }

    #[test]
    fn instances_of_the_worked_examples() {
        // formats-spec/floyd.md §1.1.
        assert_eq!(slot(b"foo", 1024), 289);
        assert_eq!(instance(b"foo", 1024, 3), 1);
        assert_eq!(instance(b"h", 1024, 3), 2);
        assert_eq!(instance(b"z", 1024, 3), 1);
        assert_eq!(instance(b"l", 1024, 3), 1);
        assert_eq!(slot(b"{user}a", 1024), 585);
        assert_eq!(instance(b"{user}a", 1024, 3), 0);
        assert_eq!(instance(b"{user}b", 1024, 3), instance(b"{user}a", 1024, 3));
        assert_eq!(instance(b"{}x", 1024, 3), 0);
        // Pika's built-in slot_num of 1 puts every key in instance 0.
        assert_eq!(instance(b"h", 1, 3), 0);
    }
}
