#![no_main]
//! Arbitrary bytes through every blackwidow decoder (see `redcodec_fuzz::decode`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::decode::blackwidow(data));
