//! Element records laid out alike by formats that name elements by their
//! bare bytes (Pika 3's blackwidow, Kvrocks): the parts of their ids and
//! values that are the same, the format passing in what differs (how a
//! score or a list index is written).

use crate::{DecodeError, Reader, SparseIndex, SubId, SubIdRef, SubKind, SubValue};

/// The id of an element record of `kind` from `r`, the bytes after the
/// key's prefix: a hash field or (sorted-)set member is all the rest; a
/// score-index entry is a score (`read_score`) then the member; a list
/// item is an index (`read_index`) and nothing after it.
#[inline]
pub fn read_sub_id<'a>(
    kind: SubKind,
    mut r: Reader<'a>,
    read_score: impl FnOnce(&mut Reader<'a>) -> Result<f64, DecodeError>,
    read_index: impl FnOnce(&mut Reader<'a>) -> Result<u64, DecodeError>,
) -> Result<SubId, DecodeError> {
    let id = match kind {
        SubKind::HashField | SubKind::SetMember | SubKind::ZSetMember => {
            SubId::Name(r.rest().to_vec())
        }
        SubKind::ZSetScore => {
            let score = read_score(&mut r)?;
            SubId::Scored {
                score,
                member: r.rest().to_vec(),
            }
        }
        SubKind::ListItem => SubId::Index(read_index(&mut r)?),
    };
    r.finish()?;
    Ok(id)
}

/// The value of an element record of `kind` from `raw`: a hash field's or
/// list item's bytes; a sorted-set member's score (`read_score`, nothing
/// after it; `record` names the value in errors). Set members and
/// score-index entries hold nothing the format reads: whatever is stored
/// is ignored.
#[inline]
pub fn read_sub_value(
    kind: SubKind,
    raw: &[u8],
    record: &'static str,
    read_score: impl FnOnce(&mut Reader<'_>) -> Result<f64, DecodeError>,
) -> Result<SubValue, DecodeError> {
    Ok(match kind {
        SubKind::SetMember | SubKind::ZSetScore => SubValue::Empty,
        SubKind::HashField | SubKind::ListItem => SubValue::Bytes(raw.to_vec()),
        SubKind::ZSetMember => {
            let mut r = Reader::new(record, raw);
            let score = read_score(&mut r)?;
            r.finish()?;
            SubValue::Score(score)
        }
    })
}

/// How many bytes `id` takes after a key's prefix in the formats that
/// write ids as they are (Kvrocks, blackwidow, floyd): a name's length; a
/// score-index entry's 8-byte score and its member; 8 for a list
/// position. A key is made with room for them, in one allocation.
pub fn sub_id_len(id: SubIdRef<'_>) -> usize {
    match id {
        SubIdRef::Name(name) => name.len(),
        SubIdRef::Scored { member, .. } => 8 + member.len(),
        SubIdRef::Index(_) | SubIdRef::Seq(_) | SubIdRef::Sparse(_) => 8,
    }
}

/// Appends the bytes of `id` after a key's prefix where numbers are
/// little-endian (Pika 3's blackwidow, Pika 4's floyd): a name as it is;
/// a score-index entry's score (8 bytes) then its member; a list index or
/// a sequence number in 8 bytes. A sparse index, which neither format
/// has, is handed back (nothing appended) for the format to write as it
/// chooses.
pub fn put_le_sub(id: SubIdRef<'_>, out: &mut Vec<u8>) -> Result<(), SparseIndex> {
    match id {
        SubIdRef::Name(name) => out.extend_from_slice(name),
        SubIdRef::Scored { score, member } => {
            out.extend_from_slice(&score.to_le_bytes());
            out.extend_from_slice(member);
        }
        SubIdRef::Index(i) => out.extend_from_slice(&i.to_le_bytes()),
        SubIdRef::Seq(s) => out.extend_from_slice(&s.to_le_bytes()),
        SubIdRef::Sparse(sparse) => return Err(sparse),
    }
    Ok(())
}
