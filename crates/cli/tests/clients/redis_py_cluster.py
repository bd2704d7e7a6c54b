"""redis-py's RedisCluster against redcodec cluster nodes.

Usage: redis_py_cluster.py HOST PORT [PORT...]

RedisCluster reads CLUSTER SLOTS (it wants all 16384 slots covered),
runs COMMAND to learn key positions, and follows MOVED. Prints
`redis-py RedisCluster: ok` when every check passed.
"""

import sys

import redis
from redis.cluster import ClusterNode, RedisCluster


def main():
    host = sys.argv[1]
    ports = [int(p) for p in sys.argv[2:]]
    rc = RedisCluster(
        startup_nodes=[ClusterNode(host, p) for p in ports],
        decode_responses=True,
    )
    nodes = rc.get_nodes()
    assert len(nodes) == len(ports), nodes
    for i in range(300):
        assert rc.set(f"py:{i}", i)
    for i in range(300):
        assert rc.get(f"py:{i}") == str(i), i
    # Keys spread over the nodes, as their slots say.
    per_node = {}
    for i in range(300):
        node = rc.get_node_from_key(f"py:{i}")
        per_node[node.port] = per_node.get(node.port, 0) + 1
    assert len(per_node) == len(ports), per_node
    # Typed commands, hash tags, a pipeline, multi-key over slots.
    rc.hset("{user:1}h", mapping={"a": "1", "b": "2"})
    rc.rpush("{user:1}l", "x", "y")
    assert rc.hgetall("{user:1}h") == {"a": "1", "b": "2"}
    assert rc.lrange("{user:1}l", 0, -1) == ["x", "y"]
    rc.zadd("z", {"m": 2.5})
    assert rc.zscore("z", "m") == 2.5
    pipe = rc.pipeline()
    for i in range(50):
        pipe.incr(f"counter:{i}")
    assert pipe.execute() == [1] * 50
    assert rc.mset_nonatomic({f"m:{i}": str(i) for i in range(40)})
    assert rc.mget_nonatomic([f"m:{i}" for i in range(40)]) == [str(i) for i in range(40)]
    # A node answers CROSSSLOT itself when asked directly.
    node = rc.get_node_from_key("a")
    try:
        rc.execute_command("MSET", "a", "1", "b", "2", target_nodes=node)
    except redis.exceptions.ResponseError as e:
        assert "Attempted to access keys that don't hash to the same slot" in str(e), e
    else:
        raise AssertionError("MSET over two slots went through")
    assert rc.cluster_keyslot("foo") == 12182
    # Keys placed by a count, and a blocking pop whose last argument is
    # its timeout: routed by COMMAND's entries (movablekeys, last key -2).
    rc.zadd("{z}a", {"x": 1, "y": 2})
    rc.zadd("{z}b", {"y": 3})
    got = rc.zunion(["{z}a", "{z}b"], withscores=True)
    assert [(m, float(s)) for m, s in got] == [("x", 1.0), ("y", 5.0)], got
    assert rc.sintercard(2, ["{s}a", "{s}b"]) == 0
    rc.rpush("{q}b", "job")
    got = rc.blpop(["{q}a", "{q}b"], timeout=1)
    assert list(got) == ["{q}b", "job"], got
    sizes = [rc.execute_command("DBSIZE", target_nodes=n) for n in rc.get_primaries()]
    assert sum(sizes) == 300 + 2 + 1 + 50 + 40 + 2, sizes
    print("redis-py RedisCluster: ok")


if __name__ == "__main__":
    main()
