//! A reply written a piece at a time, so that a huge array (HGETALL,
//! LRANGE, KEYS of millions of elements) or a huge string is never held
//! twice: each element leaves the reply as its bytes go into the output
//! buffer, the buffer is sent whenever it holds a chunk, and a string of
//! a chunk or more goes to the socket straight from the reply.
//!
//! The bytes are exactly those of [`encode`](fn@super::encode).

use bytes::{BufMut, BytesMut};
use redcodec_engine::Reply;

use super::encode::Protocol;
use super::encode::{array_form, group, header, whole, Items};
use super::shape::Shape;

/// What the caller does after [`Streamer::fill`].
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// The reply is written; the output buffer may be sent now or with
    /// later replies.
    Done,
    /// The output buffer holds a chunk or more: send it, then call again.
    Flush,
    /// Send the output buffer (it ends with a bulk string's header), then
    /// these bytes, the string itself; then call again.
    Payload(Vec<u8>),
}

/// One reply being written.
pub struct Streamer {
    protocol: Protocol,
    /// The reply, until the first call starts it.
    start: Option<(Reply, Shape)>,
    /// The arrays being written, innermost last, each with the form of
    /// its items.
    stack: Vec<(std::vec::IntoIter<Reply>, Items)>,
    /// A payload went out on its own: its CRLF comes next.
    crlf: bool,
}

impl Streamer {
    /// A streamer of `reply`, reshaped by `shape` under RESP3.
    pub fn new(reply: Reply, shape: Shape, protocol: Protocol) -> Streamer {
        Streamer {
            protocol,
            start: Some((reply, shape)),
            stack: Vec::new(),
            crlf: false,
        }
    }

    /// Appends the reply's next bytes to `out`, until `out` holds `chunk`
    /// bytes or the reply ends, and says what to do next.
    pub fn fill(&mut self, out: &mut BytesMut, chunk: usize) -> Next {
        if std::mem::take(&mut self.crlf) {
            out.put_slice(b"\r\n");
        }
        if let Some((reply, shape)) = self.start.take() {
            match (array_form(&reply, shape, self.protocol), reply) {
                (Some((kind, count, form)), Reply::Array(items)) => {
                    header(out, kind, count);
                    self.stack.push((items.into_iter(), form));
                }
                // A string the shape leaves as it is (not a RESP3 double
                // or verbatim string).
                (_, Reply::Bulk(b))
                    if b.len() >= chunk
                        && (self.protocol == Protocol::Resp2
                            || !matches!(shape, Shape::Double | Shape::Verbatim)) =>
                {
                    return self.payload(b, out);
                }
                (_, reply) => whole(&reply, shape, self.protocol, out),
            }
        }
        while out.len() < chunk {
            let Some((items, form)) = self.stack.last_mut() else {
                return Next::Done;
            };
            let form = *form;
            let Some(first) = items.next() else {
                self.stack.pop();
                continue;
            };
            match (form, first) {
                (Items::Plain, Reply::Array(inner)) => {
                    header(out, b'*', inner.len());
                    self.stack.push((inner.into_iter(), Items::Plain));
                }
                (Items::Plain, Reply::Bulk(b)) if b.len() >= chunk => return self.payload(b, out),
                (form, first) => {
                    let second = if form.group() == 2 {
                        items.next()
                    } else {
                        None
                    };
                    group(form, &first, second.as_ref(), self.protocol, out);
                }
            }
        }
        if self.stack.is_empty() {
            Next::Done
        } else {
            Next::Flush
        }
    }

    /// A bulk string sent on its own: its header now, its CRLF next time.
    fn payload(&mut self, bytes: Vec<u8>, out: &mut BytesMut) -> Next {
        header(out, b'$', bytes.len());
        self.crlf = true;
        Next::Payload(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::encode;

    /// The bytes a streamer gives with chunks of `chunk` bytes, and how
    /// many times it asked for a send.
    fn streamed(reply: &Reply, shape: Shape, protocol: Protocol, chunk: usize) -> (Vec<u8>, usize) {
        let mut s = Streamer::new(reply.clone(), shape, protocol);
        let mut out = BytesMut::new();
        let mut sent = Vec::new();
        let mut sends = 0;
        loop {
            match s.fill(&mut out, chunk) {
                Next::Done => break,
                Next::Flush => {
                    assert!(
                        out.len() >= chunk,
                        "asked to send {} < {chunk} bytes",
                        out.len()
                    );
                }
                Next::Payload(b) => {
                    assert!(b.len() >= chunk);
                    sent.extend_from_slice(&out);
                    out.clear();
                    sent.extend_from_slice(&b);
                    sends += 1;
                    continue;
                }
            }
            sent.extend_from_slice(&out);
            out.clear();
            sends += 1;
        }
        sent.extend_from_slice(&out);
        (sent, sends)
    }

    fn bulks(n: usize, len: usize) -> Vec<Reply> {
        (0..n)
            .map(|i| Reply::Bulk(vec![b'a' + (i % 26) as u8; len + i % 3]))
            .collect()
    }

    fn samples() -> Vec<Reply> {
        let scored: Vec<Reply> = (0..9)
            .flat_map(|i| [Reply::bulk(format!("m{i}")), Reply::bulk(format!("{i}.5"))])
            .collect();
        vec![
            Reply::ok(),
            Reply::error("ERR x\ny"),
            Reply::Integer(-7),
            Reply::Nil,
            Reply::NilArray,
            Reply::bulk("1.5"),
            Reply::Bulk(vec![b'v'; 300]),
            Reply::Array(vec![]),
            Reply::Array(bulks(40, 20)),
            Reply::Array(bulks(7, 100)),
            Reply::Array(scored.clone()),
            Reply::Array(vec![Reply::bulk("m"), Reply::bulk("2")]),
            Reply::Array(vec![Reply::bulk("k"), Reply::bulk("m"), Reply::bulk("2")]),
            Reply::Array(vec![
                Reply::bulk("k"),
                Reply::Array(vec![Reply::Array(scored[..2].to_vec())]),
            ]),
            Reply::Array(vec![
                Reply::bulk("0"),
                Reply::Array(bulks(30, 50)),
                Reply::Nil,
                Reply::NilArray,
            ]),
            Reply::Array(vec![
                Reply::Array(vec![Reply::Array(bulks(3, 200)), Reply::Integer(1)]),
                Reply::Array(vec![]),
            ]),
            Reply::Array(scored[..5].to_vec()),
        ]
    }

    const SHAPES: [Shape; 13] = [
        Shape::Plain,
        Shape::Map,
        Shape::Set,
        Shape::Double,
        Shape::Doubles,
        Shape::ScoredPairs,
        Shape::ScoredFlat,
        Shape::Pairs,
        Shape::KeyScored,
        Shape::KeyScoredPairs,
        Shape::Verbatim,
        Shape::Positions,
        Shape::Located,
    ];

    #[test]
    fn streamed_bytes_equal_the_whole_encoding() {
        for reply in samples() {
            for shape in SHAPES {
                for protocol in [Protocol::Resp2, Protocol::Resp3] {
                    let mut whole = BytesMut::new();
                    encode(&reply, shape, protocol, &mut whole);
                    for chunk in [1, 2, 7, 64, 250, 1 << 20] {
                        let (bytes, _) = streamed(&reply, shape, protocol, chunk);
                        assert_eq!(
                            bytes,
                            whole.to_vec(),
                            "{reply:?} {shape:?} {protocol:?} chunk {chunk}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_huge_array_goes_out_in_chunks() {
        let reply = Reply::Array(bulks(10_000, 100));
        let (bytes, sends) = streamed(&reply, Shape::Plain, Protocol::Resp2, 16 * 1024);
        assert!(bytes.len() > 1_000_000);
        // About one send per 16 KiB, not one for the whole.
        assert!(sends >= bytes.len() / (17 * 1024), "{sends} sends");
    }

    #[test]
    fn a_long_string_goes_out_without_a_copy() {
        let big = vec![b'x'; 100_000];
        let mut s = Streamer::new(
            Reply::Array(vec![Reply::Integer(1), Reply::Bulk(big.clone())]),
            Shape::Plain,
            Protocol::Resp2,
        );
        let mut out = BytesMut::new();
        assert_eq!(s.fill(&mut out, 1024), Next::Payload(big));
        assert_eq!(&out[..], b"*2\r\n:1\r\n$100000\r\n");
        out.clear();
        assert_eq!(s.fill(&mut out, 1024), Next::Done);
        assert_eq!(&out[..], b"\r\n");
    }
}
