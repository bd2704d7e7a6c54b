#![no_main]
//! Read commands over a store of arbitrary records (see `redcodec_fuzz::store_reads`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::store_reads::fuzz(data));
