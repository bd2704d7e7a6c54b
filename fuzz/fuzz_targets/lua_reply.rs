#![no_main]
//! Scripts' replies through the Lua/RESP conversions (see
//! `redcodec_fuzz::lua_reply`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| redcodec_fuzz::lua_reply::lua_reply(data));
