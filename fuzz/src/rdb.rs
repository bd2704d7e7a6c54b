//! DUMP payloads ([`redcodec_rdb`]).
//!
//! - [`rdb_payload`]: the input as a whole payload (its footer is almost
//!   never right: the CRC check and the short-payload paths), then as an
//!   object sealed with a right footer, so the object decoder sees every
//!   input. No panic, no allocation beyond what the input can hold. An
//!   object that decodes re-encodes (with and without compression) to a
//!   payload that decodes to the same value, and encoding that value
//!   again gives the same bytes.

use redcodec_rdb::{decode_payload, encode_payload, seal, EncodeOptions};

/// See the module documentation.
pub fn rdb_payload(data: &[u8]) {
    let _ = decode_payload(data);
    let Ok(value) = decode_payload(&seal(data.to_vec())) else {
        return;
    };
    for compression in [true, false] {
        let opts = EncodeOptions { compression };
        let payload = encode_payload(&value, opts);
        let again = decode_payload(&payload).expect("an encoded payload decodes");
        assert_eq!(
            again.canonical(),
            value.canonical(),
            "decode → encode → decode"
        );
        assert_eq!(
            encode_payload(&again, opts),
            payload,
            "re-encoding is stable"
        );
    }
}
