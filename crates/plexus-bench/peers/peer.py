"""One peer engine of the Plexus benchmark, run in its own process.

Reads a JSON job on stdin (written by `plexus-bench compare`): the engine,
the folder of CSV files the generator wrote, the graph's schema, the seeds
and the workloads. Loads the files with the engine's fastest bulk path,
runs each workload `reps` times, and prints one JSON object per workload
on stdout: {"workload", "count", "seconds": [...], "engine_version",
"peak_rss_mb", "disk_mb"} or {"workload", "missing": reason}.
"""

import glob
import json
import os
import shutil
import sys
import tempfile
import time
from collections import deque


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def peak_rss_mb():
    # VmHWM, not getrusage: a child's ru_maxrss starts from its parent's
    # peak at fork, which would charge the harness's memory to the peer.
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def disk_mb(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total / 1048576.0


def timed(fn, reps):
    secs = []
    count = None
    for _ in range(reps):
        t = time.perf_counter()
        count = fn()
        secs.append(time.perf_counter() - t)
    return count, secs


KUZU_TYPES = {"string": "STRING", "int": "INT64", "float": "DOUBLE"}


# The filter of `filter_count_unindexed`: a property no engine indexes
# (plexus-bench's engine.rs names the same, UNINDEXED_FILTER).
UNINDEXED = ("kind", "delta")
# The prefix of `filter_prefix_unindexed` (engine.rs: UNINDEXED_PREFIX).
UNINDEXED_PREFIX = ("kind", "del")

class Cypher:
    """Kuzu and LadybugDB: the same embedded Cypher engine family."""

    def __init__(self, module, job, path):
        self.m = module
        self.db = module.Database(path)
        self.conn = module.Connection(self.db)
        self.job = job

    def version(self):
        return getattr(self.m, "__version__", "unknown")

    def close(self):
        for handle in (self.conn, self.db):
            if hasattr(handle, "close"):
                handle.close()

    def load(self):
        job, d = self.job, self.job["dir"]
        cols = ", ".join(f"{n} {KUZU_TYPES[t]}" for n, t in job["node_props"])
        self.conn.execute(f"CREATE NODE TABLE Node(id STRING, label STRING, {cols}, PRIMARY KEY (id))")
        for t in job["types"]:
            ecols = "".join(f", {n} {KUZU_TYPES[ty]}" for n, ty in job["edge_props"])
            self.conn.execute(f"CREATE REL TABLE {t}(FROM Node TO Node, eid STRING{ecols})")
        ext, opts = (".csv", " (HEADER=true)") if job["format"] == "csv" else (".parquet", "")
        self.conn.execute(f"COPY Node FROM '{d}/nodes{ext}'{opts}")
        for t in job["types"]:
            self.conn.execute(f"COPY {t} FROM '{d}/edges_{t}{ext}'{opts}")

    def one(self, q, params=None):
        r = self.conn.execute(q, params or {})
        return r.get_next()[0] if r.has_next() else None

    def rows(self, q, params=None):
        r = self.conn.execute(q, params or {})
        n = 0
        while r.has_next():
            r.get_next()
            n += 1
        return n

    def per_seed(self, q):
        return sum(self.one(q, {"id": s}) or 0 for s in self.seeds)

    def workloads(self):
        t = self.job["typed"]
        return {
            "neighbors": lambda: self.per_seed("MATCH (a:Node {id: $id})-[]->(b) RETURN count(*)"),
            "typed_neighbors": lambda: self.per_seed(f"MATCH (a:Node {{id: $id}})-[:{t[0]}]->(b) RETURN count(*)"),
            "reach3": lambda: self.per_seed("MATCH (a:Node {id: $id})-[*1..3]->(b:Node) WHERE b.id <> $id RETURN count(DISTINCT b)"),
            "typed_path2": lambda: self.per_seed(f"MATCH (a:Node {{id: $id}})-[:{t[0]}]->()-[:{t[1]}]->() RETURN count(*)"),
            "typed_path3": lambda: self.per_seed(f"MATCH (a:Node {{id: $id}})-[:{t[0]}]->()-[:{t[1]}]->()-[:{t[2]}]->() RETURN count(*)"),
            "count_paths3": lambda: self.per_seed("MATCH (a:Node {id: $id})-[*3..3]->(b) RETURN count(*)"),
            "count_trails3": lambda: self.per_seed("MATCH (a:Node {id: $id})-[* TRAIL 3..3]->(b) RETURN count(*)"),
            "shortest_path": lambda: sum(
                self.one("MATCH p = (a:Node {id: $a})-[* SHORTEST 1..30]->(b:Node {id: $b}) RETURN length(p)", {"a": a, "b": b}) or 0
                for a, b in zip(self.seeds, self.seeds[1:] + self.seeds[:1])
            ),
            "lookup": lambda: self.per_seed("MATCH (a:Node {id: $id}) RETURN count(*)"),
            "filter_count": lambda: self.one(f"MATCH (n:Node) WHERE n.{self.job['filter'][0]} = {self.job['filter'][1]} RETURN count(*)"),
            "filter_count_unindexed": lambda: self.one(f"MATCH (n:Node) WHERE n.{UNINDEXED[0]} = '{UNINDEXED[1]}' RETURN count(*)"),
            "filter_prefix_unindexed": lambda: self.one(
                f"MATCH (n:Node) WHERE n.{UNINDEXED_PREFIX[0]} STARTS WITH '{UNINDEXED_PREFIX[1]}' RETURN count(*)"
            ),
            "group_count_unindexed": lambda: self.one(
                f"MATCH (n:Node) RETURN count(*) AS c, n.{UNINDEXED[0]} AS k ORDER BY c DESC LIMIT 1"
            ),
            "sample5": lambda: sum(
                self.rows(f"MATCH (a:Node {{id: $id}})-[:{t[0]}]->(b) RETURN b.id LIMIT 5", {"id": s}) for s in self.seeds
            ),
            "star": lambda: self.one(f"MATCH (a:Node {{id: $id}})-[:{t[0]}]->(b) RETURN count(*)", {"id": self.seeds[0]}),
            "knows_reach2": lambda: self.per_seed(f"MATCH (a:Node {{id: $id}})-[:{t[0]}*1..2]-(b:Node) WHERE b.id <> $id RETURN count(DISTINCT b)"),
            "knows_shortest": lambda: sum(
                self.one(f"MATCH p = (a:Node {{id: $a}})-[:{t[0]}* SHORTEST 1..30]-(b:Node {{id: $b}}) RETURN length(p)", {"a": a, "b": b}) or 0
                for a, b in zip(self.seeds[0::2], self.seeds[1::2])
            ),
        }


class Gestalt:
    """GestaltDB on RocksDB (PyRex) with native Polars columnar ingestion."""

    def __init__(self, job, path):
        from gestaltdb.graphdb import GraphDB
        from gestaltdb.kvstores import PyRexStore
        from gestaltdb.serializers import JSONSerializer

        self.job = job
        filt = job["filter"][0]
        self.g = GraphDB(PyRexStore(path=path), JSONSerializer(), indexed_node_properties=[filt])

    def version(self):
        import importlib.metadata

        return importlib.metadata.version("gestaltdb")

    def load(self):
        import polars as pl

        job, d = self.job, self.job["dir"]
        read = (lambda name: pl.read_csv(f"{d}/{name}.csv")) if job["format"] == "csv" else (lambda name: pl.read_parquet(f"{d}/{name}.parquet"))
        nodes = read("nodes")
        nodes = nodes.with_columns(pl.col("id").alias("node_id"), pl.col("label").map_elements(lambda l: [l], return_dtype=pl.List(pl.String)).alias("labels"))
        self.g.ingest_nodes_polars_entities(nodes, property_columns=[n for n, _ in job["node_props"]], index_mode="maintain")
        for t in job["types"]:
            e = read(f"edges_{t}")
            e = e.rename({"src": "source", "dst": "target", "eid": "edge_id"}).with_columns(pl.lit(t).alias("edge_type"))
            self.g.ingest_edges_polars_entities(e, property_columns=[n for n, _ in job["edge_props"]], index_mode="maintain")

    def adj(self, node, t):
        return self.g.iter_typed_adjacency(self.g.node_key_to_bytes(node) if isinstance(node, str) else node, t, direction="out")

    def out(self, node):
        for t in self.job["types"]:
            for rec in self.adj(node, t):
                yield rec["neighbor_id"]

    def walks(self, node, types):
        if not types:
            return 1
        return sum(self.walks(rec["neighbor_id"], types[1:]) for rec in self.adj(node, types[0]))

    def both(self, node, t):
        for direction in ("out", "in"):
            for rec in self.g.iter_typed_adjacency(node, t, direction=direction):
                yield rec["neighbor_id"]

    def bfs(self, start, depth, step=None, target=None):
        """Client-side BFS (GestaltDB's own benchmark does the same); with a
        target, the hop count to it (0 when unreachable)."""
        step = step or self.out
        key = self.g.node_key_to_bytes(start)
        goal = self.g.node_key_to_bytes(target) if target else None
        seen = {key}
        q = deque([(key, 0)])
        while q:
            n, d = q.popleft()
            if d >= depth:
                continue
            for m in step(n):
                if m not in seen:
                    if m == goal:
                        return d + 1
                    seen.add(m)
                    q.append((m, d + 1))
        return 0 if goal else len(seen) - 1

    def workloads(self):
        t = self.job["typed"]
        return {
            "neighbors": lambda: sum(sum(1 for _ in self.out(self.g.node_key_to_bytes(s))) for s in self.seeds),
            "typed_neighbors": lambda: sum(sum(1 for _ in self.adj(s, t[0])) for s in self.seeds),
            "reach3": lambda: sum(self.bfs(s, 3) for s in self.seeds),
            "typed_path2": lambda: sum(self.walks(self.g.node_key_to_bytes(s), t[:2]) for s in self.seeds),
            "typed_path3": lambda: sum(self.walks(self.g.node_key_to_bytes(s), t[:3]) for s in self.seeds),
            "lookup": lambda: sum(1 for s in self.seeds if self.g.get_node(self.g.node_key_to_bytes(s)) is not None),
            "filter_count": lambda: self.g.count_nodes_by_property(self.job["filter"][0], self.job["filter"][1]),
            "sample5": lambda: sum(min(5, sum(1 for _ in self.adj(s, t[0]))) for s in self.seeds),
            "star": lambda: self.g.count_typed_adjacency(self.seeds[0], t[0], direction="out"),
            "knows_reach2": lambda: sum(self.bfs(s, 2, lambda n: self.both(n, t[0])) for s in self.seeds),
            "knows_shortest": lambda: sum(
                self.bfs(a, 30, lambda n: self.both(n, t[0]), target=b) for a, b in zip(self.seeds[0::2], self.seeds[1::2])
            ),
        }

    def close(self):
        self.g.close()


class GestaltQuery(Gestalt):
    """GestaltDB through its Cypher interface, GraphDB.query(), as GestaltDB's
    own external benchmark runs its traversals (bfs_depth is a client-side
    BFS over neighbour queries there too)."""

    def q(self, text, params=None):
        return self.g.query(text, params or {}).records

    def count(self, text, params):
        return next(iter(self.q(text, params)[0].values()))

    def per_seed(self, text):
        return sum(self.count(text, {"id": s}) for s in self.seeds)

    def query_bfs(self, start, depth):
        seen, frontier = {start}, [start]
        for _ in range(depth):
            nxt = []
            for n in frontier:
                for rec in self.q("MATCH (a {id: $id})-->(b) RETURN b.id AS m", {"id": n}):
                    m = rec["m"]
                    if m not in seen:
                        seen.add(m)
                        nxt.append(m)
            frontier = nxt
        return len(seen) - 1

    def workloads(self):
        t = self.job["typed"]
        return {
            "neighbors": lambda: self.per_seed("MATCH (a {id: $id})-->(b) RETURN count(*)"),
            "typed_neighbors": lambda: self.per_seed(f"MATCH (a {{id: $id}})-[:{t[0]}]->(b) RETURN count(*)"),
            "typed_path2": lambda: self.per_seed(f"MATCH (a {{id: $id}})-[:{t[0]}]->()-[:{t[1]}]->() RETURN count(*)"),
            "typed_path3": lambda: self.per_seed(f"MATCH (a {{id: $id}})-[:{t[0]}]->()-[:{t[1]}]->()-[:{t[2]}]->() RETURN count(*)"),
            "star": lambda: self.count(f"MATCH (a {{id: $id}})-[:{t[0]}]->(b) RETURN count(*)", {"id": self.seeds[0]}),
            "sample5": lambda: sum(len(self.q(f"MATCH (a {{id: $id}})-[:{t[0]}]->(b) RETURN b LIMIT 5", {"id": s})) for s in self.seeds),
            "lookup": lambda: self.per_seed("MATCH (a {id: $id}) RETURN count(*)"),
            "reach3": lambda: sum(self.query_bfs(s, 3) for s in self.seeds),
        }


class PlexusPy:
    """Plexus through its Python module (`import plexus`), as a Python user
    runs it: the same Parquet or CSV files the peers load, then each
    workload through the module's call for it (traversal and sampling
    calls where the module has one, Cypher for the rest)."""

    def __init__(self, job, path):
        import plexus

        self.m = plexus
        self.job = job
        # Relaxed durability, as every engine gets in the benchmark.
        self.db = plexus.Database(path, durable=False)

    def version(self):
        return self.m.__version__

    def close(self):
        self.db.close()

    def load(self):
        job, d = self.job, self.job["dir"]
        # A label-less index on the filter property, as the Rust engine has.
        self.db.create_index(job["filter"][0])
        if job["format"] == "csv":
            import pyarrow.csv as pacsv

            read = lambda name: pacsv.read_csv(f"{d}/{name}.csv")
        else:
            read = lambda name: f"{d}/{name}.parquet"
        self.db.import_data(nodes=[read("nodes")], edges={t: read(f"edges_{t}") for t in job["types"]})

    def one(self, q, params=None):
        return self.db.query(q, params).scalar()

    def workloads(self):
        db, t = self.db, self.job["typed"]
        pairs = lambda: zip(self.seeds, self.seeds[1:] + self.seeds[:1])
        hops = lambda p: len(p) - 1 if p else 0
        return {
            "neighbors": lambda: sum(db.degree(s) for s in self.seeds),
            "typed_neighbors": lambda: sum(db.degree(s, types=[t[0]]) for s in self.seeds),
            "reach3": lambda: sum(len(db.bfs(s, 3)) - 1 for s in self.seeds),
            "typed_path2": lambda: sum(db.count_paths(s, t[:2]) for s in self.seeds),
            "typed_path3": lambda: sum(db.count_paths(s, t[:3]) for s in self.seeds),
            "count_paths3": lambda: sum(db.count_paths(s, 3) for s in self.seeds),
            "count_trails3": lambda: sum(db.count_paths(s, 3, semantics="trail") for s in self.seeds),
            "shortest_path": lambda: sum(hops(db.shortest_path(a, b, max_depth=30)) for a, b in pairs()),
            "lookup": lambda: sum(self.one("MATCH (a) WHERE elementId(a) = $id RETURN count(*)", {"id": s}) for s in self.seeds),
            "filter_count": lambda: self.one(f"MATCH (n) WHERE n.{self.job['filter'][0]} = {self.job['filter'][1]} RETURN count(*)"),
            "filter_count_unindexed": lambda: self.one(f"MATCH (n) WHERE n.{UNINDEXED[0]} = '{UNINDEXED[1]}' RETURN count(*)"),
            "filter_prefix_unindexed": lambda: self.one(
                f"MATCH (n) WHERE n.{UNINDEXED_PREFIX[0]} STARTS WITH '{UNINDEXED_PREFIX[1]}' RETURN count(*)"
            ),
            "group_count_unindexed": lambda: self.one(
                f"MATCH (n) RETURN count(*) AS c, n.{UNINDEXED[0]} AS k ORDER BY c DESC LIMIT 1"
            ),
            "sample5": lambda: sum(len(x) for x in db.sample_neighbors(self.seeds, 5, types=[t[0]], seed=42)),
            "star": lambda: db.degree(self.seeds[0], types=[t[0]]),
            "knows_reach2": lambda: sum(len(db.bfs(s, 2, direction="both", types=[t[0]])) - 1 for s in self.seeds),
            "knows_shortest": lambda: sum(
                hops(db.shortest_path(a, b, direction="both", types=[t[0]], max_depth=30))
                for a, b in zip(self.seeds[0::2], self.seeds[1::2])
            ),
        }


def insert_over_time(e, engine, ids):
    """Inserts the nodes `ids` one transaction each; the mean cost of one
    insert in each tenth."""
    tenth = max(1, len(ids) // 10)
    out = []
    for t in range(10):
        start = time.perf_counter()
        for i in range(t * tenth, (t + 1) * tenth):
            node_id = ids[i]
            if engine.startswith("gestaltdb"):
                from gestaltdb.graphdb import Node

                e.g.put_node(Node(node_id=node_id, labels=("Node",), properties={"grp": i % 100}))
            elif engine == "plexus-py":
                e.db.query("CREATE (:Node {id: $id, grp: $g})", {"id": node_id, "g": i % 100}).consume()
            else:
                e.conn.execute("CREATE (:Node {id: $id, label: 'Node', grp: $g})", {"id": node_id, "g": i % 100})
        out.append((time.perf_counter() - start) / tenth)
    return out


def main():
    job = json.load(sys.stdin)
    engine = job["engine"]
    work = tempfile.mkdtemp(prefix=f"plexus-bench-{engine}-", dir=job.get("tmp"))

    def make(path):
        if engine in ("kuzu", "ladybug"):
            return Cypher(__import__(engine), job, path)
        if engine == "gestaltdb":
            return Gestalt(job, path)
        if engine == "gestaltdb-query":
            return GestaltQuery(job, path)
        if engine == "plexus-py":
            return PlexusPy(job, path)
        raise SystemExit(f"unknown engine {engine}")

    try:
        # Each import into a fresh database; the last one is queried.
        loads, e = [], None
        for r in range(max(1, job.get("import_reps", 1))):
            if e is not None:
                e.close()
                e = None
                # A database is a folder (GestaltDB) or files (Kuzu: db, db.wal).
                for old in glob.glob(os.path.join(work, f"db{r - 1}*")):
                    if os.path.isdir(old):
                        shutil.rmtree(old, ignore_errors=True)
                    else:
                        os.remove(old)
            e = make(os.path.join(work, f"db{r}"))
            t = time.perf_counter()
            e.load()
            loads.append(time.perf_counter() - t)
        version = e.version()
        emit({"workload": "import", "count": job["nodes"] + job["edges"], "seconds": loads, "engine_version": version,
              "peak_rss_mb": peak_rss_mb(), "disk_mb": disk_mb(work)})
        table = e.workloads()
        for w in job["workloads"]:
            name, kind = w["name"], w["kind"]
            if kind == "insert_over_time":
                tenths = insert_over_time(e, engine, w["seeds"])
                emit({"workload": name, "count": len(w["seeds"]), "seconds": tenths, "engine_version": version,
                      "peak_rss_mb": peak_rss_mb(), "disk_mb": disk_mb(work),
                      "note": f"per-insert mean of each tenth; last/first = {tenths[-1] / tenths[0]:.2f}"})
                continue
            if kind not in table:
                emit({"workload": name, "missing": f"{engine}: the peer adapter has no '{kind}' query"})
                continue
            e.seeds = w["seeds"]
            count, secs = timed(table[kind], job["reps"])
            emit({"workload": name, "count": count, "seconds": secs, "engine_version": version,
                  "peak_rss_mb": peak_rss_mb(), "disk_mb": disk_mb(work)})
        e.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
