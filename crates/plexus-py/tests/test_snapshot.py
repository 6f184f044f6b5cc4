"""CSR snapshots: NumPy views, id maps, save and memory-mapped open, and
the seeded minibatch sampler."""

import pytest

import plexus

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")


@pytest.fixture
def snap(db):
    """a→b→c→d by NEXT, a→c by SKIP, h→leaf0..19 by HAS."""
    ids = ["a", "b", "c", "d", "h"] + [f"leaf{i}" for i in range(20)]
    src = ["a", "b", "c", "a"] + ["h"] * 20
    dst = ["b", "c", "d", "c"] + [f"leaf{i}" for i in range(20)]
    typ = ["NEXT", "NEXT", "NEXT", "SKIP"] + ["HAS"] * 20
    db.import_data(nodes={"N": pa.table({"id": ids})}, edges=[pa.table({"src": src, "dst": dst, "type": typ})])
    return db.snapshot()


def test_arrays_are_numpy_views_of_the_csr(snap, db):
    assert (snap.num_nodes, snap.num_edges) == (25, 24)
    indptr, indices, edges, types = snap.arrays("out")
    assert indptr.dtype == np.uint64 and indices.dtype == np.uint32 and len(indptr) == 26
    assert not indptr.flags.writeable
    # The same memory every time: views, not copies.
    again = snap.arrays("out")[1]
    assert again.__array_interface__["data"][0] == indices.__array_interface__["data"][0]
    a = snap.index(["a"])[0]
    out = sorted(snap.ids()[i] for i in indices[indptr[a]:indptr[a + 1]])
    assert out == sorted(db.neighbors("a"))
    assert set(snap.types) == {"NEXT", "SKIP", "HAS"}
    inptr, inidx, _, _ = snap.arrays("in")
    c = snap.index(["c"])[0]
    assert sorted(snap.ids()[i] for i in inidx[inptr[c]:inptr[c + 1]]) == ["a", "b"]


def test_ids_and_indexes_map_both_ways(snap):
    ids = snap.ids()
    assert sorted(ids) == sorted(["a", "b", "c", "d", "h"] + [f"leaf{i}" for i in range(20)])
    idx = snap.index(["d", "a"])
    assert [ids[i] for i in idx] == ["d", "a"]
    with pytest.raises(KeyError, match="nope"):
        snap.index(["nope"])


def test_saved_snapshots_open_mapped_and_answer_alike(snap, tmp_path):
    path = tmp_path / "g.csr"
    snap.save(path)
    mapped = plexus.Snapshot.open(path)
    assert mapped.ids() == snap.ids() and mapped.version == snap.version
    for d in ("out", "in"):
        for x, y in zip(mapped.arrays(d), snap.arrays(d)):
            assert np.array_equal(x, y)
    seeds = snap.index(["h", "a"])
    assert [a.tolist() for a in mapped.sample_neighbors(seeds, 3, seed=5)] == [
        a.tolist() for a in snap.sample_neighbors(seeds, 3, seed=5)
    ]
    (tmp_path / "junk.csr").write_bytes(b"PLXCSR01" + b"\xff" * 64)
    with pytest.raises(plexus.PlexusError, match="not a readable Plexus snapshot"):
        plexus.Snapshot.open(tmp_path / "junk.csr")


def test_weighted_snapshots_sample_by_weight_and_save_it(db, tmp_path):
    # h has 20 leaves; only leaf0 and leaf1 weigh anything.
    leaves = [f"leaf{i}" for i in range(20)]
    db.import_data(
        nodes={"N": pa.table({"id": ["h"] + leaves})},
        edges=[pa.table({"src": ["h"] * 20, "dst": leaves, "type": ["HAS"] * 20,
                         "w": [5.0, 1.0] + [0.0] * 18})],
    )
    snap = db.snapshot(weight="w")
    h = snap.index(["h"])
    _, picked = snap.sample_neighbors(h, 40, mode="weighted:w", seed=7)
    assert {snap.ids()[i] for i in picked} == {"leaf0", "leaf1"}
    with pytest.raises(plexus.PlexusError, match="without weights"):
        db.snapshot().sample_neighbors(h, 3, mode="weighted:w")
    path = tmp_path / "w.csr"
    snap.save(path)
    mapped = plexus.Snapshot.open(path)
    assert mapped.sample_neighbors(h, 40, mode="weighted:w", seed=7)[1].tolist() == picked.tolist()


def test_a_snapshot_does_not_see_later_writes(snap, db):
    before = snap.version
    db.query("CREATE (:N)").consume()
    assert db.snapshot().version > before and snap.num_nodes == 25


def test_neighbour_samples_and_walks_are_seeded(snap):
    h = snap.index(["h"])
    off, nb = snap.sample_neighbors(h, 5, seed=1)
    assert off.tolist() == [0, 5] and len(set(nb.tolist())) == 5
    assert all(snap.ids()[i].startswith("leaf") for i in nb)
    assert nb.tolist() == snap.sample_neighbors(h, 5, seed=1)[1].tolist()
    walks = snap.random_walks(snap.index(["a", "d"]), 3, types=["NEXT"], seed=2)
    assert walks.shape == (2, 4)
    ids = snap.ids()
    assert [ids[i] for i in walks[0]] == ["a", "b", "c", "d"]
    assert walks[1].tolist()[1:] == [-1, -1, -1]


def test_layers_subgraphs_positives_and_negatives(snap):
    ids = snap.ids()
    a, b, c, d, h = snap.index(["a", "b", "c", "d", "h"])
    layers = snap.sample_layers([a], [2, 2], seed=3)
    assert layers[0][0].tolist() == [a]
    assert sorted(ids[i] for i in layers[1][0]) == ["b", "c"]
    src, dst = snap.subgraph([a, b, c])
    assert sorted((ids[x], ids[y]) for x, y in zip(src, dst)) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert snap.has_edges([a, a, d], [b, d, a]).tolist() == [True, False, False]
    assert snap.has_edges([d], [a], direction="in").tolist() == [False]
    neg = snap.negatives([a], 3, seed=4)
    assert neg.shape == (1, 3)
    near = {a, b, c}
    assert d in neg[0] and not near & set(neg[0].tolist())  # d: two hops away, not adjacent
    assert not snap.has_edges([a] * 3, neg[0]).any()
    assert (snap.negatives([a], 3, hard=False, seed=4) >= 0).all()


def test_bad_indexes_are_refused(snap):
    with pytest.raises(IndexError, match="not in 0..25"):
        snap.sample_neighbors([99], 1)
    with pytest.raises(IndexError):
        snap.random_walks([-1], 2)
    with pytest.raises(ValueError, match="'out' and 'in'"):
        snap.arrays("both")


def test_a_snapshot_of_the_valid_time_graph_holds_what_held_then(db):
    """ann knew bob until 10, cy from 20; a sample as of 5 never reaches cy,
    one as of 25 never bob (no leakage from the future)."""
    for node in ["ann", "bob", "cy"]:
        db.query("CALL plexus.temporal.assertNode($id, ['P'], {}, 0) YIELD versionId RETURN versionId", id=node)
    for rel, dst, start, end in [("k1", "bob", 0, 10), ("k2", "cy", 20, None)]:
        db.query(
            "CALL plexus.temporal.assertRelationship($r, 'ann', $d, 'KNOWS', {}, $s, $e) "
            "YIELD versionId RETURN versionId",
            r=rel, d=dst, s=start, e=end,
        )
    db.query("CREATE (:Current {name: 'not a version'})")
    early, late = db.snapshot(valid_time=5), db.snapshot(valid_time="1970-01-01T00:00:00.000025Z")
    assert sorted(early.ids()) == ["ann", "bob", "cy"]
    assert (early.num_edges, late.num_edges) == (1, 1)

    def reached(snap):
        off, picked = snap.sample_neighbors(snap.index(["ann"]), 5, seed=1)
        return [snap.ids()[i] for i in picked[off[0]:off[1]]]

    assert reached(early) == ["bob"]
    assert reached(late) == ["cy"]
    walks = late.random_walks(late.index(["ann"]), 3, seed=2)
    assert late.ids()[walks[0][1]] == "cy"
    assert db.snapshot(valid_time=15).num_edges == 0
    assert db.snapshot().ids() == [db.query("MATCH (n) RETURN elementId(n)").scalar()]
    with pytest.raises(plexus.PlexusError, match="valid_time"):
        db.snapshot(valid_time=True)


def test_temporal_snapshots_over_an_instant_and_a_window(db):
    """ann knew bob over [0, 10) and again from 30, cy over [20, 25); dan
    linked to bob only from 100. Windows select stretches; the walk never
    goes back in time; negatives skip every node ann ever knew."""
    for node in ["ann", "bob", "cy", "dan", "eve"]:
        db.query("CALL plexus.temporal.assertNode($id, ['P'], {}, 0) YIELD versionId RETURN versionId", id=node)
    for rel, src, dst, start, end in [
        ("k1", "ann", "bob", 0, 10),
        ("k1", "ann", "bob", 30, None),
        ("k2", "ann", "cy", 20, 25),
        ("k3", "bob", "cy", 5, 8),
        ("k4", "cy", "dan", 22, 40),
        ("k5", "dan", "bob", 100, None),
        ("k6", "eve", "ann", 0, None),
    ]:
        db.query(
            "CALL plexus.temporal.assertRelationship($r, $s, $d, 'KNOWS', {}, $f, $e) "
            "YIELD versionId RETURN versionId",
            r=rel, s=src, d=dst, f=start, e=end,
        )

    def slots(snap):
        offsets, targets, valid_from, valid_to = snap.arrays()
        nodes, edges = snap.nodes(), snap.edges()
        assert offsets[-1] == snap.num_slots == len(edges)
        return sorted(
            (nodes[i], nodes[targets[s]], edges[s], int(valid_from[s]), int(valid_to[s]))
            for i in range(snap.num_nodes)
            for s in range(offsets[i], offsets[i + 1])
        )

    open_end = 2**63 - 1
    assert slots(db.temporal_snapshot(valid_time=6)) == [
        ("ann", "bob", "k1", 0, 10),
        ("bob", "cy", "k3", 5, 8),
        ("eve", "ann", "k6", 0, open_end),
    ]
    overlap = db.temporal_snapshot(window=(7, 31))
    assert slots(overlap) == [
        ("ann", "bob", "k1", 0, 10),
        ("ann", "bob", "k1", 30, open_end),
        ("ann", "cy", "k2", 20, 25),
        ("bob", "cy", "k3", 5, 8),
        ("cy", "dan", "k4", 22, 40),
        ("eve", "ann", "k6", 0, open_end),
    ]
    assert slots(db.temporal_snapshot(window=(7, 31), contained=True)) == [("ann", "cy", "k2", 20, 25)]
    assert slots(db.temporal_snapshot(window=(None, 1))) == [
        ("ann", "bob", "k1", 0, 10),
        ("eve", "ann", "k6", 0, open_end),
    ]
    # From eve: eve→ann (from 0), then ann's relationships valid from 0 or
    # later; from cy at 20 only k4 (22) may follow, never k3 (5).
    for seed in range(20):
        nodes, followed = overlap.walk("eve", 4, seed=seed)
        _, _, valid_from, _ = overlap.arrays()
        starts = [int(valid_from[s]) for s in followed]
        assert starts == sorted(starts), (seed, nodes, starts)
        assert nodes[0] == "eve" and len(nodes) == len(followed) + 1
    # ann never knew eve or dan; bob and cy she did (bob also after the window).
    assert sorted(overlap.negatives("ann", 5, seed=3)) == ["dan", "eve"]
    early = db.temporal_snapshot(valid_time=6)
    assert early.negatives("ann", 5) == ["eve"], "bob is a positive of the future"
    with pytest.raises(KeyError, match="dan"):
        early.walk("dan", 2)
    with pytest.raises(ValueError, match="not both"):
        db.temporal_snapshot(valid_time=1, window=(0, 2))
    with pytest.raises(ValueError, match="before the end"):
        db.temporal_snapshot(window=(5, 5))
    with pytest.raises(ValueError, match="window"):
        db.temporal_snapshot(valid_time=1, contained=True)
