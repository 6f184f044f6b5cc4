"""cognee on Plexus: the graph and vector stores of cognee in one embedded
Plexus database.

    import plexus_cognee
    plexus_cognee.register()          # makes "plexus" a provider name
    cognee.config.set_graph_database_provider("plexus")
    cognee.config.set_vector_db_provider("plexus")

Both stores open the folder cognee gives as their database URL (the graph
in graph ``cognee``, vectors in graph ``cognee_vectors``). With cognee's
access control on, set ``GRAPH_DATASET_DATABASE_HANDLER=plexus`` and
``VECTOR_DATASET_DATABASE_HANDLER=plexus_vectors``: each dataset then gets
graphs of its own in the same database. See ``docs/ai-memory.md`` in the
Plexus repository.
"""

from .graph import PlexusGraphAdapter
from .vector import PlexusVectorAdapter

PROVIDER = "plexus"


def register(name: str = PROVIDER) -> None:
    """Registers both adapters with cognee under provider `name`, and the
    per-dataset handlers of its access-control mode as `name` (graphs) and
    `name_vectors` (vectors)."""
    from cognee.infrastructure.databases.dataset_database_handler.use_dataset_database_handler import (
        use_dataset_database_handler,
    )
    from cognee.infrastructure.databases.graph.use_graph_adapter import use_graph_adapter
    from cognee.infrastructure.databases.vector.use_vector_adapter import use_vector_adapter

    from .datasets import PlexusGraphDatasetHandler, PlexusVectorDatasetHandler

    use_graph_adapter(name, PlexusGraphAdapter)
    use_vector_adapter(name, PlexusVectorAdapter)
    use_dataset_database_handler(name, PlexusGraphDatasetHandler, name)
    use_dataset_database_handler(name + "_vectors", PlexusVectorDatasetHandler, name)


__all__ = ["PlexusGraphAdapter", "PlexusVectorAdapter", "register", "PROVIDER"]
