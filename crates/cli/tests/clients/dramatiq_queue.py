"""Dramatiq (a job-queue library from PyPI whose Redis broker runs every
queue operation as one Lua script, `dispatch.lua`, through EVALSHA)
against a server: a worker with 4 threads processes plain, delayed,
prioritised and retried jobs; results come back through dramatiq's Redis
result backend; a job that always fails ends in the dead-letter queue
after its retries. Prints `dramatiq on LABEL: ok` when everything held.

usage: dramatiq_queue.py HOST:PORT LABEL
"""

import json
import logging
import sys
import time

import dramatiq
import redis
from dramatiq.brokers.redis import RedisBroker
from dramatiq.results import Results, ResultFailure
from dramatiq.results.backends import RedisBackend

host, port = sys.argv[1].rsplit(":", 1)
label = sys.argv[2]
WAIT_MS = 60_000

# The retried jobs' tracebacks would fill the log.
logging.getLogger("dramatiq").setLevel(logging.CRITICAL)

r = redis.Redis(host=host, port=int(port))
r.flushall()

broker = RedisBroker(host=host, port=int(port))
broker.add_middleware(Results(backend=RedisBackend(client=broker.client)))
dramatiq.set_broker(broker)


@dramatiq.actor(store_results=True, max_retries=0)
def add(x, y):
    return x + y


@dramatiq.actor(store_results=True, max_retries=0, priority=0)
def urgent(x):
    return {"urgent": x}


@dramatiq.actor(store_results=True, max_retries=0, priority=100)
def slow(x):
    now = r.incr("running")
    r.execute_command("EVAL", "local m = tonumber(redis.call('get', KEYS[1]) or '0') "
                      "if tonumber(ARGV[1]) > m then redis.call('set', KEYS[1], ARGV[1]) end",
                      1, "most-running", now)
    time.sleep(0.5)
    r.decr("running")
    return x * 10


@dramatiq.actor(store_results=True, max_retries=3, min_backoff=100, max_backoff=200)
def flaky(key):
    tries = r.incr("tries:" + key)
    if tries < 3:
        raise RuntimeError(f"{key} fails on try {tries}")
    return f"{key} ok after {tries}"


@dramatiq.actor(store_results=True, max_retries=2, min_backoff=100, max_backoff=200)
def doomed(key):
    tries = r.incr("tries:" + key)
    raise ValueError(f"{key} fails on try {tries}")


N = 40
sent = [add.send(i, i) for i in range(N)]
delayed = [add.send_with_options(args=(1000, i), delay=300 + 20 * i) for i in range(5)]
urgents = [urgent.send(i) for i in range(5)]
slows = [slow.send(i) for i in range(8)]
flakies = [flaky.send(f"f{i}") for i in range(3)]
doomeds = [doomed.send(f"d{i}") for i in range(2)]

# Before any worker runs: every job waits in the queue, the delayed ones in
# the delay queue.
assert broker.client.llen("dramatiq:default") == N + 5 + 8 + 3 + 2, broker.client.llen("dramatiq:default")
assert broker.client.hlen("dramatiq:default.msgs") == N + 5 + 8 + 3 + 2
assert broker.client.llen("dramatiq:default.DQ") == 5, broker.client.llen("dramatiq:default.DQ")

worker = dramatiq.Worker(broker, worker_threads=4, worker_timeout=100)
worker.start()
try:
    for i, m in enumerate(sent):
        assert m.get_result(block=True, timeout=WAIT_MS) == 2 * i
    for i, m in enumerate(delayed):
        assert m.get_result(block=True, timeout=WAIT_MS) == 1000 + i
    for i, m in enumerate(urgents):
        assert m.get_result(block=True, timeout=WAIT_MS) == {"urgent": i}
    for i, m in enumerate(slows):
        assert m.get_result(block=True, timeout=WAIT_MS) == 10 * i
    for i, m in enumerate(flakies):
        assert m.get_result(block=True, timeout=WAIT_MS) == f"f{i} ok after 3"
        assert r.get(f"tries:f{i}") == b"3"
    for i, m in enumerate(doomeds):
        try:
            m.get_result(block=True, timeout=WAIT_MS)
            raise AssertionError(f"doomed {i} has a result")
        except ResultFailure as e:
            assert e.orig_exc_type == "ValueError", e.orig_exc_type
            assert e.orig_exc_msg == f"d{i} fails on try 3", e.orig_exc_msg
        assert r.get(f"tries:d{i}") == b"3"
    broker.join("default", timeout=WAIT_MS)
finally:
    worker.stop()

# The worker ran jobs side by side.
assert int(r.get("most-running")) >= 2, r.get("most-running")
assert r.get("running") == b"0"
# Every queue is drained; the dead letters hold the two doomed jobs, with
# their retries spent.
assert broker.client.llen("dramatiq:default") == 0
assert broker.client.llen("dramatiq:default.DQ") == 0
# A dead letter is the copy last put back for a retry: its retries spent
# (2 of 2) and the traceback of the try before the last.
dead = [json.loads(raw) for raw in broker.client.hvals("dramatiq:default.XQ.msgs")]
assert sorted(d["message_id"] for d in dead) == sorted(m.message_id for m in doomeds), dead
for d in dead:
    assert d["actor_name"] == "doomed", d
    assert d["options"]["retries"] == 2, d
    assert f"ValueError: {d['args'][0]} fails on try 2" in d["options"]["traceback"], d
assert broker.client.zcard("dramatiq:default.XQ") == 2
print(f"dramatiq on {label}: ok")
