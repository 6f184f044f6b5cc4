"""cognee's access-control mode on Plexus: one graph per dataset, made and
dropped by the Plexus dataset handlers. cognee reads the mode when it
starts, so the flow runs in a process of its own (`access_control_flow.py`)."""

import os
import subprocess
import sys


def test_cognee_with_access_control_keeps_a_graph_per_dataset():
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(
        os.environ,
        ENABLE_BACKEND_ACCESS_CONTROL="true",
        GRAPH_DATASET_DATABASE_HANDLER="plexus",
        VECTOR_DATASET_DATABASE_HANDLER="plexus_vectors",
        PYTHONPATH=os.pathsep.join([os.path.dirname(here), os.environ.get("PYTHONPATH", "")]),
    )
    flow = os.path.join(here, "access_control_flow.py")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", flow],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "3 passed" in done.stdout, done.stdout[-2000:]
