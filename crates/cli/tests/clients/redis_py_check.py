"""redis-py against a Redis-compatible server, in RESP2 and RESP3.

Usage: python redis_py_check.py HOST:PORT PASSWORD LABEL [--expiry-through-second]

The server must require PASSWORD (`requirepass`). `--expiry-through-second`
declares nemo's expiry rule: a key given an absolute expiry at second `t`
lives through the whole of `t` (EXPIRETIME `t + 1`, PEXPIRETIME
`t * 1000 + 999`).

Every check goes through redis-py's own methods and compares the Python
values it returns (dicts, sets, floats, tuples, exceptions) with values
computed from the commands themselves. The same script passes against
redis-server 7.0.15, so what it expects is what Redis answers. It flushes
the server's current database. It prints one line per protocol and exits
with status 1 on the first difference.
"""

import sys
import threading
import time

import redis
from redis.exceptions import AuthenticationError, ResponseError, WatchError

TYPE_ERROR = "WRONGTYPE Operation against a key holding the wrong kind of value"
HELLO_NOAUTH = (
    "HELLO must be called with the client already authenticated, otherwise the "
    "HELLO AUTH <user> <pass> option can be used to authenticate the client and "
    "select the RESP protocol version at the same time"
)
NOT_INTEGER = "value is not an integer or out of range"


def same(got, want):
    """Equal values of the same types, all the way down (1 is not True)."""
    if type(got) is not type(want):
        return False
    if isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(map(same, got, want))
    if isinstance(want, dict):
        return got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    return got == want


def expect(got, want, what):
    """Fails with both values when they differ (types included)."""
    if not same(got, want):
        if isinstance(want, set) and isinstance(got, set):
            raise AssertionError(f"{what}: extra {got - want!r}, missing {want - got!r}")
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def expect_error(text, what, call, *args, **kwargs):
    """`call` raises redis' ResponseError with exactly `text`."""
    try:
        got = call(*args, **kwargs)
    except ResponseError as e:
        expect(str(e), text, what)
        return
    raise AssertionError(f"{what}: no error, got {got!r}")


def pair(member, score, proto):
    """A (member, score) pair as redis-py gives it: a tuple from RESP2's
    flat array, a two-element list from RESP3's nested array."""
    return (member, score) if proto == 2 else [member, score]


def connect(addr, proto, password, name=None):
    host, port = addr.rsplit(":", 1)
    return redis.Redis(
        host=host,
        port=int(port),
        protocol=proto,
        password=password,
        decode_responses=True,
        client_name=name,
        socket_timeout=60,
    )


def check_auth(addr, proto, password):
    """Without the password nothing runs; a wrong one is refused; the right
    one (redis-py sends `HELLO 3 AUTH default P` in RESP3, `AUTH P` in
    RESP2) connects."""
    try:
        connect(addr, proto, None).set("k", "v")
        raise AssertionError("a command ran without AUTH")
    except AuthenticationError as e:
        # In RESP3 redis-py's first command is HELLO 3, refused as Redis refuses it.
        want = "Authentication required." if proto == 2 else HELLO_NOAUTH
        expect(str(e), want, "NOAUTH")
    try:
        connect(addr, proto, password + "x").ping()
        raise AssertionError("a wrong password was accepted")
    except AuthenticationError as e:
        expect(
            str(e),
            "invalid username-password pair or user is disabled.",
            "a wrong password",
        )
    expect(connect(addr, proto, password).ping(), True, "PING after AUTH")


def check_connection(r, other, proto):
    expect(r.ping(), True, "PING")
    expect(r.echo("hi"), "hi", "ECHO")
    hello = r.execute_command("HELLO", proto)
    if proto == 2:
        # RESP2 has no map: HELLO replies a flat array of pairs.
        hello = dict(zip(hello[::2], hello[1::2]))
    expect(hello["proto"], proto, "HELLO proto")
    expect(hello["server"], "redis", "HELLO server")
    expect(isinstance(hello["id"], int), True, "HELLO id is an integer")
    expect(r.client_setname("py-check"), True, "CLIENT SETNAME")
    expect(r.client_getname(), "py-check", "CLIENT GETNAME")
    expect(r.client_id(), hello["id"], "CLIENT ID is HELLO's id")
    mine = [c for c in r.client_list() if c["name"] == "py-check"]
    expect(len(mine), 1, "CLIENT LIST holds the named client once")
    expect(mine[0]["id"], str(hello["id"]), "CLIENT LIST id")
    names = {c["name"] for c in other.client_list()}
    expect({"py-check", "py-other"} <= names, True, f"client_name given at connect: {names}")
    expect(other.client_info()["name"], "py-other", "CLIENT INFO name")
    expect(other.client_info()["resp"], str(proto), "CLIENT INFO resp")
    expect(r.config_get("maxmemory-policy"), {"maxmemory-policy": "noeviction"}, "CONFIG GET")
    seconds, micros = r.time()
    expect(abs(seconds - time.time()) < 3600 and 0 <= micros < 1_000_000, True, "TIME")


def check_strings(r):
    expect(r.set("s", "v1"), True, "SET")
    expect(r.get("s"), "v1", "GET")
    expect(r.set("s", "v2", get=True), "v1", "SET GET")
    expect(r.set("s", "x", nx=True), None, "SET NX on a key that exists")
    expect(r.set("fresh", "x", xx=True), None, "SET XX on a missing key")
    expect(r.get("missing"), None, "GET missing")
    expect(r.mset({"a": "1", "b": "2"}), True, "MSET")
    expect(r.mget(["a", "missing", "b"]), ["1", None, "2"], "MGET")
    expect(r.msetnx({"a": "9", "c": "3"}), False, "MSETNX with one existing key")
    expect(r.exists("c"), 0, "MSETNX wrote nothing")
    expect(r.incr("n"), 1, "INCR")
    expect(r.incrby("n", 41), 42, "INCRBY")
    expect(r.decrby("n", 2), 40, "DECRBY")
    expect(r.incrbyfloat("f", 1.5), 1.5, "INCRBYFLOAT")
    expect(r.incrbyfloat("f", 2.25), 3.75, "INCRBYFLOAT again")
    expect(r.append("s", "-tail"), len("v2-tail"), "APPEND")
    expect(r.strlen("s"), len("v2-tail"), "STRLEN")
    expect(r.getrange("s", 0, 1), "v2", "GETRANGE")
    expect(r.setrange("s", 3, "TAIL"), len("v2-TAIL"), "SETRANGE")
    expect(r.get("s"), "v2-TAIL", "GET after SETRANGE")
    expect(r.getdel("a"), "1", "GETDEL")
    expect(r.exists("a"), 0, "GETDEL deleted")
    expect(r.setnx("a", "again"), True, "SETNX")
    expect(r.type("s"), "string", "TYPE string")
    expect_error(NOT_INTEGER, "INCR of a non-integer", r.incr, "s")


def check_hashes(r, proto):
    expect(r.hset("h", mapping={"f1": "a", "f2": "b", "n": "10"}), 3, "HSET mapping")
    expect(r.hset("h", "f1", "A"), 0, "HSET existing field")
    expect(r.hgetall("h"), {"f1": "A", "f2": "b", "n": "10"}, "HGETALL")
    expect(r.hgetall("missing"), {}, "HGETALL missing")
    expect(r.hget("h", "f2"), "b", "HGET")
    expect(r.hmget("h", ["f1", "nope", "n"]), ["A", None, "10"], "HMGET")
    expect(r.hincrby("h", "n", 5), 15, "HINCRBY")
    expect(r.hincrbyfloat("h", "x", 0.5), 0.5, "HINCRBYFLOAT")
    expect(r.hexists("h", "f1"), True, "HEXISTS")
    expect(r.hexists("h", "nope"), False, "HEXISTS missing")
    expect(r.hsetnx("h", "f1", "z"), 0, "HSETNX existing")
    expect(r.hlen("h"), 4, "HLEN")
    expect(sorted(r.hkeys("h")), ["f1", "f2", "n", "x"], "HKEYS")
    expect(sorted(r.hvals("h")), ["0.5", "15", "A", "b"], "HVALS")
    expect(r.hstrlen("h", "n"), 2, "HSTRLEN")
    expect(r.hdel("h", "f2", "nope"), 1, "HDEL")
    expect(r.hrandfield("h") in {"f1", "n", "x"}, True, "HRANDFIELD")
    got = r.hrandfield("h", 3, withvalues=True)
    if proto == 2:
        got = list(zip(got[::2], got[1::2]))  # RESP2: flat field, value, ...
    expect(sorted(map(tuple, got)), [("f1", "A"), ("n", "15"), ("x", "0.5")], "HRANDFIELD WITHVALUES")
    expect(r.type("h"), "hash", "TYPE hash")
    expect_error("hash value is not an integer", "HINCRBY of text", r.hincrby, "h", "f1")


def check_lists(r):
    expect(r.rpush("l", "b", "c"), 2, "RPUSH")
    expect(r.lpush("l", "a"), 3, "LPUSH")
    expect(r.lrange("l", 0, -1), ["a", "b", "c"], "LRANGE")
    expect(r.lindex("l", -1), "c", "LINDEX")
    expect(r.linsert("l", "before", "c", "b2"), 4, "LINSERT")
    expect(r.llen("l"), 4, "LLEN")
    expect(r.lpos("l", "b2"), 2, "LPOS")
    expect(r.lset("l", 0, "A"), True, "LSET")
    expect(r.rpush("l", "b", "b"), 6, "RPUSH duplicates")
    expect(r.lrem("l", 0, "b"), 3, "LREM")
    expect(r.lrange("l", 0, -1), ["A", "b2", "c"], "LRANGE after LREM")
    expect(r.lmove("l", "l2", "RIGHT", "LEFT"), "c", "LMOVE")
    expect(r.lpop("l"), "A", "LPOP")
    expect(r.rpush("l", "x", "y", "z"), 4, "RPUSH more")
    expect(r.lpop("l", 2), ["b2", "x"], "LPOP count")
    expect(r.rpop("l"), "z", "RPOP")
    expect(r.ltrim("l", 0, 0), True, "LTRIM")
    expect(r.lmpop(2, "nolist", "l", direction="LEFT"), ["l", ["y"]], "LMPOP")
    expect(r.exists("l"), 0, "the emptied list is gone")
    expect(r.lpop("l"), None, "LPOP missing")
    expect(r.type("l2"), "list", "TYPE list")


def check_sets(r):
    expect(r.sadd("s1", "a", "b", "c"), 3, "SADD")
    expect(r.sadd("s1", "a"), 0, "SADD existing")
    expect(r.sadd("s2", "b", "c", "d"), 3, "SADD second")
    expect(r.smembers("s1"), {"a", "b", "c"}, "SMEMBERS")
    expect(r.smembers("missing"), set(), "SMEMBERS missing")
    expect(r.sismember("s1", "a"), 1, "SISMEMBER")
    expect(r.sismember("s1", "z"), 0, "SISMEMBER missing")
    expect(r.smismember("s1", ["a", "z", "c"]), [1, 0, 1], "SMISMEMBER")
    expect(r.sinter("s1", "s2"), {"b", "c"}, "SINTER")
    expect(r.sunion("s1", "s2"), {"a", "b", "c", "d"}, "SUNION")
    expect(r.sdiff("s1", "s2"), {"a"}, "SDIFF")
    expect(r.sintercard(2, ["s1", "s2"]), 2, "SINTERCARD")
    expect(r.sinterstore("s3", ["s1", "s2"]), 2, "SINTERSTORE")
    expect(r.scard("s3"), 2, "SCARD")
    expect(r.smove("s1", "s3", "a"), True, "SMOVE")
    expect(r.srem("s3", "a", "zz"), 1, "SREM")
    popped = r.spop("s3")
    expect(popped in {"b", "c"}, True, "SPOP")
    expect(r.smembers("s3"), {"b", "c"} - {popped}, "SPOP removed it")
    expect(r.type("s1"), "set", "TYPE set")


def check_zsets(r, proto):
    expect(r.zadd("z", {"a": 1, "b": 2.5, "c": 3}), 3, "ZADD")
    expect(r.zadd("z", {"a": 1.5}, ch=True), 1, "ZADD CH")
    expect(r.zscore("z", "a"), 1.5, "ZSCORE")
    expect(r.zscore("z", "nope"), None, "ZSCORE missing")
    expect(r.zincrby("z", 2, "a"), 3.5, "ZINCRBY")
    expect(
        r.zrange("z", 0, -1, withscores=True),
        [pair("b", 2.5, proto), pair("c", 3.0, proto), pair("a", 3.5, proto)],
        "ZRANGE WITHSCORES",
    )
    expect(r.zrange("z", 0, -1), ["b", "c", "a"], "ZRANGE")
    expect(r.zrevrange("z", 0, 0), ["a"], "ZREVRANGE")
    expect(r.zrangebyscore("z", 3, "+inf"), ["c", "a"], "ZRANGEBYSCORE")
    expect(r.zrangebyscore("z", "(2.5", 10, start=1, num=1), ["a"], "ZRANGEBYSCORE LIMIT")
    expect(r.zcount("z", "-inf", 3), 2, "ZCOUNT")
    expect(r.zrank("z", "c"), 1, "ZRANK")
    expect(r.zrevrank("z", "c"), 1, "ZREVRANK")
    expect(r.zmscore("z", ["a", "nope"]), [3.5, None], "ZMSCORE")
    expect(r.zcard("z"), 3, "ZCARD")
    expect(r.zadd("z2", {"a": 10, "d": 1}), 2, "ZADD second")
    expect(r.zunionstore("zu", ["z", "z2"]), 4, "ZUNIONSTORE")
    expect(r.zscore("zu", "a"), 13.5, "ZUNIONSTORE sums")
    expect(
        r.zinter(["z", "z2"], withscores=True),
        [pair("a", 13.5, proto)],
        "ZINTER WITHSCORES",
    )
    # Without a count, RESP3 replies one flat pair.
    expect(r.zpopmin("z"), [("b", 2.5)] if proto == 2 else ["b", 2.5], "ZPOPMIN")
    expect(r.zpopmax("z", 1), [pair("a", 3.5, proto)], "ZPOPMAX")
    expect(r.zadd("zl", {"x": 0, "y": 0, "z": 0}), 3, "ZADD lex")
    expect(r.zrangebylex("zl", "[y", "+"), ["y", "z"], "ZRANGEBYLEX")
    expect(r.zlexcount("zl", "-", "(z"), 2, "ZLEXCOUNT")
    expect(r.zremrangebyscore("zu", 0, 3), 3, "ZREMRANGEBYSCORE")
    expect(r.zrandmember("z"), "c", "ZRANDMEMBER of a one-member set")
    expect(
        r.zrandmember("z", 1, withscores=True),
        ["c", "3"] if proto == 2 else [["c", 3.0]],
        "ZRANDMEMBER WITHSCORES",
    )
    expect(r.type("z"), "zset", "TYPE zset")
    expect_error("value is not a valid float", "ZADD of a non-number", r.zadd, "z", {"m": "x"})


def check_wire_types(addr, proto, password):
    """The reply types themselves, as redis-py's parser builds them before
    any per-command callback: RESP3 maps and doubles; RESP2 arrays and bulk
    strings. (redis-py's parser reads a RESP3 set as a list, like an array.)"""
    raw = connect(addr, proto, password)
    for command in ("HGETALL", "ZSCORE", "ZRANGE", "CONFIG GET", "ZINCRBY"):
        raw.response_callbacks.pop(command, None)
    raw.hset("wire:h", mapping={"f": "v"})
    raw.zadd("wire:z", {"m": 1.5})
    resp3 = proto == 3
    expect(raw.hgetall("wire:h"), {"f": "v"} if resp3 else ["f", "v"], "HGETALL on the wire")
    expect(raw.zscore("wire:z", "m"), 1.5 if resp3 else "1.5", "ZSCORE on the wire")
    expect(raw.zincrby("wire:z", 1, "m"), 2.5 if resp3 else "2.5", "ZINCRBY on the wire")
    expect(
        raw.zrange("wire:z", 0, -1, withscores=True),
        [["m", 2.5]] if resp3 else ["m", "2.5"],
        "ZRANGE WITHSCORES on the wire",
    )
    expect(
        raw.config_get("maxmemory-policy"),
        {"maxmemory-policy": "noeviction"} if resp3 else ["maxmemory-policy", "noeviction"],
        "CONFIG GET on the wire",
    )
    raw.close()


def check_keys(r):
    expect(r.set("k1", "v"), True, "SET k1")
    expect(r.exists("k1", "k1", "nope"), 2, "EXISTS counts repeats")
    expect(r.rename("k1", "k2"), True, "RENAME")
    expect(r.copy("k2", "k3"), True, "COPY")
    expect(r.get("k3"), "v", "GET the copy")
    expect(sorted(r.keys("k*")), ["k2", "k3"], "KEYS")
    expect(r.delete("k2", "k3", "nope"), 2, "DEL")
    expect(r.type("nope"), "none", "TYPE missing")
    expect_error("no such key", "RENAME of a missing key", r.rename, "nope", "x")


def check_expiry(r, through_second):
    # Absolute times in whole seconds, so formats that keep seconds keep them exactly.
    at = int(time.time()) + 10_000
    # When the key dies: at the millisecond `at * 1000`, or at the end of second `at`.
    dies = at + 1 if through_second else at
    dies_ms = at * 1000 + 999 if through_second else at * 1000
    expect(r.set("e", "v"), True, "SET e")
    expect(r.ttl("e"), -1, "TTL without expiry")
    expect(r.expiretime("e"), -1, "EXPIRETIME without expiry")
    expect(r.ttl("nope"), -2, "TTL missing")
    expect(r.pttl("nope"), -2, "PTTL missing")
    before = time.time()
    expect(r.expireat("e", at), True, "EXPIREAT")
    ttl, pttl = r.ttl("e"), r.pttl("e")
    after = time.time()
    expect(r.expiretime("e"), dies, "EXPIRETIME")
    expect(r.pexpiretime("e"), dies_ms, "PEXPIRETIME")
    # What is left lies between the time left after the calls and before them.
    expect(dies - after - 1 <= ttl <= dies - before + 1, True, f"TTL {ttl}")
    expect(dies_ms - after * 1000 - 1000 <= pttl <= dies_ms - before * 1000 + 1000, True, f"PTTL {pttl}")
    expect(r.set("kt", "v", exat=at), True, "SET EXAT")
    expect(r.set("kt", "w", keepttl=True), True, "SET KEEPTTL")
    expect(r.expiretime("kt"), dies, "SET KEEPTTL kept the expiry")
    expect(r.set("kt", "x"), True, "SET")
    expect(r.expiretime("kt"), -1, "SET without KEEPTTL cleared the expiry")
    expect(r.persist("e"), True, "PERSIST")
    expect(r.ttl("e"), -1, "TTL after PERSIST")
    expect(r.set("ex", "v", exat=at), True, "SET EXAT")
    expect(r.expiretime("ex"), dies, "EXPIRETIME of SET EXAT")
    expect(r.getex("ex", persist=True), "v", "GETEX PERSIST")
    expect(r.expiretime("ex"), -1, "GETEX PERSIST removed the expiry")
    expect(r.pexpireat("e", 1000), True, "PEXPIREAT in the past")
    expect(r.exists("e"), 0, "a key expired in the past is gone")
    expect(r.get("e"), None, "GET of the expired key")
    expect(r.expire("nope", 100), False, "EXPIRE of a missing key")


def check_pipelines(r, proto):
    p = r.pipeline(transaction=False)
    p.set("p:s", "1").incr("p:s").hset("p:h", mapping={"a": "1"}).hgetall("p:h")
    p.zadd("p:z", {"m": 2}).zrange("p:z", 0, -1, withscores=True).get("missing")
    expect(
        p.execute(),
        [True, 2, 1, {"a": "1"}, 1, [pair("m", 2.0, proto)], None],
        "pipeline",
    )
    with r.pipeline(transaction=True) as p:
        p.incr("p:n").incr("p:n").sadd("p:set", "x").smembers("p:set")
        expect(p.execute(), [1, 2, 1, {"x"}], "MULTI/EXEC pipeline")
    p = r.pipeline(transaction=False)
    p.set("p:str", "x").lpush("p:str", "y").get("p:str")
    got = p.execute(raise_on_error=False)
    expect(got[0], True, "pipeline SET")
    expect(isinstance(got[1], ResponseError) and str(got[1]) == TYPE_ERROR, True, f"pipeline error {got[1]!r}")
    expect(got[2], "x", "pipeline goes on after an error")
    with r.pipeline(transaction=True) as p:
        p.set("p:t", "1").lpush("p:t", "2").incr("p:t")
        try:
            p.execute()
            raise AssertionError("EXEC with a failing command raised nothing")
        except ResponseError as e:
            expect(TYPE_ERROR in str(e), True, f"EXEC error {e}")
    # The other commands of the transaction ran.
    expect(r.get("p:t"), "2", "EXEC runs the commands around the failing one")


def check_watch(r, other):
    r.set("w", "1")
    with r.pipeline() as p:
        p.watch("w")
        expect(p.get("w"), "1", "GET while watching")
        other.set("w", "changed")
        p.multi()
        p.set("w", "mine")
        try:
            p.execute()
            raise AssertionError("EXEC after a conflicting write raised no WatchError")
        except WatchError:
            pass
    expect(r.get("w"), "changed", "the aborted transaction wrote nothing")

    def add_one(pipe):
        value = int(pipe.get("w2") or 0)
        pipe.multi()
        pipe.set("w2", value + 1)

    expect(r.transaction(add_one, "w2"), [True], "transaction() without a conflict")
    expect(r.get("w2"), "1", "transaction() wrote")


def wait_blocked(r, n):
    deadline = time.monotonic() + 60
    while r.info("clients")["blocked_clients"] != n:
        if time.monotonic() > deadline:
            raise AssertionError(f"never {n} blocked clients")
        time.sleep(0.005)


def check_blocking(r, other, proto):
    got = []
    waiter = threading.Thread(target=lambda: got.append(r.blpop(["bl:a", "bl:b"], timeout=0)))
    waiter.start()
    wait_blocked(other, 1)
    expect(other.rpush("bl:b", "v1", "v2"), 2, "RPUSH to wake BLPOP")
    waiter.join(60)
    expect(waiter.is_alive(), False, "BLPOP woke")
    expect(got, [("bl:b", "v1") if proto == 2 else ["bl:b", "v1"]], "BLPOP")
    expect(r.lrange("bl:b", 0, -1), ["v2"], "BLPOP took one element")
    expect(r.bzpopmin("bz:none", timeout=0.1), None, "BZPOPMIN timeout")
    expect(r.zadd("bz", {"m": 4}), 1, "ZADD for BZPOPMIN")
    expect(
        r.bzpopmin(["bz:none", "bz"], timeout=1),
        ("bz", "m", 4.0) if proto == 2 else ["bz", "m", 4.0],
        "BZPOPMIN",
    )
    expect(r.brpoplpush("bl:none", "bl:c", timeout=0.1), None, "BRPOPLPUSH timeout")
    expect(r.blmove("bl:b", "bl:c", 1, "LEFT", "RIGHT"), "v2", "BLMOVE")


def check_scan(r):
    r.flushdb()
    keys = {f"scan:{i}" for i in range(300)}
    with r.pipeline(transaction=False) as p:
        for k in keys:
            p.set(k, "v")
        p.execute()
    r.set("other", "v")

    def once(items, what):
        items = list(items)
        expect(len(items), len(set(items)), f"{what} yields nothing twice")
        return set(items)

    expect(once(r.scan_iter(match="scan:*", count=17), "scan_iter"), keys, "scan_iter")
    expect(once(r.scan_iter(count=50), "scan_iter all"), keys | {"other"}, "scan_iter all")
    expect(once(r.scan_iter(_type="string", count=50), "scan_iter TYPE"), keys | {"other"}, "scan_iter TYPE string")
    fields = {f"f{i}": str(i) for i in range(250)}
    r.hset("sh", mapping=fields)
    got = once(r.hscan_iter("sh", count=20), "hscan_iter")
    expect(got, set(fields.items()), "hscan_iter")
    members = {f"m{i}" for i in range(250)}
    r.sadd("ss", *members)
    expect(once(r.sscan_iter("ss", count=20), "sscan_iter"), members, "sscan_iter")
    scores = {f"m{i}": float(i) / 4 for i in range(250)}
    r.zadd("sz", scores)
    got = once(r.zscan_iter("sz", count=20), "zscan_iter")
    expect(got, set(scores.items()), "zscan_iter")
    expect(once(r.sscan_iter("ss", match="m1?"), "sscan_iter MATCH"), {f"m1{i}" for i in range(10)}, "sscan_iter MATCH")
    expect(once(r.scan_iter(_type="zset"), "scan_iter TYPE zset"), {"sz"}, "scan_iter TYPE zset")


def check_errors(r):
    r.set("str", "x")
    r.rpush("lst", "x")
    expect_error(TYPE_ERROR, "LPUSH to a string", r.lpush, "str", "a")
    expect_error(TYPE_ERROR, "HGET of a string", r.hget, "str", "f")
    expect_error(TYPE_ERROR, "GET of a list", r.get, "lst")
    expect_error(TYPE_ERROR, "SADD to a list", r.sadd, "lst", "a")
    expect_error(TYPE_ERROR, "ZSCORE of a list", r.zscore, "lst", "a")
    expect_error(
        "wrong number of arguments for 'get' command", "GET without a key", r.execute_command, "GET"
    )
    expect_error(
        "unknown command 'NOSUCHCMD', with args beginning with: 'a' ",
        "an unknown command",
        r.execute_command,
        "NOSUCHCMD",
        "a",
    )
    expect_error("syntax error", "SET with a bad option", r.execute_command, "SET", "k", "v", "BAD")
    expect_error("index out of range", "LSET beyond the end", r.lset, "lst", 5, "v")
    expect(r.get("str"), "x", "errors change nothing")


def check_info_and_db(r):
    info = r.info()
    expect(info["redis_version"], "7.0.15", "INFO redis_version")
    expect(info["loading"], 0, "INFO loading is parsed as an integer")
    expect(isinstance(info["connected_clients"], int), True, "INFO connected_clients")
    expect(r.info("server")["redis_version"], "7.0.15", "INFO server")
    r.flushdb()
    expect(r.dbsize(), 0, "DBSIZE after FLUSHDB")
    expect(r.info("keyspace"), {}, "INFO keyspace of an empty database")
    r.mset({"d1": "1", "d2": "2"})
    r.hset("d3", "f", "v")
    expect(r.dbsize(), 3, "DBSIZE")
    expect(r.info("keyspace")["db0"]["keys"], 3, "INFO keyspace keys")
    expect(r.flushdb(), True, "FLUSHDB")
    expect(r.dbsize(), 0, "DBSIZE after FLUSHDB")
    expect(r.get("d1"), None, "FLUSHDB removed the keys")


def run(addr, proto, password, through_second):
    check_auth(addr, proto, password)
    r = connect(addr, proto, password)
    other = connect(addr, proto, password, name="py-other")
    expect(r.flushdb(), True, "FLUSHDB")
    check_connection(r, other, proto)
    check_strings(r)
    check_hashes(r, proto)
    check_lists(r)
    check_sets(r)
    check_zsets(r, proto)
    check_wire_types(addr, proto, password)
    check_keys(r)
    check_expiry(r, through_second)
    check_pipelines(r, proto)
    check_watch(r, other)
    check_blocking(r, other, proto)
    check_scan(r)
    check_errors(r)
    check_info_and_db(r)
    r.close()
    other.close()


def main():
    addr, password, label = sys.argv[1:4]
    through_second = "--expiry-through-second" in sys.argv[4:]
    for proto in (3, 2):
        run(addr, proto, password, through_second)
        print(f"redis-py {redis.__version__} RESP{proto} on {label}: ok", flush=True)


if __name__ == "__main__":
    main()
