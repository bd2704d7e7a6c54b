#![no_main]
//! Arbitrary bytes through the request parser, whole and in pieces (see
//! `redcodec_fuzz::protocol`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::protocol::resp_request(data));
