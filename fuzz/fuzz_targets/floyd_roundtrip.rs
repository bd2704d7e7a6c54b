#![no_main]
//! Structured floyd records encoded, decoded and compared (see `redcodec_fuzz::roundtrip`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::roundtrip::floyd(data));
