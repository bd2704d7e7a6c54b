//! The full copy: each database's dump, fetched into a spool directory of
//! the data directory ([`super::rsync`]), is opened read-only with
//! redcodec's own reader of its layout — Pika 4's floyd (`0/`, `1/`, … one
//! RocksDB per instance) or Pika 3.5's blackwidow (`strings/`, `hashes/`,
//! …) — and every key is written into this server's engine, under the load
//! marker of the Redis full copy (clients get `-LOADING`; a replica killed
//! in between flushes the half copy when it starts again). The dump's
//! `info` file gives the binlog position the stream continues from.

use std::path::{Path, PathBuf};

use redcodec_blackwidow::BlackwidowCodec;
use redcodec_engine::{Engine, EngineOptions};
use redcodec_floyd::{FloydCodec, FloydOptions};
use redcodec_formats::AnyCodec;

use crate::replica::kvrocks::copy::{
    flush_everything, read_page, replace_data, write_entries, Copied,
};
use crate::replica::link_error::LinkError;
use crate::session::Session;
use crate::state::Shared;

/// The spool directory's name in the data directory.
pub const SPOOL_DIR: &str = "redcodec-pika-sync";

/// Keys per RocksDB write while copying.
const BATCH_KEYS: usize = 256;

/// The spool directory of the server's data directory.
pub fn spool_dir(shared: &Shared) -> PathBuf {
    Path::new(&shared.config.dir).join(SPOOL_DIR)
}

/// The binlog position in a dump's `info` file (Pika's `DB::DoBgSave`
/// writes: seconds taken, host, port, binlog file number, offset; a
/// replica reads lines 3 to 7 as non-negative integers, 6 and 7 being
/// the optional term and index).
pub fn parse_info(text: &str) -> Result<(u32, u64), String> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() > 8 {
        return Err(format!("{} lines (at most 8)", lines.len()));
    }
    for (n, line) in lines.iter().enumerate().take(7).skip(2) {
        if line.parse::<u64>().is_err() {
            return Err(format!("line {} is '{line}', not a number", n + 1));
        }
    }
    let filenum = lines
        .get(3)
        .and_then(|l| l.parse::<u32>().ok())
        .ok_or("no binlog file number (line 4)")?;
    let offset = lines
        .get(4)
        .and_then(|l| l.parse::<u64>().ok())
        .ok_or("no binlog offset (line 5)")?;
    Ok((filenum, offset))
}

/// The reader of a fetched dump: blackwidow when it has `strings/`, else
/// floyd with as many instances as it has numbered directories.
pub fn dump_codec(dir: &Path, slot_num: u32) -> Result<AnyCodec, String> {
    if dir.join("strings").is_dir() {
        return Ok(AnyCodec::from(BlackwidowCodec::new()));
    }
    let instances = (0..16)
        .take_while(|i| dir.join(i.to_string()).is_dir())
        .count();
    if instances == 0 {
        return Err("neither blackwidow's strings/ nor floyd's 0/ is in it".into());
    }
    FloydCodec::new(FloydOptions {
        instances,
        slot_num,
    })
    .map(AnyCodec::from)
    .map_err(|e| e.to_string())
}

/// One database's fetched dump.
pub struct Fetched {
    /// Its directory.
    pub dir: PathBuf,
    /// The namespace of this server it goes to.
    pub dest: String,
}

fn copy_error(what: &str, e: impl std::fmt::Display) -> LinkError {
    LinkError::Protocol(format!("the Pika master's dump: {what}: {e}"))
}

/// Replaces the data with the dumps' keys (see the module docs).
pub fn load(shared: &Shared, dumps: &[Fetched], slot_num: u32) -> Result<Copied, LinkError> {
    let drain: Vec<String> = dumps.iter().map(|d| d.dest.clone()).collect();
    replace_data(shared, &drain, copy_error, |session| {
        copy_all(shared, session, dumps, slot_num)
    })
}

fn copy_all(
    shared: &Shared,
    session: &mut Session,
    dumps: &[Fetched],
    slot_num: u32,
) -> Result<Copied, LinkError> {
    flush_everything(shared, session)?;
    let mut copied = Copied::default();
    for dump in dumps {
        let codec = dump_codec(&dump.dir, slot_num).map_err(|e| copy_error("its layout", e))?;
        let src = Engine::open(codec, &dump.dir, EngineOptions::read_only())
            .map_err(|e| copy_error("opening it", e))?;
        let mut after: Option<Vec<u8>> = None;
        loop {
            let page = src
                .keys_after(after.as_deref(), BATCH_KEYS)
                .map_err(|e| copy_error("walking its keys", e))?;
            let Some(last) = page.last() else { break };
            after = Some(last.0.clone());
            let entries = read_page(&src, page, &mut copied);
            write_entries(shared, &dump.dest, &entries, &mut copied);
        }
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::parse_info;

    #[test]
    fn the_info_file_gives_the_binlog_position() {
        assert_eq!(parse_info("0s\n127.0.0.1\n9221\n3\n4567\n"), Ok((3, 4567)));
        assert_eq!(parse_info("1s\nh\n9221\n0\n0\n2\n10\n"), Ok((0, 0)));
        for bad in [
            "",
            "0s\nh\n9221\n",
            "0s\nh\n9221\nx\n1\n",
            "0s\nh\n9221\n-1\n1\n",
            "0s\nh\nport\n1\n1\n",
            "0s\nh\n9221\n99999999999\n1\n",
            "a\nb\n1\n1\n1\n1\n1\n1\n1\n",
        ] {
            assert!(parse_info(bad).is_err(), "{bad:?}");
        }
    }
}
