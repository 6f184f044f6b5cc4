"""cognee's graph interface (`GraphDBInterface`) on an embedded Plexus graph.

Data nodes carry the label ``DataNode`` and their cognee id in ``id``
(unique); a relationship's type is cognee's relationship name. Graph
metadata lives on ``GraphMetadata`` nodes, outside the data. Provenance is
native: the four lists (``source_ref_keys``, ``source_dataset_ids``,
``source_run_ids``, ``source_run_refs``) are list properties with
list-element indexes on nodes and on relationships of every type, so every
"who carries this key, dataset or run" question is an index seek, and an
``edge_text`` index answers "does any relationship still carry this text".
Attaching a source is a list update that commutes (`plexus.list.add`: the
dataset inserted in order, the key appended, and only where the key is new
the run's ref appended and its id inserted in order — cognee's rule and its
sorted lists, decided at commit): writers attaching sources to shared nodes
and relationships do not conflict. Folds in writes and removals use
cognee's own transitions (`source_ref_state`) inside one Plexus transaction
per call: a concurrent writer's change is never lost (the loser of a
conflict runs again on the winner's result).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import plexus
from cognee.infrastructure.databases.graph.graph_db_interface import GraphDBInterface
from cognee.infrastructure.databases.provenance import (
    EdgeDeleteData,
    EdgeIdentity,
    NodeDeleteData,
    get_dataset_id_from_source_ref_key,
)
from cognee.infrastructure.databases.provenance.source_ref_state import (
    provenance_after_attach,
    provenance_after_remove,
    provenance_attach_inputs,
)

from .store import autocommit, forget_database, in_transaction, open_database, quote, run, storable_props

LABEL = "DataNode"
PROVENANCE = ("source_ref_keys", "source_dataset_ids", "source_run_ids", "source_run_refs")

SCHEMA = [
    f"CREATE CONSTRAINT cognee_id IF NOT EXISTS FOR (n:{LABEL}) REQUIRE n.id IS UNIQUE",
    f"CREATE INDEX cognee_type IF NOT EXISTS FOR (n:{LABEL}) ON (n.type)",
    f"CREATE INDEX cognee_name IF NOT EXISTS FOR (n:{LABEL}) ON (n.name)",
    f"CREATE INDEX cognee_sets IF NOT EXISTS FOR (n:{LABEL}) ON EACH (n.belongs_to_set)",
    "CREATE INDEX cognee_metadata IF NOT EXISTS FOR (m:GraphMetadata) ON (m.key)",
    "CREATE INDEX cognee_edge_text IF NOT EXISTS FOR ()-[r]-() ON (r.edge_text)",
] + [
    stmt
    for field in PROVENANCE[:3]
    for stmt in (
        f"CREATE INDEX cognee_{field} IF NOT EXISTS FOR (n:{LABEL}) ON EACH (n.{field})",
        f"CREATE INDEX cognee_edge_{field} IF NOT EXISTS FOR ()-[r]-() ON EACH (r.{field})",
    )
]


def _public(props: Dict[str, Any]) -> Dict[str, Any]:
    """A property map as cognee reads it: provenance stripped."""
    return {k: v for k, v in props.items() if k not in PROVENANCE}


def _identity(e: Any) -> EdgeIdentity:
    if isinstance(e, EdgeIdentity):
        return e
    return EdgeIdentity(str(e[0]), str(e[1]), str(e[2]))


def _node_row(node: Any, properties: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """A DataPoint (or an `(id, props)` pair, or an id with `properties`) as
    the row an upsert writes."""
    if isinstance(node, str):
        raw = dict(properties or {})
        raw["id"] = node
    elif isinstance(node, tuple) and len(node) == 2:
        raw = dict(node[1] or {})
        raw.setdefault("id", node[0])
    else:
        raw = node.model_dump() if hasattr(node, "model_dump") else dict(node)
        raw.setdefault("type", type(node).__name__)
    for field in PROVENANCE:
        raw.pop(field, None)
    sets = raw.pop("belongs_to_set", None)
    if sets is not None:
        sets = [str(s.get("name", s)) if isinstance(s, dict) else str(getattr(s, "name", s)) for s in sets]
    props = storable_props(raw)
    props["id"] = str(raw["id"])
    return {"id": props["id"], "props": props, "sets": sets}


def _dedupe(rows: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One row per node id, the last one's properties with every row's sets."""
    out: Dict[str, Dict[str, Any]] = {}
    for row in rows:
        old = out.get(row["id"])
        if old is not None and (old["sets"] or row["sets"]):
            row["sets"] = list(dict.fromkeys((old["sets"] or []) + (row["sets"] or [])))
        out[row["id"]] = row
    return list(out.values())


UPSERT_NODES = f"""
UNWIND $rows AS row
MERGE (n:{LABEL} {{id: row.id}})
WITH n, row, coalesce(n.belongs_to_set, []) AS had
SET n += row.props
SET n.belongs_to_set = CASE WHEN row.sets IS NULL THEN n.belongs_to_set
                            ELSE had + [s IN row.sets WHERE NOT s IN had] END
"""

READ_NODE_PROVENANCE = f"""
UNWIND $ids AS id
MATCH (n:{LABEL} {{id: id}})
RETURN n.id AS id, coalesce(n.source_ref_keys, []) AS keys, coalesce(n.source_run_refs, []) AS refs
"""

WRITE_NODE_PROVENANCE = f"""
UNWIND $rows AS row
MATCH (n:{LABEL} {{id: row.id}})
SET n.source_ref_keys = row.c[0], n.source_dataset_ids = row.c[1],
    n.source_run_ids = row.c[2], n.source_run_refs = row.c[3]
"""

# Each relationship of `$edges`, given as [source id, target id, type].
EACH_EDGE = f"UNWIND $edges AS e MATCH (a:{LABEL} {{id: e[0]}})-[r]->(b:{LABEL} {{id: e[1]}}) WHERE type(r) = e[2] "

READ_EDGE_PROVENANCE = EACH_EDGE + """
RETURN e AS edge, coalesce(r.source_ref_keys, []) AS keys, coalesce(r.source_run_refs, []) AS refs
"""

WRITE_EDGE_PROVENANCE = f"""
UNWIND $rows AS row
MATCH (a:{LABEL} {{id: row.e[0]}})-[r]->(b:{LABEL} {{id: row.e[1]}})
WHERE type(r) = row.e[2]
SET r.source_ref_keys = row.c[0], r.source_dataset_ids = row.c[1],
    r.source_run_ids = row.c[2], r.source_run_refs = row.c[3]
"""


# Attaching one source key to each target, as cognee's `provenance_after_attach`
# would leave the lists: the key's dataset inserted in the sorted dataset
# list; the key appended unless there, and only then its run's ref appended
# and the run's id inserted in the sorted run list. Each is a list update that
# commutes, so concurrent attachers do not conflict.
ATTACH = """
CALL plexus.list.add({x}, 'source_dataset_ids', row.dataset, null, ['source_dataset_ids'])
YIELD changed
WITH {x}, row
CALL plexus.list.add({x}, 'source_ref_keys', row.key, row.then, ['source_run_ids']) YIELD changed
RETURN count(*) AS attached
"""

ATTACH_NODES = f"UNWIND $rows AS row MATCH (n:{LABEL} {{id: row.id}})" + ATTACH.format(x="n")

ATTACH_EDGES = (
    f"UNWIND $rows AS row MATCH (a:{LABEL} {{id: row.e[0]}})-[r]->(b:{LABEL} {{id: row.e[1]}}) "
    "WHERE type(r) = row.e[2]" + ATTACH.format(x="r")
)


def _attach_rows(what: str, targets: list, keys: Sequence[str], run_id: Optional[str]) -> list:
    """One row per key and target, in key order: the key, its dataset, and
    the run's ref and id that go with it where it is new (cognee's
    `provenance_attach_inputs`)."""
    rows = []
    for key in dict.fromkeys(keys):
        inputs = provenance_attach_inputs(key, run_id)
        then = {"source_run_refs": list(inputs.add_run_refs), "source_run_ids": list(inputs.add_run_ids)}
        for target in targets:
            rows.append({what: target, "key": key, "dataset": inputs.add_dataset_ids[0], "then": then})
    return rows


def _fold(tx: plexus.Transaction, read: str, write: str, what: str, targets: list, change) -> None:
    """Reads the provenance of `targets` (node ids, or edges as lists),
    applies `change(keys, run_refs)` and writes the four lists back."""
    rows = []
    for r in tx.query(read, {what: targets}).fetchall():
        cols = change(list(r["keys"]), list(r["refs"]))
        key = "id" if what == "ids" else "e"
        rows.append({key: r["id" if what == "ids" else "edge"], "c": [list(c) for c in cols]})
    if rows:
        tx.query(write, {"rows": rows}).consume()


def _attach(keys: Sequence[str], run_id: Optional[str]):
    return lambda current, refs: provenance_after_attach(current, refs, list(keys), run_id)


def _remove(keys: Sequence[str]):
    return lambda current, refs: provenance_after_remove(current, refs, list(keys))


class PlexusGraphAdapter(GraphDBInterface):
    """cognee's graph store in a Plexus database.

    ``graph_database_url`` is the database folder (``:memory:`` for one in
    memory; none for cognee's default place); ``graph_database_name`` the
    graph in it (``cognee``).
    """

    supports_cypher_queries = True
    supports_per_row_source_refs = False

    def __init__(
        self,
        graph_database_url: Optional[str] = None,
        graph_database_name: Optional[str] = None,
        database: Optional[plexus.Database] = None,
        database_name: Optional[str] = None,
        **_ignored: Any,
    ) -> None:
        # cognee's factory passes the name as `database_name`.
        graph_database_name = graph_database_name or database_name
        root = database if database is not None else open_database(graph_database_url)
        self._owned = database is None and graph_database_url == ":memory:"
        self.db = root.graph(graph_database_name or "cognee")
        for stmt in SCHEMA:
            autocommit(self.db, stmt)

    async def initialize(self) -> None:
        """The schema is made when the adapter is; nothing more to do."""

    async def close(self) -> None:
        if self._owned:
            forget_database(self.db)

    # -- raw queries ---------------------------------------------------------

    def _rows(self, text: str, params: Optional[dict] = None) -> List[Dict[str, Any]]:
        return autocommit(self.db, text, params)

    async def _write(self, text: str, params: Optional[dict] = None) -> List[Dict[str, Any]]:
        """Runs one writing statement in a transaction of its own (run again
        on a conflict); its rows."""
        return await run(in_transaction, self.db, lambda tx: tx.query(text, params or {}).fetchall())

    async def query(self, query: str, params: Optional[dict] = None) -> List[Dict[str, Any]]:
        return await run(self._rows, query, params)

    async def is_empty(self) -> bool:
        rows = await run(self._rows, f"MATCH (n:{LABEL}) RETURN n.id AS id LIMIT 1")
        return not rows

    # -- nodes ---------------------------------------------------------------

    def _add_nodes(self, nodes: list, key: Optional[str], run_id: Optional[str]) -> None:
        rows = _dedupe(_node_row(n) for n in nodes)
        if not rows:
            return

        def work(tx: plexus.Transaction) -> None:
            tx.query(UPSERT_NODES, {"rows": rows}).consume()
            if key is not None:
                ids = [r["id"] for r in rows]
                _fold(tx, READ_NODE_PROVENANCE, WRITE_NODE_PROVENANCE, "ids", ids, _attach([key], run_id))

        in_transaction(self.db, work)

    async def add_node(self, node: Any, properties: Optional[Dict[str, Any]] = None) -> None:
        row = _node_row(node, properties)
        await run(self._add_nodes, [(row["id"], {**row["props"], "belongs_to_set": row["sets"]})], None, None)

    async def add_nodes(self, nodes: list, source_ref_key: Any = None, pipeline_run_id: Any = None) -> None:
        if isinstance(source_ref_key, dict):
            # Per-row owners: one fold per owner key.
            groups: Dict[str, list] = defaultdict(list)
            for n in nodes:
                groups[source_ref_key.get(str(_node_row(n)["id"]))].append(n)
            for key, group in groups.items():
                await run(self._add_nodes, group, key, _str(pipeline_run_id))
            return
        await run(self._add_nodes, nodes, _str(source_ref_key), _str(pipeline_run_id))

    async def delete_node(self, node_id: str) -> None:
        await self.delete_nodes([node_id])

    async def delete_nodes(self, node_ids: List[str]) -> None:
        text = f"UNWIND $ids AS id MATCH (n:{LABEL} {{id: id}}) DETACH DELETE n"
        await self._write(text, {"ids": [str(i) for i in node_ids]})

    async def has_node(self, node_id: str) -> bool:
        rows = await run(self._rows, f"MATCH (n:{LABEL} {{id: $id}}) RETURN n.id AS id", {"id": str(node_id)})
        return bool(rows)

    async def get_node(self, node_id: str) -> Optional[Dict[str, Any]]:
        found = await self.get_nodes([node_id])
        return found[0] if found else None

    async def get_nodes(self, node_ids: List[str]) -> List[Dict[str, Any]]:
        text = f"UNWIND $ids AS id MATCH (n:{LABEL} {{id: id}}) RETURN properties(n) AS p"
        rows = await run(self._rows, text, {"ids": [str(i) for i in node_ids]})
        return [_public(r["p"]) for r in rows]

    async def update_node(self, node_id: str, values: Dict[str, Any]) -> bool:
        text = f"MATCH (n:{LABEL} {{id: $id}}) SET n += $props RETURN n.id AS id"
        props = storable_props({k: v for k, v in values.items() if k not in PROVENANCE and k != "id"})
        rows = await self._write(text, {"id": str(node_id), "props": props})
        return bool(rows)

    async def update_chunk_index(self, chunk_indexes: Dict[str, int]) -> None:
        text = f"UNWIND $rows AS row MATCH (n:{LABEL} {{id: row[0]}}) SET n.chunk_index = row[1]"
        rows = [[str(k), int(v)] for k, v in chunk_indexes.items()]
        await self._write(text, {"rows": rows})

    # -- edges ---------------------------------------------------------------

    def _add_edges(self, edges: list, key: Optional[str], run_id: Optional[str]) -> None:
        by_type: Dict[str, Dict[Tuple[str, str], Dict[str, Any]]] = defaultdict(dict)
        for e in edges:
            src, dst, rel = str(e[0]), str(e[1]), str(e[2])
            props = storable_props(dict(e[3] or {}) if len(e) > 3 else {})
            for field in PROVENANCE:
                props.pop(field, None)
            props.setdefault("relationship_name", rel)
            by_type[rel][(src, dst)] = props
        if not by_type:
            return

        def work(tx: plexus.Transaction) -> None:
            written = []
            for rel, rows in by_type.items():
                text = (
                    f"UNWIND $rows AS row MATCH (a:{LABEL} {{id: row.s}}) MATCH (b:{LABEL} {{id: row.t}}) "
                    f"MERGE (a)-[r:{quote(rel)}]->(b) SET r += row.p RETURN row.s AS s, row.t AS t"
                )
                params = {"rows": [{"s": s, "t": t, "p": p} for (s, t), p in rows.items()]}
                written += [[r["s"], r["t"], rel] for r in tx.query(text, params).fetchall()]
            if key is not None and written:
                _fold(tx, READ_EDGE_PROVENANCE, WRITE_EDGE_PROVENANCE, "edges", written, _attach([key], run_id))

        in_transaction(self.db, work)

    async def add_edge(self, source_id: str, target_id: str, relationship_name: str, properties: Optional[Dict[str, Any]] = None) -> None:
        await run(self._add_edges, [(source_id, target_id, relationship_name, properties or {})], None, None)

    async def add_edges(self, edges: list, source_ref_key: Any = None, pipeline_run_id: Any = None) -> None:
        if isinstance(source_ref_key, dict):
            groups: Dict[Any, list] = defaultdict(list)
            for e in edges:
                groups[source_ref_key.get(_identity(e))].append(e)
            for key, group in groups.items():
                await run(self._add_edges, group, key, _str(pipeline_run_id))
            return
        await run(self._add_edges, edges, _str(source_ref_key), _str(pipeline_run_id))

    def _existing(self, edges: Iterable[Any]) -> List[Tuple[str, str, str]]:
        text = EACH_EDGE + "RETURN DISTINCT e[0] AS s, e[1] AS t, e[2] AS rel"
        wanted = [[str(e[0]), str(e[1]), str(e[2])] for e in edges]
        return [(r["s"], r["t"], r["rel"]) for r in self._rows(text, {"edges": wanted})]

    async def has_edge(self, source_id: str, target_id: str, relationship_name: str) -> bool:
        return bool(await run(self._existing, [(source_id, target_id, relationship_name)]))

    async def has_edges(self, edges: list) -> list:
        return await run(self._existing, edges)

    async def delete_edge_triples(self, edges: List[EdgeIdentity]) -> None:
        await self._write(EACH_EDGE + "DELETE r", {"edges": _triples(edges)})

    # -- provenance ----------------------------------------------------------

    def _change_nodes(self, node_ids: List[str], change) -> None:
        ids = [str(i) for i in node_ids]
        in_transaction(self.db, lambda tx: _fold(tx, READ_NODE_PROVENANCE, WRITE_NODE_PROVENANCE, "ids", ids, change))

    def _change_edges(self, edges: List[Any], change) -> None:
        wanted = _triples(edges)
        in_transaction(self.db, lambda tx: _fold(tx, READ_EDGE_PROVENANCE, WRITE_EDGE_PROVENANCE, "edges", wanted, change))

    async def attach_node_source_refs(self, node_ids, source_ref_keys, pipeline_run_id=None) -> None:
        ids = [str(i) for i in node_ids]
        rows = _attach_rows("id", ids, source_ref_keys, _str(pipeline_run_id))
        if rows:
            await self._write(ATTACH_NODES, {"rows": rows})

    async def attach_edge_source_refs(self, edges, source_ref_keys, pipeline_run_id=None) -> None:
        rows = _attach_rows("e", _triples(edges), source_ref_keys, _str(pipeline_run_id))
        if rows:
            await self._write(ATTACH_EDGES, {"rows": rows})

    async def remove_node_source_refs(self, node_ids, source_ref_keys) -> None:
        await run(self._change_nodes, node_ids, _remove(source_ref_keys))

    async def remove_edge_source_refs(self, edges, source_ref_keys) -> None:
        await run(self._change_edges, edges, _remove(source_ref_keys))

    async def get_node_delete_data(self, node_ids: List[str]) -> Dict[str, NodeDeleteData]:
        text = f"UNWIND $ids AS id MATCH (n:{LABEL} {{id: id}}) RETURN n.id AS id, properties(n) AS p"
        rows = await run(self._rows, text, {"ids": [str(i) for i in node_ids]})
        out = {}
        for r in rows:
            p = r["p"]
            out[r["id"]] = NodeDeleteData(
                node_id=r["id"],
                node_type=str(p.get("type", "")),
                indexed_fields=_index_fields(p.get("metadata")),
                node_properties=_public(p),
                **{f: list(p.get(f) or []) for f in PROVENANCE},
            )
        return out

    async def get_edge_delete_data(self, edges: List[EdgeIdentity]) -> Dict[EdgeIdentity, EdgeDeleteData]:
        text = EACH_EDGE + "RETURN e AS e, properties(r) AS p"
        out = {}
        for r in await run(self._rows, text, {"edges": _triples(edges)}):
            identity, p = EdgeIdentity(*r["e"]), r["p"]
            out[identity] = EdgeDeleteData(
                edge=identity,
                edge_text=str(p.get("edge_text") or identity.relationship_name),
                edge_properties=_public(p),
                **{f: list(p.get(f) or []) for f in PROVENANCE},
            )
        return out

    async def find_nodes_by_source_ref(self, source_ref_key: str) -> List[str]:
        text = f"MATCH (n:{LABEL}) WHERE $k IN n.source_ref_keys RETURN n.id AS id ORDER BY id"
        return [r["id"] for r in await run(self._rows, text, {"k": source_ref_key})]

    async def find_edges_by_source_ref(self, source_ref_key: str) -> List[EdgeIdentity]:
        text = (
            f"MATCH (a:{LABEL})-[r]->(b:{LABEL}) WHERE $k IN r.source_ref_keys "
            "RETURN a.id AS s, b.id AS t, type(r) AS rel ORDER BY s, t, rel"
        )
        return [EdgeIdentity(r["s"], r["t"], r["rel"]) for r in await run(self._rows, text, {"k": source_ref_key})]

    def _node_refs(self, field: str, value: str, keep) -> Dict[str, List[str]]:
        text = f"MATCH (n:{LABEL}) WHERE $v IN n.{field} RETURN n.id AS id, n.source_ref_keys AS keys, n.source_run_refs AS refs"
        out = {}
        for r in self._rows(text, {"v": value}):
            keys = keep(list(r["keys"] or []), list(r["refs"] or []))
            if keys:
                out[r["id"]] = keys
        return out

    def _edge_refs(self, field: str, value: str, keep) -> Dict[EdgeIdentity, List[str]]:
        text = (
            f"MATCH (a:{LABEL})-[r]->(b:{LABEL}) WHERE $v IN r.{field} "
            "RETURN a.id AS s, b.id AS t, type(r) AS rel, r.source_ref_keys AS keys, r.source_run_refs AS refs"
        )
        out = {}
        for r in self._rows(text, {"v": value}):
            keys = keep(list(r["keys"] or []), list(r["refs"] or []))
            if keys:
                out[EdgeIdentity(r["s"], r["t"], r["rel"])] = keys
        return out

    async def find_node_source_refs_by_dataset(self, dataset_id: str) -> Dict[str, List[str]]:
        return await run(self._node_refs, "source_dataset_ids", str(dataset_id), _of_dataset(dataset_id))

    async def find_edge_source_refs_by_dataset(self, dataset_id: str) -> Dict[EdgeIdentity, List[str]]:
        return await run(self._edge_refs, "source_dataset_ids", str(dataset_id), _of_dataset(dataset_id))

    async def find_node_source_refs_by_pipeline_run(self, pipeline_run_id: str) -> Dict[str, List[str]]:
        return await run(self._node_refs, "source_run_ids", str(pipeline_run_id), _of_run(pipeline_run_id))

    async def find_edge_source_refs_by_pipeline_run(self, pipeline_run_id: str) -> Dict[EdgeIdentity, List[str]]:
        return await run(self._edge_refs, "source_run_ids", str(pipeline_run_id), _of_run(pipeline_run_id))

    async def set_graph_metadata(self, metadata: Dict[str, str]) -> None:
        text = "UNWIND $rows AS row MERGE (m:GraphMetadata {key: row[0]}) SET m.value = row[1]"
        rows = [[str(k), str(v)] for k, v in metadata.items()]
        await self._write(text, {"rows": rows})

    async def get_graph_metadata(self) -> Dict[str, str]:
        rows = await run(self._rows, "MATCH (m:GraphMetadata) RETURN m.key AS k, m.value AS v")
        return {r["k"]: r["v"] for r in rows}

    async def remove_belongs_to_set_tags(self, tags: List[str], node_ids: Optional[List[str]] = None) -> None:
        if not tags or (node_ids is not None and not node_ids):
            return
        scope = "" if node_ids is None else "AND n.id IN $ids"
        strip = (
            f"UNWIND $tags AS tag MATCH (n:{LABEL}) WHERE tag IN n.belongs_to_set {scope} "
            "WITH DISTINCT n SET n.belongs_to_set = [s IN n.belongs_to_set WHERE NOT s IN $tags]"
        )
        edges = (
            f"MATCH (n:{LABEL})-[r:belongs_to_set]->(s:{LABEL}) "
            f"WHERE s.type = 'NodeSet' AND s.name IN $tags {scope} DELETE r"
        )
        params = {"tags": list(tags), "ids": [str(i) for i in node_ids or []]}

        def work(tx: plexus.Transaction) -> None:
            tx.query(strip, params).consume()
            tx.query(edges, params).consume()

        await run(in_transaction, self.db, work)

    # -- reads of the graph --------------------------------------------------

    def _nodes_and_edges(self, node_filter: str, edge_filter: str, params: dict):
        nodes = self._rows(
            f"MATCH (n:{LABEL}) {node_filter} RETURN n.id AS id, properties(n) AS p", params
        )
        edges = self._rows(
            f"MATCH (a:{LABEL})-[r]->(b:{LABEL}) {edge_filter} "
            "RETURN a.id AS s, b.id AS t, type(r) AS rel, properties(r) AS p",
            params,
        )
        return (
            [(r["id"], _public(r["p"])) for r in nodes],
            [(r["s"], r["t"], r["rel"], _public(r["p"])) for r in edges],
        )

    async def get_graph_data(self):
        return await run(self._nodes_and_edges, "", "", {})

    async def get_filtered_graph_data(self, attribute_filters: List[Dict[str, List[Any]]]):
        conditions = []
        params: Dict[str, Any] = {}
        for i, filters in enumerate(attribute_filters):
            for j, (attr, values) in enumerate(filters.items()):
                conditions.append((attr, f"v{i}_{j}"))
                params[f"v{i}_{j}"] = [str(v) if not isinstance(v, (int, float, bool)) else v for v in values]

        def matches(var: str) -> str:
            return " AND ".join(f"{var}.{quote(a)} IN ${p}" for a, p in conditions) or "true"

        return await run(
            self._nodes_and_edges,
            f"WHERE {matches('n')}",
            f"WHERE {matches('a')} AND {matches('b')}",
            params,
        )

    async def get_id_filtered_graph_data(self, target_ids: List[str]):
        """Every edge with an end among `target_ids`, and both ends of each:
        cognee's per-search hot path, one seek per id."""
        text = (
            f"UNWIND $ids AS id MATCH (a:{LABEL} {{id: id}})-[r]-(b:{LABEL}) "
            "RETURN startNode(r).id AS s, endNode(r).id AS t, type(r) AS rel, properties(r) AS p, "
            "properties(a) AS pa, properties(b) AS pb"
        )

        def read():
            nodes: Dict[str, Dict[str, Any]] = {}
            edges: Dict[Tuple[str, str, str], Dict[str, Any]] = {}
            for r in self._rows(text, {"ids": [str(i) for i in target_ids]}):
                for p in (r["pa"], r["pb"]):
                    nodes[p["id"]] = _public(p)
                edges[(r["s"], r["t"], r["rel"])] = _public(r["p"])
            return (
                list(nodes.items()),
                [(s, t, rel, p) for (s, t, rel), p in edges.items()],
            )

        return await run(read)

    async def get_edges(self, node_id: str):
        text = (
            f"MATCH (n:{LABEL} {{id: $id}})-[r]-(m:{LABEL}) "
            "RETURN startNode(r).id AS s, endNode(r).id AS t, type(r) AS rel"
        )
        rows = await run(self._rows, text, {"id": str(node_id)})
        return [(r["s"], r["t"], {"relationship_name": r["rel"]}) for r in rows]

    async def get_neighbors(self, node_id: str) -> List[Dict[str, Any]]:
        text = f"MATCH (n:{LABEL} {{id: $id}})-[]-(m:{LABEL}) RETURN DISTINCT properties(m) AS p"
        return [_public(r["p"]) for r in await run(self._rows, text, {"id": str(node_id)})]

    async def get_connections(self, node_id: Any):
        text = (
            f"MATCH (n:{LABEL} {{id: $id}})-[r]-(m:{LABEL}) "
            "RETURN properties(startNode(r)) AS s, type(r) AS rel, properties(r) AS p, properties(endNode(r)) AS t"
        )
        rows = await run(self._rows, text, {"id": str(node_id)})
        return [
            (_public(r["s"]), {**_public(r["p"]), "relationship_name": r["rel"]}, _public(r["t"]))
            for r in rows
        ]

    async def get_neighborhood(self, node_ids: List[str], depth: int = 1, edge_types: Optional[List[str]] = None):
        """The nodes within `depth` undirected hops of `node_ids` (every hop
        of a type in `edge_types` when given), and every edge among them."""

        def read():
            seen = set(str(i) for i in node_ids)
            frontier = list(seen)
            step = (
                f"UNWIND $ids AS id MATCH (n:{LABEL} {{id: id}})-[r]-(m:{LABEL}) "
                "WHERE $types IS NULL OR type(r) IN $types RETURN DISTINCT m.id AS id"
            )
            for _ in range(max(0, int(depth))):
                if not frontier:
                    break
                found = [r["id"] for r in self._rows(step, {"ids": frontier, "types": edge_types})]
                frontier = [i for i in found if i not in seen]
                seen.update(frontier)
            return self._subgraph(sorted(seen), edge_types)

        return await run(read)

    def _subgraph(self, ids: List[str], edge_types: Optional[List[str]] = None):
        nodes = self._rows(
            f"UNWIND $ids AS id MATCH (n:{LABEL} {{id: id}}) RETURN n.id AS id, properties(n) AS p", {"ids": ids}
        )
        edges = self._rows(
            f"UNWIND $ids AS id MATCH (a:{LABEL} {{id: id}})-[r]->(b:{LABEL}) "
            "WHERE b.id IN $ids AND ($types IS NULL OR type(r) IN $types) "
            "RETURN a.id AS s, b.id AS t, type(r) AS rel, properties(r) AS p",
            {"ids": ids, "types": edge_types},
        )
        return (
            [(r["id"], _public(r["p"])) for r in nodes],
            [(r["s"], r["t"], r["rel"], _public(r["p"])) for r in edges],
        )

    async def get_nodeset_subgraph(self, node_type: Any, node_name: List[str], node_name_filter_operator: str = "OR"):
        """The nodes of type `node_type` named in `node_name`, their
        neighbours (with AND, those adjacent to every one of them), and every
        edge among all of these."""
        type_name = getattr(node_type, "__name__", str(node_type))

        def read():
            primaries = [
                r["id"]
                for r in self._rows(
                    f"UNWIND $names AS name MATCH (s:{LABEL} {{name: name}}) WHERE s.type = $t RETURN DISTINCT s.id AS id",
                    {"names": list(node_name), "t": type_name},
                )
            ]
            if not primaries:
                return [], []
            rows = self._rows(
                f"UNWIND $ids AS id MATCH (s:{LABEL} {{id: id}})-[]-(m:{LABEL}) RETURN id AS p, m.id AS m",
                {"ids": primaries},
            )
            near: Dict[str, set] = defaultdict(set)
            for r in rows:
                near[r["m"]].add(r["p"])
            if str(node_name_filter_operator).upper() == "AND":
                neighbours = [m for m, ps in near.items() if len(ps) == len(primaries)]
            else:
                neighbours = list(near)
            return self._subgraph(sorted(set(primaries) | set(neighbours)))

        return await run(read)

    async def get_triplets_batch(self, offset: int, limit: int) -> List[Dict[str, Any]]:
        text = (
            f"MATCH (a:{LABEL})-[r]->(b:{LABEL}) "
            "RETURN properties(a) AS a, properties(r) AS r, type(r) AS rel, properties(b) AS b "
            "ORDER BY a.id, b.id, rel SKIP $offset LIMIT $limit"
        )
        rows = await run(self._rows, text, {"offset": int(offset), "limit": int(limit)})
        return [
            {
                "start_node": _public(r["a"]),
                "relationship_properties": {**_public(r["r"]), "relationship_name": r["rel"]},
                "end_node": _public(r["b"]),
            }
            for r in rows
        ]

    async def get_graph_counts(self) -> Tuple[int, int]:
        def read():
            n = self._rows(f"MATCH (n:{LABEL}) RETURN count(n) AS c")[0]["c"]
            e = self._rows(f"MATCH (:{LABEL})-[r]->(:{LABEL}) RETURN count(r) AS c")[0]["c"]
            return int(n), int(e)

        return await run(read)

    async def get_graph_metrics(self, include_optional: bool = False) -> Dict[str, Any]:
        nodes, edges = await self.get_graph_data()
        n, m = len(nodes), len(edges)
        sizes = _component_sizes([i for i, _ in nodes], [(s, t) for s, t, _, _ in edges])
        metrics = {
            "num_nodes": n,
            "num_edges": m,
            "mean_degree": (2 * m / n) if n else 0,
            "edge_density": (m / (n * (n - 1))) if n > 1 else 0,
            "num_connected_components": len(sizes),
            "sizes_of_connected_components": sizes,
        }
        optional = {"num_selfloops": -1, "diameter": -1, "avg_shortest_path_length": -1, "avg_clustering": -1}
        if include_optional:
            optional["num_selfloops"] = sum(1 for s, t, _, _ in edges if s == t)
        metrics.update(optional)
        return metrics

    async def delete_graph(self) -> None:
        await self._write("MATCH (n) DETACH DELETE n")


def _triples(edges: Iterable[Any]) -> List[List[str]]:
    """Edges as the [source id, target id, type] lists `EACH_EDGE` takes."""
    return [[e.source_id, e.target_id, e.relationship_name] for e in map(_identity, edges)]


def _str(value: Any) -> Optional[str]:
    return None if value is None else str(value)


def _index_fields(metadata: Any) -> List[str]:
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            return []
    if isinstance(metadata, dict):
        return [str(f) for f in metadata.get("index_fields") or []]
    return []


def _of_dataset(dataset_id: Any):
    want = str(dataset_id)
    return lambda keys, _refs: [k for k in keys if str(get_dataset_id_from_source_ref_key(k)) == want]


def _of_run(pipeline_run_id: Any):
    from cognee.infrastructure.databases.provenance import (
        get_pipeline_run_id_from_source_run_ref,
        get_source_ref_key_from_source_run_ref,
    )

    want = str(pipeline_run_id)

    def keep(keys: List[str], refs: List[str]) -> List[str]:
        attached = {
            get_source_ref_key_from_source_run_ref(ref)
            for ref in refs
            if str(get_pipeline_run_id_from_source_run_ref(ref)) == want
        }
        return [k for k in keys if k in attached]

    return keep


def _component_sizes(ids: List[str], edges: List[Tuple[str, str]]) -> List[int]:
    """Sizes of the weakly connected components, largest first (union-find)."""
    parent = {i: i for i in ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for s, t in edges:
        if s in parent and t in parent:
            parent[find(s)] = find(t)
    sizes: Dict[str, int] = defaultdict(int)
    for i in ids:
        sizes[find(i)] += 1
    return sorted(sizes.values(), reverse=True)
