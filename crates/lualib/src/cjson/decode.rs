//! `cjson.decode(text)`: JSON text as Lua values (`null` is `cjson.null`).
//!
//! The text is read as the C library reads a C string: a NUL byte ends
//! it. Errors name the position (from 1) of the offending token.

use mlua::{LightUserData, Lua, Table, Value};

use super::config::Config;
use crate::cfunction::{results, Args, Outcome};
use crate::failure::{lua_failure, Failure};
use crate::luastack::{LuaStack, LUAI_MAXCSTACK};
use crate::number::strtod;

/// `cjson.null`: the NULL light userdata JSON `null` decodes to.
pub(crate) fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// `cjson.decode(text)`.
pub(crate) fn decode(lua: &Lua, args: &Args, config: &mut Config) -> Outcome {
    if args.count() != 1 {
        return Err(Failure::arg(1, "expected 1 argument"));
    }
    let text = args.check_bytes(lua, 1)?;
    if text.len() >= 2 && (text[0] == 0 || text[1] == 0) {
        return Err(Failure::error(
            "JSON parser does not support UTF-16 or UTF-32",
        ));
    }
    let mut parser = Parser {
        lua,
        config,
        text: &text,
        pos: 0,
        depth: 0,
    };
    let token = parser.next_token();
    // The text is the one value on the C function's stack.
    let value = parser.value(token, 1)?;
    let end = parser.next_token();
    if end.kind != Kind::End {
        return Err(parser.unexpected("the end", &end));
    }
    results([value])
}

/// The kinds of token, with the names errors give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    String,
    Number,
    Boolean,
    Null,
    Colon,
    Comma,
    End,
    /// A token that could not be read; its message says why.
    Error(&'static str),
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::ObjBegin => "T_OBJ_BEGIN",
            Kind::ObjEnd => "T_OBJ_END",
            Kind::ArrBegin => "T_ARR_BEGIN",
            Kind::ArrEnd => "T_ARR_END",
            Kind::String => "T_STRING",
            Kind::Number => "T_NUMBER",
            Kind::Boolean => "T_BOOLEAN",
            Kind::Null => "T_NULL",
            Kind::Colon => "T_COLON",
            Kind::Comma => "T_COMMA",
            Kind::End => "T_END",
            Kind::Error(message) => message,
        }
    }
}

/// A token: its kind, where it starts (from 0) and its value.
struct Token {
    kind: Kind,
    index: usize,
    string: Vec<u8>,
    number: f64,
    boolean: bool,
}

struct Parser<'a> {
    lua: &'a Lua,
    config: &'a Config,
    text: &'a [u8],
    pos: usize,
    depth: i32,
}

impl Parser<'_> {
    /// The byte at `i`; 0 past the end, as after a C string.
    fn at(&self, i: usize) -> u8 {
        self.text.get(i).copied().unwrap_or(0)
    }

    fn token(&self, kind: Kind, index: usize) -> Token {
        Token {
            kind,
            index,
            string: Vec::new(),
            number: 0.0,
            boolean: false,
        }
    }

    /// A token that could not be read, at the current position.
    fn error_token(&self, message: &'static str) -> Token {
        self.token(Kind::Error(message), self.pos)
    }

    fn next_token(&mut self) -> Token {
        while matches!(self.at(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let start = self.pos;
        let single = match self.at(start) {
            b'{' => Some(Kind::ObjBegin),
            b'}' => Some(Kind::ObjEnd),
            b'[' => Some(Kind::ArrBegin),
            b']' => Some(Kind::ArrEnd),
            b',' => Some(Kind::Comma),
            b':' => Some(Kind::Colon),
            0 => return self.token(Kind::End, start),
            _ => None,
        };
        if let Some(kind) = single {
            self.pos += 1;
            return self.token(kind, start);
        }
        let ch = self.at(start);
        let rest = &self.text[start..];
        match ch {
            b'"' => self.string_token(),
            b'-' | b'0'..=b'9' => {
                if !self.config.decode_invalid_numbers && self.is_invalid_number() {
                    return self.error_token("invalid number");
                }
                self.number_token()
            }
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => {
                let literal = [
                    (&b"true"[..], Kind::Boolean, true),
                    (b"false", Kind::Boolean, false),
                    (b"null", Kind::Null, false),
                ];
                for (word, kind, value) in literal {
                    if rest.starts_with(word) {
                        self.pos += word.len();
                        let mut token = self.token(kind, start);
                        token.boolean = value;
                        return token;
                    }
                }
                if self.config.decode_invalid_numbers && self.is_invalid_number() {
                    return self.number_token();
                }
                self.error_token("invalid token")
            }
            _ => self.error_token("invalid token"),
        }
    }

    /// Numbers `strtod` reads but JSON does not allow: a leading `+`,
    /// hexadecimal, leading zeros, `inf`, `nan`.
    fn is_invalid_number(&self) -> bool {
        let mut p = self.pos;
        match self.at(p) {
            b'+' => return true,
            b'-' => p += 1,
            _ => {}
        }
        let ch = self.at(p);
        if ch == b'0' {
            let next = self.at(p + 1);
            return next | 0x20 == b'x' || next.is_ascii_digit();
        }
        if ch <= b'9' {
            return false;
        }
        let word = &self.text[p.min(self.text.len())..];
        let starts = |w: &[u8]| word.len() >= 3 && word[..3].eq_ignore_ascii_case(w);
        starts(b"inf") || starts(b"nan")
    }

    fn number_token(&mut self) -> Token {
        // A NUL ends the number as any other byte strtod does not read.
        match strtod(&self.text[self.pos..]) {
            Some((number, used)) => {
                let mut token = self.token(Kind::Number, self.pos);
                token.number = number;
                self.pos += used;
                token
            }
            None => self.error_token("invalid number"),
        }
    }

    fn string_token(&mut self) -> Token {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let ch = self.at(self.pos);
            match ch {
                b'"' => break,
                0 => return self.error_token("unexpected end of string"),
                b'\\' => {
                    let escaped = match self.at(self.pos + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b't' => b'\t',
                        b'n' => b'\n',
                        b'f' => 0x0c,
                        b'r' => b'\r',
                        b'u' => {
                            if !self.unicode_escape(&mut out) {
                                return self.error_token("invalid unicode escape code");
                            }
                            continue;
                        }
                        _ => return self.error_token("invalid escape code"),
                    };
                    out.push(escaped);
                    self.pos += 2;
                }
                _ => {
                    out.push(ch);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        let mut token = self.token(Kind::String, start);
        token.string = out;
        token
    }

    /// Four hex digits at `i`.
    fn hex4(&self, i: usize) -> Option<u32> {
        (i..i + 4).try_fold(0u32, |acc, j| {
            char::from(self.at(j)).to_digit(16).map(|d| acc << 4 | d)
        })
    }

    /// `\uXXXX` (or a surrogate pair of them) at the current position,
    /// appended as UTF-8; false when malformed.
    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(mut code) = self.hex4(self.pos + 2) else {
            return false;
        };
        let mut len = 6;
        if code & 0xF800 == 0xD800 {
            if code & 0x400 != 0 {
                return false;
            }
            if self.at(self.pos + 6) != b'\\' || self.at(self.pos + 7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(self.pos + 8) else {
                return false;
            };
            if low & 0xFC00 != 0xDC00 {
                return false;
            }
            code = (((code & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            len = 12;
        }
        match char::from_u32(code) {
            Some(c) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            // Unpaired surrogates never get here; nothing else is invalid.
            None => return false,
        }
        self.pos += len;
        true
    }

    /// `Expected <what> but found <token> at character <n>`.
    fn unexpected(&self, what: &str, token: &Token) -> Failure {
        Failure::error(format!(
            "Expected {what} but found {} at character {}",
            token.kind.name(),
            token.index + 1
        ))
    }

    /// One level deeper, needing `slots` more values on the C stack
    /// where it holds `stack`.
    fn descend(&mut self, stack: usize, slots: usize) -> Result<(), Failure> {
        self.depth += 1;
        if self.depth <= self.config.decode_max_depth && stack + slots <= LUAI_MAXCSTACK {
            return Ok(());
        }
        Err(Failure::error(format!(
            "Found too many nested data structures ({}) at character {}",
            self.depth, self.pos
        )))
    }

    fn string_value(&self, bytes: &[u8]) -> Result<Value, Failure> {
        Ok(Value::String(
            self.lua.create_string(bytes).map_err(lua_failure)?,
        ))
    }

    /// An object's key and colon, after `{` or `,`; the key is pushed.
    fn key(&mut self, token: &Token, open: &mut LuaStack) -> Result<(), Failure> {
        if token.kind != Kind::String {
            return Err(self.unexpected("object key string", token));
        }
        open.push(self.string_value(&token.string)?)?;
        let colon = self.next_token();
        if colon.kind != Kind::Colon {
            return Err(self.unexpected("colon", &colon));
        }
        Ok(())
    }

    /// The value `token` starts, nested arrays and objects included,
    /// without recursion: the open tables (and an object's pending key)
    /// wait on `open`, their kinds on `levels`.
    fn value(&mut self, mut token: Token, base: usize) -> Result<Value, Failure> {
        let mut open = LuaStack::new(self.lua)?;
        let mut levels: Vec<Level> = Vec::new();
        // What the C decoder holds on its Lua stack: the text, then a
        // table per open array, a table and a key per open object.
        let mut stack = base;
        loop {
            let mut value = match token.kind {
                Kind::String => self.string_value(&token.string)?,
                Kind::Number => Value::Number(token.number),
                Kind::Boolean => Value::Boolean(token.boolean),
                Kind::Null => null(),
                Kind::ObjBegin => {
                    self.descend(stack, 3)?;
                    let table = self.new_table()?;
                    token = self.next_token();
                    if token.kind == Kind::ObjEnd {
                        self.depth -= 1;
                        Value::Table(table)
                    } else {
                        open.push(table)?;
                        self.key(&token, &mut open)?;
                        levels.push(Level::Object);
                        stack += 2;
                        token = self.next_token();
                        continue;
                    }
                }
                Kind::ArrBegin => {
                    self.descend(stack, 2)?;
                    let table = self.new_table()?;
                    token = self.next_token();
                    if token.kind == Kind::ArrEnd {
                        self.depth -= 1;
                        Value::Table(table)
                    } else {
                        open.push(table)?;
                        levels.push(Level::Array(1));
                        stack += 1;
                        continue;
                    }
                }
                _ => return Err(self.unexpected("value", &token)),
            };
            // Store the value in the tables it completes.
            loop {
                let Some(level) = levels.last_mut() else {
                    return Ok(value);
                };
                let (close, what) = match level {
                    Level::Array(index) => {
                        let table: Table = open.peek(0)?;
                        table.raw_set(*index, value).map_err(lua_failure)?;
                        *index += 1;
                        (Kind::ArrEnd, "comma or array end")
                    }
                    Level::Object => {
                        let key: Value = open.pop()?;
                        let table: Table = open.peek(0)?;
                        table.raw_set(key, value).map_err(lua_failure)?;
                        (Kind::ObjEnd, "comma or object end")
                    }
                };
                token = self.next_token();
                if token.kind == close {
                    self.depth -= 1;
                    stack -= if close == Kind::ArrEnd { 1 } else { 2 };
                    levels.pop();
                    value = open.pop()?;
                    continue;
                }
                if token.kind != Kind::Comma {
                    return Err(self.unexpected(what, &token));
                }
                token = self.next_token();
                if close == Kind::ObjEnd {
                    self.key(&token, &mut open)?;
                    token = self.next_token();
                }
                break;
            }
        }
    }

    fn new_table(&self) -> Result<Table, Failure> {
        self.lua.create_table().map_err(lua_failure)
    }
}

/// An array or object being read.
enum Level {
    /// An array, with the index of its next element.
    Array(i64),
    /// An object, its key waiting on the stack of open tables.
    Object,
}
