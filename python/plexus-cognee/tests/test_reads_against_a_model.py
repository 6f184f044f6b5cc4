"""The adapter's graph reads that cognee's own suites do not reach, checked
against the same answers computed in Python from `get_graph_data()` (a
reference model of what each read means): node-set subgraphs (OR and AND),
k-hop neighbourhoods with and without type filters, the id-filtered graph of
cognee's search hot path, triplet batches, counts and metrics; and the
vector store's node-set filtered search against an exact ranking."""

import math
import random
from collections import defaultdict

import pytest
from cognee.infrastructure.engine import DataPoint
from cognee.modules.engine.models import NodeSet

from plexus_cognee import PlexusVectorAdapter

pytestmark = pytest.mark.asyncio

TYPES = ["knows", "likes", "belongs_to_set"]


class Thing(DataPoint):
    name: str
    metadata: dict = {"index_fields": ["name"]}


async def _random_graph(graph, seed=5):
    rng = random.Random(seed)
    sets = [NodeSet(name=f"set{i}") for i in range(4)]
    things = [Thing(name=f"thing{i}") for i in range(60)]
    await graph.add_nodes(sets + things)
    edges = []
    for t in things:
        for s in rng.sample(sets, rng.randint(0, 2)):
            edges.append((str(t.id), str(s.id), "belongs_to_set", {}))
    for _ in range(120):
        a, b = rng.sample(things, 2)
        edges.append((str(a.id), str(b.id), rng.choice(TYPES[:2]), {"w": rng.random()}))
    await graph.add_edges(edges)
    return sets, things


def _adjacency(edges, types=None):
    near = defaultdict(set)
    for s, t, rel, _ in edges:
        if types is None or rel in types:
            near[s].add(t)
            near[t].add(s)
    return near


def _subgraph(ids, nodes, edges, types=None):
    ids = set(ids)
    return (
        {n for n, _ in nodes if n in ids},
        {(s, t, rel) for s, t, rel, _ in edges if s in ids and t in ids and (types is None or rel in types)},
    )


def _shape(result):
    nodes, edges = result
    return {n for n, _ in nodes}, {(s, t, rel) for s, t, rel, _ in edges}


async def test_nodeset_subgraphs_match_the_model(plexus_graph):
    sets, _ = await _random_graph(plexus_graph)
    nodes, edges = await plexus_graph.get_graph_data()
    near = _adjacency(edges)
    for names in (["set0"], ["set1", "set2"], ["set3", "nothing"]):
        primaries = [str(s.id) for s in sets if s.name in names]
        for op in ("OR", "AND"):
            if op == "OR":
                neighbours = set().union(*(near[p] for p in primaries)) if primaries else set()
            else:
                neighbours = set.intersection(*(near[p] for p in primaries)) if primaries else set()
            want = _subgraph(set(primaries) | neighbours, nodes, edges) if primaries else (set(), set())
            got = _shape(await plexus_graph.get_nodeset_subgraph(NodeSet, names, op))
            assert got == want, (names, op)
    assert _shape(await plexus_graph.get_nodeset_subgraph(NodeSet, ["set0"], "OR"))[0]


async def test_neighbourhoods_and_id_filtered_graphs_match_the_model(plexus_graph):
    _, things = await _random_graph(plexus_graph, seed=9)
    nodes, edges = await plexus_graph.get_graph_data()
    seeds = [str(t.id) for t in things[:3]]
    for depth, types in ((1, None), (2, None), (2, ["knows"]), (0, None)):
        near = _adjacency(edges, types)
        seen, frontier = set(seeds), set(seeds)
        for _ in range(depth):
            frontier = set().union(*(near[n] for n in frontier)) - seen
            seen |= frontier
        want = _subgraph(seen, nodes, edges, types)
        got = _shape(await plexus_graph.get_neighborhood(seeds, depth, types))
        assert got == want, (depth, types)
    filtered = _shape(await plexus_graph.get_id_filtered_graph_data(seeds))
    touching = {(s, t, rel) for s, t, rel, _ in edges if s in seeds or t in seeds}
    assert filtered[1] == touching
    assert filtered[0] == {n for e in touching for n in e[:2]}


async def test_triplets_counts_and_metrics_match_the_model(plexus_graph):
    await _random_graph(plexus_graph, seed=13)
    nodes, edges = await plexus_graph.get_graph_data()
    assert await plexus_graph.get_graph_counts() == (len(nodes), len(edges))
    names = {n: p["id"] for n, p in nodes}
    batches = []
    for offset in range(0, len(edges) + 50, 50):
        batches += await plexus_graph.get_triplets_batch(offset, 50)
    got = [(b["start_node"]["id"], b["end_node"]["id"], b["relationship_properties"]["relationship_name"]) for b in batches]
    assert got == sorted((s, t, rel) for s, t, rel, _ in edges)
    assert all(s in names for s, _, _ in got)
    metrics = await plexus_graph.get_graph_metrics()
    assert (metrics["num_nodes"], metrics["num_edges"]) == (len(nodes), len(edges))
    assert sum(metrics["sizes_of_connected_components"]) == len(nodes)


class WordEngine:
    """A deterministic embedding engine: each text's vector from a seeded
    generator, so similar ids are not similar vectors (a fair ANN test)."""

    dimensions = 16

    def get_vector_size(self):
        return self.dimensions

    async def embed_text(self, texts):
        out = []
        for t in texts:
            r = random.Random(t)
            out.append([r.uniform(-1, 1) for _ in range(self.dimensions)])
        return out


def _cosine_distance(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return 1 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


async def test_node_set_filtered_vector_search_is_exact_on_the_members(tmp_path):
    engine = WordEngine()
    vectors = PlexusVectorAdapter(str(tmp_path / "vectors_db"), embedding_engine=engine)
    rng = random.Random(3)
    things = [Thing(name=f"text {i}", belongs_to_set=rng.sample(["a", "b", "c"], rng.randint(1, 2))) for i in range(200)]
    await vectors.create_data_points("Thing_name", things)
    embedded = dict(zip((str(t.id) for t in things), await engine.embed_text([t.name for t in things])))
    query = (await engine.embed_text(["the question"]))[0]
    for names, op in ((["a"], "OR"), (["a", "b"], "OR"), (["a", "b"], "AND"), (None, "OR")):
        members = [
            t for t in things
            if names is None
            or (any(n in t.belongs_to_set for n in names) if op == "OR" else all(n in t.belongs_to_set for n in names))
        ]
        ranked = sorted(members, key=lambda t: _cosine_distance(embedded[str(t.id)], query))
        got = await vectors.search("Thing_name", query_vector=query, limit=5, node_name=names, node_name_filter_operator=op)
        assert [str(r.id) for r in got] == [str(t.id) for t in ranked[:5]], (names, op)
        for r in got:
            assert abs(r.score - _cosine_distance(embedded[str(r.id)], query)) < 1e-3
    everything = await vectors.search("Thing_name", query_vector=query, limit=None)
    assert len(everything) == len(things)
    assert await vectors.search("Thing_name", query_vector=query, limit=0) == []
    await vectors.remove_belongs_to_set_tags(["a"])
    left = await vectors.retrieve("Thing_name", [str(t.id) for t in things])
    assert len(left) == sum(1 for t in things if set(t.belongs_to_set) - {"a"})
    await vectors.close()
