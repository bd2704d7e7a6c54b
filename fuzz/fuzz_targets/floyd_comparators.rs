#![no_main]
//! Floyd's two comparators as total orders (see `redcodec_fuzz::order`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::order::floyd(data));
