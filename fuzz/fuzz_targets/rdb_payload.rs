#![no_main]
//! Arbitrary bytes as DUMP payloads and objects (see `redcodec_fuzz::rdb`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::rdb::rdb_payload(data));
