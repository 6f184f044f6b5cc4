"""Typed traversals and seeded sampling by node id."""

import pytest

import plexus


@pytest.fixture
def chain(db):
    """a→b→c→d by NEXT, a→c by SKIP, hub h with 20 leaves by HAS."""
    pa = pytest.importorskip("pyarrow")
    ids = ["a", "b", "c", "d", "h"] + [f"leaf{i}" for i in range(20)]
    src = ["a", "b", "c", "a"] + ["h"] * 20
    dst = ["b", "c", "d", "c"] + [f"leaf{i}" for i in range(20)]
    typ = ["NEXT", "NEXT", "NEXT", "SKIP"] + ["HAS"] * 20
    db.import_data(
        nodes={"N": pa.table({"id": ids})},
        edges=[pa.table({"src": src, "dst": dst, "type": typ, "w": [1.0] * 24})],
    )
    return db


def test_neighbours_and_degrees_by_type_and_direction(chain):
    assert sorted(chain.neighbors("a")) == ["b", "c"]
    assert chain.neighbors("a", types=["NEXT"]) == ["b"]
    assert chain.neighbors("c", direction="in", types="NEXT") == ["b"]
    assert sorted(chain.neighbors("c", direction="both")) == ["a", "b", "d"]
    assert chain.degree("a") == 2 and chain.degree("a", types=["SKIP"]) == 1
    assert chain.degree("h") == 20 and chain.degree("d", direction="in") == 1


def test_bfs_and_shortest_paths(chain):
    assert sorted(chain.bfs("a", 1)) == [("a", 0), ("b", 1), ("c", 1)]
    depths = dict(chain.bfs("a", 5, types=["NEXT"]))
    assert depths == {"a": 0, "b": 1, "c": 2, "d": 3}
    assert chain.shortest_path("a", "d") == ["a", "c", "d"]
    assert chain.shortest_path("a", "d", types=["NEXT"]) == ["a", "b", "c", "d"]
    assert chain.shortest_path("a", "d", types=["NEXT"], max_depth=2) is None
    assert chain.shortest_path("d", "a") is None
    assert chain.shortest_path("d", "a", direction="in") == ["d", "c", "a"]
    # Cross-checked against Cypher's shortestPath.
    hops = chain.query(
        "MATCH (a), (d) WHERE elementId(a) = 'a' AND elementId(d) = 'd' "
        "MATCH p = shortestPath((a)-[:NEXT*]->(d)) RETURN length(p)"
    ).scalar()
    assert hops == 3


def test_paths_are_counted_as_walks_or_trails(chain):
    assert chain.count_paths("a", ["NEXT", "NEXT"]) == 1
    assert chain.count_paths("a", 2) == 2  # a→b→c, a→c→d
    assert chain.count_paths("a", [["NEXT", "SKIP"], "NEXT"]) == 2
    # d–c–b, d–c–a, and d–c–d back over the same relationship: a walk, not a trail.
    assert chain.count_paths("d", 2, direction="both") == 3
    trails = chain.count_paths("d", 2, direction="both", semantics="trail")
    assert trails == 2
    assert trails == chain.query(
        "MATCH (d) WHERE elementId(d) = 'd' MATCH (d)-[]-()-[]-() RETURN count(*)"
    ).scalar()
    with pytest.raises(ValueError, match="semantics"):
        chain.count_paths("a", 1, semantics="tour")


def test_typed_paths_are_sampled_by_hop_pattern(chain):
    paths = chain.sample_paths("a", [["NEXT", "SKIP"], "NEXT"], [2, 1], seed=3)
    assert sorted(map(tuple, paths)) == [("a", "b", "c"), ("a", "c", "d")]
    assert chain.sample_paths("h", ["HAS"], [3], seed=1) == chain.sample_paths("h", ["HAS"], [3], seed=1)
    assert len(chain.sample_paths("h", [None], [3], seed=1)) == 3
    with pytest.raises(plexus.PlexusError, match="2 hops but 1 sample sizes"):
        chain.sample_paths("a", ["NEXT", "NEXT"], [1])


def test_a_label_less_index_answers_filters(db):
    db.create_index("grp")
    db.query("UNWIND range(1, 50) AS i CREATE (:A {grp: i % 5})").consume()
    assert db.query("MATCH (n) WHERE n.grp = 3 RETURN count(*)").scalar() == 10
    assert "grp" in str(db.query("SHOW INDEXES").fetchall())


def test_sampling_is_reproducible_by_seed(chain):
    one = chain.sample_neighbors(["h"], 5, seed=7)
    assert one == chain.sample_neighbors(["h"], 5, seed=7)
    assert len(one[0]) == 5 and len(set(one[0])) == 5
    assert all(n.startswith("leaf") for n in one[0])
    seeds = {tuple(chain.sample_neighbors(["h"], 5, seed=s)[0]) for s in range(10)}
    assert len(seeds) > 1
    assert len(chain.sample_neighbors(["h"], 30, mode="with_replacement", seed=1)[0]) == 30
    assert len(chain.sample_neighbors(["h"], 3, mode="weighted:w", seed=1)[0]) == 3
    assert chain.sample_neighbors(["d"], 3) == [[]]


def test_random_walks_follow_edges(chain):
    walks = chain.random_walks(["a", "b"], 3, types=["NEXT"], seed=3)
    assert walks == [["a", "b", "c", "d"], ["b", "c", "d"]]
    biased = chain.random_walks(["a"] * 4, 5, direction="both", p=0.5, q=2.0, seed=9)
    assert biased == chain.random_walks(["a"] * 4, 5, direction="both", p=0.5, q=2.0, seed=9)
    for walk in biased:
        for x, y in zip(walk, walk[1:]):
            assert y in chain.neighbors(x, direction="both")


def test_layers_for_minibatches(chain):
    layers = chain.sample_layers(["a"], [2, 2], types=["NEXT", "SKIP"], seed=1)
    assert layers[0] == (["a"], [])
    assert sorted(layers[1][0]) == ["b", "c"]
    assert ("c", "d") in layers[2][1] and layers[2][0] == ["d"]


def test_bad_arguments(chain):
    with pytest.raises(KeyError, match="nope"):
        chain.neighbors("nope")
    with pytest.raises(ValueError, match="direction"):
        chain.neighbors("a", direction="sideways")
    with pytest.raises(ValueError, match="mode"):
        chain.sample_neighbors(["a"], 1, mode="magic")
    with pytest.raises(plexus.PlexusError, match="p and q"):
        chain.random_walks(["a"], 3, p=0.0)
