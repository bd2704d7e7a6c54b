//! Splitting a command line into arguments exactly as `redis-cli` does:
//! the splitter lives in [`redcodec_protocol::cmdline`] (no RocksDB, so it
//! can be fuzzed on its own) and is re-exported here for the engine's
//! callers.

pub use redcodec_protocol::cmdline::{split_arg_bytes, split_args, CmdlineError};
