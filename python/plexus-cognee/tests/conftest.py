"""cognee's own tests on Plexus: the fixtures cognee's backend-neutral
contract suites ask each backend to provide, made with the Plexus adapters,
and cognee configured to use Plexus for its graph and its vectors. No
language model and no network: the pipeline tests mock both, as cognee's
own tests do."""

import os
import sys

import pytest_asyncio

sys.path.insert(0, os.path.dirname(__file__))

# Before cognee reads its configuration: Plexus is the graph and vector
# provider, and datasets share one graph unless a test runs cognee with
# access control on (`test_cognee_datasets.py`, in a process of its own).
os.environ["GRAPH_DATABASE_PROVIDER"] = "plexus"
os.environ["VECTOR_DB_PROVIDER"] = "plexus"
os.environ.setdefault("ENABLE_BACKEND_ACCESS_CONTROL", "false")
os.environ.setdefault("LLM_API_KEY", "not-used-the-tests-mock-the-model")
# Nothing leaves the machine: no usage telemetry, litellm's bundled model table.
os.environ["TELEMETRY_DISABLED"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import plexus_cognee  # noqa: E402

plexus_cognee.register()


@pytest_asyncio.fixture
async def plexus_graph(tmp_path):
    adapter = plexus_cognee.PlexusGraphAdapter(str(tmp_path / "plexus_db"))
    try:
        yield adapter
    finally:
        await adapter.close()
