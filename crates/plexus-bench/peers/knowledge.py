"""GestaltDB's side of `plexus-bench knowledge`: the claims the job lists,
written in one commit_versions; claim_status lookups; two rules run with
run_rules; one premise retracted and maintain_truth; entails questions.
Prints one JSON object with each phase's time and each engine-computed
answer (statuses, counts), for the Rust side to compare."""

import json
import os
import statistics
import sys
import time


def main():
    job = json.load(open(sys.argv[1]))
    from gestaltdb.graphdb import GraphDB
    from gestaltdb.kvstores import PyRexStore
    from gestaltdb.serializers import JSONSerializer
    from gestaltdb.temporal import TemporalInstant, TemporalInterval
    from gestaltdb.versioning import ClaimVersionWrite
    from gestaltdb.epistemic import Claim
    from gestaltdb.modal import ACCESSIBILITY_PREDICATES, AccessibilityKind
    import importlib.metadata

    db = GraphDB(PyRexStore(path=job["path"]), JSONSerializer())
    at = TemporalInstant(job["at"])
    since = TemporalInterval(TemporalInstant(0), None)

    writes = []
    for s, p, o, agent, world, negative in job["claims"]:
        claim = Claim(subject=s, predicate=p, object=o, polarity="negative" if negative else "positive",
                      agent=agent, world=world)
        writes.append(ClaimVersionWrite.assertion(claim, since))
    for source, target, kind in job["links"]:
        claim = Claim(subject=source, predicate=ACCESSIBILITY_PREDICATES[AccessibilityKind(kind)],
                      object=target, polarity="positive", agent="ann", world=source)
        writes.append(ClaimVersionWrite.assertion(claim, since))
    started = time.perf_counter()
    db.commit_versions(writes)
    write_s = time.perf_counter() - started

    statuses, status_us = [], []
    for s, p, o in job["status_queries"]:
        t0 = time.perf_counter()
        st = db.claim_status(s, p, o, valid_time=at, world="default")
        status_us.append((time.perf_counter() - t0) * 1e6)
        statuses.append(st.value)

    for name, when, then in job["rules"]:
        db.create_rule(name, when=[tuple(a) for a in when], then=tuple(then))
    t0 = time.perf_counter()
    run = db.run_rules(as_of=at)
    run_s = time.perf_counter() - t0

    s, p, o, agent, world, _ = job["retract"]
    claim_id = Claim(subject=s, predicate=p, object=o, polarity="positive", agent=agent, world=world).claim_id
    db.retract_claim(claim_id, valid=since, reason="benchmark")
    t0 = time.perf_counter()
    tm = db.maintain_truth(as_of=at)
    maintain_s = time.perf_counter() - t0

    entailments, entail_us = [], []
    for agent, formula, mode, world in job["entails"]:
        t0 = time.perf_counter()
        r = db.entails(agent, formula, mode, world=world, valid_time=at)
        entail_us.append((time.perf_counter() - t0) * 1e6)
        entailments.append(r.status.value)

    size = 0
    for root, _, files in os.walk(job["path"]):
        size += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print(json.dumps({
        "version": importlib.metadata.version("gestaltdb"),
        "write_s": write_s,
        "statuses": statuses,
        "status_us": status_us,
        "derived": run.derived_count,
        "run_s": run_s,
        "retracted": tm.retracted_count,
        "maintain_s": maintain_s,
        "entailments": entailments,
        "entail_us": entail_us,
        "bytes": size,
    }))


main()
