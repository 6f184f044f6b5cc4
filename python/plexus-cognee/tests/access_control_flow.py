"""Run by `test_cognee_datasets.py` in a process of its own, with cognee's
access control on and the Plexus dataset handlers configured (cognee reads
that at start): cognee's pipeline tests, then a check that the dataset's
graph is a graph of its own, and that deleting the dataset drops it."""

import pytest
from cognee.api.v1.datasets import datasets
from cognee.infrastructure.databases.graph import get_graph_engine
from cognee.infrastructure.databases.vector.embeddings.LiteLLMEmbeddingEngine import (
    LiteLLMEmbeddingEngine,
)
from cognee.infrastructure.llm import LLMGateway
from cognee.tests.integration.tasks import test_graph_provenance_delete_part2 as part2
from offline import WordTokenizer, embed_words

from plexus_cognee import PlexusGraphAdapter
from plexus_cognee.datasets import graph_name

for name, fn in vars(part2).items():
    if name.startswith("test_"):
        globals()[name] = fn


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setattr(LiteLLMEmbeddingEngine, "get_tokenizer", lambda self: WordTokenizer())


@pytest.mark.asyncio
async def test_each_dataset_is_a_graph_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(LiteLLMEmbeddingEngine, "embed_text", embed_words)
    monkeypatch.setattr(LLMGateway, "acreate_structured_output", _model)
    user = await part2._setup(tmp_path)
    dataset_id, *_ = await part2._ingest_single_run()
    graph = await get_graph_engine()
    assert isinstance(graph, PlexusGraphAdapter)
    assert graph.db.graph_name == graph_name(dataset_id)
    assert graph_name(dataset_id) in graph.db.graphs()
    assert graph_name(dataset_id) + "_vectors" in graph.db.graphs()
    nodes, _ = await graph.get_graph_data()
    assert len(nodes) > 5
    await datasets.empty_dataset(dataset_id, user)
    left = graph.db.graphs()
    assert graph_name(dataset_id) not in left and graph_name(dataset_id) + "_vectors" not in left


async def _model(text_input, system_prompt, response_model):
    return part2._mock_llm_output(text_input, system_prompt, response_model)
