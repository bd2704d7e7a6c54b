//! Stores a real system's own RocksDB opens: `--compat SYSTEM-VERSION`.
//!
//! RocksDB 11's defaults (table format_version 7, XXH3 checksums, LZ4 on
//! every level) are unreadable by the RocksDB releases the real systems
//! ship. A [`Compat`] store is written with what the release reads and
//! would write itself: format_version 5, CRC32c block checksums, the
//! system's compression per level, exactly its column families; and it is
//! flushed and compacted when closed, so no write waits in a WAL.
//!
//! Pika 2.x, Pika 3.0–3.4 and Ardb run RocksDB 5.x, which cannot read a
//! MANIFEST written by RocksDB 6 or later whatever the options: no setting
//! serves them (see formats-spec/real-data-directories.md).

use std::fmt;
use std::str::FromStr;

#[cfg(feature = "rocksdb")]
use rocksdb::{BlockBasedOptions, ChecksumType, DBCompressionType, Options};

/// A real system's release that must open the store redcodec writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Compat {
    /// Kvrocks 2.8 to 2.10 (RocksDB 8.11–9.6): seven column families.
    Kvrocks2_10,
    /// Kvrocks 2.2 to 2.7 (RocksDB 6.29–8.8): no `search` family.
    Kvrocks2_5,
    /// Pika 3.5 (RocksDB 8.1–8.7), blackwidow's layout.
    Pika3_5,
    /// Pika 4.0 (RocksDB 8.7), floyd's layout.
    Pika4_0,
}

/// Every release [`Compat`] knows, as the command line spells it.
pub const COMPAT_NAMES: [&str; 4] = ["kvrocks-2.10", "kvrocks-2.5", "pika-3.5", "pika-4.0"];

impl Compat {
    /// The name the command line uses (`kvrocks-2.10`, …).
    pub fn name(self) -> &'static str {
        match self {
            Compat::Kvrocks2_10 => "kvrocks-2.10",
            Compat::Kvrocks2_5 => "kvrocks-2.5",
            Compat::Pika3_5 => "pika-3.5",
            Compat::Pika4_0 => "pika-4.0",
        }
    }

    /// The redcodec format whose bytes the release reads.
    pub fn format(self) -> &'static str {
        match self {
            Compat::Kvrocks2_10 | Compat::Kvrocks2_5 => "kvrocks",
            Compat::Pika3_5 => "blackwidow",
            Compat::Pika4_0 => "floyd",
        }
    }

    /// Whether the release has the column family `name` (of any of its
    /// instances). A layout family the release lacks is never created.
    pub fn has_family(self, name: &str) -> bool {
        match self {
            // Kvrocks 2.8 added `search`; it refuses a store holding a
            // family it does not know (KV storage.cc, at the tags).
            Compat::Kvrocks2_5 => name != "search",
            Compat::Kvrocks2_10 | Compat::Pika3_5 | Compat::Pika4_0 => true,
        }
    }

    /// Compression of each of RocksDB's seven levels. Kvrocks 2.x
    /// hard-codes none on L0–L1 and its `rocksdb.compression` (snappy,
    /// shipped) from L2; Pika 3.5 and 4.0 set the same per-level default
    /// (`compression_per_level=kNoCompression:kNoCompression:kSnappyCompression`
    /// in their OPTIONS files).
    #[cfg(feature = "rocksdb")]
    pub fn compression_per_level(self) -> [DBCompressionType; 7] {
        use DBCompressionType::{None, Snappy};
        [None, None, Snappy, Snappy, Snappy, Snappy, Snappy]
    }

    /// Whether levels count from the base level
    /// (`level_compaction_dynamic_level_bytes`): Kvrocks sets it from 2.6
    /// (`rocksdb.level_compaction_dynamic_level_bytes yes`), and Pika from
    /// 3.5.3 and 4.0 (its `level-compaction-dynamic-level-bytes`, absent
    /// from the shipped conf/pika.conf, means yes: Pika 3.5.5 and 4.0.1 write
    /// `level_compaction_dynamic_level_bytes=true` in every OPTIONS file,
    /// tests/fixtures/pika-*/store.meta/options.txt); the RocksDB releases under
    /// Kvrocks 2.2–2.5 default to no. With it,
    /// [`Compat::compression_per_level`]'s entry for a level `l > 0` is
    /// the one at `l - base_level + 1`, so a small store, whose tables sit
    /// in L0 and the last level, is uncompressed, as a small Kvrocks 2.6+
    /// store is. (Pika's own `COMPACT` moves a small store's tables down one
    /// level at a time and leaves them Snappy-compressed in the last level:
    /// either way each side reads the other's.)
    pub fn dynamic_level_bytes(self) -> bool {
        matches!(
            self,
            Compat::Kvrocks2_10 | Compat::Pika3_5 | Compat::Pika4_0
        )
    }

    /// Sets the options of one column family and of its tables (the
    /// caller sets the table factory from `table` afterwards).
    #[cfg(feature = "rocksdb")]
    pub fn apply(self, opts: &mut Options, table: &mut BlockBasedOptions) {
        table.set_format_version(5);
        table.set_checksum_type(ChecksumType::CRC32c);
        opts.set_compression_per_level(&self.compression_per_level());
        opts.set_num_levels(7);
        opts.set_level_compaction_dynamic_level_bytes(self.dynamic_level_bytes());
    }
}

impl fmt::Display for Compat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Compat {
    type Err = String;

    fn from_str(s: &str) -> Result<Compat, String> {
        match s.to_ascii_lowercase().as_str() {
            "kvrocks-2.10" => Ok(Compat::Kvrocks2_10),
            "kvrocks-2.5" => Ok(Compat::Kvrocks2_5),
            "pika-3.5" => Ok(Compat::Pika3_5),
            "pika-4.0" => Ok(Compat::Pika4_0),
            _ => Err(format!(
                "unknown --compat '{s}': expected one of {} (Pika 2.x, Pika 3.0-3.4 and Ardb run RocksDB 5.x, which reads no store RocksDB 11 writes: migrate to them with --to redis://)",
                COMPAT_NAMES.join(", ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in COMPAT_NAMES {
            let c: Compat = name.parse().unwrap();
            assert_eq!(c.name(), name);
        }
        assert!("pika-3.0"
            .parse::<Compat>()
            .unwrap_err()
            .contains("RocksDB 5.x"));
    }

    #[test]
    fn kvrocks_2_5_has_no_search_family() {
        assert!(!Compat::Kvrocks2_5.has_family("search"));
        assert!(Compat::Kvrocks2_10.has_family("search"));
        assert!(Compat::Kvrocks2_5.has_family("stream"));
    }
}
