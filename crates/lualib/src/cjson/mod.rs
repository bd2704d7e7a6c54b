//! `cjson`: lua-cjson 2.1.0 as Redis 7.0 ships it — JSON encoding of Lua
//! values and decoding into them, with its configuration functions.
//!
//! Each table `cjson.new()` returns has a configuration of its own, as
//! the C module's closures share one configuration userdata.

mod config;
mod decode;
mod encode;

use std::sync::{Arc, Mutex, PoisonError};

use mlua::{Lua, Table, Value};

use crate::cfunction::{function, results, Args, Outcome};
use crate::failure::Failure;

pub(crate) use config::Config;

/// The configuration the functions of one `cjson` table share.
type Shared = Arc<Mutex<Config>>;

/// A new `cjson` module table (what `cjson.new()` returns).
pub(crate) fn module(lua: &Lua) -> mlua::Result<Table> {
    let config: Shared = Arc::new(Mutex::new(Config::default()));
    let table = lua.create_table()?;
    let with = |f: fn(&Lua, &Args, &mut Config) -> Outcome| {
        let config = Arc::clone(&config);
        function(lua, move |lua, args| {
            let mut config = config.lock().unwrap_or_else(PoisonError::into_inner);
            f(lua, args, &mut config)
        })
    };
    table.raw_set("encode", with(encode::encode)?)?;
    table.raw_set("decode", with(decode::decode)?)?;
    table.raw_set("encode_sparse_array", with(config::encode_sparse_array)?)?;
    table.raw_set("encode_max_depth", with(config::encode_max_depth)?)?;
    table.raw_set("decode_max_depth", with(config::decode_max_depth)?)?;
    table.raw_set(
        "encode_number_precision",
        with(config::encode_number_precision)?,
    )?;
    table.raw_set("encode_keep_buffer", with(config::encode_keep_buffer)?)?;
    table.raw_set(
        "encode_invalid_numbers",
        with(config::encode_invalid_numbers)?,
    )?;
    table.raw_set(
        "decode_invalid_numbers",
        with(config::decode_invalid_numbers)?,
    )?;
    table.raw_set("new", function(lua, new)?)?;
    table.raw_set("null", decode::null())?;
    table.raw_set("_NAME", "cjson")?;
    table.raw_set("_VERSION", "2.1.0")?;
    Ok(table)
}

/// `cjson.new()`: a module table with a configuration of its own.
fn new(lua: &Lua, _args: &Args) -> Outcome {
    let table = module(lua).map_err(|e| Failure::error(e.to_string()))?;
    results([Value::Table(table)])
}

#[cfg(test)]
mod tests {
    use crate::test_support::{error, text};

    #[test]
    fn encodes_values_as_lua_cjson() {
        let cases = [
            ("1", "1"),
            ("-1.5", "-1.5"),
            ("1/3", "0.33333333333333"),
            ("123456789012345", "1.2345678901234e+14"),
            ("-0.0", "-0"),
            ("'a\"b\\\\c/d'", r#""a\"b\\c\/d""#),
            (
                "'\\1\\8\\9\\10\\12\\13\\127'",
                r#""\u0001\b\t\n\f\r\u007f""#,
            ),
            ("true", "true"),
            ("nil", "null"),
            ("cjson.null", "null"),
            ("{}", "{}"),
            ("{1, nil, 3}", "[1,null,3]"),
            (
                "{[10] = 1}",
                "[null,null,null,null,null,null,null,null,null,1]",
            ),
            ("{[0] = 1}", r#"{"0":1}"#),
            ("{[1.5] = 1}", r#"{"1.5":1}"#),
            ("{a = {b = {1}}}", r#"{"a":{"b":[1]}}"#),
        ];
        for (value, json) in cases {
            assert_eq!(
                text(&format!("return cjson.encode({value})")),
                json,
                "{value}"
            );
        }
    }

    #[test]
    fn refuses_what_lua_cjson_refuses() {
        assert_eq!(
            error("cjson.encode({[11] = 1})"),
            "t:1: Cannot serialise table: excessively sparse array"
        );
        assert_eq!(
            error("cjson.encode(function() end)"),
            "t:1: Cannot serialise function: type not supported"
        );
        assert_eq!(
            error("cjson.encode({[true] = 1})"),
            "t:1: Cannot serialise boolean: table key must be a number or string"
        );
        assert_eq!(
            error("cjson.encode(0/0)"),
            "t:1: Cannot serialise number: must not be NaN or Inf"
        );
        assert_eq!(
            error("cjson.encode()"),
            "t:1: bad argument #1 to 'encode' (expected 1 argument)"
        );
        let cycle = "(function() local t = {} t[1] = t return cjson.encode(t) end)()";
        assert_eq!(
            error(cycle),
            "t:1: Cannot serialise, excessive nesting (1001)"
        );
    }

    #[test]
    fn decodes_json_into_lua_values() {
        assert_eq!(
            text(r#"return cjson.encode(cjson.decode('[1,2,{"a":null}]'))"#),
            r#"[1,2,{"a":null}]"#
        );
        assert_eq!(
            text(r#"return tostring(cjson.decode('null') == cjson.null)"#),
            "true"
        );
        assert_eq!(
            text(r#"return cjson.decode('"\\u00e9\\ud83d\\ude00\\/"')"#),
            "é😀/"
        );
        assert_eq!(text("return cjson.decode('0x10')"), "16");
        assert_eq!(text("return tostring(cjson.decode('-Infinity'))"), "-inf");
        assert_eq!(text("return cjson.decode('[7]\\0junk')[1]"), "7");
    }

    #[test]
    fn decoding_errors_name_the_token_and_position() {
        let cases = [
            ("[1,", "Expected value but found T_END at character 4"),
            ("", "Expected value but found T_END at character 1"),
            (
                "[1 2]",
                "Expected comma or array end but found T_NUMBER at character 4",
            ),
            (
                "{1:2}",
                "Expected object key string but found T_NUMBER at character 2",
            ),
            ("x", "Expected value but found invalid token at character 1"),
            (
                "\"a\\\\q\"",
                "Expected value but found invalid escape code at character 3",
            ),
            (
                "\"\\\\ud800\"",
                "Expected value but found invalid unicode escape code at character 2",
            ),
            (
                "\"abc",
                "Expected value but found unexpected end of string at character 5",
            ),
            ("\\0[]", "JSON parser does not support UTF-16 or UTF-32"),
        ];
        for (json, message) in cases {
            assert_eq!(
                error(&format!("cjson.decode('{json}')")),
                format!("t:1: {message}"),
                "{json}"
            );
        }
        assert_eq!(
            error("cjson.decode(string.rep('[', 1001))"),
            "t:1: Found too many nested data structures (1001) at character 1001"
        );
    }

    #[test]
    fn configuration_is_per_module_table() {
        assert_eq!(
            text("local c = cjson.new() c.encode_max_depth(2) return c.encode_max_depth() .. cjson.encode_max_depth()"),
            "21000"
        );
        assert_eq!(
            text(
                "local c = cjson.new() return c.encode_invalid_numbers('null') .. c.encode({1/0})"
            ),
            "null[null]"
        );
        assert_eq!(
            text("local c = cjson.new() c.encode_number_precision(3) return c.encode(1/3)"),
            "0.333"
        );
        assert_eq!(
            error("cjson.new().encode_number_precision(15)"),
            "t:1: bad argument #1 to 'encode_number_precision' (expected integer between 1 and 14)"
        );
        assert_eq!(
            error("cjson.new().encode_keep_buffer('yes')"),
            "t:1: bad argument #1 to 'encode_keep_buffer' (invalid option 'yes')"
        );
        assert_eq!(text("return cjson._NAME .. cjson._VERSION"), "cjson2.1.0");
    }

    #[test]
    fn deep_nesting_needs_no_deep_rust_stack() {
        // 7000 levels, as far as Lua's C stack allows, on a small thread.
        let run = || {
            text(
                "local c = cjson.new() c.decode_max_depth(10000) c.encode_max_depth(10000) \
                 return #c.encode(c.decode(string.rep('[', 7000) .. string.rep(']', 7000)))",
            )
        };
        let out = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(run)
            .expect("spawn")
            .join()
            .expect("no stack overflow");
        assert_eq!(out, "14000");
    }
}
