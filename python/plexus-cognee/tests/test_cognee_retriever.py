"""cognee's graph-completion retriever on Plexus: cognee's
`test_graph_completion_retriever.py`, unchanged, with Plexus as the
configured graph and vector provider. Each test stores data points with
cognee's `add_data_points` task, then asks `GraphCompletionRetriever` for
the context it would hand the model (no model is called): the vector
searches, `get_id_filtered_graph_data` and the triplet ranking all run on
Plexus. A word-hashing embedding stands in for the embedding model."""

import pytest
from cognee.infrastructure.databases.vector.embeddings.LiteLLMEmbeddingEngine import (
    LiteLLMEmbeddingEngine,
)
from cognee.tests.integration.retrieval import test_graph_completion_retriever as retriever
from offline import WordTokenizer, embed_words

for name, value in vars(retriever).items():
    if name.startswith(("test_", "setup_")):
        globals()[name] = value


@pytest.fixture(autouse=True)
def offline_embedding(monkeypatch):
    monkeypatch.setattr(LiteLLMEmbeddingEngine, "get_tokenizer", lambda self: WordTokenizer())
    monkeypatch.setattr(LiteLLMEmbeddingEngine, "embed_text", embed_words)
