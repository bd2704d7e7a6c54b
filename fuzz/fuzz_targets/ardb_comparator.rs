#![no_main]
//! `ardb.comparator` as a total order (see `redcodec_fuzz::order`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::order::ardb(data));
