//! Cluster slots (`src/cluster/redis_slot.cc`): the Redis Cluster rule.
//!
//! `slot = crc16(tag) & 0x3FFF`, where `crc16` is CRC-16/XMODEM (polynomial
//! 0x1021, initial value 0, no reflection, no final xor) and the tag is the
//! text between the first `{` and the first `}` after it when that text is
//! non-empty, otherwise the whole key.

/// Number of cluster slots.
pub const SLOTS: u16 = 16384;

/// CRC-16/XMODEM of `bytes`.
pub fn crc16(bytes: &[u8]) -> u16 {
    const XMODEM: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);
    XMODEM.checksum(bytes)
}

/// The part of `key` that is hashed: the hash tag if there is a non-empty
/// one, else the whole key.
pub fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    let after = &key[open + 1..];
    match after.iter().position(|&b| b == b'}') {
        Some(close) if close > 0 => &after[..close],
        _ => key,
    }
}

/// The cluster slot of `key`.
pub fn slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) & (SLOTS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_check_value() {
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn slots_of_known_keys() {
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"foo"), 0x2F96);
        assert_eq!(slot(b"h"), 11694);
        assert_eq!(slot(b"h"), 0x2DAE);
    }

    #[test]
    fn hash_tags() {
        assert_eq!(slot(b"{user}a"), slot(b"{user}b"));
        assert_eq!(slot(b"{user}a"), slot(b"user"));
        assert_eq!(hash_tag(b"{}x"), b"{}x");
        assert_eq!(slot(b"{}x"), crc16(b"{}x") & 0x3FFF);
        assert_eq!(hash_tag(b"a{b"), b"a{b");
        assert_eq!(hash_tag(b"a{b}{c}"), b"b");
        assert_eq!(hash_tag(b"a}b{c}"), b"c");
        assert_eq!(hash_tag(b"{{x}}"), b"{x");
    }
}
