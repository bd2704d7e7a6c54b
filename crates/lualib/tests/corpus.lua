-- One script a line, each run by redis-server (EVAL) and locally.
-- Scripts that change a library's configuration use cjson.new() or
-- restore it: Redis keeps one Lua state for every script.

-- ===== cjson.encode =====
return cjson.encode(1)
return cjson.encode(-1.5)
return cjson.encode(0.1)
return cjson.encode(1/3)
return cjson.encode(1e14)
return cjson.encode(123456789012345)
return cjson.encode(12345678901234)
return cjson.encode(0.00001)
return cjson.encode(0.0001)
return cjson.encode(1e300)
return cjson.encode(-0.0)
return cjson.encode(2^53)
return cjson.encode(5e-324)
return cjson.encode("hello")
return cjson.encode("a\"b\\c/d")
return cjson.encode("\1\2\8\9\10\11\12\13\31\127 \128\255")
return cjson.encode("\0x")
return cjson.encode("caf\195\169")
return cjson.encode(true)
return cjson.encode(false)
return cjson.encode(nil)
return cjson.encode(cjson.null)
return cjson.encode({})
return cjson.encode({1, 2, 3})
return cjson.encode({1, nil, 3})
return cjson.encode({[1] = 1, [2] = 2, [4] = 4})
return cjson.encode({[10] = 1})
return cjson.encode({[11] = 1})
return cjson.encode({[1] = 1, [3] = 3, [20] = 20})
return cjson.encode({a = 1})
return cjson.encode({a = {b = {c = {1, 2}}}})
return cjson.encode({[1.5] = 1})
return cjson.encode({[0] = 1})
return cjson.encode({[-1] = 1})
return cjson.encode({1, 2, x = 3})
return cjson.encode({["1"] = 1})
return cjson.encode({[2^31] = 1})
return cjson.encode({{}, {{}}, {a = {}}})
return cjson.encode({"a/b", {c = "d\"e"}})
return cjson.encode({1, "two", true, false, cjson.null, {3}})
return cjson.encode({one = 1, two = 2, three = 3, four = 4, five = 5, six = 6, seven = 7})
return cjson.encode({alpha = "a", beta = {1, 2}, gamma = {delta = false}})
local t = {} for i = 1, 30 do t[i] = i * 1.5 end return cjson.encode(t)
local t = {} for i = 1, 20 do t["k" .. i] = i end return cjson.encode(t)
local ok, e = pcall(cjson.encode, {[12] = 1}) return e
local ok, e = pcall(cjson.encode, {[1] = 1, [100] = 1}) return e
local ok, e = pcall(cjson.encode, function() end) return e
local ok, e = pcall(cjson.encode, {f = tostring}) return e
local ok, e = pcall(cjson.encode, {[true] = 1}) return e
local ok, e = pcall(cjson.encode, {[{}] = 1}) return e
local ok, e = pcall(cjson.encode, coroutine.create(function() end)) return e
local ok, e = pcall(cjson.encode, 0/0) return e
local ok, e = pcall(cjson.encode, 1/0) return e
local ok, e = pcall(cjson.encode, {-1/0}) return e
local ok, e = pcall(cjson.encode, {[1/0] = 1}) return e
local ok, e = pcall(cjson.encode) return e
local ok, e = pcall(cjson.encode, 1, 2) return e
local ok, e = pcall(function() return cjson.encode() end) return e
local ok, e = pcall(function() local x = cjson.encode(1, 2) return x end) return e
local t = {} t[1] = t local ok, e = pcall(cjson.encode, t) return e
local t = {} t.a = t local ok, e = pcall(cjson.encode, t) return e
local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end return #cjson.encode(t)
local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end local ok, e = pcall(cjson.encode, t) return e
return cjson.encode(cjson.decode('{"a":[1,2,{"b":null}],"c":"x"}'))
cjson.encode(function() end)
return cjson.encode({1, 2, 3, [5] = 5})
return cjson.encode({[1] = "a", [2] = "b", [3] = "c", [4] = "d", [5] = "e", [6] = "f", [7] = "g", [8] = "h", [9] = "i", [10] = "j", [30] = "z"})
-- ===== cjson configuration =====
local c = cjson.new() return cjson.encode({c.encode_sparse_array()})
local c = cjson.new() c.encode_sparse_array(true) return c.encode({[1] = 1, [100] = 2})
local c = cjson.new() c.encode_sparse_array(false, 0) return c.encode({[1] = 1, [40] = 2})
local c = cjson.new() c.encode_sparse_array(false, 2, 100) return c.encode({[1] = 1, [40] = 2})
local c = cjson.new() return cjson.encode({c.encode_sparse_array("on", 3, 5)})
local c = cjson.new() local ok, e = pcall(c.encode_sparse_array, "maybe") return e
local c = cjson.new() local ok, e = pcall(c.encode_sparse_array, nil, -1) return e
local c = cjson.new() local ok, e = pcall(c.encode_sparse_array, nil, nil, "x") return e
local c = cjson.new() local ok, e = pcall(c.encode_sparse_array, 1, 2, 3, 4) return e
local c = cjson.new() return c.encode_max_depth()
local c = cjson.new() c.encode_max_depth(2) local ok, e = pcall(c.encode, {{{1}}}) return e
local c = cjson.new() c.encode_max_depth(3) return c.encode({{{1}}})
local c = cjson.new() local ok, e = pcall(c.encode_max_depth, 0) return e
local c = cjson.new() local ok, e = pcall(c.encode_max_depth, "deep") return e
local c = cjson.new() local ok, e = pcall(c.encode_max_depth, 1, 2) return e
local c = cjson.new() return c.encode_max_depth("7")
local c = cjson.new() return c.encode_max_depth(5.9)
local c = cjson.new() return c.decode_max_depth()
local c = cjson.new() c.decode_max_depth(2) local ok, e = pcall(c.decode, '[[[1]]]') return e
local c = cjson.new() c.decode_max_depth(2) local ok, e = pcall(c.decode, '{"a":{"b":{}}}') return e
local c = cjson.new() c.decode_max_depth(3) return c.encode(c.decode('[[[1]]]'))
local c = cjson.new() return c.encode_number_precision()
local c = cjson.new() c.encode_number_precision(3) return c.encode({1/3, 1234.5, 0.0001234, 100})
local c = cjson.new() c.encode_number_precision(1) return c.encode({2.5, 3.5, 0.15, 95})
local c = cjson.new() local ok, e = pcall(c.encode_number_precision, 15) return e
local c = cjson.new() local ok, e = pcall(c.encode_number_precision, 0) return e
local c = cjson.new() return tostring(c.encode_keep_buffer())
local c = cjson.new() return tostring(c.encode_keep_buffer(false)) .. c.encode({1})
local c = cjson.new() return tostring(c.encode_keep_buffer("off"))
local c = cjson.new() local ok, e = pcall(c.encode_keep_buffer, "yes") return e
local c = cjson.new() return tostring(c.encode_invalid_numbers())
local c = cjson.new() c.encode_invalid_numbers(true) return c.encode({1/0, -1/0, 0/0, 1})
local c = cjson.new() return c.encode_invalid_numbers("null") .. c.encode({1/0, -1/0, 0/0, 1})
local c = cjson.new() c.encode_invalid_numbers("on") return c.encode({[1/0] = 1})
local c = cjson.new() local ok, e = pcall(c.encode_invalid_numbers, "nan") return e
local c = cjson.new() return tostring(c.decode_invalid_numbers())
local c = cjson.new() c.decode_invalid_numbers(false) local ok, e = pcall(c.decode, '[0x10]') return e
local c = cjson.new() c.decode_invalid_numbers(false) local ok, e = pcall(c.decode, '[NaN]') return e
local c = cjson.new() c.decode_invalid_numbers(false) local ok, e = pcall(c.decode, '-Infinity') return e
local c = cjson.new() c.decode_invalid_numbers(false) local ok, e = pcall(c.decode, '+1') return e
local c = cjson.new() c.decode_invalid_numbers(false) local ok, e = pcall(c.decode, '012') return e
local c = cjson.new() c.decode_invalid_numbers(false) return c.encode(c.decode('[-0.5, 0, 10, 1e2, -.5]'))
return cjson._NAME .. " " .. cjson._VERSION
local c = cjson.new() return c._NAME .. c._VERSION .. type(c.null) .. tostring(c.null == cjson.null)
local c = cjson.new() c.encode_max_depth(2) return cjson.encode_max_depth()
local n = 0 for k in pairs(cjson) do n = n + 1 end return n
local s = "" for k, v in pairs(cjson) do s = s .. k .. "," end return s
-- ===== cjson.decode =====
return cjson.encode(cjson.decode('[1,2,{"a":null}]'))
return cjson.encode(cjson.decode('  {"a" : 1 , "b":[true,false,null]}  '))
return tostring(cjson.decode('null') == cjson.null)
return type(cjson.decode('null'))
return tostring(cjson.decode('"x"'))
return cjson.decode('"a\\u00e9\\u20ac\\ud83d\\ude00\\n\\t\\/\\\\\\"\\b\\f\\r"')
return cjson.decode('"\\u0000a"')
return tostring(cjson.decode('1e2'))
return tostring(cjson.decode('-0'))
return tostring(cjson.decode('0.1'))
return tostring(cjson.decode('1E400'))
return tostring(cjson.decode('-1e-400'))
return tostring(cjson.decode('0x1F'))
return tostring(cjson.decode('-0x10'))
return tostring(cjson.decode('0x1p4'))
return tostring(cjson.decode('Infinity'))
return tostring(cjson.decode('-inf'))
return tostring(cjson.decode('+5'))
return tostring(cjson.decode('nan') ~= cjson.decode('nan'))
return tostring(cjson.decode('0012'))
return tostring(cjson.decode('123456789012345678901234567890'))
return tostring(cjson.decode('1.7976931348623157e308'))
return tostring(cjson.decode(' 42 '))
return tostring(cjson.decode(7))
return tostring(cjson.decode('true')) .. tostring(cjson.decode('false'))
return cjson.decode('[1]\0garbage')[1]
return #cjson.decode('[1,2,3,4,5]')
return cjson.decode('{"a":{"b":{"c":"deep"}}}').a.b.c
return cjson.encode(cjson.decode('{"1":1,"2":2}'))
return cjson.encode(cjson.decode('[[],{}]'))
local t = cjson.decode('{"x":1,"x":2}') return t.x
local ok, e = pcall(cjson.decode, '[1,') return e
local ok, e = pcall(cjson.decode, '') return e
local ok, e = pcall(cjson.decode, '   ') return e
local ok, e = pcall(cjson.decode, '[1 2]') return e
local ok, e = pcall(cjson.decode, '{"a" 1}') return e
local ok, e = pcall(cjson.decode, '{"a":1,}') return e
local ok, e = pcall(cjson.decode, '{1:2}') return e
local ok, e = pcall(cjson.decode, '[1,]') return e
local ok, e = pcall(cjson.decode, '{"a":1 "b":2}') return e
local ok, e = pcall(cjson.decode, '[1] x') return e
local ok, e = pcall(cjson.decode, '[1]]') return e
local ok, e = pcall(cjson.decode, 'nul') return e
local ok, e = pcall(cjson.decode, 'tru') return e
local ok, e = pcall(cjson.decode, 'falsey') return e
local ok, e = pcall(cjson.decode, 'x') return e
local ok, e = pcall(cjson.decode, '.5') return e
local ok, e = pcall(cjson.decode, '-') return e
local ok, e = pcall(cjson.decode, '-x') return e
local ok, e = pcall(cjson.decode, '1e') return e
local ok, e = pcall(cjson.decode, '0x') return e
local ok, e = pcall(cjson.decode, 'infinit') return e
local ok, e = pcall(cjson.decode, '"abc') return e
local ok, e = pcall(cjson.decode, '"a\\qb"') return e
local ok, e = pcall(cjson.decode, '"a\\u12"') return e
local ok, e = pcall(cjson.decode, '"a\\u12G4"') return e
local ok, e = pcall(cjson.decode, '"\\ud800"') return e
local ok, e = pcall(cjson.decode, '"\\ud800\\u0041"') return e
local ok, e = pcall(cjson.decode, '"\\udc00"') return e
local ok, e = pcall(cjson.decode, '"ab\0cd"') return e
local ok, e = pcall(cjson.decode, '\0[]') return e
local ok, e = pcall(cjson.decode, '[\0]') return e
local ok, e = pcall(cjson.decode, '[1,2\0,3]') return e
local ok, e = pcall(cjson.decode, '{') return e
local ok, e = pcall(cjson.decode, '{"a":') return e
local ok, e = pcall(cjson.decode, ']') return e
local ok, e = pcall(cjson.decode, ':') return e
local ok, e = pcall(cjson.decode, ',') return e
local ok, e = pcall(cjson.decode, '"\1\31"') return tostring(ok) .. tostring(e)
local ok, e = pcall(cjson.decode) return e
local ok, e = pcall(cjson.decode, nil) return e
local ok, e = pcall(cjson.decode, {}) return e
local ok, e = pcall(cjson.decode, '1', '2') return e
local ok, e = pcall(function() return cjson.decode({}) end) return e
local ok, e = pcall(function() local v = cjson.decode('[') return v end) return e
local ok, e = pcall(cjson.decode, string.rep('[', 1000) .. string.rep(']', 1000)) return tostring(ok)
local ok, e = pcall(cjson.decode, string.rep('[', 1001) .. string.rep(']', 1001)) return e
local ok, e = pcall(cjson.decode, string.rep('{"a":', 1001)) return e
cjson.decode('{"a":}')
return cjson.decode('[1,')
-- ===== cjson: raised limits, deep nesting (the C stack limit) =====
local c = cjson.new() c.decode_max_depth(100000) local ok, e = pcall(c.decode, string.rep('[', 9000)) return e
local c = cjson.new() c.decode_max_depth(100000) local ok, e = pcall(c.decode, string.rep('{"a":', 5000)) return e
local c = cjson.new() c.encode_max_depth(100000) local t = {} t[1] = t local ok, e = pcall(c.encode, t) return e
local c = cjson.new() c.encode_max_depth(100000) local t = {} t.x = t local ok, e = pcall(c.encode, t) return e
-- ===== cmsgpack.pack =====
return cmsgpack.pack(0)
return cmsgpack.pack(1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296)
return cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649)
return cmsgpack.pack(2^63 - 1024, -2^63, 2^63, 2^64)
return cmsgpack.pack(0.5, -0.25, 1.5e10, 0.1, 1/3, 1e300)
return cmsgpack.pack(1/0, -1/0, -0.0)
return cmsgpack.pack(0/0)
return cmsgpack.pack("")
return cmsgpack.pack("abc")
return cmsgpack.pack(string.rep("x", 31))
return cmsgpack.pack(string.rep("x", 32))
return cmsgpack.pack(string.rep("x", 255))
return cmsgpack.pack(string.rep("x", 256))
return #cmsgpack.pack(string.rep("x", 65535))
return cmsgpack.pack(string.rep("x", 65536)):sub(1, 8)
return cmsgpack.pack(true, false, nil)
return cmsgpack.pack({})
return cmsgpack.pack({1, 2, 3})
return cmsgpack.pack({1, nil, 3})
return cmsgpack.pack({[2] = 2})
return cmsgpack.pack({a = 1})
return cmsgpack.pack({[1.5] = "x"})
return cmsgpack.pack({[-1] = "x", [0] = "y"})
return cmsgpack.pack({1, 2, a = "b"})
return cmsgpack.pack({a = {b = {c = {}}}})
local t = {} for i = 1, 16 do t[i] = i end return cmsgpack.pack(t)
local t = {} for i = 1, 70000 do t[i] = 1 end return cmsgpack.pack(t):sub(1, 8)
local t = {} for i = 1, 20 do t["k" .. i] = i end return cmsgpack.pack(t)
local t = {} for i = 1, 70000 do t["k" .. i] = 1 end return cmsgpack.pack(t):sub(1, 5)
return cmsgpack.pack(tostring, coroutine.create(function() end), cjson.null)
local t = {} t[1] = t return cmsgpack.pack(t)
local t = {} t.a = t return cmsgpack.pack(t)
local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return cmsgpack.pack(t)
return cmsgpack.pack({[2^31] = 1})
return cmsgpack.pack({[1] = 1, [2^31] = 1})
local ok, e = pcall(cmsgpack.pack) return e
local ok, e = pcall(function() return cmsgpack.pack() end) return e
cmsgpack.pack()
return cmsgpack._NAME .. "|" .. cmsgpack._VERSION .. "|" .. cmsgpack._COPYRIGHT .. "|" .. cmsgpack._DESCRIPTION
-- ===== cmsgpack.unpack =====
return cjson.encode({cmsgpack.unpack(cmsgpack.pack(1, "two", {3, 4}, {a = 5}, true, false))})
return cjson.encode({cmsgpack.unpack(cmsgpack.pack(0.5, -1.25, 1e300, -2^63, 2^40, -2^40))})
return select('#', cmsgpack.unpack(cmsgpack.pack(nil, nil, 1)))
return select('#', cmsgpack.unpack(""))
return tostring(cmsgpack.unpack("\207\255\255\255\255\255\255\255\255"))
return tostring(cmsgpack.unpack("\207\128\0\0\0\0\0\0\0"))
return tostring(cmsgpack.unpack("\211\128\0\0\0\0\0\0\1"))
return tostring(cmsgpack.unpack("\206\255\255\255\255"))
return tostring(cmsgpack.unpack("\210\128\0\0\0"))
return tostring(cmsgpack.unpack("\209\255\254"))
return tostring(cmsgpack.unpack("\208\128"))
return tostring(cmsgpack.unpack("\204\200"))
return tostring(cmsgpack.unpack("\205\1\0"))
return tostring(cmsgpack.unpack("\224")) .. tostring(cmsgpack.unpack("\255")) .. tostring(cmsgpack.unpack("\127"))
return tostring(cmsgpack.unpack("\202\63\192\0\0"))
return tostring(cmsgpack.unpack("\203\63\240\0\0\0\0\0\1"))
return cmsgpack.unpack("\217\3abc")
return cmsgpack.unpack("\218\0\3abc")
return cmsgpack.unpack("\219\0\0\0\3abc")
return cjson.encode(cmsgpack.unpack("\220\0\2\1\2"))
return cjson.encode(cmsgpack.unpack("\221\0\0\0\2\1\2"))
return cjson.encode(cmsgpack.unpack("\222\0\1\161a\1"))
return cjson.encode(cmsgpack.unpack("\223\0\0\0\1\161a\1"))
return cjson.encode(cmsgpack.unpack("\146\192\1"))
return cjson.encode(cmsgpack.unpack("\130\1\2\3\4"))
return cjson.encode(cmsgpack.unpack("\129\161a\192"))
local ok, e = pcall(cmsgpack.unpack, "\129\192\1") return e
local ok, e = pcall(cmsgpack.unpack, "\129\203\255\248\0\0\0\0\0\0\1") return e
local ok, e = pcall(cmsgpack.unpack, "\193") return e
local ok, e = pcall(cmsgpack.unpack, "\196\1a") return e
local ok, e = pcall(cmsgpack.unpack, "\212\1\1") return e
local ok, e = pcall(cmsgpack.unpack, "\205\1") return e
local ok, e = pcall(cmsgpack.unpack, "\163ab") return e
local ok, e = pcall(cmsgpack.unpack, "\217\5ab") return e
local ok, e = pcall(cmsgpack.unpack, "\219\0\0\0\9ab") return e
local ok, e = pcall(cmsgpack.unpack, "\147\1\2") return e
local ok, e = pcall(cmsgpack.unpack, "\221\255\255\255\255") return e
local ok, e = pcall(cmsgpack.unpack) return e
local ok, e = pcall(cmsgpack.unpack, {}) return e
local ok, e = pcall(function() return cmsgpack.unpack("\193") end) return e
cmsgpack.unpack("\192\193")
return tostring(cmsgpack.unpack(5))
local ok, e = pcall(cmsgpack.unpack, string.rep("\1", 8000)) return e
return select('#', cmsgpack.unpack(string.rep("\1", 7000)))
local ok, e = pcall(cmsgpack.unpack, string.rep("\145", 5000) .. "\1") return e
local ok, e = pcall(cmsgpack.unpack, string.rep("\129\1", 5000) .. "\1") return e
-- ===== cmsgpack.unpack_one / unpack_limit =====
return cjson.encode({cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))})
return cjson.encode({cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)})
return cjson.encode({cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)})
return cjson.encode({cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 3)})
return cjson.encode({cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 0)})
return cjson.encode({cmsgpack.unpack_one("")})
local ok, e = pcall(cmsgpack.unpack_one, cmsgpack.pack(1), 5) return e
local ok, e = pcall(cmsgpack.unpack_one, cmsgpack.pack(1), -1) return e
local ok, e = pcall(cmsgpack.unpack_one, cmsgpack.pack(1), "x") return e
return cjson.encode({cmsgpack.unpack_one(cmsgpack.pack(1, 2), "1")})
return cjson.encode({cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 2)})
return cjson.encode({cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 2, 2)})
return cjson.encode({cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 10)})
return cjson.encode({cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 0)})
return cjson.encode({cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 0, 1)})
local ok, e = pcall(cmsgpack.unpack_limit, cmsgpack.pack(1, 2), -1) return e
local ok, e = pcall(cmsgpack.unpack_limit, cmsgpack.pack(1, 2)) return e
local ok, e = pcall(cmsgpack.unpack_limit, cmsgpack.pack(1, 2), 1, 3) return e
local ok, e = pcall(cmsgpack.unpack_limit, "\193", 1) return e
-- ===== bit =====
return bit.tohex(bit.bnot(0))
return bit.tobit(0xffffffff)
return bit.tobit(2^32 + 5)
return bit.tobit(-1)
return tostring(bit.tobit(1.5)) .. " " .. tostring(bit.tobit(2.5)) .. " " .. tostring(bit.tobit(-1.5))
return tostring(bit.tobit(2^52)) .. " " .. tostring(bit.tobit(2^60 + 3 * 2^10))
return tostring(bit.tobit(1e300)) .. " " .. tostring(bit.tobit(0/0)) .. " " .. tostring(bit.tobit(1/0))
return bit.tobit("0x10") + bit.tobit("  12  ")
return bit.bnot(5)
return bit.band(0xff, 0x0f, 0x3c)
return bit.bor(1, 2, 4, 8)
return bit.bxor(0xff, 0x0f)
return bit.band(-1)
return bit.lshift(1, 31)
return bit.lshift(1, 32)
return bit.lshift(1, 33)
return bit.lshift(1, -1)
return bit.rshift(-1, 28)
return bit.rshift(0x80000000, 31)
return bit.arshift(-256, 4)
return bit.arshift(0x80000000, 31)
return bit.rol(0x12345678, 8)
return bit.ror(0x12345678, 8)
return bit.rol(0x12345678, 0)
return bit.ror(1, 33)
return bit.bswap(0x12345678)
return bit.tohex(255)
return bit.tohex(255, 2)
return bit.tohex(255, -4)
return bit.tohex(65535, -2147483648)
return bit.tohex(-1, 12)
return bit.tohex(0x1234, 0)
return bit.tohex(0xabcdef, -8)
return bit.tohex(3.7, 3)
local ok, e = pcall(bit.tobit) return e
local ok, e = pcall(bit.tobit, "x") return e
local ok, e = pcall(bit.band, 1, {}) return e
local ok, e = pcall(bit.band, 1, 2, nil) return e
local ok, e = pcall(bit.lshift, 1) return e
local ok, e = pcall(bit.tohex, 1, nil) return e
local ok, e = pcall(function() return bit.bor(true) end) return e
bit.bxor(1, "y")
local s = "" for k in pairs(bit) do s = s .. k .. "," end return s
-- ===== struct =====
return struct.pack('>i2', 300)
return struct.pack('<i2', 300)
return struct.pack('i', -2)
return struct.pack('>I4', 4294967295)
return struct.pack('>I4', 4294967296)
return struct.pack('>i8', -2)
return struct.pack('>I8', 2^63)
return struct.pack('>I8', 2^64)
return struct.pack('>I8', -1)
return struct.pack('>i16', -2)
return struct.pack('<i16', 1)
return struct.pack('>i3', 0x123456)
return struct.pack('bBhHlLT', -1, 255, -2, 65535, -3, 7, 9)
return struct.pack('>bBhHlLT', -1, 255, -2, 65535, -3, 7, 9)
return struct.pack('b', 300)
return struct.pack('b', 1.9)
return struct.pack('b', -1.9)
return struct.pack('>f', 1.5) .. struct.pack('<f', 1.5)
return struct.pack('>d', 0.1) .. struct.pack('<d', -0.1)
return struct.pack('>f', 1e300)
return struct.pack('s', 'abc')
return struct.pack('c5', 'abcdefg')
return struct.pack('c0', 'abcdefg')
return struct.pack('c', 'xyz')
return struct.pack('x>i2x', 1)
return struct.pack('!4 b i', 1, 2)
return struct.pack('!b i', 1, 2)
return struct.pack('!2 b h b i b d', 1, 2, 3, 4, 5, 6)
return struct.pack('! b d', 1, 2)
return struct.pack('!8 b i3 b i5', 1, 2, 3, 4)
return struct.pack('i0', 5) .. "|"
return struct.pack('>i2', '300')
return struct.pack('c3', 12)
local ok, e = pcall(struct.pack, '>i2') return e
local ok, e = pcall(struct.pack, '>i2', 'x') return e
local ok, e = pcall(struct.pack, 'c5', 'ab') return e
local ok, e = pcall(struct.pack, 'i2c5', 1, 'ab') return e
local ok, e = pcall(struct.pack, 'z', 1) return e
local ok, e = pcall(struct.pack, 'i33', 1) return e
local ok, e = pcall(struct.pack, '!3', 1) return e
local ok, e = pcall(struct.pack, 'i99999999999', 1) return e
local ok, e = pcall(struct.pack) return e
local ok, e = pcall(struct.pack, 'c', {}) return e
local ok, e = pcall(function() return struct.pack('q') end) return e
return struct.pack('>i2\0garbage', 1)
struct.pack('y')
return cjson.encode({struct.unpack('>i2', struct.pack('>i2', 300))})
return cjson.encode({struct.unpack('<i2', '\255\255')})
return cjson.encode({struct.unpack('<I2', '\255\255')})
return cjson.encode({struct.unpack('>i3', '\128\0\0')})
return cjson.encode({struct.unpack('>i8', '\255\255\255\255\255\255\255\254')})
return cjson.encode({struct.unpack('>I8', '\255\255\255\255\255\255\255\254')})
return cjson.encode({struct.unpack('>i16', string.rep('\255', 16))})
return cjson.encode({struct.unpack('<i9', '\1\0\0\0\0\0\0\0\128')})
return cjson.encode({struct.unpack('>i9', '\128\0\0\0\0\0\0\0\1')})
return cjson.encode({struct.unpack('<i0', 'abc')})
return cjson.encode({struct.unpack('bBhHlLT', struct.pack('bBhHlLT', -1, 255, -2, 65535, -3, 7, 9))})
return cjson.encode({struct.unpack('>f>d', struct.pack('>f>d', 1.5, 0.1))})
return cjson.encode({struct.unpack('s', 'abc\0def')})
return cjson.encode({struct.unpack('ss', 'abc\0de\0')})
return cjson.encode({struct.unpack('c3', 'abcdef')})
return cjson.encode({struct.unpack('b c0', '\3abcdef')})
return cjson.encode({struct.unpack('c1 c0', '2abcdef')})
return cjson.encode({struct.unpack('xb', '\1\2')})
return cjson.encode({struct.unpack('!4 b i', struct.pack('!4 b i', 7, 8))})
return cjson.encode({struct.unpack('b', '\1\2\3', 2)})
return cjson.encode({struct.unpack('b', '\1\2\3', 3)})
return cjson.encode({struct.unpack('b', '\1\2\3', "2")})
local ok, e = pcall(struct.unpack, 'b', '\1\2\3', 4) return e
local ok, e = pcall(struct.unpack, 'b', '\1\2\3', 0) return e
local ok, e = pcall(struct.unpack, 'b', '\1\2\3', -1) return e
local ok, e = pcall(struct.unpack, 'i4', 'abc') return e
local ok, e = pcall(struct.unpack, 's', 'abc') return e
local ok, e = pcall(struct.unpack, 'c0', 'abc') return e
local ok, e = pcall(struct.unpack, 's c0', 'x\0abc') return e
local ok, e = pcall(struct.unpack, 'b c0', '\9abc') return e
local ok, e = pcall(struct.unpack, 'w', 'abc') return e
local ok, e = pcall(struct.unpack, 'b') return e
local ok, e = pcall(struct.unpack, 'b', 'a', 'x') return e
return struct.size('bBhHlLTfd')
return struct.size('!bBhHlLTfd')
return struct.size('!4 b d')
return struct.size('i3 i7 c9 x')
return struct.size('>< z q')
local ok, e = pcall(struct.size, 's') return e
local ok, e = pcall(struct.size, 'c0') return e
local ok, e = pcall(struct.size, 'b?') return e
local ok, e = pcall(struct.size, '!6') return e
local ok, e = pcall(struct.size) return e
local s = "" for k in pairs(struct) do s = s .. k .. "," end return s
-- ===== argument names in errors =====
local d = cjson.decode local ok, e = pcall(function() return d() end) return e
local t = {f = bit.tobit} local ok, e = pcall(function() return t.f() end) return e
local ok, e = pcall(function() return cjson:decode() end) return e
local ok, e = pcall(function() return bit:tobit() end) return e
local ok, e = pcall(struct.pack, '>i2i2', 1) return e
local ok, e = pcall(struct.pack, 'c2', 'ab', 5) return e
local ok, e = pcall(struct.pack, 'c2s', 'ab') return e
-- ===== round trips and mixed use =====
local s = cmsgpack.pack({1, 2, {a = "x", b = {true, false}}}) return cjson.encode(cmsgpack.unpack(s))
local v = cjson.decode('{"n":[1.5,-2,3e10],"s":"\\u00e9"}') return cmsgpack.pack(v.n) .. v.s
return struct.pack('>I4', bit.band(0xdeadbeef, 0xffffffff))
return bit.tohex(struct.unpack('>i4', '\222\173\190\239'))
local t = {} for i = 1, 100 do t[i] = i % 7 == 0 and cjson.null or i end return cjson.encode(t)
local t = {} for i = 1, 50 do t[#t + 1] = {i, tostring(i)} end return cmsgpack.pack(t)
-- ===== many values at once (Lua's 8000-slot C stack) =====
return select('#', cmsgpack.unpack(string.rep("\161a", 7990)))
local ok, e = pcall(cmsgpack.unpack, string.rep("\161a", 8000)) return e
return select('#', struct.unpack(string.rep('c1', 7000), string.rep('a', 7000)))
return #cjson.encode(cjson.decode('[' .. string.rep('"abc",', 20000) .. '1]'))
local t = {} for i = 1, 20000 do t['k' .. i] = {i} end return #cmsgpack.pack(t) .. #cjson.encode(t)
return select('#', struct.unpack(string.rep('b', 7997), string.rep('a', 8000)))
local ok, e = pcall(struct.unpack, string.rep('b', 7998), string.rep('a', 8000)) return e
return select('#', cmsgpack.unpack(string.rep("\161a", 7999)))
return select('#', cmsgpack.unpack_limit(string.rep("\161a", 7999), 7998))
local ok, e = pcall(cmsgpack.unpack_limit, string.rep("\161a", 7999), 7999) return e
-- ===== more numbers =====
local c = cjson.new() local s = "" for p = 1, 14 do c.encode_number_precision(p) s = s .. c.encode({math.pi, -1/3, 2/3 * 1e20, 1e-10 / 3}) end return s
local c = cjson.new() local s = "" for p = 1, 14 do c.encode_number_precision(p) s = s .. c.encode({0.5, 1.5, 2.5, 125, 0.125, 99.95, 1e21}) end return s
return cjson.encode({2^63, -2^63, 2^1023, 2^-1022, 2^-1074, 1e15, 1e16, 123.456e-300})
return cjson.encode({0.1 + 0.2, 100, 1e5, 1e-5, 12345678.9, 0.000123456789})
local s = "" for _, t in ipairs({'1.5e3', '-0.0', '1E-2', '0.0000001', '9007199254740993', '1e-320', '2.2250738585072011e-308', '0x1.8p1', '0x.1', '0X1P+2', '0x1p-1074', '0x1p-1075', '0x3p-1076', '0x1fffffffffffffp0', '0x1.fffffffffffff8p0', '0x123456789abcdef0123', '-0x', 'NaN', 'INF', 'iNfInItY', 'nan(123)'}) do local ok, v = pcall(cjson.decode, t) s = s .. t .. "=" .. tostring(v) .. ";" end return s
local s = "" for _, t in ipairs({'1.', '1.e5', '-.5', '00', '-01', '1e+', '1e-x', '0e0', '-0e-0', '1.5.5', '1e5e5', '--1', '+-1', '-+1', '1x'}) do local ok, v = pcall(cjson.decode, t) s = s .. t .. "=" .. tostring(v) .. ";" end return s
local c = cjson.new() c.decode_invalid_numbers(false) local s = "" for _, t in ipairs({'1.', '-.5', '00', '-01', '0.5', '-0', '0x1', '-inf', 'nan', '1e5'}) do local ok, v = pcall(c.decode, t) s = s .. t .. "=" .. tostring(v) .. ";" end return s
return tostring(cjson.decode(1e15)) .. tostring(cjson.decode(-0.5))
local ok, e = pcall(function() return cjson:encode() end) return e
local ok, e = pcall(function() return cjson:decode() end) return e
local ok, e = pcall(function() return struct:pack() end) return e
return cmsgpack.pack(1.1754943508222875e-38, 3.4028234663852886e38, 3.4028235677973366e38, 1e-45, 1.401298464324817e-45, 2^-149, 2^-150)
return cmsgpack.pack(2^31, -2^31, 2^31 - 1, -2^31 - 1, 2^53 + 1, -(2^53))
return cmsgpack.pack(0.1):byte(1) .. cmsgpack.pack(16777216):byte(1) .. cmsgpack.pack(16777217.5):byte(1)
return tostring(cmsgpack.unpack(cmsgpack.pack(0/0))) .. tostring(cmsgpack.unpack("\202\127\192\0\0"))
return tostring(bit.tobit(2^51)) .. " " .. tostring(bit.tobit(2^51 + 1)) .. " " .. tostring(bit.tobit(-2^51)) .. " " .. tostring(bit.tobit(2^53 + 2)) .. " " .. tostring(bit.tobit(-2^31 - 0.5))
return bit.band(2^40 + 7, 3) .. " " .. bit.bor(-0.5, 0) .. " " .. bit.bxor(0.5, 1.5) .. " " .. bit.tobit(0.49999999999999994)
return bit.tohex(1, 9) .. bit.tohex(1, -9) .. bit.tohex(-1, 1) .. bit.tohex(0xf0, -1)
return bit.lshift(3, 2^32 + 2) .. " " .. bit.rshift(-16, -28) .. " " .. bit.arshift(-1, 31) .. " " .. bit.rol(-1, 7) .. " " .. bit.ror(2, 1)
-- ===== more tables =====
local t = {1, 2, 3} t[5] = 5 t[4] = nil t.x = nil return cjson.encode(t)
local t = {} for i = 1, 10 do t[i] = i end for i = 1, 9 do t[i] = nil end return cjson.encode(t)
local t = {} for i = 1, 10 do t[i] = i end for i = 1, 9 do t[i] = nil end return cmsgpack.pack(t)
local t = {} t[3] = 'c' t[2] = 'b' t[1] = 'a' return cjson.encode(t) .. cmsgpack.pack(t)
local t = {x = 1, y = 2, [1] = 'a', [2.5] = 'b', [-3] = 'c', z = {}} return cjson.encode(t)
local t = {x = 1, y = 2, [1] = 'a', [2.5] = 'b', [-3] = 'c', z = {}} return cmsgpack.pack(t)
local t = {} for i = 1, 40 do t[i * 3] = i end local c = cjson.new() c.encode_sparse_array(true) return c.encode(t)
local t = {} for i = 1, 40 do t[i * 3] = i end local c = cjson.new() c.encode_sparse_array(false, 3) return c.encode(t)
local t = {} for i = 1, 40 do t[i * 3] = i end local c = cjson.new() c.encode_sparse_array(false, 1, 1) local ok, e = pcall(c.encode, t) return e
local c = cjson.new() c.encode_sparse_array(false, 1, 0) local ok, e = pcall(c.encode, {1, 2, nil, 4}) return tostring(ok) .. tostring(e)
local c = cjson.new() c.encode_sparse_array(false, 2147483647, 0) return c.encode({[1] = 1, [2147483647] = 1}):sub(1, 20)
return cjson.encode({[2147483647] = 1}):sub(1, 30)
local ok, e = pcall(cjson.encode, {[2^31 - 1] = 1, [1] = 1}) return e
return cjson.encode({["a\0b"] = "c\0d", ["\239\187\191"] = "\226\130\172"})
return cjson.encode({{{{{{{{{{{{{{{{{{{{"deep"}}}}}}}}}}}}}}}}}}}})
return cmsgpack.pack({{{{{{{{{{{{{{{{{{{{"deep"}}}}}}}}}}}}}}}}}}}})
return cjson.encode(cjson.decode('{"a":[],"b":{},"c":[{}],"d":[[]]}'))
local t = cjson.decode('[null,null,3]') return #t .. tostring(t[1] == cjson.null) .. cjson.encode(t)
local t = cjson.decode('{"a":null}') return tostring(t.a == cjson.null) .. type(t.a)
return cmsgpack.pack(cjson.decode('{"a":null,"b":[1,null]}'))
-- ===== more struct =====
return struct.pack('!2 b h !4 b i !8 b d', 1, 2, 3, 4, 5, 6)
return struct.pack('!1 b h b i b d', 1, 2, 3, 4, 5, 6)
return struct.pack('!16 b d', 1, 2)
return struct.pack('!8 b i5 b i6 b i7 b i9', 1, 2, 3, 4, 5, 6, 7, 8)
return struct.pack('! b c3 b s b', 1, 'abc', 2, 'de', 3)
return struct.size('!8 b i5 b i6 b i7 b i9') .. ' ' .. struct.size('! b h b l b T b f') .. ' ' .. struct.size('<>!4 b i')
return cjson.encode({struct.unpack('!8 b i5 b i9', struct.pack('!8 b i5 b i9', -1, -2, -3, -4))})
return cjson.encode({struct.unpack('>I3 <I3 >i3 <i3', '\1\2\3\1\2\3\255\254\253\253\254\255')})
return cjson.encode({struct.unpack('>I9', '\1\2\3\4\5\6\7\8\9')})
return cjson.encode({struct.unpack('>I16', string.rep('\255', 16))})
return cjson.encode({struct.unpack('<f<d', struct.pack('<f<d', 0.1, 0.1))})
return cjson.encode({struct.unpack('>f', '\127\192\0\1')}) == '[nan,5]'
return cjson.encode({struct.unpack('c2 c0', '11' .. string.rep('x', 11))})
return cjson.encode({struct.unpack(' b ', '\5')})
return cjson.encode({struct.unpack('b', '\1\2', 3)})
local ok, e = pcall(struct.unpack, 'b', '\1\2', 4) return e
local ok, e = pcall(struct.unpack, 'b', '\1\2', 2^70) return e
local ok, e = pcall(struct.unpack, '!3 b', 'x') return e
local ok, e = pcall(struct.unpack, 'i40', 'x') return e
local ok, e = pcall(struct.unpack, '\255', 'x') return e
local ok, e = pcall(struct.size, '\255') return e
return struct.size('bz?q') == nil
local ok, e = pcall(struct.size, 'b?') return e
-- ===== inside coroutines and through tail calls =====
local co = coroutine.wrap(function() return cjson.encode({1, {a = 2}}) end) return co()
local co = coroutine.create(function() return cjson.decode('[') end) local ok, e = coroutine.resume(co) return e
local co = coroutine.create(function() local x = struct.pack('q') return x end) local ok, e = coroutine.resume(co) return e
local function f() return bit.tobit() end local ok, e = pcall(f) return e
local function f() local v = bit.tobit() return v end local ok, e = pcall(f) return e
local ok, e = pcall(cmsgpack.unpack_limit) return e
local ok, e = xpcall(function() return cjson.encode({[true] = 1}) end, function(m) return 'handled: ' .. m end) return e
-- ===== many arguments =====
local t = {} for i = 1, 7900 do t[i] = 'x' .. i end return #cmsgpack.pack(unpack(t))
local t = {} for i = 1, 7900 do t[i] = {i} end return #cmsgpack.pack(unpack(t))
local t = {} for i = 1, 7900 do t[i] = i end return bit.bor(unpack(t))
local t = {} for i = 1, 4000 do t[i] = i end return #cmsgpack.pack(unpack(t))
local t = {} for i = 1, 4001 do t[i] = i end local ok, e = pcall(cmsgpack.pack, unpack(t)) return e
local t = {} for i = 1, 7990 do t[i] = i end return bit.bor(unpack(t))
local t = {} for i = 1, 7990 do t[i] = 'a' end return #struct.pack(string.rep('c', 7989), unpack(t))
