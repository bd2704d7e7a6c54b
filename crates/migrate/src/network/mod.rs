//! Migration and verification with a live Redis-compatible server on one
//! side (`redis://HOST:PORT[/DB]`), or a cluster of them as destination
//! (`redis-cluster://HOST:PORT`, any node as the seed), for systems that
//! cannot open a store redcodec writes (Pika 2.x–3.4 and Ardb run RocksDB
//! 5.x) and for clusters: keys travel through the protocol instead. The
//! rules are the store-to-store migration's ([`crate::MigrateOptions`]);
//! values are compared with the same [`crate::ContentDigest`].
//!
//! - `endpoint`: the URL, parsed by the `redis` crate; `master`: the
//!   master a follower replicates (`migrate --follow`), by its URL;
//! - `server`: the connection (`link`, or every master of a
//!   `cluster`, keys routed by slot), pipelines, `reply`s checked;
//! - `remote`: keys probed and values read from the server, in chunks;
//! - `outbox`: a key written to the server as `DEL`, chunks, `PEXPIREAT`;
//! - `judge`: which keys can be migrated (the store-to-store rules);
//! - `job`: both ends, the checkpoint (`crate::checkpoint`), the plan
//!   and the report; `pages`: the sizes and the walk of a store;
//! - `push`: store → server; `pull`: server → store; `relay`:
//!   server → server or cluster;
//! - `verify`: every key compared through the protocol.

mod cluster;
mod endpoint;
mod job;
mod judge;
mod link;
mod master;
mod outbox;
mod pages;
mod pull;
mod push;
mod relay;
mod remote;
mod reply;
mod server;
mod verify;

pub use endpoint::{is_url, Endpoint};
pub use job::ServerReport;
pub use judge::Rules;
pub use master::Master;
pub use pull::migrate_from_server;
pub use push::migrate_to_server;
pub use relay::migrate_between_servers;
pub use verify::{
    verify_between_servers, verify_server_to_store, verify_store_to_server, INEXACT_EXPIRY_MS,
};
