//! `redcodec migrate --from redis://[:PASS@]HOST:PORT --to FORMAT --dst DIR
//! --follow [--until-caught-up SECS]`: the flags, checked, handed to the
//! server's follower ([`redcodec_server::replica::follow`]), which runs
//! the replica `serve --replicaof` runs.

use std::io::IsTerminal;
use std::time::Duration;

use clap::Args;
use redcodec_migrate::network::Master;
use redcodec_server::replica::follow::{self, FollowOptions};
use redcodec_server::replica::ReplicaOptions;

use redcodec_engine::Compat;

use super::pair::PairArgs;
use crate::error::{fail, CliError};
use crate::store_args::StoreArgs;
use redcodec_migrate::summary::thousands;
use redcodec_server::signals::ShutdownSignals;

/// The options of a migration that keeps following its source.
#[derive(Args, Debug, Clone, Default)]
pub struct FollowArgs {
    /// With --from `redis://[:PASS@]HOST:PORT`: a full copy, then every write
    /// as it happens, as a replica (PSYNC), until stopped (SIGINT,
    /// SIGTERM); a rerun on the same --dst continues with a partial resync.
    #[arg(long)]
    pub follow: bool,
    /// With --follow: exit once the lag behind the master has stayed at 0
    /// for SECS seconds (0, or 1 if it sent commands redcodec lacks).
    #[arg(long, value_name = "SECS", requires = "follow")]
    pub until_caught_up: Option<u64>,
}

/// Refuses the options a follower has no use for: the source side of
/// `pair`, and `others` (whether given, and the name).
fn check(pair: &PairArgs, others: &[(bool, &str)]) -> Result<(), CliError> {
    let unused = [
        (pair.src.is_some(), "--src"),
        (pair.src_namespace.is_some(), "--src-namespace"),
        (pair.src_cluster, "--src-cluster"),
        (pair.all_namespaces, "--all-namespaces"),
    ];
    for &(given, name) in unused.iter().chain(others) {
        if given {
            return Err(fail(format!("--follow does not take {name}")));
        }
    }
    if pair.to.contains("://") {
        return Err(fail(
            "--follow writes a store: --to FORMAT --dst DIR (to follow into a server, start it with --replicaof)",
        ));
    }
    Ok(())
}

/// Runs `migrate --follow`; `unused` are the other options of `migrate`
/// it refuses (whether given, and the name).
pub fn run(
    pair: &PairArgs,
    compat: Option<Compat>,
    follow: &FollowArgs,
    unused: &[(bool, &str)],
) -> Result<(), CliError> {
    check(pair, unused)?;
    let master = Master::parse(&pair.from)?;
    let store = StoreArgs {
        format: pair.to.clone(),
        dir: pair.dst_dir()?.to_path_buf(),
        fixed_clock: pair.fixed_clock,
        namespace: pair.dst_namespace.clone(),
        cluster: pair.dst_cluster,
        block_cache_mb: pair.block_cache_mb,
        read_cache_mb: 0,
    };
    let (mut config, opener) = crate::serve::server_config(&store, compat)?;
    config.replica = ReplicaOptions {
        replicaof: Some((master.host, master.port)),
        masterauth: master.password,
    };
    let options = FollowOptions {
        until_caught_up: follow.until_caught_up.map(Duration::from_secs),
        interactive: std::io::stderr().is_terminal(),
    };
    let signals = ShutdownSignals::block()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(256 << 20)
        .build()?;
    let stop = signals.wait()?;
    let report = runtime
        .block_on(follow::run(config, opener, options, stop))
        .map_err(|e| fail(e.to_string()))?;
    let master = report
        .master_offset
        .map_or("unknown".to_string(), |m| m.to_string());
    let keys = report
        .keys
        .map_or(String::new(), |k| format!(", {} keys", thousands(k)));
    let saved = if report.state_saved {
        "; replication state saved in the destination: a rerun continues with a partial resync"
    } else {
        ""
    };
    if report.caught_up {
        println!(
            "caught up: master_repl_offset {master}, replica offset {}{keys}{saved}",
            report.offset
        );
        return report.differs().map_or(Ok(()), |why| Err(fail(why)));
    }
    println!(
        "stopped: replica offset {} (master_repl_offset {master}){keys}{saved}",
        report.offset
    );
    if follow.until_caught_up.is_some() {
        return Err(fail("stopped before catching up"));
    }
    Ok(())
}
