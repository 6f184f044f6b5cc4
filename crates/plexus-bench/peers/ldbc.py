"""LDBC SNB Interactive reads on Kuzu or LadybugDB, run by `plexus-bench ldbc`.

The job (a JSON file named by the first argument): the engine, the folder
of files `ldbc/export.rs` wrote and their schema, the translated queries
with their parameters, and how often to run each. Declares the tables,
loads every file with COPY, runs each query `reps` times, and prints one
JSON object: {"engine_version", "load_seconds", "queries": [{"name",
"rows", "seconds"} or {"name", "error"}]}. Rows are lists of plain values
(the queries return no nodes), so they can be compared with Plexus's.
"""

import json
import os
import shutil
import sys
import tempfile
import time


def declare(conn, schema):
    for n in schema["nodes"]:
        cols = ", ".join(f"{c} {t}" for c, t in n["columns"])
        conn.execute(f"CREATE NODE TABLE {n['table']}({cols}, PRIMARY KEY (id))")
    # A relationship table lists every source-target pair it connects.
    by_type = {}
    for r in schema["rels"]:
        by_type.setdefault(r["type"], []).append(r)
    for t, parts in by_type.items():
        pairs = ", ".join(f"FROM {p['from']} TO {p['to']}" for p in parts)
        cols = "".join(f", {c} {ty}" for c, ty in parts[0]["columns"])
        conn.execute(f"CREATE REL TABLE {t}({pairs}{cols})")


def load(conn, schema, d):
    opts = "header=true, delim='|'"
    for n in schema["nodes"]:
        conn.execute(f"COPY {n['table']} FROM '{d}/{n['file']}' ({opts})")
    for r in schema["rels"]:
        conn.execute(f"COPY {r['type']} FROM '{d}/{r['file']}' (from='{r['from']}', to='{r['to']}', {opts})")


def rows_of(result):
    out = []
    while result.has_next():
        out.append(result.get_next())
    return out


def run(conn, q, reps):
    secs, rows = [], None
    for _ in range(reps):
        t = time.perf_counter()
        rows = rows_of(conn.execute(q["text"], q["params"]))
        secs.append(time.perf_counter() - t)
    return {"name": q["name"], "rows": rows, "seconds": secs}


def main():
    with open(sys.argv[1]) as f:
        job = json.load(f)
    engine = __import__(job["engine"])
    work = tempfile.mkdtemp(prefix=f"plexus-ldbc-{job['engine']}-", dir=job.get("tmp"))
    try:
        db = engine.Database(os.path.join(work, "db"))
        # 0: the engine's default (every core); the correctness tests ask for 1.
        conn = engine.Connection(db, num_threads=job.get("threads", 0))
        t = time.perf_counter()
        declare(conn, job["schema"])
        load(conn, job["schema"], job["dir"])
        loaded = time.perf_counter() - t
        out = []
        for q in job["queries"]:
            try:
                out.append(run(conn, q, job["reps"]))
            except Exception as e:  # a query the engine refuses is reported, not fatal
                out.append({"name": q["name"], "error": str(e).strip()})
        print(json.dumps({"engine_version": getattr(engine, "__version__", "unknown"),
                          "load_seconds": loaded, "queries": out}, default=str))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
