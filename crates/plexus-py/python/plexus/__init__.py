"""Plexus: an embedded property-graph database with an openCypher engine.

    >>> import plexus
    >>> db = plexus.Database.in_memory()
    >>> db.query("CREATE (:Person {name: 'Ann'})-[:KNOWS]->(:Person {name: 'Bob'})").consume()["nodes_created"]
    2
    >>> db.query("MATCH (a)-[:KNOWS]->(b) RETURN a.name AS a, b.name AS b").fetchall()
    [{'a': 'Ann', 'b': 'Bob'}]

A :class:`Database` is safe to share between threads; Plexus releases the
GIL while it works. Results convert to pyarrow, Polars and pandas through
the Arrow C stream interface, without a Python object per value.
"""

from __future__ import annotations

import datetime
import os
import sys
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _plexus
from .knowledge import Knowledge
from ._plexus import (
    ConflictError,
    ConstraintError,
    CorruptionError,
    CypherSyntaxError,
    CypherTypeError,
    DatabaseIOError,
    Duration,
    IngestError,
    Node,
    Path,
    PlexusError,
    QueryError,
    Relationship,
    ResourceLimitError,
    Temporal,
    TransactionError,
    UnsupportedError,
    __version__,
)

__all__ = [
    "Database",
    "Knowledge",
    "Result",
    "Transaction",
    "Snapshot",
    "TemporalSnapshot",
    "Node",
    "Relationship",
    "Path",
    "Duration",
    "Temporal",
    "PlexusError",
    "QueryError",
    "CypherSyntaxError",
    "CypherTypeError",
    "ConstraintError",
    "ConflictError",
    "ResourceLimitError",
    "DatabaseIOError",
    "TransactionError",
    "UnsupportedError",
    "CorruptionError",
    "IngestError",
    "__version__",
]

DEFAULT_GRAPH = "default"

#: Rows fetched from the engine per round trip while iterating.
_FETCH = 1024

Parameters = Optional[Mapping[str, Any]]
Progress = Union[bool, Callable[[int], Any], None]


class Result:
    """The rows of one query, pulled as they are read.

    Iterating gives each row as a dict of column name to value;
    :meth:`tuples` gives tuples. :meth:`to_arrow`, :meth:`to_polars` and
    :meth:`to_pandas` convert the rows not yet read. A result is read once.
    """

    def __init__(self, cursor: _plexus.Cursor):
        self._cursor = cursor
        self._buffer: List[tuple] = []
        self._summary: Optional[Dict[str, Any]] = None

    @property
    def columns(self) -> List[str]:
        """The column names, in order."""
        return self._cursor.columns

    def _next_tuple(self) -> Optional[tuple]:
        if not self._buffer:
            self._buffer = self._cursor.fetch(_FETCH)
            self._buffer.reverse()
        return self._buffer.pop() if self._buffer else None

    def tuples(self) -> Iterator[tuple]:
        """The remaining rows as tuples, in column order."""
        while (row := self._next_tuple()) is not None:
            yield row

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        columns = self.columns
        for row in self.tuples():
            yield dict(zip(columns, row))

    def fetchone(self) -> Optional[Dict[str, Any]]:
        """The next row as a dict, or None at the end."""
        row = self._next_tuple()
        return None if row is None else dict(zip(self.columns, row))

    def fetchall(self) -> List[Dict[str, Any]]:
        """The remaining rows as dicts."""
        return list(self)

    def rows(self) -> List[tuple]:
        """The remaining rows as tuples."""
        return list(self.tuples())

    def scalar(self) -> Any:
        """The first column of the first row (None when there is no row)."""
        row = self._next_tuple()
        return None if row is None or not row else row[0]

    def _stream(self) -> _plexus.ArrowStream:
        if self._buffer:
            raise PlexusError("rows of this result were read already; convert it before iterating")
        return self._cursor.arrow()

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream interface: the remaining rows."""
        return self._stream().__arrow_c_stream__(requested_schema)

    def to_arrow(self) -> "pyarrow.Table":  # noqa: F821
        """The remaining rows as a ``pyarrow.Table`` (buffers not copied)."""
        import pyarrow as pa

        return pa.table(self._stream())

    def to_polars(self) -> "polars.DataFrame":  # noqa: F821
        """The remaining rows as a ``polars.DataFrame`` (through Arrow, zero-copy)."""
        import polars as pl

        return pl.from_arrow(self.to_arrow())

    def to_pandas(self) -> "pandas.DataFrame":  # noqa: F821
        """The remaining rows as a ``pandas.DataFrame`` (through pyarrow)."""
        return self.to_arrow().to_pandas()

    def consume(self) -> Dict[str, Any]:
        """Stops the query and returns its summary: ``rows``, ``elapsed``
        seconds, ``kind`` (read or write) and the write counters
        (``nodes_created``, ``properties_set``, …)."""
        if self._summary is None:
            self._buffer = []
            self._summary = self._cursor.consume()
        return self._summary

    def __repr__(self) -> str:
        return f"<plexus.Result columns={self.columns!r}>"


class Transaction:
    """An explicit transaction: its queries see each other's writes, others
    see none of them before :meth:`commit`. As a context manager it commits
    when the block ends normally and rolls back when it raises."""

    def __init__(self, native: _plexus.Transaction):
        self._tx = native

    def query(self, text: str, parameters: Parameters = None, *, timeout: Optional[float] = None, **params: Any) -> Result:
        """Runs a query inside the transaction."""
        return Result(self._tx.query(text, _merge(parameters, params), timeout))

    @property
    def knowledge(self) -> Knowledge:
        """Claims, rules and entailment (``plexus.knowledge``) in this
        transaction."""
        return Knowledge(self)

    def commit(self) -> None:
        """Commits every write atomically; raises ConflictError when a
        concurrent commit won (retry the transaction)."""
        self._tx.commit()

    def rollback(self) -> None:
        """Discards every write (no error when closed already)."""
        self._tx.rollback()

    @property
    def closed(self) -> bool:
        """Whether the transaction was committed or rolled back."""
        return self._tx.closed

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.closed:
            return
        if exc_type is None:
            self.commit()
        else:
            self.rollback()


def _merge(parameters: Parameters, extra: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    if not extra:
        return None if parameters is None else dict(parameters)
    merged = dict(parameters or {})
    merged.update(extra)
    return merged


class Database:
    """A Plexus database: a folder on disk, or :meth:`in_memory`.

    ``graph`` names the graph that queries and imports use (``default``);
    :meth:`graph` gives a handle on another graph of the same database.
    ``timeout`` (seconds) and ``memory_limit`` (bytes) are every query's
    defaults. ``durable=False`` skips syncing each commit to disk (faster
    writes; a crash may lose the last commits, never corrupt the database).
    ``read_only=True`` opens an existing database while another process may
    have it open for writing (LMDB): reads see that process's commits as they
    land, writes raise an error.
    """

    def __init__(
        self,
        path: Union[str, os.PathLike, None],
        *,
        create: bool = True,
        graph: str = DEFAULT_GRAPH,
        timeout: Optional[float] = None,
        memory_limit: Optional[int] = None,
        durable: bool = True,
        read_only: bool = False,
        _native: Optional[_plexus.Database] = None,
    ):
        if _native is None:
            where = None if path is None else os.fspath(path)
            _native = _plexus.Database(where, create, timeout, memory_limit, durable, read_only)
        self._native: Optional[_plexus.Database] = _native
        self._graph = graph

    @property
    def _db(self) -> _plexus.Database:
        if self._native is None:
            raise PlexusError("this database handle is closed")
        return self._native

    @classmethod
    def in_memory(cls, *, timeout: Optional[float] = None, memory_limit: Optional[int] = None) -> "Database":
        """A new database that lives in memory only."""
        return cls(None, timeout=timeout, memory_limit=memory_limit)

    @property
    def path(self) -> Optional[str]:
        """The database folder (None in memory)."""
        p = self._db.path
        return None if p is None else os.fspath(p)

    @property
    def graph_name(self) -> str:
        """The graph this handle's queries and imports use."""
        return self._graph

    def graph(self, name: str, *, create: bool = True) -> "Database":
        """A handle on graph ``name`` of this database (created when missing)."""
        if create and name not in self._db.graphs():
            self._db.create_graph(name)
        return Database(None, graph=name, _native=self._db)

    def graphs(self) -> List[str]:
        """The names of the database's graphs."""
        return self._db.graphs()

    def commit_stats(self) -> Dict[str, Any]:
        """Totals of the commit pipeline since the database was opened:
        ``commits``, ``conflicts`` (refused at commit), ``groups`` (backend
        writes, one sync each when durable; commits that wait for the same
        sync share one), ``mean_group``, ``largest_group``, ``write_seconds``
        and ``locked_seconds`` (time in writes, and under the commit lock),
        and ``waiting`` (commits queued now)."""
        return self._db.commit_stats()

    def drop_graph(self, name: str) -> None:
        """Deletes graph ``name`` and everything in it."""
        self._db.drop_graph(name)

    def compact(self) -> Dict[str, Any]:
        """Rewrites the database compactly and gives back the disk space
        that deletes freed (the store reuses freed pages but never shrinks
        its file otherwise). Queries and writes go on meanwhile; writes
        wait only while the copy takes what was written during it. Raises
        :class:`DatabaseIOError` while another process has the database
        open read-only, and :class:`UnsupportedError` in memory. Returns
        ``bytes_before`` and ``bytes_after`` on disk, ``batches_replayed``
        and ``writes_held`` (seconds writes waited)."""
        return self._db.compact()

    def keep_history(self) -> int:
        """Keeps every later change of this graph as a version, so that a
        query can read the graph as it was: ``MATCH … FOR SYSTEM_TIME AS OF
        $t`` (a ``datetime``, an ISO string, or microseconds since 1970).
        What the graph holds now becomes the first version. Returns the
        instant history starts, in microseconds since 1970."""
        return self._db.keep_history(self._graph)

    def drop_history(self) -> None:
        """Stops keeping this graph's history and deletes it."""
        self._db.drop_history(self._graph)

    def history_start(self) -> Optional[int]:
        """The instant (µs since 1970) this graph's history starts, or None
        when it keeps none."""
        return self._db.history_start(self._graph)

    def system_time(self) -> int:
        """The system time (µs since 1970) of the latest commit that kept
        history: a query as of it reads the present."""
        return self._db.system_time()

    def prune_history(self, before: int) -> int:
        """Removes the versions no read as of ``before`` (µs since 1970) or
        later needs; returns how many. History then starts at ``before``."""
        return self._db.prune_history(self._graph, before)

    def set_history_retention(self, ttl: Any) -> None:
        """Keeps this graph's history for ``ttl`` only (a ``timedelta`` or
        seconds; ``None``: for ever, the default). Later commits prune, in
        the background, what no read as of the last ``ttl`` needs; reads
        never wait for it. The graph must keep history; the policy is stored
        with it."""
        if isinstance(ttl, datetime.timedelta):
            ttl = ttl.total_seconds()
        self._db.set_history_retention(self._graph, None if ttl is None else float(ttl))

    def history_retention(self) -> Optional[datetime.timedelta]:
        """How long this graph keeps its history, or None (for ever)."""
        s = self._db.history_retention(self._graph)
        return None if s is None else datetime.timedelta(seconds=s)

    def enforce_history_retention(self) -> Dict[str, int]:
        """Prunes now every graph whose history has a retention policy, as
        commits do in the background: graph name → versions removed."""
        return dict(self._db.enforce_history_retention())

    def rebuild_indexes(self) -> List[str]:
        """Rebuilds the indexes an import left stale (``index_mode="defer"``);
        returns their names."""
        return self._db.rebuild_indexes(self._graph)

    def create_index(self, key: str, *, label: Optional[str] = None) -> None:
        """A property index on ``key`` for nodes with ``label`` (every node
        when None); Cypher's ``CREATE INDEX`` makes labelled ones too."""
        self._db.create_index(self._graph, key, label)

    def vector_search(self, index: str, vector: Sequence[float], k: int = 10) -> List[Tuple[str, float]]:
        """The ``k`` nodes nearest ``vector`` (a list or a NumPy array) in the
        vector index ``index`` (``CREATE VECTOR INDEX``), nearest first, as
        ``(id, score)``; Cypher's ``db.index.vector.queryNodes`` does the same
        with filters and graph patterns around the hits."""
        return self._db.vector_search(self._graph, index, list(vector), k)

    def query(self, text: str, parameters: Parameters = None, *, timeout: Optional[float] = None, **params: Any) -> Result:
        """Runs an auto-commit Cypher query. Parameters come as a dict or as
        keywords: ``db.query("MATCH (n {id: $id}) RETURN n", id=7)``."""
        return Result(self._db.query(self._graph, text, _merge(parameters, params), timeout))

    def transaction(self, *, read_only: bool = False) -> Transaction:
        """Opens an explicit transaction (use it in a ``with`` block). With
        ``read_only=True`` every query in it reads one snapshot, and one that
        writes raises ``TransactionError``."""
        return Transaction(self._db.begin(self._graph, read_only))

    def import_data(
        self,
        nodes: Any = None,
        edges: Any = None,
        *,
        upsert: bool = False,
        progress: Progress = None,
        index_mode: str = "maintain",
    ) -> Dict[str, int]:
        """Loads nodes and edges as one commit.

        ``nodes`` and ``edges`` are each a table, a list of tables, or a dict
        of label (or relationship type) to table. A table is a pyarrow Table
        or RecordBatchReader, a Polars or pandas DataFrame, or a file path
        (CSV, JSON lines, Parquet or Arrow IPC). Node tables have an ``id``
        column (and optionally ``label``/``labels``); edge tables have
        ``src``, ``dst`` and, unless named by the dict, ``type``; every other
        column is a property.

        Into an empty graph this takes the bulk path; ``upsert=True``
        merges into a graph with data (nodes by id are created or updated).
        ``progress=True`` shows a progress bar (tqdm when installed), or
        pass a callable taking the rows read so far. ``index_mode``:
        ``"maintain"`` fills the graph's indexes as it loads; ``"defer"``
        leaves non-unique ones stale until :meth:`rebuild_indexes`;
        ``"defer-rebuild"`` rebuilds them before returning. Returns the counts.
        """
        node_list = _inputs(nodes)
        edge_list = _inputs(edges)
        everything = node_list + edge_list
        files = [isinstance(t, (str, os.PathLike)) for _, t in everything]
        callback, close = _progress(progress, _total_rows(everything))
        try:
            if all(files) and everything:
                spec = lambda items: [(f"{n}={os.fspath(t)}" if n else os.fspath(t)) for n, t in items]
                return self._db.import_files(
                    self._graph, spec(node_list), spec(edge_list), upsert, callback, index_mode
                )
            if any(files):
                raise TypeError("import_data takes either files or in-memory tables in one call, not both")
            return self._db.import_arrow(
                self._graph,
                [(n, _arrow_source(t)) for n, t in node_list],
                [(n, _arrow_source(t)) for n, t in edge_list],
                upsert,
                callback,
                index_mode,
            )
        finally:
            close()

    # ---- traversal and sampling (by node id, on one snapshot per call) ----

    def neighbors(self, node: str, *, direction: str = "out", types: Optional[Sequence[str]] = None) -> List[str]:
        """The ids of the nodes one hop from ``node`` (``direction`` is
        ``"out"``, ``"in"`` or ``"both"``; ``types`` limits relationship types)."""
        return self._db.neighbors(self._graph, node, direction, _types(types))

    def degree(self, node: str, *, direction: str = "out", types: Optional[Sequence[str]] = None) -> int:
        """How many relationships ``node`` has that way (read from counters)."""
        return self._db.degree(self._graph, node, direction, _types(types))

    def bfs(
        self, node: str, max_depth: int, *, direction: str = "out", types: Optional[Sequence[str]] = None
    ) -> List[Tuple[str, int]]:
        """``(id, hops)`` of every node within ``max_depth`` hops, breadth
        first, ``node`` itself first at 0."""
        return self._db.bfs(self._graph, node, max_depth, direction, _types(types))

    def count_paths(
        self,
        node: str,
        hops: Union[int, Sequence[Union[str, Sequence[str], None]]],
        *,
        direction: str = "out",
        semantics: str = "walk",
    ) -> int:
        """How many paths leave ``node`` along ``hops`` without building them:
        ``hops`` is a number of hops of any type, or one entry per hop (a
        type, a list of types, or None for any). ``semantics="trail"``
        counts only paths that use no relationship twice (Cypher's)."""
        if isinstance(hops, int):
            spec: List[Optional[List[str]]] = [None] * hops
        else:
            spec = [_types(h) for h in hops]
        return self._db.count_paths(self._graph, node, spec, direction, semantics)

    def sample_paths(
        self,
        node: str,
        hops: Sequence[Union[str, Sequence[str], None]],
        sizes: Sequence[int],
        *,
        direction: str = "out",
        seed: int = 0,
    ) -> List[List[str]]:
        """Typed paths sampled from ``node`` by a hop pattern: at hop ``i``,
        up to ``sizes[i]`` of the relationships ``hops[i]`` allows (a type, a
        list of types, or None for any) from each path's end. Each path is
        its node ids; the same ``seed`` gives the same paths."""
        spec = [_types(h) for h in hops]
        return self._db.sample_paths(self._graph, node, spec, list(sizes), direction, seed)

    def shortest_path(
        self,
        source: str,
        target: str,
        *,
        direction: str = "out",
        types: Optional[Sequence[str]] = None,
        max_depth: Optional[int] = None,
    ) -> Optional[List[str]]:
        """The node ids of one shortest path (bidirectional BFS), or None."""
        return self._db.shortest_path(self._graph, source, target, direction, _types(types), max_depth)

    def sample_neighbors(
        self,
        nodes: Sequence[str],
        k: int,
        *,
        direction: str = "out",
        types: Optional[Sequence[str]] = None,
        mode: str = "uniform",
        seed: int = 0,
    ) -> List[List[str]]:
        """Up to ``k`` neighbours of each node. ``mode``: ``uniform`` (without
        replacement), ``with_replacement``, ``unique`` (parallel edges once)
        or ``weighted:<property>``. The same ``seed`` gives the same sample."""
        return self._db.sample_neighbors(self._graph, list(nodes), k, direction, _types(types), mode, seed)

    def random_walks(
        self,
        nodes: Sequence[str],
        length: int,
        *,
        direction: str = "out",
        types: Optional[Sequence[str]] = None,
        p: float = 1.0,
        q: float = 1.0,
        seed: int = 0,
    ) -> List[List[str]]:
        """A walk of up to ``length`` steps from each node; ``p`` and ``q``
        bias it as node2vec does (1 and 1: uniform)."""
        return self._db.random_walks(self._graph, list(nodes), length, direction, _types(types), p, q, seed)

    def sample_layers(
        self,
        seeds: Sequence[str],
        fanouts: Sequence[int],
        *,
        direction: str = "out",
        types: Optional[Sequence[str]] = None,
        seed: int = 0,
    ) -> List[Tuple[List[str], List[Tuple[str, str]]]]:
        """GraphSAGE-style minibatch sampling: layer 0 is ``seeds``; layer
        ``i+1`` samples up to ``fanouts[i]`` relationships of each node of
        layer ``i``. Each layer is ``(new node ids, [(from, to), …])``."""
        return self._db.sample_layers(self._graph, list(seeds), list(fanouts), direction, _types(types), seed)

    @property
    def knowledge(self) -> Knowledge:
        """Claims, rules and entailment (``plexus.knowledge``) on this
        graph: each call one auto-commit query."""
        return Knowledge(self)

    def snapshot(
        self,
        weight: Optional[str] = None,
        *,
        valid_time: Any = None,
        system_time: Any = None,
    ) -> "Snapshot":
        """A CSR snapshot of the graph as it is now: NumPy views of its
        arrays, id maps, and a seeded sampler for minibatches. It does not
        change with later writes (compare ``snapshot.version``). With
        ``weight``, it keeps each edge's numeric property of that name, for
        ``mode="weighted:<weight>"`` sampling; saved files keep it too.

        With ``valid_time``, the snapshot is of the valid-time graph as of
        that instant (the nodes and relationships whose versions hold then,
        as ``MATCH … FOR VALID_TIME AS OF``; ids are the entities' ids), so
        samples of the past never see a later relationship. With
        ``system_time``, of the graph as it was then (a graph that keeps
        history); with both, bitemporal. Instants are ``datetime`` values,
        ISO strings, or microseconds since 1970."""
        return Snapshot(
            self._db.snapshot(self._graph, weight, valid_time, system_time)
        )

    def temporal_snapshot(
        self,
        *,
        valid_time: Any = None,
        window: Optional[Tuple[Any, Any]] = None,
        contained: bool = False,
        system_time: Any = None,
    ) -> "TemporalSnapshot":
        """A temporal CSR snapshot of the valid-time relationships: those
        holding at ``valid_time``, or each stretch of validity that overlaps
        ``window=(from, to)`` (``to`` excluded; ``None`` leaves an end open),
        or lies within it with ``contained=True``. Every slot keeps its
        relationship id and validity, and the samplers are leakage-safe: a
        causal walk, and negatives the source never links to at any valid
        time. ``system_time``: as the database knew it then (bitemporal)."""
        return TemporalSnapshot(
            self._db.temporal_snapshot(self._graph, valid_time, window, contained, system_time)
        )

    def close(self) -> None:
        """Drops this handle (later calls on it raise PlexusError); the
        database closes when no handle, result or snapshot holds it."""
        self._native = None

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._native is None:
            return "<plexus.Database closed>"
        where = self.path or "memory"
        return f"<plexus.Database {where} graph={self._graph!r}>"


def _np():
    import numpy

    return numpy


def _idx(nodes: Any) -> bytes:
    """Dense node indexes as little-endian int64 bytes for the native side."""
    return _np().asarray(nodes, dtype="<i8").reshape(-1).tobytes()


class Snapshot:
    """A compressed sparse row (CSR) snapshot of one graph.

    Nodes are numbered ``0 … num_nodes - 1`` (dense indexes); :meth:`ids`
    and :meth:`index` map them to and from user ids. :meth:`arrays` gives
    the CSR arrays of each direction as read-only NumPy views (no copy).
    The sampler methods take and return NumPy arrays of dense indexes and
    are reproducible by ``seed``. :meth:`save` writes one file that
    :meth:`open` memory-maps (opening costs nothing; pages load as used).
    """

    def __init__(self, native: _plexus.Snapshot):
        self._s = native

    @classmethod
    def open(cls, path: Union[str, os.PathLike]) -> "Snapshot":
        """Memory-maps a snapshot :meth:`save` wrote."""
        return cls(_plexus.Snapshot.open(os.fspath(path)))

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the snapshot to one file (atomically replaced)."""
        self._s.save(os.fspath(path))

    @property
    def num_nodes(self) -> int:
        """How many nodes (dense indexes run from 0 to this, exclusive)."""
        return self._s.num_nodes

    @property
    def num_edges(self) -> int:
        """How many relationships."""
        return self._s.num_edges

    @property
    def version(self) -> int:
        """The commit version of the database the snapshot reflects."""
        return self._s.version

    @property
    def types(self) -> Dict[str, int]:
        """Relationship type name → the id :meth:`arrays` stores."""
        return self._s.types

    def arrays(self, direction: str = "out") -> Tuple[Any, Any, Any, Any]:
        """``(indptr, indices, edge_ids, edge_types)`` of ``"out"`` or ``"in"``:
        node ``i``'s neighbours are ``indices[indptr[i]:indptr[i + 1]]``."""
        np = _np()
        return tuple(np.asarray(a) for a in self._s.arrays(direction))  # type: ignore[return-value]

    def ids(self) -> List[str]:
        """The user id of each node, by dense index."""
        return self._s.ids()

    def index(self, ids: Sequence[str]) -> Any:
        """The dense indexes of user ids (KeyError for an unknown one)."""
        return _np().asarray(self._s.index(list(ids)))

    def sample_neighbors(self, nodes: Any, k: int, *, direction: str = "out", types: Optional[Sequence[str]] = None,
                         mode: str = "uniform", seed: int = 0) -> Tuple[Any, Any]:
        """Up to ``k`` neighbours of each node: ``(indptr, neighbours)``, node
        ``j``'s sample being ``neighbours[indptr[j]:indptr[j + 1]]``."""
        np = _np()
        off, picked = self._s.sample_neighbors(_idx(nodes), k, direction, _types(types), mode, seed)
        return np.asarray(off), np.asarray(picked)

    def random_walks(self, starts: Any, length: int, *, direction: str = "out", types: Optional[Sequence[str]] = None,
                     p: float = 1.0, q: float = 1.0, seed: int = 0) -> Any:
        """Walks as a ``(len(starts), length + 1)`` array; ``-1`` pads a walk
        that reached a node with no way on. ``p``, ``q``: node2vec's bias."""
        return _np().asarray(self._s.random_walks(_idx(starts), length, direction, _types(types), p, q, seed))

    def sample_layers(self, seeds: Any, fanouts: Sequence[int], *, direction: str = "out",
                      types: Optional[Sequence[str]] = None, seed: int = 0) -> List[Tuple[Any, Any, Any]]:
        """GraphSAGE layers: ``[(nodes, src, dst), …]``, layer 0 the seeds."""
        np = _np()
        layers = self._s.sample_layers(_idx(seeds), list(fanouts), direction, _types(types), seed)
        return [tuple(np.asarray(a) for a in layer) for layer in layers]  # type: ignore[misc]

    def has_edges(self, src: Any, dst: Any, *, direction: str = "out", types: Optional[Sequence[str]] = None) -> Any:
        """A boolean array: is ``src[i]`` joined to ``dst[i]`` (positive checks)."""
        return _np().asarray(self._s.has_edges(_idx(src), _idx(dst), direction, _types(types)))

    def subgraph(self, nodes: Any, *, types: Optional[Sequence[str]] = None) -> Tuple[Any, Any]:
        """The relationships among ``nodes``: ``(src, dst)`` arrays."""
        np = _np()
        src, dst = self._s.subgraph(_idx(nodes), _types(types))
        return np.asarray(src), np.asarray(dst)

    def negatives(self, nodes: Any, k: int, *, direction: str = "out", types: Optional[Sequence[str]] = None,
                  hard: bool = True, seed: int = 0) -> Any:
        """``(len(nodes), k)`` nodes each is not joined to: hard negatives
        from its two-hop neighbourhood first (``hard=True``), then uniform
        ones; ``-1`` where the graph has too few."""
        return _np().asarray(self._s.negatives(_idx(nodes), k, direction, _types(types), hard, seed))

    def __repr__(self) -> str:
        return f"<plexus.Snapshot {self.num_nodes} nodes, {self.num_edges} edges, version {self.version}>"


class TemporalSnapshot:
    """The valid-time relationships at an instant or over a window, as
    compressed sparse rows by source with validity arrays.

    Nodes are the relationships' endpoints, sorted by id (:meth:`nodes`);
    a relationship with several stretches of validity in a window has a
    slot per stretch. :meth:`arrays` gives ``(offsets, targets, valid_from,
    valid_to)`` as read-only NumPy views: node ``i``'s slots are
    ``offsets[i]:offsets[i + 1]``. Times are microseconds since 1970;
    ``valid_to`` is ``2**63 - 1`` where open.
    """

    def __init__(self, native: _plexus.TemporalSnapshot):
        self._s = native

    @property
    def num_nodes(self) -> int:
        """How many nodes (endpoints of the snapshot's relationships)."""
        return self._s.num_nodes

    @property
    def num_slots(self) -> int:
        """How many slots (stretches of relationships)."""
        return self._s.num_slots

    def nodes(self) -> List[str]:
        """The node ids; a node's index is its place here."""
        return self._s.nodes()

    def edges(self) -> List[str]:
        """The relationship id of each slot."""
        return self._s.edges()

    def arrays(self) -> Tuple[Any, Any, Any, Any]:
        """``(offsets, targets, valid_from, valid_to)`` as NumPy arrays."""
        np = _np()
        return tuple(np.asarray(a) for a in self._s.arrays())  # type: ignore[return-value]

    def walk(self, start: str, length: int, *, seed: int = 0) -> Tuple[List[str], Any]:
        """A causal random walk of at most ``length`` steps from node
        ``start``: each step follows a relationship valid from no earlier
        than the one before, so a walk never goes back in time. Returns the
        node ids visited (``start`` first) and the slots followed."""
        nodes, slots = self._s.walk(start, length, seed)
        return nodes, _np().asarray(slots, dtype="<i8")

    def negatives(self, source: str, k: int, *, seed: int = 0) -> List[str]:
        """Up to ``k`` nodes of the snapshot that ``source`` has no
        relationship to at any valid time — before the snapshot, in it or
        after it (read from the store) — so a hard negative is never a
        positive of the future."""
        return self._s.negatives(source, k, seed)

    def __repr__(self) -> str:
        return f"<plexus.TemporalSnapshot {self.num_nodes} nodes, {self.num_slots} slots>"


def _types(types: Optional[Sequence[str]]) -> Optional[List[str]]:
    if isinstance(types, str):
        return [types]
    return None if types is None else list(types)


def _inputs(spec: Any) -> List[Tuple[Optional[str], Any]]:
    if spec is None:
        return []
    if isinstance(spec, Mapping):
        return [(str(k), v) for k, v in spec.items()]
    if isinstance(spec, (list, tuple)):
        return [(None, t) for t in spec]
    return [(None, spec)]


def _arrow_source(table: Any) -> Any:
    """Something with ``__arrow_c_stream__`` for a table-like object."""
    if hasattr(table, "__arrow_c_stream__") and not _is_pandas(table):
        return table
    if _is_pandas(table):
        import pyarrow as pa

        return pa.Table.from_pandas(table, preserve_index=False)
    if type(table).__name__ == "RecordBatch":
        import pyarrow as pa

        return pa.Table.from_batches([table])
    raise TypeError(
        f"a {type(table).__name__} is not a table: pass a pyarrow Table, a Polars or pandas DataFrame, or a file path"
    )


def _is_pandas(table: Any) -> bool:
    return type(table).__module__.startswith("pandas.")


def _total_rows(items: Sequence[Tuple[Optional[str], Any]]) -> Optional[int]:
    total = 0
    for _, t in items:
        n = getattr(t, "num_rows", None)
        if n is None:
            n = getattr(t, "height", None)
        if n is None and _is_pandas(t):
            n = len(t)
        if not isinstance(n, int):
            return None
        total += n
    return total


def _progress(progress: Progress, total: Optional[int]) -> Tuple[Optional[Callable[[int], Any]], Callable[[], None]]:
    """A row-count callback and a function that ends the display."""
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress) and progress is not True:
        return progress, lambda: None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        last = [0]

        def show(rows: int) -> None:
            last[0] = rows
            of = f" of {total:,}" if total else ""
            print(f"\rplexus import: {rows:,}{of} rows", end="", file=sys.stderr, flush=True)

        return show, lambda: print(file=sys.stderr) if last[0] else None
    bar = tqdm(total=total, unit=" rows", desc="plexus import")

    def update(rows: int) -> None:
        bar.update(rows - bar.n)

    return update, bar.close
