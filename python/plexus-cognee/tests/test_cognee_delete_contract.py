"""cognee's graph-provenance delete planner on Plexus: the backend-neutral
unified contract (`test_graph_provenance_unified_contract.py`) and the
default-stack delete gate (`test_graph_provenance_delete_default_stack.py`),
both shipped with cognee, their test functions unchanged. The contract asks
a backend for the `graph_provenance_unified_engine` fixture; the tests that
make their graph adapter themselves get Plexus's in place of Ladybug's."""

from types import SimpleNamespace

import pytest
import pytest_asyncio
from cognee.tests.integration.infrastructure.graph import (
    test_graph_provenance_unified_contract as unified,
)
from cognee.tests.integration.tasks import (
    test_graph_provenance_delete_default_stack as default_stack,
)

from plexus_cognee import PlexusGraphAdapter

for module, prefix in ((unified, "test_unified_"), (default_stack, "test_default_stack_")):
    for name, fn in vars(module).items():
        if name.startswith("test_"):
            globals()[prefix + name[len("test_"):]] = fn

pytestmark = pytest.mark.asyncio


@pytest.fixture(autouse=True)
def plexus_in_place_of_ladybug(monkeypatch):
    for module in (unified, default_stack):
        monkeypatch.setattr(module, "LadybugAdapter", PlexusGraphAdapter)
        monkeypatch.setattr(module, "HAS_LADYBUG", True)


@pytest_asyncio.fixture
async def graph_provenance_unified_engine(plexus_graph):
    vector = unified.RecordingVectorEngine()
    yield SimpleNamespace(graph=plexus_graph, vector=vector, engine=unified._new_engine(plexus_graph, vector))
