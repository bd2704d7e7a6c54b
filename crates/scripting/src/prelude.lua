-- redcodec's Lua side of the sandbox, run once in a fresh state before the
-- globals are locked. It receives the Rust primitives (`native`) and
-- returns the pieces the Rust side drives (see sandbox.rs).
--
-- Stock Lua 5.1 has no read-only tables (Redis patches its Lua for them),
-- so tables reachable from the globals are replaced by empty proxies whose
-- metatable reads through to the real table and refuses every write; the
-- builtins that bypass metatables (rawset, setmetatable, rawget, next,
-- pairs, ipairs, unpack) see through or refuse proxies.

local native = ...
local G = _G
local dbg = debug
local INTERNAL = "=redcodec"

local type, error, tostring, select = type, error, tostring, select
local raw_setmetatable, raw_getmetatable = setmetatable, getmetatable
local raw_rawset, raw_rawget, raw_next = rawset, rawget, next
local raw_pairs, raw_ipairs, raw_unpack = pairs, ipairs, unpack
local raw_pcall, raw_loadstring, raw_setfenv = pcall, loadstring, setfenv
local concat = table.concat
local floor = math.floor

local READONLY = "Attempt to modify a readonly table"

-- proxy -> the table it protects (weak keys).
local real = raw_setmetatable({}, { __mode = "k" })

local function readonly_write()
  error(READONLY, 2)
end

local function nonexistent(_, name)
  error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
end

local protect
-- A proxy for `t`, its nested tables protected too; `shown` is what
-- getmetatable(proxy) gives.
local function proxy_of(t, shown)
  local p = {}
  real[p] = t
  raw_setmetatable(p, { __index = t, __newindex = readonly_write, __metatable = shown })
  return p
end

protect = function(t, seen)
  if real[t] then
    return t
  end
  if seen[t] then
    return seen[t]
  end
  local p = proxy_of(t, false)
  seen[t] = p
  for k, v in raw_next, t do
    if type(v) == "table" and not real[v] then
      raw_rawset(t, k, protect(v, seen))
    end
  end
  return p
end

local function unwrap(t)
  return real[t] or t
end

-- Error handler: the error as a table {err=…, source=…, line=…}, the
-- position being the script's own frame (C frames and this file's
-- wrappers skipped).
local function handler(err)
  local level = 2
  local i = dbg.getinfo(level, "nSl")
  while i and (i.what == "C" or i.what == "tail" or i.source == INTERNAL) do
    level = level + 1
    i = dbg.getinfo(level, "nSl")
  end
  if type(err) ~= "table" then
    err = { err = "ERR " .. tostring(err) }
  elseif real[err] then
    err = { err = "ERR " .. tostring(err) }
  end
  if i then
    err["source"] = i.source
    err["line"] = i.currentline
  end
  return err
end

-- Builtins that would bypass the proxies.
G.setmetatable = function(t, mt)
  if real[t] then
    error(READONLY, 0)
  end
  return raw_setmetatable(t, mt)
end
G.rawset = function(t, k, v)
  if real[t] then
    error(READONLY, 0)
  end
  return raw_rawset(t, k, v)
end
G.rawget = function(t, k)
  return raw_rawget(unwrap(t), k)
end
G.next = function(t, k)
  return raw_next(unwrap(t), k)
end
G.pairs = function(t)
  if real[t] then
    return raw_next, real[t], nil
  end
  return raw_pairs(t)
end
G.ipairs = function(t)
  return raw_ipairs(unwrap(t))
end
-- Stock Lua 5.1's unpack overflows on huge ranges (Redis patched its
-- copy): such ranges are refused here first.
-- (Called with as many arguments as given: the stack room the C
-- function checks counts them.)
local INT_MAX = 2147483647
G.unpack = function(t, ...)
  local real_t = unwrap(t)
  local n = select("#", ...)
  local i, j = ...
  if type(real_t) == "table" then
    local first = i == nil and 1 or tonumber(i)
    local last = j == nil and #real_t or tonumber(j)
    if first and last then
      first = first >= 0 and floor(first) or -floor(-first)
      last = last >= 0 and floor(last) or -floor(-last)
      if first <= last and (last - first >= INT_MAX or first < -INT_MAX - 1 or last > INT_MAX) then
        error("too many results to unpack", 0)
      end
    end
  end
  if n == 0 then
    return raw_unpack(real_t)
  elseif n == 1 then
    return raw_unpack(real_t, i)
  end
  return raw_unpack(real_t, ...)
end

-- Redis 7's pcall: an error table {err=…} is caught as its message.
local function pcall_result(ok, ...)
  if ok then
    return ok, ...
  end
  local e = ...
  if type(e) == "table" and not real[e] then
    local m = raw_rawget(e, "err")
    if type(m) == "string" or type(m) == "number" then
      return false, m
    end
  end
  return false, e
end
G.pcall = function(...)
  return pcall_result(raw_pcall(...))
end

-- The environment scripts run in (set by `finish`).
local env

-- Chunks loaded by a script run in its environment; binary chunks are
-- refused, as Redis' Lua refuses them.
G.loadstring = function(s, name)
  if type(s) == "string" and s:sub(1, 1) == "\27" then
    return nil, "binary chunks are not allowed"
  end
  local f, e = raw_loadstring(s, name)
  if f then
    raw_setfenv(f, env)
  end
  return f, e
end
G.load = function(reader, name)
  local parts = {}
  while true do
    local piece = reader()
    if piece == nil or piece == "" then
      break
    end
    parts[#parts + 1] = piece
  end
  return G.loadstring(concat(parts), name)
end

-- Globals Redis 7.0 does not offer.
for _, name in raw_ipairs({ "print", "dofile", "loadfile", "getfenv", "setfenv", "module",
                            "require", "newproxy", "debug", "package", "os", "io" }) do
  raw_rawset(G, name, nil)
end

-- The run context: `active` for the length of one run (`run`), and the
-- replication flags the script set. (The RESP version it asked for is
-- kept by the Rust side, which converts the replies: `native.set_resp`.)
local ctx = { repl = 3, active = false }

local function outside(what)
  error({ err = "ERR " .. what .. " can only be called inside a script invocation" }, 0)
end

local function push_error(text)
  -- luaPushErrorBuff: "-CODE msg" keeps its code, anything else gets ERR.
  local code, msg
  if text:sub(1, 1) == "-" then
    local space = text:find(" ", 1, true)
    if space then
      code, msg = text:sub(2, space - 1), text:sub(space + 1)
    else
      code, msg = "ERR", text:sub(2)
    end
  else
    code, msg = "ERR", text
  end
  msg = msg:gsub("[\r\n]+$", "")
  return { err = code .. " " .. msg }
end

local redis = {}
-- redis.call, redis.pcall and redis.acl_check_cmd are C functions
-- (sandbox.rs), so that a script's `return redis.call(…)` keeps the
-- script's frame for the error position, as Redis' C functions do.
redis.call = native.call
redis.pcall = native.pcall
redis.acl_check_cmd = native.acl_check_cmd
redis.error_reply = function(...)
  local s = ...
  if select("#", ...) ~= 1 or type(s) ~= "string" then
    return push_error("wrong number or type of arguments")
  end
  if s:sub(1, 1) ~= "-" then
    s = "-" .. s
  end
  return push_error(s)
end
redis.status_reply = function(...)
  local s = ...
  if select("#", ...) ~= 1 or type(s) ~= "string" then
    return push_error("wrong number or type of arguments")
  end
  return { ok = s }
end
redis.sha1hex = function(...)
  if select("#", ...) ~= 1 then
    error(push_error("wrong number of arguments"), 0)
  end
  return native.sha1hex((...))
end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.log = function(...)
  local n = select("#", ...)
  if n < 2 then
    error(push_error("redis.log() requires two arguments or more."), 0)
  end
  local level = ...
  if type(level) ~= "number" and not (type(level) == "string" and tonumber(level)) then
    error(push_error("First argument must be a number (log level)."), 0)
  end
  level = math.floor(tonumber(level))
  if level < 0 or level > 3 then
    error(push_error("Invalid debug level."), 0)
  end
  local parts = {}
  for i = 2, n do
    local v = select(i, ...)
    if type(v) == "string" or type(v) == "number" then
      parts[#parts + 1] = tostring(v)
    end
  end
  native.log(level, concat(parts, " "))
end
redis.setresp = function(...)
  if not ctx.active then
    outside("redis.setresp")
  end
  if select("#", ...) ~= 1 then
    error(push_error("redis.setresp() requires one argument."), 0)
  end
  local resp = tonumber((...))
  if resp ~= 2 and resp ~= 3 then
    error(push_error("RESP version must be 2 or 3."), 0)
  end
  native.set_resp(resp == 3)
end
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.set_repl = function(...)
  if not ctx.active then
    outside("redis.set_repl")
  end
  if select("#", ...) ~= 1 then
    error(push_error("redis.set_repl() requires two arguments."), 0)
  end
  local flags = tonumber((...)) or 0
  if flags ~= math.floor(flags) or flags < 0 or flags > 3 then
    error(push_error("Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."), 0)
  end
  ctx.repl = flags
end
redis.replicate_commands = function()
  return true
end
redis.breakpoint = function()
  return false
end
redis.debug = function() end
redis.REDIS_VERSION = native.version
redis.REDIS_VERSION_NUM = native.version_num
G.redis = redis

-- Redis' math.random: Lua's own code over redisLrand48.
local function checkint(v, n)
  local x = tonumber(v)
  if x == nil then
    error("bad argument #" .. n .. " to 'random' (number expected, got " ..
      (v == nil and "no value" or type(v)) .. ")", 3)
  end
  return x >= 0 and floor(x) or -floor(-x)
end
G.math.random = function(...)
  local r = native.rand()
  local n = select("#", ...)
  if n == 0 then
    return r
  elseif n == 1 then
    local u = checkint((...), 1)
    if not (1 <= u) then
      error("bad argument #1 to 'random' (interval is empty)", 2)
    end
    return floor(r * u) + 1
  elseif n == 2 then
    local l, u = ...
    l, u = checkint(l, 1), checkint(u, 2)
    if not (l <= u) then
      error("bad argument #2 to 'random' (interval is empty)", 2)
    end
    return floor(r * (u - l + 1)) + l
  end
  error("wrong number of arguments", 2)
end
G.math.randomseed = function(seed)
  local s = tonumber(seed)
  if s == nil then
    error("bad argument #1 to 'randomseed' (number expected, got " ..
      (seed == nil and "no value" or type(seed)) .. ")", 2)
  end
  native.srand(s >= 0 and floor(s) or -floor(-s))
end

G.__redis__err__handler = handler

-- One run of `f` under the error handler, in a fresh run context: a
-- function is called with the keys and args tables, a script (no
-- `as_function`) finds them in KEYS and ARGV. Gives true and its result,
-- or false and the error table. (A run stopped by SCRIPT KILL raises out
-- of here instead, and the Rust side ends the context: `ctx_end`.)
local function run(f, keys, args, as_function)
  ctx.repl, ctx.active = 3, true
  local ok, v
  if as_function then
    ok, v = xpcall(function()
      return f(keys, args)
    end, handler)
  else
    raw_rawset(G, "KEYS", keys)
    raw_rawset(G, "ARGV", args)
    ok, v = xpcall(f, handler)
  end
  ctx.active = false
  return ok, v
end

-- Ends the run context after a run that raised out of `run`.
local function ctx_end()
  ctx.active = false
end

-- Locks the globals: called after the libraries are loaded. Returns the
-- environment scripts run in.
local function finish()
  local seen = {}
  for k, v in raw_next, G do
    if type(v) == "table" and v ~= G then
      raw_rawset(G, k, protect(v, seen))
    end
  end
  -- Strings' methods read through the protected string table.
  local string_meta = raw_getmetatable("")
  if string_meta then
    string_meta.__index = raw_rawget(G, "string")
    string_meta.__metatable = proxy_of(string_meta, false)
  end
  local shown = proxy_of({ __index = nonexistent }, false)
  env = proxy_of(G, shown)
  raw_rawset(G, "_G", env)
  raw_setmetatable(G, { __index = nonexistent })
  return env
end

-- Function libraries (FUNCTION LOAD): the library's code runs in an
-- environment where only `redis.register_function`, `redis.log` and the
-- version fields exist; its functions later run in the full globals
-- (Redis swaps the `__index` of the same globals table the same way).
local library -- the library being loaded: a list of registrations
local function register_error(text)
  error({ err = "ERR " .. text }, 0)
end
local function read_flags(t)
  local flags = {}
  local j = 1
  while true do
    local f = t[j]
    if f == nil then
      break
    end
    if type(f) ~= "string" and type(f) ~= "number" then
      return nil
    end
    local known = native.flag(tostring(f))
    if not known then
      return nil
    end
    flags[#flags + 1] = known
    j = j + 1
  end
  return flags
end
local function register_function(...)
  if not library then
    register_error("redis.register_function can only be called on FUNCTION LOAD command")
  end
  local n = select("#", ...)
  if n < 1 or n > 2 then
    register_error("wrong number of arguments to redis.register_function")
  end
  local name, callback, desc, flags
  if n == 1 then
    local t = ...
    if type(t) ~= "table" then
      register_error("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
    end
    for k, v in raw_next, t do
      if type(k) ~= "string" and type(k) ~= "number" then
        register_error("named argument key given to redis.register_function is not a string")
      end
      local key = tostring(k):lower()
      if key == "function_name" then
        if type(v) ~= "string" and type(v) ~= "number" then
          register_error("function_name argument given to redis.register_function must be a string")
        end
        name = tostring(v)
      elseif key == "description" then
        if type(v) ~= "string" and type(v) ~= "number" then
          register_error("description argument given to redis.register_function must be a string")
        end
        desc = tostring(v)
      elseif key == "callback" then
        if type(v) ~= "function" then
          register_error("callback argument given to redis.register_function must be a function")
        end
        callback = v
      elseif key == "flags" then
        if type(v) ~= "table" then
          register_error("flags argument to redis.register_function must be a table representing function flags")
        end
        flags = read_flags(v)
        if not flags then
          register_error("unknown flag given")
        end
      else
        register_error("unknown argument given to redis.register_function")
      end
    end
    if not name then
      register_error("redis.register_function must get a function name argument")
    end
    if not callback then
      register_error("redis.register_function must get a callback argument")
    end
  else
    local a, b = ...
    if type(a) ~= "string" and type(a) ~= "number" then
      register_error("first argument to redis.register_function must be a string")
    end
    if type(b) ~= "function" then
      register_error("second argument to redis.register_function must be a function")
    end
    name, callback = tostring(a), b
  end
  local err = native.check_function(name, library.names)
  if err then
    register_error(err)
  end
  library.names[name] = true
  library.list[#library.list + 1] = { name = name, callback = callback, desc = desc, flags = flags or {} }
end

local function_env, set_loading
do
  local load_redis = {
    register_function = register_function,
    log = redis.log,
    LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
    REDIS_VERSION = native.version,
    REDIS_VERSION_NUM = native.version_num,
  }
  raw_setmetatable(load_redis, { __index = nonexistent })
  local load_api = { redis = proxy_of(load_redis, false) }
  raw_setmetatable(load_api, { __index = nonexistent })
  local mt = { __index = G, __newindex = readonly_write, __metatable = false }
  function_env = {}
  real[function_env] = G
  raw_setmetatable(function_env, mt)
  set_loading = function(on)
    mt.__index = on and load_api or G
  end
end

-- Runs a library's compiled code in the load environment: true and the
-- registrations ({name, callback, desc, flags}), or false and the error.
local function load_library(f)
  library = { names = {}, list = {} }
  set_loading(true)
  local ok, err = raw_pcall(f)
  set_loading(false)
  local list = library.list
  library = nil
  if not ok then
    return false, err
  end
  return true, list
end

return {
  run = run, ctx_end = ctx_end, finish = finish,
  function_env = function() return function_env end, load_library = load_library,
}
