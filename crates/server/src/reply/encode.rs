//! Writing a reply in RESP2 or RESP3.

use bytes::{BufMut, BytesMut};
use redcodec_engine::Reply;

use super::shape::Shape;

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

/// How the items of an array reply are written, one group at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Items {
    /// Each item as it is.
    Plain,
    /// Each item a double.
    Doubles,
    /// Items two by two as `[member, double]`.
    ScoredPairs,
    /// Items two by two as `[field, value]`.
    Pairs,
    /// Each item an `[x, y]` pair of doubles, or a null.
    Positions,
    /// Each item a member, or an array whose nested `[x, y]` pair is of
    /// doubles.
    Located,
}

impl Items {
    /// How many items one group takes.
    pub(super) fn group(self) -> usize {
        match self {
            Items::Plain | Items::Doubles | Items::Positions | Items::Located => 1,
            Items::ScoredPairs | Items::Pairs => 2,
        }
    }
}

/// An array reply's header (its type byte and count) and the form of its
/// items; `None` for a reply written whole (scalars, and the small
/// fixed-size RESP3 shapes).
pub(super) fn array_form(
    reply: &Reply,
    shape: Shape,
    protocol: Protocol,
) -> Option<(u8, usize, Items)> {
    let Reply::Array(items) = reply else {
        return None;
    };
    let n = items.len();
    if protocol == Protocol::Resp2 {
        return Some((b'*', n, Items::Plain));
    }
    match shape {
        Shape::Map => Some((b'%', n / 2, Items::Plain)),
        Shape::Set => Some((b'~', n, Items::Plain)),
        Shape::Doubles => Some((b'*', n, Items::Doubles)),
        Shape::ScoredPairs => Some((b'*', n / 2, Items::ScoredPairs)),
        Shape::Pairs => Some((b'*', n / 2, Items::Pairs)),
        Shape::Positions => Some((b'*', n, Items::Positions)),
        Shape::Located => Some((b'*', n, Items::Located)),
        Shape::ScoredFlat if n == 2 => None,
        Shape::KeyScored if n == 3 => None,
        Shape::KeyScoredPairs if n == 2 => None,
        _ => Some((b'*', n, Items::Plain)),
    }
}

/// Writes one group of items (`second` is the pair's other half).
pub(super) fn group(
    form: Items,
    first: &Reply,
    second: Option<&Reply>,
    protocol: Protocol,
    out: &mut BytesMut,
) {
    match form {
        Items::Plain => plain(first, protocol, out),
        Items::Doubles => double(first, protocol, out),
        Items::Positions => match first {
            Reply::Array(xy) => {
                header(out, b'*', xy.len());
                for coordinate in xy {
                    double(coordinate, protocol, out);
                }
            }
            other => plain(other, protocol, out),
        },
        Items::Located => match first {
            Reply::Array(parts) => {
                header(out, b'*', parts.len());
                for part in parts {
                    group(Items::Positions, part, None, protocol, out);
                }
            }
            other => plain(other, protocol, out),
        },
        Items::ScoredPairs => {
            header(out, b'*', 2);
            plain(first, protocol, out);
            double(second.unwrap_or(&Reply::Nil), protocol, out);
        }
        Items::Pairs => {
            header(out, b'*', 1 + usize::from(second.is_some()));
            plain(first, protocol, out);
            if let Some(second) = second {
                plain(second, protocol, out);
            }
        }
    }
}

/// Appends `reply`, reshaped by `shape` under RESP3, to `out`.
pub fn encode(reply: &Reply, shape: Shape, protocol: Protocol, out: &mut BytesMut) {
    match (array_form(reply, shape, protocol), reply) {
        (Some((kind, count, form)), Reply::Array(items)) => {
            header(out, kind, count);
            for g in items.chunks(form.group()) {
                group(form, &g[0], g.get(1), protocol, out);
            }
        }
        _ => whole(reply, shape, protocol, out),
    }
}

/// A reply [`array_form`] leaves whole.
pub(super) fn whole(reply: &Reply, shape: Shape, protocol: Protocol, out: &mut BytesMut) {
    match (protocol, shape, reply) {
        (Protocol::Resp2, ..) | (_, Shape::Plain, _) => plain(reply, protocol, out),
        (_, Shape::Double, r) => double(r, protocol, out),
        (_, Shape::Verbatim, Reply::Bulk(text)) => {
            header(out, b'=', text.len() + 4);
            out.put_slice(b"txt:");
            out.put_slice(text);
            out.put_slice(b"\r\n");
        }
        (_, Shape::ScoredFlat, Reply::Array(items)) if items.len() == 2 => {
            header(out, b'*', 2);
            plain(&items[0], protocol, out);
            double(&items[1], protocol, out);
        }
        (_, Shape::KeyScored, Reply::Array(items)) if items.len() == 3 => {
            header(out, b'*', 3);
            plain(&items[0], protocol, out);
            plain(&items[1], protocol, out);
            double(&items[2], protocol, out);
        }
        (_, Shape::KeyScoredPairs, Reply::Array(items)) if items.len() == 2 => {
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
        (_, _, r) => plain(r, protocol, out),
    }
}

pub(super) fn header(out: &mut BytesMut, kind: u8, len: usize) {
    out.put_u8(kind);
    out.put_slice(itoa::Buffer::new().format(len).as_bytes());
    out.put_slice(b"\r\n");
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
            out.put_slice(itoa::Buffer::new().format(*i).as_bytes());
            out.put_slice(b"\r\n");
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
    fn integers_and_lengths_are_decimal_text() {
        for (i, text) in [
            (0, "0"),
            (7, "7"),
            (-1, "-1"),
            (i64::MAX, "9223372036854775807"),
            (i64::MIN, "-9223372036854775808"),
        ] {
            let want = format!(":{text}\r\n");
            assert_eq!(
                enc(&Reply::Integer(i), Shape::Plain, Protocol::Resp2),
                want.as_bytes()
            );
        }
        let long = Reply::Bulk(vec![b'x'; 12_345]);
        let out = enc(&long, Shape::Plain, Protocol::Resp2);
        assert!(out.starts_with(b"$12345\r\nxx"));
        assert!(out.ends_with(b"x\r\n"));
        assert_eq!(out.len(), 12_345 + 10);
    }

    #[test]
    fn resp3_reshapes_per_command() {
        let hash = Reply::Array(vec![Reply::bulk("f"), Reply::bulk("v")]);
        let scored = Reply::Array(vec![Reply::bulk("m"), Reply::bulk("2")]);
        let cases: [(&Reply, Shape, &[u8]); 8] = [
            (&hash, Shape::Map, b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"),
            (&hash, Shape::Set, b"~2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
            (&Reply::bulk("1.5"), Shape::Double, b",1.5\r\n"),
            (&Reply::Nil, Shape::Double, b"_\r\n"),
            (
                &scored,
                Shape::ScoredPairs,
                b"*1\r\n*2\r\n$1\r\nm\r\n,2\r\n",
            ),
            (&Reply::error("ERR x\ny"), Shape::Map, b"-ERR x y\r\n"),
            // INFO's text: its length counts the `txt:` prefix.
            (
                &Reply::bulk("# CPU\r\n"),
                Shape::Verbatim,
                b"=11\r\ntxt:# CPU\r\n\r\n",
            ),
            (&Reply::error("ERR x"), Shape::Verbatim, b"-ERR x\r\n"),
        ];
        for (reply, shape, bytes) in cases {
            assert_eq!(
                enc(reply, shape, Protocol::Resp3),
                bytes,
                "{reply:?} {shape:?}"
            );
        }
    }
}
