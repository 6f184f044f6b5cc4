"""cognee end to end on Plexus: `cognee.add` then `cognify` over three
documents in one run (entity extraction by a mocked model, as in cognee's
own test), then `datasets.delete_data` of one document, through cognee's
graph-provenance delete planner. These are cognee's
`test_graph_provenance_delete_part2.py` tests, unchanged; with Plexus as the
configured graph and vector provider (conftest.py) every graph write, vector
write, provenance fold and delete goes through the Plexus adapters."""

import pytest
from cognee.infrastructure.databases.graph import get_graph_engine
from cognee.infrastructure.databases.vector.embeddings.LiteLLMEmbeddingEngine import (
    LiteLLMEmbeddingEngine,
)
from cognee.tests.integration.tasks import test_graph_provenance_delete_part2 as part2
from offline import WordTokenizer

from plexus_cognee import PlexusGraphAdapter

for name, fn in vars(part2).items():
    if name.startswith("test_"):
        globals()[name] = fn


@pytest.fixture(autouse=True)
def offline_tokenizer(monkeypatch):
    monkeypatch.setattr(LiteLLMEmbeddingEngine, "get_tokenizer", lambda self: WordTokenizer())


@pytest.mark.asyncio
async def test_the_configured_graph_engine_is_plexus(tmp_path):
    await part2._setup(tmp_path)
    assert isinstance(await get_graph_engine(), PlexusGraphAdapter)
