//! The bulk path's progress, kept in the migration's checkpoint (its
//! `bulk` line) beside the write path's fields (last key done, version
//! counter, counts, skipped keys).
//!
//! `phase=sort|merge|ingest runs=N seq=N complete=N voids=A-B,… place=N
//! files=N last=HEX|- ingested=N`.

use redcodec_engine::store::{hex, unhex};

use super::runs::Voids;

/// Where a bulk migration is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Reading the source, spilling sorted runs.
    Sort,
    /// Merging the runs into SST files, family by family.
    Merge,
    /// Ingesting the SST files, family by family.
    Ingest,
}

/// The bulk path's progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BulkState {
    pub phase: Phase,
    /// Run files written (spills 0..runs).
    pub runs: u64,
    /// The number the next captured write gets.
    pub seq: u64,
    /// The number after the last write of the last whole key spilled.
    pub complete: u64,
    /// Numbers of writes to ignore (interrupted keys).
    pub voids: Voids,
    /// Merge: families (in layout order) whose SST files are all written.
    pub place: usize,
    /// Merge: SST files of the family in progress written.
    pub files: u64,
    /// Merge: the last key written to them.
    pub last: Option<Vec<u8>>,
    /// Ingest: families ingested.
    pub ingested: usize,
}

impl BulkState {
    /// A bulk migration not yet started.
    pub(crate) fn fresh() -> BulkState {
        BulkState {
            phase: Phase::Sort,
            runs: 0,
            seq: 0,
            complete: 0,
            voids: Voids::default(),
            place: 0,
            files: 0,
            last: None,
            ingested: 0,
        }
    }

    /// The checkpoint line's value.
    pub(crate) fn encode(&self) -> String {
        let phase = match self.phase {
            Phase::Sort => "sort",
            Phase::Merge => "merge",
            Phase::Ingest => "ingest",
        };
        let voids: Vec<String> = self
            .voids
            .0
            .iter()
            .map(|(a, b)| format!("{a}-{b}"))
            .collect();
        let voids = if voids.is_empty() {
            "-".to_string()
        } else {
            voids.join(",")
        };
        let last = self.last.as_deref().map_or("-".to_string(), hex);
        format!(
            "phase={phase} runs={} seq={} complete={} voids={voids} place={} files={} last={last} ingested={}",
            self.runs, self.seq, self.complete, self.place, self.files, self.ingested
        )
    }

    /// Parses [`BulkState::encode`]'s text.
    pub(crate) fn decode(text: &str) -> Result<BulkState, String> {
        let mut state = BulkState::fresh();
        let bad = |what: &str| format!("bad bulk state ({what})");
        let number = |v: &str| v.parse::<u64>().map_err(|_| bad(v));
        for field in text.split(' ') {
            let (name, value) = field.split_once('=').ok_or_else(|| bad(field))?;
            match name {
                "phase" => {
                    state.phase = match value {
                        "sort" => Phase::Sort,
                        "merge" => Phase::Merge,
                        "ingest" => Phase::Ingest,
                        _ => return Err(bad(value)),
                    }
                }
                "runs" => state.runs = number(value)?,
                "seq" => state.seq = number(value)?,
                "complete" => state.complete = number(value)?,
                "voids" if value == "-" => {}
                "voids" => {
                    for range in value.split(',') {
                        let (a, b) = range.split_once('-').ok_or_else(|| bad(range))?;
                        state.voids.0.push((number(a)?, number(b)?));
                    }
                }
                "place" => state.place = number(value)? as usize,
                "files" => state.files = number(value)?,
                "last" if value == "-" => state.last = None,
                "last" => state.last = Some(unhex(value).ok_or_else(|| bad(value))?),
                "ingested" => state.ingested = number(value)? as usize,
                _ => return Err(bad(name)),
            }
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_reads_back_as_written() {
        let state = BulkState {
            phase: Phase::Merge,
            runs: 3,
            seq: 99,
            complete: 90,
            voids: Voids(vec![(1, 2), (40, 44)]),
            place: 2,
            files: 5,
            last: Some(b"k\x00".to_vec()),
            ingested: 0,
        };
        assert_eq!(BulkState::decode(&state.encode()).unwrap(), state);
        let fresh = BulkState::fresh();
        assert_eq!(BulkState::decode(&fresh.encode()).unwrap(), fresh);
        assert!(BulkState::decode("phase=later").is_err());
    }
}
