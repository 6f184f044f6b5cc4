"""The Plexus database behind both adapters, and the helpers they share.

cognee makes its graph and vector engines separately, with its own keyword
arguments; both name the same folder, and one process may open a folder
only once, so the open databases are kept here by path. Every call runs in
a worker thread (Plexus releases the GIL), so cognee's concurrent tasks
are concurrent transactions; a transaction that loses a write conflict is
run again from the start, as optimistic concurrency asks.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from datetime import date, datetime
from enum import Enum
from typing import Any, Callable, Dict, Optional, TypeVar
from uuid import UUID

import plexus

T = TypeVar("T")

# How often a transaction that lost a write conflict is run again.
RETRIES = 50

_lock = threading.Lock()
_open: Dict[str, plexus.Database] = {}


def cognee_database_path() -> str:
    """Where cognee keeps its graph database by default (under its system
    root, as for its built-in embedded store): both adapters use it when
    cognee gives them no URL."""
    from cognee.infrastructure.databases.graph.config import get_graph_config

    return get_graph_config().graph_file_path


def open_database(path: Optional[str]) -> plexus.Database:
    """The database at `path` (created when missing), shared by every
    adapter of this process; ``":memory:"`` is a new database in memory,
    and no path is cognee's default place."""
    if path == ":memory:":
        return plexus.Database.in_memory()
    if not path:
        path = cognee_database_path()
    where = os.path.abspath(os.fspath(path))
    with _lock:
        db = _open.get(where)
        if db is None:
            os.makedirs(os.path.dirname(where) or ".", exist_ok=True)
            db = plexus.Database(where)
            _open[where] = db
        return db


def forget_database(db: plexus.Database) -> None:
    """Closes `db` and drops it from the shared ones."""
    with _lock:
        for where, open_db in list(_open.items()):
            if open_db is db:
                del _open[where]
    db.close()


def in_transaction(db: plexus.Database, work: Callable[[plexus.Transaction], T]) -> T:
    """Runs `work` in a transaction of `db` and commits; runs it again from
    the start when the commit (or a statement) lost a write conflict."""
    for attempt in range(RETRIES):
        tx = db.transaction()
        try:
            out = work(tx)
            tx.commit()
            return out
        except plexus.ConflictError:
            if not tx.closed:
                tx.rollback()
            if attempt + 1 == RETRIES:
                raise
        except BaseException:
            if not tx.closed:
                tx.rollback()
            raise
    raise AssertionError("unreachable")


def autocommit(db: plexus.Database, text: str, params: Optional[dict] = None) -> list:
    """Runs one auto-commit statement and returns its rows as dicts; runs
    it again when it lost a write conflict (it then changed nothing)."""
    for attempt in range(RETRIES):
        try:
            return db.query(text, params or {}).fetchall()
        except plexus.ConflictError:
            if attempt + 1 == RETRIES:
                raise
    raise AssertionError("unreachable")


async def run(fn: Callable[..., T], *args: Any) -> T:
    """Runs a blocking database call off the event loop."""
    return await asyncio.to_thread(fn, *args)


def quote(name: str) -> str:
    """A label, type or index name as a Cypher identifier."""
    return "`" + str(name).replace("`", "``") + "`"


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, (UUID, Enum)):
        return str(value.value if isinstance(value, Enum) else value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def to_json(value: Any) -> str:
    """JSON text of a value that may hold ids, dates, enums and sets."""
    return json.dumps(value, default=_json_default)


def storable(value: Any) -> Any:
    """A property value as Plexus stores it: ids and dates as strings,
    maps (and lists holding anything but scalars) as JSON text, as cognee's
    Neo4j adapter stores them."""
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, Enum):
        return storable(value.value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return json.dumps(value, default=_json_default)
    if isinstance(value, (list, tuple)):
        items = [storable(v) for v in value]
        if all(v is None or isinstance(v, (str, int, float, bool)) for v in items):
            return items
        return json.dumps(list(value), default=_json_default)
    return value


def storable_props(props: Dict[str, Any]) -> Dict[str, Any]:
    """Every property made storable; nulls left out (a null is no property)."""
    out = {}
    for key, value in props.items():
        value = storable(value)
        if value is not None:
            out[str(key)] = value
    return out
