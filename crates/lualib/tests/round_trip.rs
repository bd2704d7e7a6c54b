//! Random Lua values survive `cjson.decode(cjson.encode(v))` and
//! `cmsgpack.unpack(cmsgpack.pack(v))`.
//!
//! JSON numbers are written with 14 significant digits (`%.14g`), so its
//! values use numbers that fit in 14 digits; MessagePack keeps every
//! number but NaN (never equal to itself) exactly.

use std::collections::BTreeMap;

use mlua::{Lua, Table, Value};
use proptest::prelude::*;

/// A Lua value without functions, userdata or holes in arrays.
#[derive(Debug, Clone)]
enum Data {
    Bool(bool),
    Num(f64),
    Str(Vec<u8>),
    Array(Vec<Data>),
    Map(Vec<(Vec<u8>, Data)>),
}

/// A value compared after the trip: a table is its set of pairs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Canon {
    Bool(bool),
    /// The bits of the number, -0 as 0.
    Num(u64),
    Str(Vec<u8>),
    Table(BTreeMap<Canon, Canon>),
    Other(String),
}

fn number(n: f64) -> Canon {
    Canon::Num(if n == 0.0 { 0 } else { n.to_bits() })
}

fn canon(value: &Value) -> Canon {
    match value {
        Value::Boolean(b) => Canon::Bool(*b),
        Value::Integer(i) => number(*i as f64),
        Value::Number(n) => number(*n),
        Value::String(s) => Canon::Str(s.as_bytes().to_vec()),
        Value::Table(t) => Canon::Table(
            t.pairs::<Value, Value>()
                .map(|pair| {
                    let (k, v) = pair.expect("pair");
                    (canon(&k), canon(&v))
                })
                .collect(),
        ),
        other => Canon::Other(format!("{other:?}")),
    }
}

fn to_lua(lua: &Lua, data: &Data) -> Value {
    match data {
        Data::Bool(b) => Value::Boolean(*b),
        Data::Num(n) => Value::Number(*n),
        Data::Str(s) => Value::String(lua.create_string(s).expect("string")),
        Data::Array(items) => {
            let t = lua.create_table().expect("table");
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, item)).expect("set");
            }
            Value::Table(t)
        }
        Data::Map(pairs) => {
            let t = lua.create_table().expect("table");
            for (k, v) in pairs {
                let key = lua.create_string(k).expect("key");
                t.raw_set(key, to_lua(lua, v)).expect("set");
            }
            Value::Table(t)
        }
    }
}

/// Values of `numbers`, nested four deep at most.
fn data(numbers: BoxedStrategy<f64>) -> impl Strategy<Value = Data> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Data::Bool),
        numbers.prop_map(Data::Num),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Data::Str),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Data::Array),
            prop::collection::vec((prop::collection::vec(any::<u8>(), 0..12), inner), 0..8)
                .prop_map(Data::Map),
        ]
    })
}

/// Numbers `%.14g` writes exactly.
fn json_numbers() -> BoxedStrategy<f64> {
    prop_oneof![
        (-10_000_000_000_000i64..10_000_000_000_000).prop_map(|i| i as f64),
        (-(1i64 << 30)..(1i64 << 30)).prop_map(|i| i as f64 / 4.0),
    ]
    .boxed()
}

/// Every number but NaN.
fn msgpack_numbers() -> BoxedStrategy<f64> {
    prop_oneof![
        any::<i64>().prop_map(|i| i as f64),
        any::<f32>()
            .prop_filter("not NaN", |f| !f.is_nan())
            .prop_map(f64::from),
        any::<f64>().prop_filter("not NaN", |f| !f.is_nan()),
    ]
    .boxed()
}

/// `value` through the Lua function `trip` (a chunk returning a function).
fn trip(trip: &str, value: &Data) -> (Canon, Canon) {
    let lua = Lua::new();
    redcodec_lualib::load(&lua).expect("load");
    let f: mlua::Function = lua.load(trip).eval().expect("trip function");
    let input = to_lua(&lua, value);
    let output: Value = f.call(input.clone()).expect("round trip");
    (canon(&input), canon(&output))
}

proptest! {
    #[test]
    fn cjson_round_trips(value in data(json_numbers())) {
        let (before, after) = trip("return function(v) return cjson.decode(cjson.encode(v)) end", &value);
        prop_assert_eq!(before, after);
    }

    #[test]
    fn cmsgpack_round_trips(value in data(msgpack_numbers())) {
        let (before, after) = trip("return function(v) return cmsgpack.unpack(cmsgpack.pack(v)) end", &value);
        prop_assert_eq!(before, after);
    }

    #[test]
    fn cmsgpack_streams_round_trip(values in prop::collection::vec(data(msgpack_numbers()), 1..6)) {
        let lua = Lua::new();
        redcodec_lualib::load(&lua).expect("load");
        let f: mlua::Function = lua
            .load("return function(...) return {cmsgpack.unpack(cmsgpack.pack(...))} end")
            .eval()
            .expect("trip function");
        let inputs: Vec<Value> = values.iter().map(|v| to_lua(&lua, v)).collect();
        let output: Table = f.call(mlua::MultiValue::from_iter(inputs.clone())).expect("round trip");
        let after: Vec<Canon> = output.sequence_values::<Value>().map(|v| canon(&v.expect("value"))).collect();
        let before: Vec<Canon> = inputs.iter().map(canon).collect();
        prop_assert_eq!(before, after);
    }
}
