"""redis-py's Lock (Lua through EVALSHA) against a server: acquire,
extend, reacquire, release, ownership, and mutual exclusion of 8 threads,
each with its own client, incrementing a counter read-modify-write under
the lock. Prints `redis-py lock on LABEL: ok` when everything held.

usage: redis_py_lock.py HOST:PORT LABEL
"""

import sys
import threading
import time

import redis
from redis.exceptions import LockError, LockNotOwnedError

host, port = sys.argv[1].rsplit(":", 1)
label = sys.argv[2]


def client():
    return redis.Redis(host=host, port=int(port))


r = client()
r.flushall()

# Acquire, extend, reacquire, release.
lock = r.lock("lock:a", timeout=10)
assert lock.acquire(blocking=False), "acquire"
assert r.get("lock:a") == lock.local.token, "the token is stored"
assert lock.owned(), "owned"
other = r.lock("lock:a", timeout=10)
assert not other.acquire(blocking=False), "a second holder is refused"
assert lock.extend(20), "extend"
# extend adds 20 s to the PTTL left. The formats that keep expiries in
# whole seconds round each expiry up: the 10 s one when acquired (its
# PTTL up to 10,999 ms), then the extended one again (up to 999 ms more).
assert 19_000 < r.pttl("lock:a") < 32_000, r.pttl("lock:a")
assert lock.extend(5, replace_ttl=True), "extend replacing the ttl"
assert r.pttl("lock:a") <= 6_000, r.pttl("lock:a")
assert lock.reacquire(), "reacquire"
assert r.pttl("lock:a") > 6_000
lock.release()
assert r.get("lock:a") is None, "released"
try:
    lock.release()
    raise AssertionError("a released lock released again")
except LockError:
    pass

# Someone else's token: extend and release are refused by the scripts.
lock = r.lock("lock:b", timeout=10)
assert lock.acquire(blocking=False)
r.set("lock:b", "someone-else")
try:
    lock.extend(10)
    raise AssertionError("extend of a lock not owned")
except LockNotOwnedError:
    pass
try:
    lock.release()
    raise AssertionError("release of a lock not owned")
except LockNotOwnedError:
    pass
r.delete("lock:b")

# Contention: 8 threads, each its own client.
THREADS, ROUNDS = 8, 25
r.set("counter", 0)
errors = []


def worker():
    c = client()
    try:
        for _ in range(ROUNDS):
            with c.lock("lock:counter", timeout=30, blocking_timeout=60, sleep=0.001):
                value = int(c.get("counter"))
                time.sleep(0.0005)
                c.set("counter", value + 1)
    except Exception as e:  # reported below
        errors.append(repr(e))


threads = [threading.Thread(target=worker) for _ in range(THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
assert int(r.get("counter")) == THREADS * ROUNDS, r.get("counter")
assert r.get("lock:counter") is None
print(f"redis-py lock on {label}: ok")
