#![no_main]
//! Blackwidow's two comparators and its score order as total orders (see `redcodec_fuzz::order`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::order::blackwidow(data));
