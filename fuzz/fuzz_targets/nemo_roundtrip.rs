#![no_main]
//! Structured nemo records encoded, decoded and compared (see `redcodec_fuzz::roundtrip`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::roundtrip::nemo(data));
