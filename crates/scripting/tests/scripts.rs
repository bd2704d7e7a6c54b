//! Scripts run against a small in-memory runner (GET, SET, INCR, DEL,
//! HGETALL-like replies), checking conversions, the sandbox and the error
//! texts. Every expected text was given by redis-server 7.0.15 to the
//! same script.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use redcodec_scripting::runner::{UNKNOWN_COMMAND, WRITE_IN_READ_ONLY, WRONG_ARITY};
use redcodec_scripting::{CommandRunner, RespValue, Scripting};

#[derive(Default)]
struct Memory {
    data: HashMap<Vec<u8>, Vec<u8>>,
    calls: usize,
}

impl CommandRunner for Memory {
    fn call(&mut self, args: &[Bytes], resp3: bool, read_only: bool) -> Result<RespValue, String> {
        self.calls += 1;
        let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
        let write = matches!(name.as_str(), "set" | "incr" | "del");
        if read_only && write {
            return Err(WRITE_IN_READ_ONLY.into());
        }
        Ok(match (name.as_str(), args.len()) {
            ("get", 2) => self
                .data
                .get(&args[1][..])
                .map_or(RespValue::Nil, |v| RespValue::Bulk(v.clone())),
            ("set", 3) => {
                self.data.insert(args[1].to_vec(), args[2].to_vec());
                RespValue::Status("OK".into())
            }
            ("incr", 2) => {
                let v = self.data.entry(args[1].to_vec()).or_insert(b"0".to_vec());
                match std::str::from_utf8(v)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    Some(n) => {
                        *v = (n + 1).to_string().into_bytes();
                        RespValue::Integer(n + 1)
                    }
                    None => RespValue::Error("ERR value is not an integer or out of range".into()),
                }
            }
            ("pairs", 1) if resp3 => RespValue::Map(vec![(
                RespValue::Bulk(b"a".to_vec()),
                RespValue::Double(1.5),
            )]),
            ("pairs", 1) => RespValue::Array(vec![
                RespValue::Bulk(b"a".to_vec()),
                RespValue::Bulk(b"1.5".to_vec()),
            ]),
            ("get" | "set" | "incr", _) => return Err(WRONG_ARITY.into()),
            _ => return Err(UNKNOWN_COMMAND.into()),
        })
    }

    fn exists(&self, name: &[u8]) -> bool {
        matches!(name, b"get" | b"set" | b"incr")
    }
}

fn scripting() -> Scripting {
    Scripting::new(Arc::new(|_, _| {})).expect("Lua starts")
}

fn eval(s: &mut Scripting, m: &mut Memory, body: &str, keys: &[&str], args: &[&str]) -> RespValue {
    let (sha, _) = match s.resolve(body.as_bytes(), false) {
        Ok(r) => r,
        Err(e) => return RespValue::Error(e),
    };
    let keys: Vec<Bytes> = keys
        .iter()
        .map(|k| Bytes::copy_from_slice(k.as_bytes()))
        .collect();
    let args: Vec<Bytes> = args
        .iter()
        .map(|k| Bytes::copy_from_slice(k.as_bytes()))
        .collect();
    s.run_script(m, &sha, &keys, &args, false)
}

fn err(text: &str) -> RespValue {
    RespValue::Error(text.into())
}

fn bulk(text: &str) -> RespValue {
    RespValue::Bulk(text.as_bytes().to_vec())
}

#[test]
fn lua_values_convert_as_in_redis() {
    let (mut s, mut m) = (scripting(), Memory::default());
    assert_eq!(
        eval(&mut s, &mut m, "return 3.99", &[], &[]),
        RespValue::Integer(3)
    );
    assert_eq!(
        eval(&mut s, &mut m, "return -3.99", &[], &[]),
        RespValue::Integer(-3)
    );
    assert_eq!(
        eval(&mut s, &mut m, "return true", &[], &[]),
        RespValue::Integer(1)
    );
    assert_eq!(
        eval(&mut s, &mut m, "return false", &[], &[]),
        RespValue::Nil
    );
    assert_eq!(eval(&mut s, &mut m, "return nil", &[], &[]), RespValue::Nil);
    assert_eq!(eval(&mut s, &mut m, "return 'x'", &[], &[]), bulk("x"));
    assert_eq!(
        eval(&mut s, &mut m, "return {1,2,3.7,nil,5}", &[], &[]),
        RespValue::Array(vec![
            RespValue::Integer(1),
            RespValue::Integer(2),
            RespValue::Integer(3)
        ])
    );
    assert_eq!(
        eval(&mut s, &mut m, "return {err='MY x'}", &[], &[]),
        err("MY x")
    );
    assert_eq!(
        eval(&mut s, &mut m, "return {ok='fine\\r\\nyes'}", &[], &[]),
        RespValue::Status("fine  yes".into())
    );
    assert_eq!(
        eval(&mut s, &mut m, "return redis.error_reply('MY x')", &[], &[]),
        err("MY x")
    );
    assert_eq!(
        eval(&mut s, &mut m, "return redis.error_reply('x')", &[], &[]),
        err("ERR x")
    );
    assert_eq!(
        eval(
            &mut s,
            &mut m,
            "return redis.status_reply('FINE')",
            &[],
            &[]
        ),
        RespValue::Status("FINE".into())
    );
    assert_eq!(
        eval(
            &mut s,
            &mut m,
            "return {KEYS[1], ARGV[2]}",
            &["k"],
            &["a", "b"]
        ),
        RespValue::Array(vec![bulk("k"), bulk("b")])
    );
    assert_eq!(
        eval(&mut s, &mut m, "return {double=3.5}", &[], &[]),
        RespValue::Double(3.5)
    );
    assert_eq!(
        eval(
            &mut s,
            &mut m,
            "redis.setresp(3); return redis.call('pairs')",
            &[],
            &[]
        ),
        RespValue::Map(vec![(bulk("a"), RespValue::Double(1.5))])
    );
    assert_eq!(
        eval(&mut s, &mut m, "redis.setresp(3); return false", &[], &[]),
        RespValue::Bool(false)
    );
    // The script's protocol does not outlive the run.
    assert_eq!(
        eval(&mut s, &mut m, "return redis.call('pairs')", &[], &[]),
        RespValue::Array(vec![bulk("a"), bulk("1.5")])
    );
    let deep = eval(
        &mut s,
        &mut m,
        "local a = {}; local b = {a}; a[1] = b; return a",
        &[],
        &[],
    );
    let mut depth = 0;
    let mut v = &deep;
    while let RespValue::Array(items) = v {
        depth += 1;
        v = &items[0];
    }
    assert_eq!(v, &err("ERR reached lua stack limit"));
    assert!(depth > 100);
}

#[test]
fn commands_and_their_errors() {
    let (mut s, mut m) = (scripting(), Memory::default());
    assert_eq!(
        eval(
            &mut s,
            &mut m,
            "redis.call('set', KEYS[1], 5); return redis.call('incr', KEYS[1])",
            &["n"],
            &[]
        ),
        RespValue::Integer(6)
    );
    assert_eq!(
        eval(
            &mut s,
            &mut m,
            "return redis.call('get', 'nosuch')",
            &[],
            &[]
        ),
        RespValue::Nil
    );
    let sha = redcodec_scripting::sha1_hex(b"return redis.call('nosuch')");
    assert_eq!(
        eval(&mut s, &mut m, "return redis.call('nosuch')", &[], &[]),
        err(&format!(
            "ERR Unknown Redis command called from script script: {sha}, on @user_script:1."
        ))
    );
    assert_eq!(
        eval(&mut s, &mut m, "return redis.pcall('get')", &[], &[]),
        err("ERR Wrong number of args calling Redis command from script")
    );
    m.data.insert(b"s".to_vec(), b"abc".to_vec());
    let body = "return redis.call('incr','s')";
    assert_eq!(
        eval(&mut s, &mut m, body, &[], &[]),
        err(&format!(
            "ERR value is not an integer or out of range script: {}, on @user_script:1.",
            redcodec_scripting::sha1_hex(body.as_bytes())
        ))
    );
    let body = "error('x')";
    assert_eq!(
        eval(&mut s, &mut m, body, &[], &[]),
        err(&format!(
            "ERR user_script:1: x script: {}, on @user_script:1.",
            redcodec_scripting::sha1_hex(body.as_bytes())
        ))
    );
    let body = "error({err='MY x'})";
    assert_eq!(
        eval(&mut s, &mut m, body, &[], &[]),
        err(&format!(
            "MY x script: {}, on @user_script:1.",
            redcodec_scripting::sha1_hex(body.as_bytes())
        ))
    );
    assert_eq!(
        eval(
            &mut s,
            &mut m,
            "local ok, e = pcall(function() redis.call('nosuch') end); return {tostring(ok), e}",
            &[],
            &[]
        ),
        RespValue::Array(vec![
            bulk("false"),
            bulk("ERR Unknown Redis command called from script")
        ])
    );
    assert_eq!(
        eval(&mut s, &mut m, "return redis.pcall()", &[], &[]),
        err("ERR Please specify at least one argument for this redis lib call")
    );
    assert_eq!(
        eval(&mut s, &mut m, "return redis.pcall('get', {})", &[], &[]),
        err("ERR Lua redis lib command arguments must be strings or integers")
    );
    assert_eq!(
        eval(
            &mut s,
            &mut m,
            "return redis.acl_check_cmd('get')",
            &[],
            &[]
        ),
        RespValue::Integer(1)
    );
}

/// `redis.acl_check_cmd`: true for a command that exists; Redis 7.0.15's
/// error tables (raised, with the script's position, and caught by
/// `pcall` as their text) for a bad argument, no argument and an unknown
/// command.
#[test]
fn acl_check_cmd_replies_and_errors() {
    let (mut s, mut m) = (scripting(), Memory::default());
    let with_sha = |body: &str, text: &str| {
        err(&format!(
            "{text} script: {}, on @user_script:1.",
            redcodec_scripting::sha1_hex(body.as_bytes())
        ))
    };
    const TYPE: &str = "ERR Lua redis lib command arguments must be strings or integers";
    const NONE: &str = "ERR Please specify at least one argument for this redis lib call";
    const INVALID: &str = "ERR Invalid command passed to redis.acl_check_cmd()";
    for (body, reply) in [
        ("return redis.acl_check_cmd('get')", RespValue::Integer(1)),
        (
            "return redis.acl_check_cmd('set', 'k', 1.5)",
            RespValue::Integer(1),
        ),
        ("return type(redis.acl_check_cmd('incr'))", bulk("boolean")),
        (
            "local ok, r = pcall(redis.acl_check_cmd, 'get'); return {tostring(ok), tostring(r)}",
            RespValue::Array(vec![bulk("true"), bulk("true")]),
        ),
    ] {
        assert_eq!(eval(&mut s, &mut m, body, &[], &[]), reply, "{body}");
    }
    for (body, text) in [
        ("local r = redis.acl_check_cmd({}) return r", TYPE),
        ("local r = redis.acl_check_cmd('get', {}) return r", TYPE),
        ("local r = redis.acl_check_cmd('get', nil) return r", TYPE),
        ("local r = redis.acl_check_cmd() return r", NONE),
        ("local r = redis.acl_check_cmd('nosuch') return r", INVALID),
        ("local r = redis.acl_check_cmd(1) return r", INVALID),
        ("return redis.acl_check_cmd('nosuch')", INVALID),
    ] {
        assert_eq!(
            eval(&mut s, &mut m, body, &[], &[]),
            with_sha(body, text),
            "{body}"
        );
    }
    for (args, text) in [
        (", {}", TYPE),
        (", 'get', {}", TYPE),
        ("", NONE),
        (", 'nosuch'", INVALID),
    ] {
        let body =
            format!("local ok, e = pcall(redis.acl_check_cmd{args}); return {{tostring(ok), e}}");
        assert_eq!(
            eval(&mut s, &mut m, &body, &[], &[]),
            RespValue::Array(vec![bulk("false"), bulk(text)]),
            "{body}"
        );
    }
    // The error is a table, as `redis.call`'s are.
    assert_eq!(
        eval(
            &mut s,
            &mut m,
            "local ok, e = pcall(function() redis.acl_check_cmd('nosuch') end); return e",
            &[],
            &[]
        ),
        bulk(INVALID)
    );
    assert_eq!(m.calls, 0);
}

#[test]
fn read_only_runs_refuse_writes() {
    let (mut s, mut m) = (scripting(), Memory::default());
    let (sha, _) = s
        .resolve(b"return redis.pcall('set','a','b')", false)
        .unwrap();
    assert_eq!(
        s.run_script(&mut m, &sha, &[], &[], true),
        err("ERR Write commands are not allowed from read-only scripts.")
    );
    let (sha, _) = s.resolve(b"#!lua\nreturn 1", false).unwrap();
    assert_eq!(
        s.run_script(&mut m, &sha, &[], &[], true),
        err("ERR Can not execute a script with write flag using *_ro command.")
    );
    let (sha, _) = s
        .resolve(
            b"#!lua flags=no-writes\nreturn redis.pcall('set','a','b')",
            false,
        )
        .unwrap();
    assert_eq!(
        s.run_script(&mut m, &sha, &[], &[], false),
        err("ERR Write commands are not allowed from read-only scripts.")
    );
    assert_eq!(
        s.resolve(b"#!lua flags=bad\nreturn 1", false).unwrap_err(),
        "ERR Unexpected flag in script shebang: bad"
    );
}

#[test]
fn the_sandbox_is_redis_sandbox() {
    let (mut s, mut m) = (scripting(), Memory::default());
    let with_sha = |body: &str, text: &str| {
        format!(
            "{text} script: {}, on @user_script:1.",
            redcodec_scripting::sha1_hex(body.as_bytes())
        )
    };
    for (body, text) in [
        (
            "return a",
            "ERR user_script:1: Script attempted to access nonexistent global variable 'a'",
        ),
        (
            "a=10",
            "ERR user_script:1: Attempt to modify a readonly table",
        ),
        (
            "redis.call = 1",
            "ERR user_script:1: Attempt to modify a readonly table",
        ),
        (
            "string.foo = 1",
            "ERR user_script:1: Attempt to modify a readonly table",
        ),
        ("rawset(_G,'x',1)", "ERR Attempt to modify a readonly table"),
        (
            "setmetatable(_G, {})",
            "ERR Attempt to modify a readonly table",
        ),
        (
            "local g = getmetatable(_G); g.__index = {}",
            "ERR user_script:1: Attempt to modify a readonly table",
        ),
        (
            "_G = {}",
            "ERR user_script:1: Attempt to modify a readonly table",
        ),
        (
            "loadfile('x')",
            "ERR user_script:1: Script attempted to access nonexistent global variable 'loadfile'",
        ),
        (
            "dofile('x')",
            "ERR user_script:1: Script attempted to access nonexistent global variable 'dofile'",
        ),
        (
            "print('x')",
            "ERR user_script:1: Script attempted to access nonexistent global variable 'print'",
        ),
        (
            "os.exit()",
            "ERR user_script:1: Script attempted to access nonexistent global variable 'os'",
        ),
    ] {
        assert_eq!(
            eval(&mut s, &mut m, body, &[], &[]),
            err(&with_sha(body, text)),
            "{body}"
        );
    }
    // Every global Redis 7.0.15 offers, less the libraries of
    // redcodec_lualib (cjson, cmsgpack, bit, struct).
    let listed = eval(
        &mut s,
        &mut m,
        "local t={} for k,v in pairs(_G) do table.insert(t, k .. ':' .. type(v)) end table.sort(t) return t",
        &[],
        &[],
    );
    let names: Vec<String> = match listed {
        RespValue::Array(items) => items
            .into_iter()
            .map(|i| match i {
                RespValue::Bulk(b) => String::from_utf8(b).unwrap(),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    };
    let redis: Vec<&str> = "ARGV:table KEYS:table _G:table _VERSION:string __redis__err__handler:function assert:function bit:table cjson:table cmsgpack:table collectgarbage:function coroutine:table error:function gcinfo:function getmetatable:function ipairs:function load:function loadstring:function math:table next:function pairs:function pcall:function rawequal:function rawget:function rawset:function redis:table select:function setmetatable:function string:table struct:table table:table tonumber:function tostring:function type:function unpack:function xpcall:function".split(' ').collect();
    assert_eq!(names, redis);
    assert_eq!(
        eval(
            &mut s,
            &mut m,
            "return ('abc'):upper() .. string.len('xy')",
            &[],
            &[]
        ),
        bulk("ABC2")
    );
    assert_eq!(
        eval(&mut s, &mut m, "return loadstring('return 1')()", &[], &[]),
        RespValue::Integer(1)
    );
    let body = "return loadstring(string.dump(function() return 1 end))()";
    assert!(
        matches!(eval(&mut s, &mut m, body, &[], &[]), RespValue::Error(e) if e.contains("attempt to call a nil value"))
    );
}

#[test]
fn math_random_is_redis_rand48() {
    let (mut s, mut m) = (scripting(), Memory::default());
    // The first value after start, as redis-server 7.0.15 gives it.
    assert_eq!(
        eval(&mut s, &mut m, "return tostring(math.random())", &[], &[]),
        bulk("0.39646477363839")
    );
    let seeded = "math.randomseed(ARGV[1]); return tostring(math.random())";
    let a = eval(&mut s, &mut m, seeded, &[], &["10"]);
    let b = eval(&mut s, &mut m, seeded, &[], &["10"]);
    let c = eval(&mut s, &mut m, seeded, &[], &["20"]);
    assert_eq!(a, b);
    assert_ne!(b, c);
}

#[test]
fn script_cache_and_flush() {
    let mut s = scripting();
    let sha = s.load_script(b"return 1").unwrap();
    assert_eq!(sha, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
    assert!(s.script_exists(sha.to_uppercase().as_bytes()));
    s.flush_scripts().unwrap();
    assert!(!s.script_exists(sha.as_bytes()));
    assert_eq!(
        s.resolve(sha.as_bytes(), true).unwrap_err(),
        "NOSCRIPT No matching script. Please use EVAL."
    );
    assert!(s
        .load_script(b"return (")
        .unwrap_err()
        .starts_with("ERR Error compiling script (new function): user_script:1:"));
}

#[test]
fn memory_limit_gives_an_error() {
    let (mut s, mut m) = (scripting(), Memory::default());
    s.set_memory_limit(8 << 20).unwrap();
    let grow = "local t = {} for i=1,10000000 do t[i] = i .. 'x' end return #t";
    // The limit holds from the start, and after a command's reply was
    // handed to the script (converted with the limit lifted).
    for script in [
        grow.to_string(),
        format!("redis.call('SET', 'k', 'v') {grow}"),
    ] {
        let r = eval(&mut s, &mut m, &script, &[], &[]);
        assert!(
            matches!(&r, RespValue::Error(e) if e.contains("not enough memory")),
            "{script}: {r:?}"
        );
        // The state is usable afterwards.
        assert_eq!(
            eval(&mut s, &mut m, "return 7", &[], &[]),
            RespValue::Integer(7)
        );
    }
}

#[test]
fn function_libraries() {
    let (mut s, mut m) = (scripting(), Memory::default());
    let code = b"#!lua name=mylib\nredis.register_function('f1', function(keys, args) return redis.call('incr', keys[1]) end)\nredis.register_function{function_name='f2', callback=function() return 'x' end, flags={'no-writes'}, description='d'}";
    assert_eq!(s.functions_mut().load(code, false).unwrap(), "mylib");
    assert_eq!(
        s.functions_mut().load(code, false).unwrap_err(),
        "ERR Library 'mylib' already exists"
    );
    assert_eq!(s.functions_mut().load(code, true).unwrap(), "mylib");
    assert_eq!(
        s.call_function(&mut m, b"f1", &[Bytes::from_static(b"k")], &[], false),
        RespValue::Integer(1)
    );
    assert_eq!(s.call_function(&mut m, b"f2", &[], &[], true), bulk("x"));
    assert_eq!(
        s.call_function(&mut m, b"f1", &[Bytes::from_static(b"k")], &[], true),
        err("ERR Can not execute a script with write flag using *_ro command.")
    );
    assert_eq!(
        s.call_function(&mut m, b"nosuch", &[], &[], false),
        err("ERR Function not found")
    );
    assert_eq!(
        s.functions_mut()
            .load(
                b"#!lua name=other\nredis.register_function('f1', function() end)",
                false
            )
            .unwrap_err(),
        "ERR Function f1 already exists"
    );
    assert_eq!(
        s.functions_mut()
            .load(b"#!lua name=x\nreturn 1", false)
            .unwrap_err(),
        "ERR No functions registered"
    );
    assert_eq!(
        s.functions_mut().load(b"#!lua name=x\nlocal a = string.len('x')", false).unwrap_err(),
        "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'string'"
    );
    assert_eq!(
        s.functions_mut().load(b"#!lua name=x\nredis.register_function('a b', function() end)", false).unwrap_err(),
        "ERR Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
    );
    assert_eq!(
        s.functions_mut()
            .load(b"#!lua name=x\nwhile true do end", false)
            .unwrap_err(),
        "ERR Error registering functions: ERR FUNCTION LOAD timeout"
    );
    assert_eq!(
        s.functions_mut().load(b"return 1", false).unwrap_err(),
        "ERR Missing library metadata"
    );
}

#[test]
fn evals_do_not_leak_lua_memory() {
    // Redis' "EVAL does not leak in the Lua stack": under 100 KB after
    // 10000 runs of a script.
    let (mut s, mut m) = (scripting(), Memory::default());
    for _ in 0..10_000 {
        eval(
            &mut s,
            &mut m,
            "return redis.call('incr', KEYS[1])",
            &["x"],
            &[],
        );
    }
    assert_eq!(m.data[b"x".as_slice()], b"10000");
    let used = s.eval_memory();
    assert!(used < 100 * 1024, "{used} bytes");
}

#[test]
fn unpack_of_thousands_of_arguments_reaches_the_command() {
    #[derive(Default)]
    struct Count(usize);
    impl CommandRunner for Count {
        fn call(&mut self, args: &[Bytes], _: bool, _: bool) -> Result<RespValue, String> {
            self.0 = args.len();
            Ok(RespValue::Integer(args.len() as i64 - 2))
        }
        fn exists(&self, _: &[u8]) -> bool {
            true
        }
    }
    let mut s = scripting();
    let body =
        b"local a = {} for i=1,7999 do a[i] = 1 end return redis.call('lpush', 'l', unpack(a))";
    let (sha, _) = s.resolve(body, false).unwrap();
    let mut c = Count::default();
    assert_eq!(
        s.run_script(&mut c, &sha, &[], &[], false),
        RespValue::Integer(7999)
    );
    assert_eq!(c.0, 8001);
    let (mut s, mut m) = (scripting(), Memory::default());
    for body in [
        "return {unpack({1,2,3}, -2, 2147483647)}",
        "return {unpack({1,2,3}, 0, 2147483647)}",
        "return {unpack({1,2,3}, -2147483648, -2)}",
    ] {
        let r = eval(&mut s, &mut m, body, &[], &[]);
        assert!(
            matches!(&r, RespValue::Error(e) if e.contains("too many results to unpack")),
            "{body}: {r:?}"
        );
    }
    assert_eq!(
        eval(&mut s, &mut m, "return {unpack({1,2,3}, 2)}", &[], &[]),
        RespValue::Array(vec![RespValue::Integer(2), RespValue::Integer(3)])
    );
}

#[test]
fn a_fresh_state_is_small() {
    let s = scripting();
    let used = s.eval_memory();
    assert!(used < 80 * 1024, "{used} bytes");
}

/// Lua code of the state run outside any script's run (as a coroutine or
/// a kept function could try): `redis.pcall` raises too, as in Redis.
#[test]
fn redis_call_outside_a_run_raises_even_from_pcall() {
    let sandbox = redcodec_scripting::Sandbox::new(
        Arc::new(redcodec_scripting::RunControl::default()),
        Arc::new(parking_lot::Mutex::new(
            redcodec_scripting::rand48::Rand48::default(),
        )),
        Arc::new(|_, _| {}),
    )
    .expect("Lua starts");
    let outside = |code: &str| -> (bool, String) {
        sandbox
            .lua()
            .load(code)
            .set_environment(sandbox.env().clone())
            .call(())
            .unwrap()
    };
    let expect = |what: &str| {
        (
            false,
            format!("ERR {what} can only be called inside a script invocation"),
        )
    };
    for _ in 0..2 {
        assert_eq!(
            outside("return pcall(redis.pcall, 'get', 'k')"),
            expect("redis.call/pcall")
        );
        assert_eq!(
            outside("return pcall(redis.call, 'get', 'k')"),
            expect("redis.call/pcall")
        );
        assert_eq!(
            outside("return pcall(redis.setresp, 3)"),
            expect("redis.setresp")
        );
        // Outside a run before its arguments are read.
        for args in [", 'get'", ", {}", ""] {
            assert_eq!(
                outside(&format!("return pcall(redis.acl_check_cmd{args})")),
                expect("redis.acl_check_cmd")
            );
        }
        // A run ended by its error leaves no runner and no context behind.
        let f = sandbox
            .compile(b"redis.setresp(3) error('stop')", "@user_script")
            .unwrap();
        let inv = redcodec_scripting::sandbox::Invocation {
            name: "f",
            keys: &[],
            args: &[],
            as_function: false,
            read_only: false,
        };
        let reply = sandbox.run(&mut Memory::default(), &f, &inv).into_reply();
        assert!(
            matches!(&reply, RespValue::Error(e) if e.contains("stop")),
            "{reply:?}"
        );
    }
}

/// A runner that panics (a bug of the server) does not unwind through
/// Lua's C frames: the script stops and the panic reaches the caller of
/// the run, message and all, even past the script's own `pcall`.
#[test]
fn a_panic_of_the_runner_reaches_the_caller_of_the_run() {
    struct Panics;
    impl CommandRunner for Panics {
        fn call(&mut self, _: &[Bytes], _: bool, _: bool) -> Result<RespValue, String> {
            panic!("runner bug");
        }
        fn exists(&self, _: &[u8]) -> bool {
            panic!("runner bug");
        }
    }
    for body in [
        "return redis.call('get', 'k')",
        "pcall(redis.pcall, 'get', 'k') return 1",
        "pcall(redis.acl_check_cmd, 'get') return 1",
    ] {
        let mut s = scripting();
        let (sha, _) = s.resolve(body.as_bytes(), false).unwrap();
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.run_script(&mut Panics, &sha, &[], &[], false)
        }));
        let panic = run.expect_err(body);
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"runner bug"), "{body}");
        // The state serves the next run.
        let mut m = Memory::default();
        assert_eq!(
            eval(&mut s, &mut m, "return redis.call('incr', 'n')", &[], &[]),
            RespValue::Integer(1)
        );
    }
}

/// A runner for a lane's run: gives the run up at a key it does not hold.
struct Holding<'a> {
    memory: &'a mut Memory,
    held: &'a [&'a str],
    control: Arc<redcodec_scripting::RunControl>,
}

impl CommandRunner for Holding<'_> {
    fn call(&mut self, args: &[Bytes], resp3: bool, read_only: bool) -> Result<RespValue, String> {
        if args[1..]
            .iter()
            .any(|k| !self.held.iter().any(|h| h.as_bytes() == k))
        {
            self.control.give_up();
        }
        if self.control.gave_up() {
            return Err("ERR gave up".into());
        }
        self.memory.call(args, resp3, read_only)
    }

    fn exists(&self, name: &[u8]) -> bool {
        self.memory.exists(name)
    }
}

#[test]
fn a_lane_runs_cached_scripts_and_gives_up_past_its_keys_or_its_time() {
    let mut s = scripting();
    let mut lane = s.lane().unwrap();
    let mut memory = Memory::default();
    let key = |k: &str| vec![Bytes::copy_from_slice(k.as_bytes())];
    let mut load = |body: &str| s.load_script(body.as_bytes()).unwrap();
    let incr = load("return redis.call('INCR', KEYS[1])");
    let read = load("#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])");
    let caught_text = "local r = redis.pcall('GET', 'other') return redis.call('INCR', KEYS[1])";
    let caught = load(caught_text);
    let long = load("local x = 0 for i = 1, 100000000 do x = x + i end return x");
    let mut run = |s: &Scripting, lane: &mut redcodec_scripting::Lane, sha: &str, ro: bool| {
        let script = s.lane_script(sha).expect("cached");
        let control = lane.control_handle();
        let mut runner = Holding {
            memory: &mut memory,
            held: &["k"],
            control,
        };
        lane.run_script(&mut runner, &script, &key("k"), &[], ro)
    };
    assert_eq!(
        run(&s, &mut lane, &incr, false),
        Some(RespValue::Integer(1))
    );
    assert_eq!(run(&s, &mut lane, &read, true), Some(bulk("1")));
    // EVALSHA_RO: the runner refuses the write, as the EVAL state's runs.
    let refused = run(&s, &mut lane, &incr, true);
    assert!(
        matches!(&refused, Some(RespValue::Error(e))
            if e.starts_with("ERR Write commands are not allowed from read-only scripts")),
        "{refused:?}"
    );
    // Past its keys: the error caught by pcall, the run still given up.
    assert_eq!(run(&s, &mut lane, &caught, false), None);
    assert!(lane.control().gave_up());
    // Past its time (no one waits for a lane: it gives up).
    assert_eq!(run(&s, &mut lane, &long, false), None);
    assert_eq!(
        run(&s, &mut lane, &incr, false),
        Some(RespValue::Integer(2))
    );
    assert!(!lane.control().gave_up());
    // A script that reached past its keys is marked, until SCRIPT FLUSH.
    assert!(!s.lane_script(&caught).unwrap().stray);
    s.mark_stray(&caught);
    assert!(s.lane_script(&caught).unwrap().stray);
    assert!(!s.lane_script(&incr).unwrap().stray);
    // After SCRIPT FLUSH the lane meets the cache's scripts afresh.
    s.flush_scripts().unwrap();
    assert!(s.lane_script(&incr).is_none());
    let mut load = |body: &str| s.load_script(body.as_bytes()).unwrap();
    let again = load("return redis.call('INCR', KEYS[1])");
    let caught_again = load(caught_text);
    assert_eq!(
        run(&s, &mut lane, &again, false),
        Some(RespValue::Integer(3))
    );
    assert!(!s.lane_script(&caught_again).unwrap().stray);
}
