"""cognee's backend-neutral graph-provenance adapter contract
(`cognee/tests/integration/infrastructure/graph/test_graph_provenance_adapter_contract.py`,
shipped with cognee), run on Plexus: its test functions, unchanged, with
the adapter fixture it asks a new backend to provide."""

import pytest_asyncio
from cognee.tests.integration.infrastructure.graph import (
    test_graph_provenance_adapter_contract as contract,
)

# Every test of cognee's contract module, collected here.
globals().update({k: v for k, v in vars(contract).items() if k.startswith("test_")})
pytestmark = contract.pytestmark


@pytest_asyncio.fixture
async def graph_provenance_adapter(plexus_graph):
    yield plexus_graph
