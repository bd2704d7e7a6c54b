//! `redcodec serve`: a Redis server (RESP2 and RESP3, inline commands,
//! pipelining, transactions, blocking pops) over a redcodec engine of any
//! format.
//!
//! Layers, from the wire in: [`frame`] parses requests (pure, no I/O);
//! [`reply`] encodes replies in RESP2 or RESP3; [`client_loop`] runs one
//! client's loop; [`session`] and [`commands`] answer what the server
//! answers itself and hand the rest to the engine; [`state`] holds what
//! clients share (the engine, WATCH versions, blocked clients, settings,
//! the counters of [`command_stats`], [`error_stats`] and
//! [`persistence`]); [`process`] reads what the operating system reports
//! for INFO; [`server`] accepts clients and shuts down gracefully.

pub mod access;
pub mod admission;
mod client_feed;
pub mod client_loop;
pub mod client_pause;
pub mod clients;
pub mod cluster;
pub mod command_roles;
pub mod command_spec;
pub mod command_stats;
pub mod command_table;
pub mod commands;
pub mod config;
pub mod config_file;
pub mod config_rewrite;
pub mod durable;
pub mod engines;
pub mod error;
pub mod error_stats;
pub mod frame;
pub mod group_commit;
pub mod held_feed;
pub mod keyspace_events;
pub mod master;
pub mod monitor;
pub mod monitors;
pub mod namespace_replication;
pub mod namespace_tokens;
pub mod pause_gate;
pub mod persistence;
pub mod process;
pub mod pubsub;
pub mod replica;
pub mod reply;
pub mod runner;
mod script_lane;
pub mod script_worker;
pub mod scripting;
pub mod scripting_dump;
pub mod scripts;
pub mod server;
pub mod session;
pub mod settings;
pub mod signals;
pub mod slowlog;
pub mod spec_id;
pub mod state;
pub mod waiters;
pub mod wal_sync;
pub mod watch;

pub use config::{ServerConfig, SyncPolicy};
pub use engines::Opener;
pub use error::ServerError;
pub use server::{run, run_until, Server};
