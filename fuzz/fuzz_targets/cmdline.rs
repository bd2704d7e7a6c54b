#![no_main]
//! Arbitrary bytes through redis-cli's quoting splitter, and quoted back
//! (see `redcodec_fuzz::protocol`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::protocol::cmdline(data));
