//! Command replies, and their rendering exactly as `redis-cli --no-raw`
//! prints them.

use std::fmt::{self, Write};

/// A RESP2 reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A status line such as `OK` or `PONG`.
    Status(String),
    /// An error line, including its code (`ERR …`, `WRONGTYPE …`).
    Error(String),
    /// An integer.
    Integer(i64),
    /// A bulk string.
    Bulk(Vec<u8>),
    /// The null bulk string.
    Nil,
    /// An array.
    Array(Vec<Reply>),
    /// The null array.
    NilArray,
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Status("OK".into())
    }

    /// A bulk string from anything byte-like.
    pub fn bulk(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply::Bulk(bytes.into())
    }

    /// A bulk string or nil.
    pub fn opt_bulk(bytes: Option<Vec<u8>>) -> Reply {
        bytes.map_or(Reply::Nil, Reply::Bulk)
    }

    /// An array of bulk strings.
    pub fn bulks<I: IntoIterator<Item = Vec<u8>>>(items: I) -> Reply {
        Reply::Array(items.into_iter().map(Reply::Bulk).collect())
    }

    /// An error reply with the given full text.
    pub fn error(text: impl Into<String>) -> Reply {
        Reply::Error(text.into())
    }

    /// Whether this is an error reply.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }

    /// The reply rendered as `redis-cli --no-raw` prints it, without the
    /// final newline.
    pub fn to_cli_string(&self) -> String {
        let mut out = String::new();
        render(self, 0, &mut out);
        if out.ends_with('\n') {
            out.pop();
        }
        out
    }
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_cli_string())
    }
}

pub use redcodec_protocol::cmdline::quote_bytes;

/// Renders one reply at nesting `indent` (the column where nested array
/// items start), following redis-cli's `cliFormatReplyTTY`.
fn render(reply: &Reply, indent: usize, out: &mut String) {
    match reply {
        Reply::Status(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Reply::Error(e) => {
            out.push_str("(error) ");
            out.push_str(e);
            out.push('\n');
        }
        Reply::Integer(i) => {
            let _ = writeln!(out, "(integer) {i}");
        }
        Reply::Bulk(b) => {
            out.push_str(&quote_bytes(b));
            out.push('\n');
        }
        Reply::Nil | Reply::NilArray => out.push_str("(nil)\n"),
        Reply::Array(items) if items.is_empty() => out.push_str("(empty array)\n"),
        Reply::Array(items) => {
            let width = items.len().to_string().len();
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.extend(std::iter::repeat_n(' ', indent));
                }
                let _ = write!(out, "{:>width$}) ", i + 1);
                render(item, indent + width + 2, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_render_like_redis_cli() {
        assert_eq!(Reply::ok().to_cli_string(), "OK");
        assert_eq!(Reply::Integer(-3).to_cli_string(), "(integer) -3");
        assert_eq!(Reply::Nil.to_cli_string(), "(nil)");
        assert_eq!(
            Reply::error("ERR syntax error").to_cli_string(),
            "(error) ERR syntax error"
        );
        assert_eq!(
            Reply::bulk(b"a\"b\\\n\x00\xff".to_vec()).to_cli_string(),
            r#""a\"b\\\n\x00\xff""#
        );
        assert_eq!(Reply::Array(vec![]).to_cli_string(), "(empty array)");
    }

    #[test]
    fn arrays_number_and_indent_nested_items() {
        let r = Reply::Array(vec![
            Reply::bulk("0"),
            Reply::Array(vec![Reply::bulk("a"), Reply::bulk("b")]),
        ]);
        assert_eq!(r.to_cli_string(), "1) \"0\"\n2) 1) \"a\"\n   2) \"b\"");
        let ten = Reply::bulks((1..=10).map(|i| i.to_string().into_bytes()));
        let text = ten.to_cli_string();
        assert!(text.starts_with(" 1) \"1\"\n 2) \"2\""));
        assert!(text.ends_with("\n10) \"10\""));
    }
}
