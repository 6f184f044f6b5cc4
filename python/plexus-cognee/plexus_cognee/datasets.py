"""Per-dataset databases for cognee's access-control mode: each dataset
gets graphs of its own (``dataset_<id>`` and ``dataset_<id>_vectors``) in
the one Plexus database, which cognee routes each request to. A named graph
costs a fraction of a millisecond to create or drop, and dropping one
deletes its key ranges and nothing else, so thousands of datasets are cheap
(`crates/plexus/tests/many_graphs.rs`)."""

from __future__ import annotations

from typing import Any, Optional
from uuid import UUID

from cognee.infrastructure.databases.dataset_database_handler import DatasetDatabaseHandlerInterface

from .store import open_database, run

PROVIDER = "plexus"


def graph_name(dataset_id: Optional[UUID]) -> str:
    return f"dataset_{UUID(str(dataset_id)).hex}" if dataset_id is not None else "cognee"


async def _drop(url: Optional[str], name: Optional[str]) -> None:
    if not name:
        return
    db = open_database(url)

    def drop() -> None:
        if name in db.graphs():
            db.drop_graph(name)

    await run(drop)


class PlexusGraphDatasetHandler(DatasetDatabaseHandlerInterface):
    """A dataset's graph: graph ``dataset_<id>`` of the configured database."""

    @classmethod
    async def create_dataset(cls, dataset_id: Optional[UUID], user: Any) -> dict:
        from cognee.infrastructure.databases.graph.config import get_graph_config

        config = get_graph_config()
        return {
            "graph_database_name": graph_name(dataset_id),
            "graph_database_url": config.graph_database_url,
            "graph_database_provider": PROVIDER,
            "graph_database_key": None,
            "graph_dataset_database_handler": PROVIDER,
            "graph_database_connection_info": {},
        }

    @classmethod
    async def delete_dataset(cls, dataset_database: Any) -> None:
        await _drop(dataset_database.graph_database_url, dataset_database.graph_database_name)


class PlexusVectorDatasetHandler(DatasetDatabaseHandlerInterface):
    """A dataset's vectors: graph ``dataset_<id>_vectors`` of the same database."""

    @classmethod
    async def create_dataset(cls, dataset_id: Optional[UUID], user: Any) -> dict:
        from cognee.infrastructure.databases.graph.config import get_graph_config

        return {
            "vector_database_provider": PROVIDER,
            # The graph's database: one folder holds both.
            "vector_database_url": get_graph_config().graph_database_url,
            "vector_database_key": None,
            "vector_database_name": graph_name(dataset_id) + "_vectors",
            "vector_dataset_database_handler": PROVIDER + "_vectors",
        }

    @classmethod
    async def delete_dataset(cls, dataset_database: Any) -> None:
        await _drop(dataset_database.vector_database_url, dataset_database.vector_database_name)
