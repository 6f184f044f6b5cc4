"""Explicit transactions and sharing a database between threads."""

import threading

import pytest

import plexus


def test_a_transaction_sees_its_own_writes_and_others_do_not(db):
    tx = db.transaction()
    tx.query("CREATE (:T {n: 1})").consume()
    assert tx.query("MATCH (t:T) RETURN count(t)").scalar() == 1
    assert db.query("MATCH (t:T) RETURN count(t)").scalar() == 0
    tx.commit()
    assert db.query("MATCH (t:T) RETURN count(t)").scalar() == 1
    assert tx.closed


def test_the_context_manager_commits_or_rolls_back(db):
    with db.transaction() as tx:
        tx.query("CREATE (:T)").consume()
    assert db.query("MATCH (t:T) RETURN count(t)").scalar() == 1
    with pytest.raises(RuntimeError):
        with db.transaction() as tx:
            tx.query("CREATE (:T)").consume()
            raise RuntimeError("boom")
    assert db.query("MATCH (t:T) RETURN count(t)").scalar() == 1


def test_a_read_only_transaction_reads_one_snapshot_and_refuses_writes(db):
    db.query("CREATE (:T {n: 1})").consume()
    with db.transaction(read_only=True) as tx:
        assert tx.query("MATCH (t:T) RETURN sum(t.n)").scalar() == 1
        db.query("CREATE (:T {n: 2})").consume()
        assert tx.query("MATCH (t:T) RETURN sum(t.n)").scalar() == 1
        with pytest.raises(plexus.TransactionError, match="read access mode"):
            tx.query("CREATE (:T {n: 10})")
        # The refused write left nothing to undo: reads go on.
        assert tx.query("MATCH (t:T) RETURN count(t)").scalar() == 1
    assert tx.closed
    assert db.query("MATCH (t:T) RETURN sum(t.n)").scalar() == 3


def test_a_closed_transaction_refuses_queries(db):
    tx = db.transaction()
    tx.rollback()
    with pytest.raises(plexus.TransactionError, match="closed"):
        tx.query("RETURN 1")
    with pytest.raises(plexus.TransactionError):
        tx.commit()


def test_a_failed_write_leaves_the_transaction_fit_only_for_rollback(db):
    tx = db.transaction()
    tx.query("CREATE (:T)").consume()
    with pytest.raises(plexus.CypherTypeError):
        tx.query("CREATE (:T {x: 1 + 'a' + {}})").consume()
    with pytest.raises(plexus.TransactionError, match="rolled back"):
        tx.commit()
    assert db.query("MATCH (t:T) RETURN count(t)").scalar() == 0


def test_concurrent_writers_conflict_and_one_wins(db):
    db.query("CREATE (:Counter {n: 0})").consume()
    a, b = db.transaction(), db.transaction()
    a.query("MATCH (c:Counter) SET c.n = c.n + 1").consume()
    b.query("MATCH (c:Counter) SET c.n = c.n + 10").consume()
    a.commit()
    with pytest.raises(plexus.ConflictError) as e:
        b.commit()
    assert e.value.kind == "conflict"
    assert db.query("MATCH (c:Counter) RETURN c.n").scalar() == 1


def test_threads_share_one_database(db):
    """Eight threads write and read at once; every retried increment lands,
    and the commit statistics count exactly the commits and conflicts."""
    db.query("CREATE (:Counter {n: 0})").consume()
    errors = []
    conflicts = []

    def work():
        try:
            for _ in range(25):
                while True:
                    try:
                        with db.transaction() as tx:
                            tx.query("MATCH (c:Counter) SET c.n = c.n + 1").consume()
                        break
                    except plexus.ConflictError:
                        conflicts.append(1)
                        continue
                assert db.query("MATCH (c:Counter) RETURN c.n").scalar() >= 1
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert db.query("MATCH (c:Counter) RETURN c.n").scalar() == 200
    stats = db.commit_stats()
    assert stats["commits"] == 201
    assert stats["conflicts"] == len(conflicts)
    assert 1 <= stats["groups"] <= 201
    assert stats["waiting"] == 0


def test_the_gil_is_released_while_a_query_runs(db):
    """A Python thread keeps running while another waits on a long query."""
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        db.query("UNWIND range(1, 3000000) AS x RETURN sum(x)").scalar()
    finally:
        done.set()
        t.join()
    assert len(ticks) > 5


def test_ctrl_c_stops_a_long_query(db):
    """KeyboardInterrupt (what Ctrl-C raises) reaches Python while Plexus
    works, and the query stops; the database goes on answering."""
    import _thread
    import time

    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        db.query("UNWIND range(1, 10000000000) AS x RETURN count(x)").scalar()
    timer.join()
    assert time.monotonic() - started < 10
    r = db.query("UNWIND range(1, 10000000000) AS x RETURN x")
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        r.to_arrow()
    timer.join()
    assert db.query("RETURN 42").scalar() == 42
