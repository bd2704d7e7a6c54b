#![no_main]
//! `ardb.merger` on arbitrary keys, bases and operands (see `redcodec_fuzz::merge`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::merge::ardb(data));
