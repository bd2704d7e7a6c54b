#![no_main]
//! Arbitrary bytes through every floyd decoder (see `redcodec_fuzz::decode`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::decode::floyd(data));
