//! Writing a reply in RESP2 or RESP3.

use std::io::Write;

use bytes::{BufMut, BytesMut};
use redcodec_engine::Reply;

use super::Shape;

/// The protocol a connection speaks (`HELLO 2|3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2, the default.
    Resp2,
    /// RESP3, after `HELLO 3`.
    Resp3,
}

impl Protocol {
    /// The version number HELLO and CLIENT LIST show.
    pub fn version(self) -> i64 {
        match self {
            Protocol::Resp2 => 2,
            Protocol::Resp3 => 3,
        }
    }
}

/// Appends `reply`, reshaped by `shape` under RESP3, to `out`.
pub fn encode(reply: &Reply, shape: Shape, protocol: Protocol, out: &mut BytesMut) {
    if protocol == Protocol::Resp2 {
        return plain(reply, protocol, out);
    }
    match (shape, reply) {
        (Shape::Plain, r) => plain(r, protocol, out),
        (Shape::Map, Reply::Array(items)) => {
            header(out, b'%', items.len() / 2);
            for i in items {
                plain(i, protocol, out);
            }
        }
        (Shape::Set, Reply::Array(items)) => {
            header(out, b'~', items.len());
            for i in items {
                plain(i, protocol, out);
            }
        }
        (Shape::Double, r) => double(r, protocol, out),
        (Shape::Doubles, Reply::Array(items)) => {
            header(out, b'*', items.len());
            for i in items {
                double(i, protocol, out);
            }
        }
        (Shape::ScoredPairs, Reply::Array(items)) => {
            header(out, b'*', items.len() / 2);
            for pair in items.chunks(2) {
                header(out, b'*', 2);
                plain(&pair[0], protocol, out);
                double(pair.get(1).unwrap_or(&Reply::Nil), protocol, out);
            }
        }
        (Shape::ScoredFlat, Reply::Array(items)) if items.len() == 2 => {
            header(out, b'*', 2);
            plain(&items[0], protocol, out);
            double(&items[1], protocol, out);
        }
        (Shape::Pairs, Reply::Array(items)) => {
            header(out, b'*', items.len() / 2);
            for pair in items.chunks(2) {
                header(out, b'*', pair.len());
                for i in pair {
                    plain(i, protocol, out);
                }
            }
        }
        (Shape::KeyScored, Reply::Array(items)) if items.len() == 3 => {
            header(out, b'*', 3);
            plain(&items[0], protocol, out);
            plain(&items[1], protocol, out);
            double(&items[2], protocol, out);
        }
        (Shape::KeyScoredPairs, Reply::Array(items)) if items.len() == 2 => {
            header(out, b'*', 2);
            plain(&items[0], protocol, out);
            match &items[1] {
                Reply::Array(pairs) => {
                    header(out, b'*', pairs.len());
                    for pair in pairs {
                        encode(pair, Shape::ScoredFlat, protocol, out);
                    }
                }
                other => plain(other, protocol, out),
            }
        }
        (_, r) => plain(r, protocol, out),
    }
}

fn header(out: &mut BytesMut, kind: u8, len: usize) {
    out.put_u8(kind);
    let _ = write!(out.writer(), "{len}\r\n");
}

/// A bulk number as a RESP3 double (`,1.5`); anything else as it is.
fn double(reply: &Reply, protocol: Protocol, out: &mut BytesMut) {
    match reply {
        Reply::Bulk(b) => {
            let text = String::from_utf8_lossy(b);
            let text = match text.as_ref() {
                "inf" | "+inf" => "inf",
                "-inf" => "-inf",
                t => t,
            };
            out.put_u8(b',');
            out.put_slice(text.as_bytes());
            out.put_slice(b"\r\n");
        }
        r => plain(r, protocol, out),
    }
}

fn plain(reply: &Reply, protocol: Protocol, out: &mut BytesMut) {
    match reply {
        Reply::Status(s) => {
            out.put_u8(b'+');
            out.put_slice(s.as_bytes());
            out.put_slice(b"\r\n");
        }
        Reply::Error(e) => {
            out.put_u8(b'-');
            out.put_slice(e.replace(['\r', '\n'], " ").as_bytes());
            out.put_slice(b"\r\n");
        }
        Reply::Integer(i) => {
            out.put_u8(b':');
            let _ = write!(out.writer(), "{i}\r\n");
        }
        Reply::Bulk(b) => {
            header(out, b'$', b.len());
            out.put_slice(b);
            out.put_slice(b"\r\n");
        }
        Reply::Nil => match protocol {
            Protocol::Resp2 => out.put_slice(b"$-1\r\n"),
            Protocol::Resp3 => out.put_slice(b"_\r\n"),
        },
        Reply::NilArray => match protocol {
            Protocol::Resp2 => out.put_slice(b"*-1\r\n"),
            Protocol::Resp3 => out.put_slice(b"_\r\n"),
        },
        Reply::Array(items) => {
            header(out, b'*', items.len());
            for i in items {
                plain(i, protocol, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(reply: &Reply, shape: Shape, protocol: Protocol) -> Vec<u8> {
        let mut out = BytesMut::new();
        encode(reply, shape, protocol, &mut out);
        out.to_vec()
    }

    #[test]
    fn resp2_is_the_engine_reply() {
        let r = Reply::Array(vec![Reply::bulk("f"), Reply::Integer(-2), Reply::Nil]);
        assert_eq!(
            enc(&r, Shape::Map, Protocol::Resp2),
            b"*3\r\n$1\r\nf\r\n:-2\r\n$-1\r\n"
        );
        assert_eq!(
            enc(&Reply::NilArray, Shape::Plain, Protocol::Resp2),
            b"*-1\r\n"
        );
    }

    #[test]
    fn resp3_reshapes_per_command() {
        let hash = Reply::Array(vec![Reply::bulk("f"), Reply::bulk("v")]);
        assert_eq!(
            enc(&hash, Shape::Map, Protocol::Resp3),
            b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"
        );
        assert_eq!(
            enc(&hash, Shape::Set, Protocol::Resp3),
            b"~2\r\n$1\r\nf\r\n$1\r\nv\r\n"
        );
        assert_eq!(
            enc(&Reply::bulk("1.5"), Shape::Double, Protocol::Resp3),
            b",1.5\r\n"
        );
        assert_eq!(enc(&Reply::Nil, Shape::Double, Protocol::Resp3), b"_\r\n");
        let scored = Reply::Array(vec![Reply::bulk("m"), Reply::bulk("2")]);
        assert_eq!(
            enc(&scored, Shape::ScoredPairs, Protocol::Resp3),
            b"*1\r\n*2\r\n$1\r\nm\r\n,2\r\n"
        );
        assert_eq!(
            enc(&Reply::error("ERR x\ny"), Shape::Map, Protocol::Resp3),
            b"-ERR x y\r\n"
        );
    }
}
