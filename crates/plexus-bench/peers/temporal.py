"""GestaltDB's side of `plexus-bench temporal`: the versions the job
describes, written with GestaltDB's commit_versions into the store it names,
then the job's as-of lookups with get_node_as_of / get_edge_as_of. Prints
one JSON object."""

import json
import os
import shutil
import statistics
import sys
import time


def main():
    job = json.load(open(sys.argv[1]))
    from gestaltdb.graphdb import GraphDB, Node, Edge
    from gestaltdb.kvstores import LevelDBStore, PyRexStore
    from gestaltdb.serializers import JSONSerializer
    from gestaltdb.temporal import TemporalInstant, TemporalInterval
    from gestaltdb.versioning import EdgeVersionWrite, NodeVersionWrite
    import importlib.metadata

    base, step = job["base"], job["step"]
    nodes, edges, intervals = job["nodes"], job["edges"], job["intervals"]

    def since(t):
        return TemporalInterval(TemporalInstant(t), None)

    writes = []
    for i in range(nodes):
        writes.append(NodeVersionWrite.assertion(Node(node_id=f"n{i}", properties={"v": i}), since(base + i * step)))
    for j in range(edges):
        e = Edge(edge_id=f"e{j}", source=f"n{j % nodes}", target=f"n{(j * 7 + 1) % nodes}", properties={"v": j})
        writes.append(EdgeVersionWrite.assertion(e, since(base + j * step)))
    for k in range(intervals):
        valid = TemporalInterval(TemporalInstant(base + k * step), TemporalInstant(base + (k + 1) * step))
        writes.append(NodeVersionWrite.assertion(Node(node_id="hot", properties={"v": k}), valid))
    per = job["per_commit"] or len(writes)
    # Each run writes into a store of its own; the last one is read.
    runs = job.get("write_runs", 1)
    write_runs_s = []
    for run in range(runs):
        path = job["path"] + ("" if run == runs - 1 else f"-{run}")
        # RocksDB (pyrex), GestaltDB's fastest store, or LevelDB, the store
        # its temporal smoke benchmark documents (`--backend leveldb`).
        store = LevelDBStore(path=path) if job["store"] == "leveldb" else PyRexStore(path=path)
        db = GraphDB(store, JSONSerializer())
        started = time.perf_counter()
        for at in range(0, len(writes), per):
            db.commit_versions(writes[at:at + per])
        write_runs_s.append(time.perf_counter() - started)
        if run != runs - 1:
            del db
            shutil.rmtree(path, ignore_errors=True)

    answers, times = [], []
    budget = time.perf_counter() + job["budget_s"]
    for kind, lid, at in job["queries"][: job["max_queries"]]:
        t0 = time.perf_counter()
        get = db.get_node_as_of if kind == "node" else db.get_edge_as_of
        v = get(lid, valid_time=TemporalInstant(at))
        times.append(time.perf_counter() - t0)
        if v is None:
            answers.append(None)
        else:
            entity = v.node if kind == "node" else v.edge
            answers.append(entity.properties["v"])
        if time.perf_counter() > budget:
            break
    size = 0
    for root, _, files in os.walk(job["path"]):
        size += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print(json.dumps({
        "version": importlib.metadata.version("gestaltdb"),
        "write_runs_s": write_runs_s,
        "answers": answers,
        "lookup_us": [t * 1e6 for t in times],
        "p50_us": statistics.median(times) * 1e6 if times else None,
        "bytes": size,
    }))


main()
