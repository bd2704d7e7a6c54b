//! The protobuf messages of Pika's replication (`InnerMessage`, on the
//! master's port + 2000) and of its rsync2 service (`RsyncService`, on
//! port + 10001), written by hand with `prost`'s derive macros: the field
//! numbers, names and types are those of Pika 3.5.5's and 4.0.1's
//! `src/pika_inner_message.proto` and `src/rsync_service.proto` (proto2;
//! 4.0 adds `db_instance_num` to the MetaSync reply's database
//! information, optional here so that both versions decode).
//!
//! On the wire every message is framed as Pika's `PbConn` frames them: a
//! 4-byte big-endian length, then that many bytes of protobuf
//! ([`frame`], [`unframe`]).

#![allow(missing_docs)]

use prost::Message;

/// Largest frame accepted from a master (Pika's `PIKA_MAX_CONN_RBUF_HB`,
/// 512 MiB: a master never sends more in one message).
pub const MAX_FRAME: usize = 512 << 20;

/// `InnerMessage.Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum Type {
    MetaSync = 1,
    TrySync = 2,
    DbSync = 3,
    BinlogSync = 4,
    HeatBeat = 5,
    RemoveSlaveNode = 6,
}

/// `InnerMessage.StatusCode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum StatusCode {
    Ok = 1,
    Error = 2,
    Other = 3,
}

/// `InnerMessage.BinlogOffset`.
#[derive(Clone, PartialEq, Message)]
pub struct BinlogOffset {
    #[prost(uint32, required, tag = "1")]
    pub filenum: u32,
    #[prost(uint64, required, tag = "2")]
    pub offset: u64,
    #[prost(uint32, optional, tag = "3")]
    pub term: Option<u32>,
    #[prost(uint64, optional, tag = "4")]
    pub index: Option<u64>,
}

/// `InnerMessage.Node`.
#[derive(Clone, PartialEq, Message)]
pub struct Node {
    #[prost(string, required, tag = "1")]
    pub ip: String,
    #[prost(int32, required, tag = "2")]
    pub port: i32,
}

/// `InnerMessage.Slot`.
#[derive(Clone, PartialEq, Message)]
pub struct Slot {
    #[prost(string, required, tag = "1")]
    pub db_name: String,
    #[prost(uint32, required, tag = "2")]
    pub slot_id: u32,
}

/// `InnerMessage.ConsensusMeta` (sent by neither side here; decoded if
/// a master sends one).
#[derive(Clone, PartialEq, Message)]
pub struct ConsensusMeta {
    #[prost(uint32, optional, tag = "1")]
    pub term: Option<u32>,
    #[prost(message, optional, tag = "2")]
    pub log_offset: Option<BinlogOffset>,
    #[prost(message, optional, tag = "3")]
    pub commit: Option<BinlogOffset>,
    #[prost(bool, optional, tag = "4")]
    pub reject: Option<bool>,
    #[prost(message, repeated, tag = "5")]
    pub hint: Vec<BinlogOffset>,
}

/// `InnerMessage.InnerRequest.MetaSync`.
#[derive(Clone, PartialEq, Message)]
pub struct MetaSyncRequest {
    #[prost(message, required, tag = "1")]
    pub node: Node,
    #[prost(string, optional, tag = "2")]
    pub auth: Option<String>,
}

/// `InnerMessage.InnerRequest.TrySync` (and `DBSync`: the same fields).
#[derive(Clone, PartialEq, Message)]
pub struct TrySyncRequest {
    #[prost(message, required, tag = "1")]
    pub node: Node,
    #[prost(message, required, tag = "2")]
    pub slot: Slot,
    #[prost(message, required, tag = "3")]
    pub binlog_offset: BinlogOffset,
}

/// `InnerMessage.InnerRequest.BinlogSync`.
#[derive(Clone, PartialEq, Message)]
pub struct BinlogSyncRequest {
    #[prost(message, required, tag = "1")]
    pub node: Node,
    #[prost(string, required, tag = "2")]
    pub db_name: String,
    #[prost(uint32, required, tag = "3")]
    pub slot_id: u32,
    #[prost(message, required, tag = "4")]
    pub ack_range_start: BinlogOffset,
    #[prost(message, required, tag = "5")]
    pub ack_range_end: BinlogOffset,
    #[prost(int32, required, tag = "6")]
    pub session_id: i32,
    #[prost(bool, required, tag = "7")]
    pub first_send: bool,
}

/// `InnerMessage.InnerRequest.RemoveSlaveNode`.
#[derive(Clone, PartialEq, Message)]
pub struct RemoveSlaveNodeRequest {
    #[prost(message, required, tag = "1")]
    pub node: Node,
    #[prost(message, required, tag = "2")]
    pub slot: Slot,
}

/// `InnerMessage.InnerRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct InnerRequest {
    #[prost(enumeration = "Type", required, tag = "1")]
    pub r#type: i32,
    #[prost(message, optional, tag = "2")]
    pub meta_sync: Option<MetaSyncRequest>,
    #[prost(message, optional, tag = "3")]
    pub try_sync: Option<TrySyncRequest>,
    #[prost(message, optional, tag = "4")]
    pub db_sync: Option<TrySyncRequest>,
    #[prost(message, optional, tag = "5")]
    pub binlog_sync: Option<BinlogSyncRequest>,
    #[prost(message, repeated, tag = "6")]
    pub remove_slave_node: Vec<RemoveSlaveNodeRequest>,
    #[prost(message, optional, tag = "7")]
    pub consensus_meta: Option<ConsensusMeta>,
}

/// `InnerMessage.InnerResponse.MetaSync.DBInfo`.
#[derive(Clone, PartialEq, Message)]
pub struct MetaDbInfo {
    #[prost(string, required, tag = "1")]
    pub db_name: String,
    #[prost(int32, required, tag = "2")]
    pub slot_num: i32,
    /// Pika 4.0 only (`required` there; absent from 3.5's replies).
    #[prost(int32, optional, tag = "3")]
    pub db_instance_num: Option<i32>,
}

/// `InnerMessage.InnerResponse.MetaSync`.
#[derive(Clone, PartialEq, Message)]
pub struct MetaSyncResponse {
    #[prost(bool, required, tag = "1")]
    pub classic_mode: bool,
    #[prost(message, repeated, tag = "2")]
    pub dbs_info: Vec<MetaDbInfo>,
    #[prost(string, required, tag = "3")]
    pub run_id: String,
    #[prost(string, optional, tag = "4")]
    pub replication_id: Option<String>,
}

/// `InnerMessage.InnerResponse.TrySync.ReplyCode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum TrySyncReplyCode {
    Ok = 1,
    SyncPointBePurged = 2,
    SyncPointLarger = 3,
    Error = 4,
}

/// `InnerMessage.InnerResponse.TrySync`.
#[derive(Clone, PartialEq, Message)]
pub struct TrySyncResponse {
    #[prost(enumeration = "TrySyncReplyCode", required, tag = "1")]
    pub reply_code: i32,
    #[prost(message, required, tag = "2")]
    pub slot: Slot,
    #[prost(message, optional, tag = "3")]
    pub binlog_offset: Option<BinlogOffset>,
    #[prost(int32, optional, tag = "4")]
    pub session_id: Option<i32>,
}

/// `InnerMessage.InnerResponse.DBSync`.
#[derive(Clone, PartialEq, Message)]
pub struct DbSyncResponse {
    #[prost(message, required, tag = "1")]
    pub slot: Slot,
    #[prost(int32, required, tag = "2")]
    pub session_id: i32,
}

/// `InnerMessage.InnerResponse.BinlogSync`: one binlog item (empty: a
/// keep-alive).
#[derive(Clone, PartialEq, Message)]
pub struct BinlogSyncResponse {
    #[prost(message, required, tag = "1")]
    pub slot: Slot,
    #[prost(message, required, tag = "2")]
    pub binlog_offset: BinlogOffset,
    #[prost(bytes = "vec", required, tag = "3")]
    pub binlog: Vec<u8>,
    #[prost(int32, required, tag = "4")]
    pub session_id: i32,
}

/// `InnerMessage.InnerResponse.RemoveSlaveNode`.
#[derive(Clone, PartialEq, Message)]
pub struct RemoveSlaveNodeResponse {
    #[prost(message, required, tag = "1")]
    pub node: Node,
    #[prost(message, required, tag = "2")]
    pub slot: Slot,
}

/// `InnerMessage.InnerResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct InnerResponse {
    #[prost(enumeration = "Type", required, tag = "1")]
    pub r#type: i32,
    #[prost(enumeration = "StatusCode", required, tag = "2")]
    pub code: i32,
    #[prost(string, optional, tag = "3")]
    pub reply: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub meta_sync: Option<MetaSyncResponse>,
    #[prost(message, optional, tag = "5")]
    pub db_sync: Option<DbSyncResponse>,
    #[prost(message, optional, tag = "6")]
    pub try_sync: Option<TrySyncResponse>,
    #[prost(message, repeated, tag = "7")]
    pub binlog_sync: Vec<BinlogSyncResponse>,
    #[prost(message, repeated, tag = "8")]
    pub remove_slave_node: Vec<RemoveSlaveNodeResponse>,
    #[prost(message, optional, tag = "9")]
    pub consensus_meta: Option<ConsensusMeta>,
}

/// `RsyncService.Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum RsyncType {
    Meta = 1,
    File = 2,
}

/// `RsyncService.StatusCode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum RsyncStatus {
    Ok = 1,
    Err = 2,
}

/// `RsyncService.MetaResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct RsyncMetaResponse {
    #[prost(string, repeated, tag = "1")]
    pub filenames: Vec<String>,
}

/// `RsyncService.FileRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct FileRequest {
    #[prost(string, required, tag = "1")]
    pub filename: String,
    #[prost(uint64, required, tag = "2")]
    pub count: u64,
    #[prost(uint64, required, tag = "3")]
    pub offset: u64,
}

/// `RsyncService.FileResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct FileResponse {
    #[prost(int32, required, tag = "1")]
    pub eof: i32,
    #[prost(uint64, required, tag = "2")]
    pub count: u64,
    #[prost(uint64, required, tag = "3")]
    pub offset: u64,
    #[prost(bytes = "vec", required, tag = "4")]
    pub data: Vec<u8>,
    #[prost(string, required, tag = "5")]
    pub checksum: String,
    #[prost(string, required, tag = "6")]
    pub filename: String,
}

/// `RsyncService.RsyncRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct RsyncRequest {
    #[prost(enumeration = "RsyncType", required, tag = "1")]
    pub r#type: i32,
    #[prost(int32, required, tag = "2")]
    pub reader_index: i32,
    #[prost(string, required, tag = "3")]
    pub db_name: String,
    #[prost(uint32, required, tag = "4")]
    pub slot_id: u32,
    #[prost(message, optional, tag = "5")]
    pub file_req: Option<FileRequest>,
}

/// `RsyncService.RsyncResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct RsyncResponse {
    #[prost(enumeration = "RsyncType", required, tag = "1")]
    pub r#type: i32,
    #[prost(int32, required, tag = "2")]
    pub reader_index: i32,
    #[prost(string, required, tag = "3")]
    pub snapshot_uuid: String,
    #[prost(string, required, tag = "4")]
    pub db_name: String,
    #[prost(uint32, required, tag = "5")]
    pub slot_id: u32,
    #[prost(enumeration = "RsyncStatus", required, tag = "6")]
    pub code: i32,
    #[prost(message, optional, tag = "7")]
    pub meta_resp: Option<RsyncMetaResponse>,
    #[prost(message, optional, tag = "8")]
    pub file_resp: Option<FileResponse>,
}

/// A message framed as Pika's `PbConn` sends it.
pub fn frame(message: &impl Message) -> Vec<u8> {
    let body = message.encode_to_vec();
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Why a frame from the master cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    /// The length announced is over [`MAX_FRAME`].
    #[error("the Pika master announced a message of {0} bytes (more than {MAX_FRAME})")]
    TooLong(usize),
    /// The body is not the protobuf message expected.
    #[error("a message from the Pika master does not decode: {0}")]
    Decode(String),
}

/// The length of the first frame in `buf` and its body's end: `Ok(None)`
/// while incomplete.
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>, FrameError> {
    let Some(head) = buf.get(..4) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
    if len > MAX_FRAME {
        return Err(FrameError::TooLong(len));
    }
    Ok((buf.len() >= 4 + len).then_some(4 + len))
}

/// Decodes a frame's body.
pub fn unframe<M: Message + Default>(body: &[u8]) -> Result<M, FrameError> {
    M::decode(body).map_err(|e| FrameError::Decode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_through_its_frame() {
        let req = InnerRequest {
            r#type: Type::TrySync as i32,
            try_sync: Some(TrySyncRequest {
                node: Node {
                    ip: "127.0.0.1".into(),
                    port: 6380,
                },
                slot: Slot {
                    db_name: "db0".into(),
                    slot_id: 0,
                },
                binlog_offset: BinlogOffset {
                    filenum: 3,
                    offset: 1234,
                    term: None,
                    index: None,
                },
            }),
            ..InnerRequest::default()
        };
        let framed = frame(&req);
        assert_eq!(frame_len(&framed), Ok(Some(framed.len())));
        assert_eq!(frame_len(&framed[..framed.len() - 1]), Ok(None));
        let back: InnerRequest = unframe(&framed[4..]).unwrap();
        assert_eq!(back, req);
    }

    #[test]
    fn malformed_frames_are_errors() {
        assert_eq!(
            frame_len(&[0xff, 0xff, 0xff, 0xff]),
            Err(FrameError::TooLong(0xffff_ffff))
        );
        assert_eq!(frame_len(&[0, 0]), Ok(None));
        // A required field missing, garbage, a truncated varint.
        for bytes in [&b"\xff\xff\xff"[..], b"\x08", b"\x12\x05ab"] {
            assert!(unframe::<InnerResponse>(bytes).is_err(), "{bytes:?}");
            assert!(unframe::<RsyncResponse>(bytes).is_err(), "{bytes:?}");
        }
    }
}
