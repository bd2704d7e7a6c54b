#![no_main]
//! A pattern and a string through Redis' glob matcher (see
//! `redcodec_fuzz::protocol`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::protocol::glob(data));
