"""A second process reads a database while this one has it open for writing."""

import subprocess
import sys
import textwrap

import pytest

import plexus

READER = textwrap.dedent(
    """
    import sys, plexus
    db = plexus.Database(sys.argv[1], read_only=True)
    print(db.query("MATCH (n:P) RETURN count(n)").scalar())
    try:
        db.query("CREATE (:P)").consume()
    except plexus.PlexusError as e:
        print(type(e).__name__, e)
    """
)


def read_in_another_process(path):
    out = subprocess.run(
        [sys.executable, "-c", READER, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout.splitlines()


def test_another_process_reads_while_this_one_writes(tmp_path):
    path = tmp_path / "live.plexus"
    db = plexus.Database(path)
    db.query("CREATE (:P), (:P)").consume()
    count, refused = read_in_another_process(path)
    assert count == "2"
    assert refused.startswith("UnsupportedError") and "read-only" in refused
    db.query("CREATE (:P)").consume()
    assert read_in_another_process(path)[0] == "3"
    # A second writer is refused, naming this process.
    # A second writer is refused, naming the holder (the lock file refuses
    # a second open in the same process too).
    with pytest.raises(plexus.DatabaseIOError) as e:
        plexus.Database(path)
    assert "pid" in str(e.value)
    db.close()


def test_read_only_never_creates(tmp_path):
    with pytest.raises(plexus.PlexusError):
        plexus.Database(tmp_path / "missing", read_only=True)
    assert not (tmp_path / "missing").exists()


HOLD_OPEN = textwrap.dedent(
    """
    import sys, plexus
    db = plexus.Database(sys.argv[1], read_only=True)
    print(db.query("MATCH (n:P) RETURN count(n)").scalar(), flush=True)
    sys.stdin.read()
    """
)


def test_compaction_gives_space_back_and_waits_for_readers_elsewhere(tmp_path):
    path = tmp_path / "churned.plexus"
    db = plexus.Database(path)
    db.query("UNWIND range(1, 2000) AS i CREATE (:P {i: i, text: $t})", {"t": "x" * 2000}).consume()
    db.query("MATCH (n:P) WHERE n.i > 100 DELETE n").consume()
    sizes = db.compact()
    assert sizes["bytes_after"] * 3 < sizes["bytes_before"], sizes
    assert db.query("MATCH (n:P) RETURN count(n)").scalar() == 100
    reader = subprocess.Popen(
        [sys.executable, "-c", HOLD_OPEN, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout.readline().strip() == "100"
        with pytest.raises(plexus.DatabaseIOError) as e:
            db.compact()
        assert "read-only in another process" in str(e.value)
    finally:
        reader.communicate("", timeout=60)
    db.compact()
    db.close()
