//! Which RESP3 shape each command's reply takes. The engine's
//! [`Reply`](redcodec_engine::Reply) is RESP2 only; the shape says how
//! Redis 7.0 answers the same command to a RESP3 client. Each command's
//! [`ShapeRule`] is part of its spec in the registry
//! ([`crate::commands::registry`]): a fixed shape, or one that depends on
//! an argument (ZRANGE's `WITHSCORES`, CONFIG's `GET`).

pub use redcodec_engine::internals::dispatch::{Shape, ShapeRule};
