"""cognee's Neo4j graph adapter, replayed through the driver: the Cypher it
sends (quoted from cognee 1.6.5, cognee/infrastructure/databases/graph/
neo4j_driver/adapter.py, Apache-2.0), sent the way it sends it
(`session(database=…).run(query, parameters=…)` then `result.data()`),
with the results checked as the adapter reads them."""

import json

import pytest
from neo4j import GraphDatabase

BASE_LABEL = "__Node__"

INITIALIZE = f"CREATE CONSTRAINT IF NOT EXISTS FOR (n:`{BASE_LABEL}`) REQUIRE n.id IS UNIQUE;"

IS_EMPTY = f"""
        RETURN EXISTS {{
        MATCH (n:`{BASE_LABEL}`)
        }} AS node_exists;
        """

FOLD = """
            SET {a}.source_run_refs = CASE
                    WHEN $prov_sr_key IN coalesce({a}.source_ref_keys, [])
                    THEN coalesce({a}.source_run_refs, [])
                    ELSE coalesce({a}.source_run_refs, []) + $prov_add_run_refs
                END,
                {a}.source_run_ids = CASE
                    WHEN $prov_sr_key IN coalesce({a}.source_ref_keys, [])
                    THEN coalesce({a}.source_run_ids, [])
                    ELSE coalesce({a}.source_run_ids, []) + $prov_add_run_ids
                END,
                {a}.source_ref_keys = CASE
                    WHEN $prov_sr_key IN coalesce({a}.source_ref_keys, [])
                    THEN coalesce({a}.source_ref_keys, [])
                    ELSE coalesce({a}.source_ref_keys, []) + $prov_add_keys
                END,
                {a}.source_dataset_ids = CASE
                    WHEN $prov_ds_id IN coalesce({a}.source_dataset_ids, [])
                    THEN coalesce({a}.source_dataset_ids, [])
                    ELSE coalesce({a}.source_dataset_ids, []) + $prov_add_dataset_ids
                END
            """

ADD_NODES = f"""
        UNWIND $nodes AS node
        MERGE (n: `{BASE_LABEL}`{{id: node.node_id}})
        WITH n, node, apoc.coll.toSet(
            coalesce(n.belongs_to_set, [])
            + coalesce(node.properties.belongs_to_set, [])
        ) AS merged_belongs_to_set
        SET n += node.properties, n.updated_at = timestamp()
        SET n.belongs_to_set = merged_belongs_to_set
        {FOLD.format(a="n")}
        WITH n, node.label AS label
        CALL apoc.create.addLabels(n, [label]) YIELD node AS labeledNode
        RETURN ID(labeledNode) AS internal_id, labeledNode.id AS nodeId
        """

ADD_EDGES = f"""
            UNWIND $edges AS edge
            MATCH (from_node: `{BASE_LABEL}`{{id: edge.from_node}})
            MATCH (to_node: `{BASE_LABEL}`{{id: edge.to_node}})
            CALL apoc.merge.relationship(
                from_node,
                edge.relationship_name,
                {{
                    source_node_id: edge.from_node,
                    target_node_id: edge.to_node
                }},
                {{}},
                to_node
            ) YIELD rel
            SET rel += edge.properties,
                rel.updated_at = timestamp(),
                rel.created_at = coalesce(rel.created_at, timestamp())
            {FOLD.format(a="rel")}
            RETURN rel"""

HAS_EDGES = f"""
            UNWIND $edges AS edge
            MATCH (a:`{BASE_LABEL}`)-[r]->(b:`{BASE_LABEL}`)
            WHERE a.id = edge.from_node AND b.id = edge.to_node AND type(r) = edge.relationship_name
            RETURN edge.from_node AS from_node, edge.to_node AS to_node, edge.relationship_name AS relationship_name, count(r) > 0 AS edge_exists
        """

GET_EDGES = f"""
        MATCH (n: `{BASE_LABEL}`{{id: $node_id}})-[r]-(m)
        RETURN n, r, m
        """

GET_NEIGHBORS = f"""
           MATCH (n: `{BASE_LABEL}` {{id: $node_id}})--(m: `{BASE_LABEL}`)
           RETURN DISTINCT properties(m) AS properties
           """

GET_NODE = f"""
        MATCH (node: `{BASE_LABEL}`{{id: $node_id}})
        RETURN node
        """

SUCCESSORS = f"""
        MATCH (node:`{BASE_LABEL}`)-[relation]->(neighbour)
        WHERE node.id = $node_id
        RETURN node, relation, neighbour, properties(relation) AS relation_properties
        """

PREDECESSORS = f"""
        MATCH (node:`{BASE_LABEL}`)<-[relation]-(neighbour)
        WHERE node.id = $node_id
        RETURN neighbour, relation, node, properties(relation) AS relation_properties
        """

GRAPH_NODES = (
    f"MATCH (n:`{BASE_LABEL}`) "
    "RETURN ID(n) AS id, labels(n) AS labels, properties(n) AS properties"
)

GRAPH_EDGES = f"""
            MATCH (n:`{BASE_LABEL}`)-[r]->(m:`{BASE_LABEL}`)
            RETURN ID(n) AS source, ID(m) AS target, TYPE(r) AS type, properties(r) AS properties
            """

ID_FILTERED = """
            MATCH ()-[r]-()
            WHERE startNode(r).id IN $target_ids
               OR endNode(r).id IN $target_ids
            WITH DISTINCT r, startNode(r) AS a, endNode(r) AS b
            RETURN
                properties(a) AS n_properties,
                properties(b) AS m_properties,
                type(r) AS type,
                properties(r) AS properties
            """

NEIGHBORHOOD = """
                MATCH path = (seed)-[*1..2]-(neighbor)
                WHERE seed.id IN $node_ids
                  AND ALL(r IN relationships(path) WHERE TYPE(r) IN $edge_types)
                RETURN DISTINCT neighbor.id AS nid
                """

DELETE_NODES = f"""
        UNWIND $node_ids AS id
        MATCH (node: `{BASE_LABEL}`{{id: id}})
        DETACH DELETE node"""

COUNTS = (
    f"MATCH (n:`{BASE_LABEL}`) RETURN count(n) AS count",
    f"MATCH (n:`{BASE_LABEL}`)-[r]->(m:`{BASE_LABEL}`) RETURN count(r) AS count",
)


def prov(key, dataset, run):
    return {
        "prov_sr_key": key,
        "prov_add_keys": [key],
        "prov_ds_id": dataset,
        "prov_add_dataset_ids": [dataset],
        "prov_add_run_refs": [f"source_run_ref:v1:{run}:{key}"],
        "prov_add_run_ids": [run],
    }


def node(id_, label, name, sets=None):
    props = {
        "id": id_, "name": name, "type": label, "version": 1, "topological_rank": 0,
        "ontology_valid": False, "feedback_weight": 0.5, "belongs_to_set": sets,
        "metadata": json.dumps({"index_fields": ["name"]}),
    }
    return {"node_id": id_, "label": label, "properties": props}


def edge(a, b, rel, text):
    return {
        "from_node": a, "to_node": b, "relationship_name": rel,
        "properties": {"edge_text": text, "source_node_id": a, "target_node_id": b},
    }


@pytest.fixture
def query(open_server):
    """cognee's `Neo4jAdapter.query`: run, then `result.data()`."""
    driver = GraphDatabase.driver(
        f"bolt://{open_server.address}", auth=None, notifications_min_severity="OFF",
        max_connection_lifetime=120, keep_alive=True,
    )
    with driver.session(database="system") as s:
        s.run("CREATE DATABASE cognee_test IF NOT EXISTS").consume()

    def run(q, params=None):
        with driver.session(database="cognee_test") as s:
            return s.run(q, parameters=params).data()

    run("MATCH (n) DETACH DELETE n")
    yield run
    driver.close()


def test_cognee_write_read_delete_cycle(query):
    query(INITIALIZE)
    query(INITIALIZE)  # initialize() is called whenever the engine changes
    assert query(IS_EMPTY)[0]["node_exists"] is False

    k1 = "source_ref:v1:ds1:doc1"
    nodes = [
        node("doc", "TextDocument", "report.txt"),
        node("chunk", "DocumentChunk", "chunk 0", ["set_a"]),
        node("alice", "Entity", "Alice", ["set_a"]),
        node("acme", "Entity", "Acme", ["set_a"]),
    ]
    written = query(ADD_NODES, {"nodes": nodes, **prov(k1, "ds1", "run1")})
    assert sorted(r["nodeId"] for r in written) == ["acme", "alice", "chunk", "doc"]
    assert all(isinstance(r["internal_id"], int) for r in written)
    assert query(IS_EMPTY)[0]["node_exists"] is True

    # A second dataset re-cognifies Alice: tags are unioned, provenance folded once per key.
    k2 = "source_ref:v1:ds2:doc9"
    query(ADD_NODES, {"nodes": [node("alice", "Entity", "Alice", ["set_b", "set_a"])], **prov(k2, "ds2", "run2")})
    query(ADD_NODES, {"nodes": [node("alice", "Entity", "Alice", ["set_b"])], **prov(k2, "ds2", "run2")})
    alice = query(GET_NODE, {"node_id": "alice"})[0]["node"]
    assert alice["belongs_to_set"] == ["set_a", "set_b"]
    assert alice["source_ref_keys"] == [k1, k2]
    assert alice["source_dataset_ids"] == ["ds1", "ds2"]
    assert alice["source_run_ids"] == ["run1", "run2"]
    labels = query(f"MATCH (n:`{BASE_LABEL}` {{id: 'alice'}}) RETURN labels(n) AS l")[0]["l"]
    assert sorted(labels) == ["Entity", BASE_LABEL]

    edges = [
        edge("chunk", "doc", "is_part_of", "chunk is part of report"),
        edge("chunk", "alice", "contains", "chunk mentions Alice"),
        edge("alice", "acme", "works_at", "Alice works at Acme."),
    ]
    assert len(query(ADD_EDGES, {"edges": edges, **prov(k1, "ds1", "run1")})) == 3
    # Upserting the same edges again makes no new relationships.
    query(ADD_EDGES, {"edges": edges, **prov(k1, "ds1", "run1")})
    assert [query(c)[0]["count"] for c in COUNTS] == [4, 3]

    existing = query(HAS_EDGES, {"edges": [
        {"from_node": "alice", "to_node": "acme", "relationship_name": "works_at"},
        {"from_node": "acme", "to_node": "alice", "relationship_name": "works_at"},
    ]})
    assert [(r["from_node"], r["to_node"], r["relationship_name"]) for r in existing if r["edge_exists"]] == [
        ("alice", "acme", "works_at")
    ]

    # get_edges reads result["r"][1] (the type) from Result.data()'s tuple.
    got = query(GET_EDGES, {"node_id": "alice"})
    assert sorted((r["n"]["id"], r["m"]["id"], r["r"][1]) for r in got) == [
        ("alice", "acme", "works_at"), ("alice", "chunk", "contains")
    ]
    neighbours = query(GET_NEIGHBORS, {"node_id": "alice"})
    assert sorted(r["properties"]["id"] for r in neighbours) == ["acme", "chunk"]

    # get_connections: true direction, endpoint properties from the Relationship tuple.
    succ = query(SUCCESSORS, {"node_id": "chunk"})
    pred = query(PREDECESSORS, {"node_id": "alice"})
    assert sorted((r["relation"][0]["id"], r["relation"][1], r["relation"][2]["id"]) for r in succ) == [
        ("chunk", "contains", "alice"), ("chunk", "is_part_of", "doc")
    ]
    assert [(r["relation"][0]["id"], r["relation"][2]["id"]) for r in pred] == [("chunk", "alice")]
    assert pred[0]["relation_properties"]["edge_text"] == "chunk mentions Alice"

    # get_graph_data: every node and edge with its properties.
    graph_nodes = query(GRAPH_NODES)
    graph_edges = query(GRAPH_EDGES)
    assert sorted(r["properties"]["id"] for r in graph_nodes) == ["acme", "alice", "chunk", "doc"]
    assert sorted((r["properties"]["source_node_id"], r["properties"]["target_node_id"], r["type"]) for r in graph_edges) == [
        ("alice", "acme", "works_at"), ("chunk", "alice", "contains"), ("chunk", "doc", "is_part_of")
    ]
    works = next(r for r in graph_edges if r["type"] == "works_at")["properties"]
    assert works["source_ref_keys"] == [k1] and isinstance(works["created_at"], int)

    # The per-search hot path and the neighbourhood read.
    filtered = query(ID_FILTERED, {"target_ids": ["acme"]})
    assert [(r["n_properties"]["id"], r["type"], r["m_properties"]["id"]) for r in filtered] == [
        ("alice", "works_at", "acme")
    ]
    hood = query(NEIGHBORHOOD, {"node_ids": ["doc"], "edge_types": ["is_part_of", "contains"]})
    # Within two hops over those types; the seed itself only by reusing a
    # relationship, which a path may not.
    assert sorted(r["nid"] for r in hood) == ["alice", "chunk"]

    # Deletes: detach, tolerant of missing ids.
    query(DELETE_NODES, {"node_ids": ["alice", "nobody"]})
    assert [query(c)[0]["count"] for c in COUNTS] == [3, 1]
    for label in [r["label"] for r in query("CALL db.labels()")]:
        query(f"""
            MATCH (node:`{label}`)
            DETACH DELETE node;
            """)
    assert query(IS_EMPTY)[0]["node_exists"] is False
