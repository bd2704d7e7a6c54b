//! cjson's configuration and the functions that read and change it. Each
//! takes its new value(s) (nil keeps the current one) and returns the
//! value(s) in force.

use mlua::{Lua, Value};

use crate::cfunction::{results, Args, Outcome};
use crate::failure::Failure;

/// `INT_MAX`, the upper bound of most integer options.
const INT_MAX: i32 = i32::MAX;

/// How numbers that are NaN or infinite are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InvalidNumbers {
    /// An error (`off`, the default).
    Refuse,
    /// `nan`, `inf`, `-inf` (`on`).
    Write,
    /// `null` (`"null"`).
    Null,
}

/// One cjson module's settings, with lua-cjson's defaults.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Encode excessively sparse arrays as objects instead of failing.
    pub(crate) sparse_convert: bool,
    /// A table whose largest index exceeds its count times this is
    /// excessively sparse (0: never).
    pub(crate) sparse_ratio: i32,
    /// Tables whose largest index is at most this are never sparse.
    pub(crate) sparse_safe: i32,
    /// Deepest nesting of tables encoded.
    pub(crate) encode_max_depth: i32,
    /// Deepest nesting of arrays and objects decoded.
    pub(crate) decode_max_depth: i32,
    /// NaN and infinities when encoding.
    pub(crate) encode_invalid_numbers: InvalidNumbers,
    /// Accept `nan`, `inf`, hexadecimal and the like when decoding.
    pub(crate) decode_invalid_numbers: bool,
    /// Reuse the encoding buffer (no effect here but its reported value).
    pub(crate) encode_keep_buffer: bool,
    /// Significant digits of encoded numbers (1 to 14).
    pub(crate) number_precision: i32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: InvalidNumbers::Refuse,
            decode_invalid_numbers: true,
            encode_keep_buffer: true,
            number_precision: 14,
        }
    }
}

/// `json_arg_init`: at most `max` arguments.
fn at_most(args: &Args, max: usize) -> Result<(), Failure> {
    if args.count() > max {
        return Err(Failure::arg(
            i32::try_from(max + 1).unwrap_or(i32::MAX),
            "found too many arguments",
        ));
    }
    Ok(())
}

/// `json_integer_option`: argument `n`, when given, an integer in
/// `min..=max` (the range error names argument 1, as lua-cjson does).
fn integer_option(
    lua: &Lua,
    args: &Args,
    n: usize,
    setting: &mut i32,
    min: i32,
    max: i32,
) -> Result<Value, Failure> {
    if !args.is_none_or_nil(n) {
        // A C `int` from a `lua_Integer`: the low 32 bits.
        let value = args.check_integer(lua, n)? as i32;
        if !(min <= value && value <= max) {
            return Err(Failure::arg(
                1,
                format!("expected integer between {min} and {max}"),
            ));
        }
        *setting = value;
    }
    Ok(Value::Integer(i64::from(*setting)))
}

/// `json_enum_option`: argument `n`, when given, a boolean or one of
/// `options` (its index is the setting); returns the setting as a
/// boolean when it is 0 or 1, else as its option name.
fn enum_option(
    lua: &Lua,
    args: &Args,
    n: usize,
    setting: &mut usize,
    options: &[&str],
) -> Result<Value, Failure> {
    match args.get(n) {
        None | Some(Value::Nil) => {}
        Some(Value::Boolean(b)) => *setting = usize::from(*b),
        Some(_) => {
            let name = args.check_bytes(lua, n)?;
            match options
                .iter()
                .position(|o| o.as_bytes() == until_nul(&name))
            {
                Some(i) => *setting = i,
                None => {
                    let mut message = b"invalid option '".to_vec();
                    message.extend_from_slice(until_nul(&name));
                    message.push(b'\'');
                    return Err(Failure::arg(i32::try_from(n).unwrap_or(i32::MAX), message));
                }
            }
        }
    }
    Ok(match *setting {
        0 => Value::Boolean(false),
        1 => Value::Boolean(true),
        i => Value::String(
            lua.create_string(options[i])
                .map_err(|e| Failure::error(e.to_string()))?,
        ),
    })
}

/// The part of `bytes` C sees as a string.
fn until_nul(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

const ON_OFF: &[&str] = &["off", "on"];

/// A boolean option through [`enum_option`].
fn bool_option(lua: &Lua, args: &Args, n: usize, setting: &mut bool) -> Result<Value, Failure> {
    let mut index = usize::from(*setting);
    let value = enum_option(lua, args, n, &mut index, ON_OFF)?;
    *setting = index == 1;
    Ok(value)
}

/// `cjson.encode_sparse_array([convert[, ratio[, safe]]])`.
pub(crate) fn encode_sparse_array(lua: &Lua, args: &Args, config: &mut Config) -> Outcome {
    at_most(args, 3)?;
    let convert = bool_option(lua, args, 1, &mut config.sparse_convert)?;
    let ratio = integer_option(lua, args, 2, &mut config.sparse_ratio, 0, INT_MAX)?;
    let safe = integer_option(lua, args, 3, &mut config.sparse_safe, 0, INT_MAX)?;
    results([convert, ratio, safe])
}

/// `cjson.encode_max_depth([depth])`.
pub(crate) fn encode_max_depth(lua: &Lua, args: &Args, config: &mut Config) -> Outcome {
    at_most(args, 1)?;
    results([integer_option(
        lua,
        args,
        1,
        &mut config.encode_max_depth,
        1,
        INT_MAX,
    )?])
}

/// `cjson.decode_max_depth([depth])`.
pub(crate) fn decode_max_depth(lua: &Lua, args: &Args, config: &mut Config) -> Outcome {
    at_most(args, 1)?;
    results([integer_option(
        lua,
        args,
        1,
        &mut config.decode_max_depth,
        1,
        INT_MAX,
    )?])
}

/// `cjson.encode_number_precision([digits])`.
pub(crate) fn encode_number_precision(lua: &Lua, args: &Args, config: &mut Config) -> Outcome {
    at_most(args, 1)?;
    results([integer_option(
        lua,
        args,
        1,
        &mut config.number_precision,
        1,
        14,
    )?])
}

/// `cjson.encode_keep_buffer([keep])`.
pub(crate) fn encode_keep_buffer(lua: &Lua, args: &Args, config: &mut Config) -> Outcome {
    at_most(args, 1)?;
    results([bool_option(lua, args, 1, &mut config.encode_keep_buffer)?])
}

/// `cjson.encode_invalid_numbers([setting])`: a boolean, `"on"`, `"off"`
/// or `"null"`.
pub(crate) fn encode_invalid_numbers(lua: &Lua, args: &Args, config: &mut Config) -> Outcome {
    at_most(args, 1)?;
    const OPTIONS: [InvalidNumbers; 3] = [
        InvalidNumbers::Refuse,
        InvalidNumbers::Write,
        InvalidNumbers::Null,
    ];
    let mut index = OPTIONS
        .iter()
        .position(|&o| o == config.encode_invalid_numbers)
        .unwrap_or(0);
    let value = enum_option(lua, args, 1, &mut index, &["off", "on", "null"])?;
    config.encode_invalid_numbers = OPTIONS[index];
    results([value])
}

/// `cjson.decode_invalid_numbers([accept])`.
pub(crate) fn decode_invalid_numbers(lua: &Lua, args: &Args, config: &mut Config) -> Outcome {
    at_most(args, 1)?;
    results([bool_option(
        lua,
        args,
        1,
        &mut config.decode_invalid_numbers,
    )?])
}
