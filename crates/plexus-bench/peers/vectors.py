"""The vector peers of `plexus-bench vectors`: faiss (HNSW, HNSW with fp16
scalar quantisation, flat) and hnswlib, on the files the harness wrote.

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
        else:
            raise SystemExit("unknown engine " + engine)


if __name__ == "__main__":
    main()
