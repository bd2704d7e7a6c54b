//! A reply as scripts see and make them: every RESP2 and RESP3 type, and
//! how each is written to a client in either protocol (Redis 7.0's
//! `addReply*` functions: a RESP2 client gets a map as a flat array, a
//! double or a big number as a bulk string, a boolean as `1` or nil).

use redcodec_codec::number::format_g17;

/// One reply.
#[derive(Clone, Debug, PartialEq)]
pub enum RespValue {
    /// `+…`
    Status(String),
    /// `-…`, its code included (`ERR …`).
    Error(String),
    /// `:…`
    Integer(i64),
    /// `$…`
    Bulk(Vec<u8>),
    /// The null bulk string (`$-1`; `_` to a RESP3 client).
    Nil,
    /// The null array (`*-1`; `_` to a RESP3 client).
    NilArray,
    /// RESP3's null (`_`): a Lua `nil` when a script reads it.
    Null,
    /// `*…`
    Array(Vec<RespValue>),
    /// `%…` (a flat array in RESP2).
    Map(Vec<(RespValue, RespValue)>),
    /// `~…` (an array in RESP2).
    Set(Vec<RespValue>),
    /// `,…` (a bulk string in RESP2).
    Double(f64),
    /// `#t` / `#f` (`:1` / nil in RESP2).
    Bool(bool),
    /// `(…` (a bulk string in RESP2).
    BigNumber(String),
    /// `=…` with its three-letter format (a bulk string in RESP2).
    Verbatim(String, Vec<u8>),
}

impl RespValue {
    /// Whether this is an error reply.
    pub fn is_error(&self) -> bool {
        matches!(self, RespValue::Error(_))
    }

    /// Appends the reply as Redis writes it to a client speaking RESP3
    /// (`resp3`) or RESP2.
    pub fn encode(&self, resp3: bool, out: &mut Vec<u8>) {
        match self {
            RespValue::Status(s) => line(out, b'+', s.as_bytes()),
            RespValue::Error(e) => line(out, b'-', e.as_bytes()),
            RespValue::Integer(n) => line(out, b':', n.to_string().as_bytes()),
            RespValue::Bulk(b) => bulk(out, b),
            RespValue::Nil | RespValue::Null if !resp3 => out.extend_from_slice(b"$-1\r\n"),
            RespValue::NilArray if !resp3 => out.extend_from_slice(b"*-1\r\n"),
            RespValue::Nil | RespValue::NilArray | RespValue::Null => {
                out.extend_from_slice(b"_\r\n");
            }
            RespValue::Array(items) => {
                line(out, b'*', items.len().to_string().as_bytes());
                for item in items {
                    item.encode(resp3, out);
                }
            }
            RespValue::Map(pairs) => {
                if resp3 {
                    line(out, b'%', pairs.len().to_string().as_bytes());
                } else {
                    line(out, b'*', (pairs.len() * 2).to_string().as_bytes());
                }
                for (k, v) in pairs {
                    k.encode(resp3, out);
                    v.encode(resp3, out);
                }
            }
            RespValue::Set(items) => {
                line(out, if resp3 { b'~' } else { b'*' }, {
                    items.len().to_string().as_bytes()
                });
                for item in items {
                    item.encode(resp3, out);
                }
            }
            RespValue::Double(d) => {
                let text = format_g17(*d);
                if resp3 {
                    line(out, b',', text.as_bytes());
                } else {
                    bulk(out, text.as_bytes());
                }
            }
            RespValue::Bool(b) => match (resp3, b) {
                (true, true) => out.extend_from_slice(b"#t\r\n"),
                (true, false) => out.extend_from_slice(b"#f\r\n"),
                (false, true) => out.extend_from_slice(b":1\r\n"),
                (false, false) => out.extend_from_slice(b"$-1\r\n"),
            },
            RespValue::BigNumber(n) => {
                if resp3 {
                    line(out, b'(', n.as_bytes());
                } else {
                    bulk(out, n.as_bytes());
                }
            }
            RespValue::Verbatim(format, s) => {
                if resp3 {
                    let mut f: Vec<u8> = format.bytes().take(3).collect();
                    f.resize(3, b' ');
                    line(out, b'=', (s.len() + 4).to_string().as_bytes());
                    out.extend_from_slice(&f);
                    out.push(b':');
                    out.extend_from_slice(s);
                    out.extend_from_slice(b"\r\n");
                } else {
                    bulk(out, s);
                }
            }
        }
    }

    /// Whether the reply is written the same way in RESP2 and RESP3
    /// apart from nulls (no map, set, double, boolean, big number or
    /// verbatim string anywhere in it).
    pub fn is_resp2_shaped(&self) -> bool {
        match self {
            RespValue::Array(items) => items.iter().all(RespValue::is_resp2_shaped),
            RespValue::Map(_)
            | RespValue::Set(_)
            | RespValue::Double(_)
            | RespValue::Bool(_)
            | RespValue::BigNumber(_)
            | RespValue::Verbatim(..) => false,
            _ => true,
        }
    }

    /// Parses one reply from the start of `buf` (RESP2 or RESP3, as the
    /// server writes them); the reply and the bytes it took, `None` when
    /// `buf` does not hold a whole well-formed reply.
    pub fn parse(buf: &[u8]) -> Option<(RespValue, usize)> {
        let end = buf.windows(2).position(|w| w == b"\r\n")?;
        let head = std::str::from_utf8(buf.get(1..end)?).ok()?;
        let rest = end + 2;
        let count = |h: &str| h.parse::<i64>().ok();
        match buf.first()? {
            b'+' => Some((RespValue::Status(head.to_string()), rest)),
            b'-' => Some((RespValue::Error(head.to_string()), rest)),
            b':' => Some((RespValue::Integer(count(head)?), rest)),
            b'_' => Some((RespValue::Null, rest)),
            b'#' => Some((RespValue::Bool(head == "t"), rest)),
            b',' => Some((RespValue::Double(parse_double(head)?), rest)),
            b'(' => Some((RespValue::BigNumber(head.to_string()), rest)),
            b'$' | b'=' | b'!' => {
                let n = count(head)?;
                if n < 0 {
                    return Some((RespValue::Nil, rest));
                }
                let n = usize::try_from(n).ok()?;
                let body = buf.get(rest..rest + n)?;
                if buf.get(rest + n..rest + n + 2)? != b"\r\n" {
                    return None;
                }
                let value = match buf[0] {
                    b'=' if n >= 4 => RespValue::Verbatim(
                        String::from_utf8_lossy(&body[..3]).into_owned(),
                        body[4..].to_vec(),
                    ),
                    b'!' => RespValue::Error(String::from_utf8_lossy(body).into_owned()),
                    _ => RespValue::Bulk(body.to_vec()),
                };
                Some((value, rest + n + 2))
            }
            b'*' | b'~' | b'%' | b'>' => {
                let n = count(head)?;
                if n < 0 {
                    return Some((RespValue::NilArray, rest));
                }
                let items = if buf[0] == b'%' { n * 2 } else { n };
                let mut at = rest;
                let mut values = Vec::new();
                for _ in 0..items {
                    let (v, used) = RespValue::parse(&buf[at..])?;
                    values.push(v);
                    at += used;
                }
                let value = match buf[0] {
                    b'%' => {
                        let mut pairs = Vec::with_capacity(values.len() / 2);
                        let mut it = values.into_iter();
                        while let (Some(k), Some(v)) = (it.next(), it.next()) {
                            pairs.push((k, v));
                        }
                        RespValue::Map(pairs)
                    }
                    b'~' => RespValue::Set(values),
                    _ => RespValue::Array(values),
                };
                Some((value, at))
            }
            _ => None,
        }
    }
}

fn parse_double(text: &str) -> Option<f64> {
    match text {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        _ => text.parse().ok(),
    }
}

fn line(out: &mut Vec<u8>, kind: u8, text: &[u8]) {
    out.push(kind);
    out.extend_from_slice(text);
    out.extend_from_slice(b"\r\n");
}

fn bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    line(out, b'$', bytes.len().to_string().as_bytes());
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::RespValue;

    fn enc(v: &RespValue, resp3: bool) -> String {
        let mut out = Vec::new();
        v.encode(resp3, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn resp2_flattens_what_resp3_types() {
        let map = RespValue::Map(vec![(
            RespValue::Bulk(b"a".to_vec()),
            RespValue::Double(1.5),
        )]);
        assert_eq!(enc(&map, false), "*2\r\n$1\r\na\r\n$3\r\n1.5\r\n");
        assert_eq!(enc(&map, true), "%1\r\n$1\r\na\r\n,1.5\r\n");
        assert_eq!(enc(&RespValue::Bool(false), false), "$-1\r\n");
        assert_eq!(enc(&RespValue::Bool(true), true), "#t\r\n");
        let v = RespValue::Verbatim("txt".into(), b"hi".to_vec());
        assert_eq!(enc(&v, true), "=6\r\ntxt:hi\r\n");
        assert_eq!(enc(&v, false), "$2\r\nhi\r\n");
    }

    #[test]
    fn parse_reads_back_what_encode_writes() {
        let v = RespValue::Array(vec![
            RespValue::Integer(-3),
            RespValue::Nil,
            RespValue::Set(vec![RespValue::Bulk(b"x".to_vec())]),
            RespValue::Map(vec![(RespValue::Status("k".into()), RespValue::Null)]),
            RespValue::BigNumber("123".into()),
            RespValue::Verbatim("txt".into(), b"hello".to_vec()),
            RespValue::Error("ERR x".into()),
        ]);
        let mut out = Vec::new();
        v.encode(true, &mut out);
        let (back, used) = RespValue::parse(&out).unwrap();
        assert_eq!(used, out.len());
        assert_eq!(
            back,
            RespValue::Array(vec![
                RespValue::Integer(-3),
                RespValue::Null,
                RespValue::Set(vec![RespValue::Bulk(b"x".to_vec())]),
                RespValue::Map(vec![(RespValue::Status("k".into()), RespValue::Null)]),
                RespValue::BigNumber("123".into()),
                RespValue::Verbatim("txt".into(), b"hello".to_vec()),
                RespValue::Error("ERR x".into()),
            ])
        );
        assert_eq!(RespValue::parse(b"$5\r\nab"), None);
    }

    #[test]
    fn parse_refuses_a_reply_with_no_type_byte() {
        // Found by the lua_reply fuzz target: a line ending at once.
        assert_eq!(RespValue::parse(b"\r\n"), None);
        assert_eq!(RespValue::parse(b"\r\n:1\r\n"), None);
    }
}
