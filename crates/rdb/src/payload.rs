//! The DUMP framing: `<object> ‖ RDB version u16 LE ‖ CRC64 u64 LE` over
//! everything before the CRC (`createDumpPayload`, `verifyDumpPayload`).

use crc::{Crc, CRC_64_REDIS};

use crate::error::{DumpError, DumpResult};
use crate::object::{decode_object, encode_object};
use crate::string::EncodeOptions;
use crate::Value;

/// The RDB version Redis 7.0 writes, and the highest it restores.
pub const RDB_VERSION: u16 = 10;

const FOOTER: usize = 10;
const CRC64: Crc<u64> = Crc::<u64>::new(&CRC_64_REDIS);

/// The object bytes of a payload whose footer is right: at least 10
/// bytes, an RDB version of at most 10, and a CRC64 (Jones, as Redis'
/// `crc64`) that matches.
pub fn verify_footer(payload: &[u8]) -> DumpResult<&[u8]> {
    if payload.len() < FOOTER {
        return Err(DumpError::VersionOrChecksum);
    }
    let (body, footer) = payload.split_at(payload.len() - FOOTER);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let mut crc = [0u8; 8];
    crc.copy_from_slice(&footer[2..]);
    if version > RDB_VERSION
        || CRC64.checksum(&payload[..payload.len() - 8]) != u64::from_le_bytes(crc)
    {
        return Err(DumpError::VersionOrChecksum);
    }
    Ok(body)
}

/// The value a DUMP payload holds. As in Redis' RESTORE, once the footer
/// is right the object is read from the start of the whole payload: an
/// object may run into its footer's bytes, and bytes it leaves unread are
/// ignored.
pub fn decode_payload(payload: &[u8]) -> DumpResult<Value> {
    verify_footer(payload)?;
    decode_object(payload)
}

/// Appends the footer (RDB version 10 and the CRC64) to object bytes.
pub fn seal(mut object: Vec<u8>) -> Vec<u8> {
    object.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = CRC64.checksum(&object);
    object.extend_from_slice(&crc.to_le_bytes());
    object
}

/// The DUMP payload of a value, as redis-server 7.0 writes it (see the
/// crate docs for where the bytes may differ).
pub fn encode_payload(value: &Value, opts: EncodeOptions) -> Vec<u8> {
    seal(encode_object(value, opts))
}
