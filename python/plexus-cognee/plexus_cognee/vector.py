"""cognee's vector interface (`VectorDBInterface`) on the same Plexus database.

A collection (``<Type>_<field>``) is a label in graph ``cognee_vectors``:
one node per data point with its ``id``, ``vector``, ``payload`` (the data
point as JSON text) and ``belongs_to_set`` list, and a vector index named
after the collection (HNSW, cosine). Node-set filters read a list-element
index on ``belongs_to_set``, so a search scoped to one set ranks the set's
members alone. Scores are cosine distances, lower is better, as cognee's
built-in adapters report them. A data point embedded as the zero vector is
kept without a vector: cosine gives it no rank, so no search returns it.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence
from uuid import UUID

import plexus
from cognee.infrastructure.databases.vector.models.ScoredResult import ScoredResult
from cognee.infrastructure.databases.vector.vector_db_interface import VectorDBInterface
from cognee.infrastructure.engine import DataPoint

from .store import autocommit, forget_database, in_transaction, open_database, quote, run, to_json


def _distance(score: float) -> float:
    """Cosine distance from Plexus's cosine score, `(1 + cos) / 2`."""
    return max(0.0, 2.0 * (1.0 - float(score)))


def _uuid(value: Any) -> Any:
    try:
        return UUID(str(value))
    except ValueError:
        return value


def _sets(dp: Any) -> Optional[List[str]]:
    sets = getattr(dp, "belongs_to_set", None)
    if sets is None:
        return None
    return [str(getattr(s, "name", s)) for s in sets]


class PlexusVectorAdapter(VectorDBInterface):
    """cognee's vector store in a Plexus database (``url`` is its folder,
    ``:memory:`` for one in memory; ``database_name`` the graph holding the
    vectors)."""

    name = "Plexus"
    supports_payload_update = True

    def __init__(
        self,
        url: Optional[str] = None,
        api_key: Optional[str] = None,
        embedding_engine: Any = None,
        database_name: Optional[str] = None,
        database: Optional[plexus.Database] = None,
        **_ignored: Any,
    ) -> None:
        root = database if database is not None else open_database(url)
        self._owned = database is None and url == ":memory:"
        self.db = root.graph(database_name or "cognee_vectors")
        self.embedding_engine = embedding_engine
        # Collections known to exist, so that a search need not ask the
        # database: none is ever dropped (`prune` empties them), and a name
        # not known yet is asked (another adapter may have made it).
        self._known: set = set()

    # -- collections ---------------------------------------------------------

    def _collections(self) -> List[str]:
        rows = autocommit(self.db, "SHOW VECTOR INDEXES")
        names = [r["name"] for r in rows]
        self._known.update(names)
        return names

    def _exists(self, collection: str) -> bool:
        return collection in self._known or collection in self._collections()

    async def has_collection(self, collection_name: str) -> bool:
        return collection_name in self._known or await run(self._exists, collection_name)

    def _create(self, collection: str, dimensions: int) -> None:
        label = quote(collection)
        for text in (
            f"CREATE VECTOR INDEX {label} IF NOT EXISTS FOR (n:{label}) ON (n.vector) "
            "OPTIONS {indexConfig: {`vector.dimensions`: $d, `vector.similarity_function`: 'cosine'}}",
            f"CREATE INDEX {quote(collection + '.id')} IF NOT EXISTS FOR (n:{label}) ON (n.id)",
            f"CREATE INDEX {quote(collection + '.sets')} IF NOT EXISTS FOR (n:{label}) ON EACH (n.belongs_to_set)",
        ):
            autocommit(self.db, text, {"d": int(dimensions)})
        self._known.add(collection)

    async def create_collection(self, collection_name: str, payload_schema: Any = None) -> None:
        await run(self._create, collection_name, self.embedding_engine.get_vector_size())

    # -- writes --------------------------------------------------------------

    def _upsert(self, collection: str, rows: List[Dict[str, Any]], dimensions: int) -> None:
        if not self._exists(collection):
            self._create(collection, dimensions)
        text = (
            f"UNWIND $rows AS row MERGE (n:{quote(collection)} {{id: row.id}}) "
            "WITH n, row, coalesce(n.belongs_to_set, []) AS had "
            # A zero vector has no direction: the row is kept, with no vector,
            # so that no similarity search finds it (as no cosine ranks it).
            "SET n.vector = CASE WHEN any(x IN row.v WHERE x <> 0.0) THEN row.v END, n.payload = row.p, "
            "n.belongs_to_set = CASE WHEN row.s IS NULL THEN n.belongs_to_set "
            "ELSE had + [s IN row.s WHERE NOT s IN had] END"
        )
        in_transaction(self.db, lambda tx: tx.query(text, {"rows": rows}).consume())

    async def _embed_and_write(self, collection: str, items: List[tuple]) -> None:
        """Embeds the text of each `(id, text, payload, sets)` and upserts."""
        if not items:
            return
        vectors = await self.embedding_engine.embed_text([text for _, text, _, _ in items])
        rows = [
            {"id": str(i), "v": [float(x) for x in vec], "p": to_json(payload), "s": sets}
            for (i, _, payload, sets), vec in zip(items, vectors)
        ]
        await run(self._upsert, collection, rows, len(rows[0]["v"]))

    async def create_data_points(self, collection_name: str, data_points: List[DataPoint]) -> None:
        await self._embed_and_write(
            collection_name,
            [(dp.id, DataPoint.get_embeddable_data(dp), _payload(dp), _sets(dp)) for dp in data_points],
        )

    async def create_vector_index(self, index_name: str, index_property_name: str) -> None:
        await self.create_collection(f"{index_name}_{index_property_name}")

    async def index_data_points(self, index_name: str, index_property_name: str, data_points: List[DataPoint]) -> None:
        """Each data point's field `index_property_name`, embedded into
        collection `<index_name>_<field>` with the reference fields cognee's
        search shows beside a hit."""
        items = []
        for dp in data_points:
            payload = {"id": str(dp.id), "text": str(getattr(dp, index_property_name, "") or "")}
            payload.update({k: getattr(dp, k, None) for k in _REFERENCE_FIELDS})
            items.append((dp.id, payload["text"], payload, _sets(dp) or []))
        await self._embed_and_write(f"{index_name}_{index_property_name}", items)

    async def upsert_raw_vectors(self, collection_name: str, points: List[dict], payload_schema: Any = None) -> None:
        if not points:
            return
        rows = []
        for p in points:
            payload = p.get("payload") or {}
            sets = payload.get("belongs_to_set") if isinstance(payload, dict) else None
            rows.append(
                {
                    "id": str(p["id"]),
                    "v": [float(x) for x in p["vector"]],
                    "p": payload if isinstance(payload, str) else to_json(payload),
                    "s": None if sets is None else [str(s) for s in sets],
                }
            )
        await run(self._upsert, collection_name, rows, len(rows[0]["v"]))

    async def update_payload(self, collection_name: str, payload_updates: Dict[str, Dict[str, Any]]) -> None:
        def work(tx: plexus.Transaction) -> None:
            read = f"UNWIND $ids AS id MATCH (n:{quote(collection_name)} {{id: id}}) RETURN n.id AS id, n.payload AS p"
            rows = []
            for r in tx.query(read, {"ids": list(payload_updates)}).fetchall():
                payload = json.loads(r["p"] or "{}")
                payload.update(payload_updates[r["id"]])
                rows.append({"id": r["id"], "p": to_json(payload)})
            write = f"UNWIND $rows AS row MATCH (n:{quote(collection_name)} {{id: row.id}}) SET n.payload = row.p"
            tx.query(write, {"rows": rows}).consume()

        if payload_updates and await self.has_collection(collection_name):
            await run(in_transaction, self.db, work)

    async def delete_data_points(self, collection_name: str, data_point_ids: Sequence[Any]) -> None:
        if not data_point_ids or not await self.has_collection(collection_name):
            return
        text = f"UNWIND $ids AS id MATCH (n:{quote(collection_name)} {{id: id}}) DETACH DELETE n"
        ids = [str(i) for i in data_point_ids]
        await run(in_transaction, self.db, lambda tx: tx.query(text, {"ids": ids}).consume())

    async def remove_belongs_to_set_tags(self, tags: List[str], node_ids: Optional[List[str]] = None) -> None:
        """Strips `tags` from every row's sets (of the rows `node_ids` names,
        when given); a row left in no set is deleted."""
        if not tags or (node_ids is not None and not node_ids):
            return
        scope = "" if node_ids is None else "AND n.id IN $ids"
        params = {"tags": list(tags), "ids": [str(i) for i in node_ids or []]}

        def work(tx: plexus.Transaction) -> None:
            for collection in self._collections():
                label = quote(collection)
                tx.query(
                    f"UNWIND $tags AS tag MATCH (n:{label}) WHERE tag IN n.belongs_to_set {scope} "
                    "WITH DISTINCT n SET n.belongs_to_set = [s IN n.belongs_to_set WHERE NOT s IN $tags] "
                    "WITH n WHERE size(n.belongs_to_set) = 0 DETACH DELETE n",
                    params,
                ).consume()

        await run(in_transaction, self.db, work)

    # -- reads ---------------------------------------------------------------

    async def retrieve(self, collection_name: str, data_point_ids: List[str]) -> List[ScoredResult]:
        if not await self.has_collection(collection_name):
            return []
        text = f"UNWIND $ids AS id MATCH (n:{quote(collection_name)} {{id: id}}) RETURN n.id AS id, n.payload AS p"
        rows = await run(self._rows, text, {"ids": [str(i) for i in data_point_ids]})
        return [ScoredResult(id=_uuid(r["id"]), payload=json.loads(r["p"] or "{}"), score=0) for r in rows]

    async def score_by_ids(self, collection_name: str, data_point_ids: List[str], query_vector: List[float]) -> List[ScoredResult]:
        if not data_point_ids or not await self.has_collection(collection_name):
            return []
        text = (
            f"UNWIND $ids AS id MATCH (n:{quote(collection_name)} {{id: id}}) "
            "RETURN n.id AS id, vector.similarity.cosine(n.vector, $q) AS s"
        )
        rows = await run(self._rows, text, {"ids": [str(i) for i in data_point_ids], "q": [float(x) for x in query_vector]})
        return [ScoredResult(id=_uuid(r["id"]), score=_distance(r["s"])) for r in rows]

    def _rows(self, text: str, params: dict) -> List[Dict[str, Any]]:
        return autocommit(self.db, text, params)

    def _search(self, collection: str, vector: List[float], limit: Optional[int], include_payload: bool,
                node_name: Optional[List[str]], operator: str) -> List[ScoredResult]:
        if limit is None:
            limit = self._rows(f"MATCH (n:{quote(collection)}) RETURN count(n) AS c", {})[0]["c"]
        if limit <= 0:
            return []
        params: Dict[str, Any] = {"index": collection, "k": int(limit), "q": vector}
        where = ""
        if node_name:
            # Each set a conjunct of its own: one set (or each set of an AND)
            # is answered through the list-element index.
            joiner = " AND " if str(operator).upper() == "AND" else " OR "
            where = "WHERE " + joiner.join(f"$s{i} IN node.belongs_to_set" for i in range(len(node_name)))
            params.update({f"s{i}": str(s) for i, s in enumerate(node_name)})
        text = (
            "CALL db.index.vector.queryNodes($index, $k, $q) YIELD node, score "
            f"{where} RETURN node.id AS id, score, node.payload AS p ORDER BY score DESC"
        )
        return [
            ScoredResult(
                id=_uuid(r["id"]),
                score=_distance(r["score"]),
                payload=json.loads(r["p"] or "{}") if include_payload else None,
            )
            for r in self._rows(text, params)
        ]

    async def search(self, collection_name: str, query_text: Optional[str] = None, query_vector: Optional[List[float]] = None,
                     limit: Optional[int] = 15, with_vector: bool = False, include_payload: bool = False,
                     node_name: Optional[List[str]] = None, node_name_filter_operator: str = "OR") -> List[ScoredResult]:
        if (query_text is None) == (query_vector is None):
            raise ValueError("search needs exactly one of query_text and query_vector")
        if not await self.has_collection(collection_name):
            return []
        if query_vector is None:
            query_vector = (await self.embedding_engine.embed_text([query_text]))[0]
        vector = [float(x) for x in query_vector]
        return await run(self._search, collection_name, vector, limit, include_payload, node_name, node_name_filter_operator)

    async def batch_search(self, collection_name: str, query_texts: List[str], limit: Optional[int] = None,
                           with_vectors: bool = False, include_payload: bool = False,
                           node_name: Optional[List[str]] = None) -> List[List[ScoredResult]]:
        vectors = await self.embedding_engine.embed_text(query_texts)
        return [
            await self.search(collection_name, None, v, limit, with_vectors, include_payload, node_name)
            for v in vectors
        ]

    async def embed_data(self, data: List[str]) -> List[List[float]]:
        return await self.embedding_engine.embed_text(data)

    async def prune(self) -> None:
        def work(tx: plexus.Transaction) -> None:
            tx.query("MATCH (n) DETACH DELETE n").consume()

        await run(in_transaction, self.db, work)

    async def compact(self, collection_name: Optional[str] = None) -> None:
        """Nothing to do: Plexus reuses freed space as it writes."""

    async def close(self) -> None:
        if self._owned:
            forget_database(self.db)


# What an index row carries beside its text, as cognee's own adapters keep it.
_REFERENCE_FIELDS = (
    "document_id",
    "document_name",
    "chunk_index",
    "source_chunk_id",
    "importance_weight",
    "external_metadata",
)


def _payload(dp: DataPoint) -> Dict[str, Any]:
    """The data point as its payload: everything `model_dump` gives."""
    return dp.model_dump() if hasattr(dp, "model_dump") else dict(dp)
