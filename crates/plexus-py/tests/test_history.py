"""A graph's history from Python: keep it, read the past in Cypher, prune."""

import datetime as dt

import pytest

import plexus


def test_queries_read_the_graph_as_it_was(db):
    start = db.keep_history()
    assert db.history_start() == start
    db.query("CREATE (:Person {name: 'Ann', age: 30})")
    then = db.system_time()
    db.query("MATCH (p:Person) SET p.age = 31")
    q = "MATCH (p:Person) FOR SYSTEM_TIME AS OF $t RETURN p.age AS age"
    assert db.query(q, t=then).scalar() == 30
    assert db.query(q, t=db.system_time()).scalar() == 31
    as_datetime = dt.datetime.fromtimestamp(then / 1e6, tz=dt.timezone.utc)
    assert db.query(q, t=as_datetime).scalar() == 30
    assert db.query(q, t=as_datetime.isoformat()).scalar() == 30
    assert db.query(q, t=start).rows() == []
    assert db.prune_history(db.system_time()) >= 1
    with pytest.raises(plexus.PlexusError, match="keeps history from"):
        db.query(q, t=then).rows()
    db.drop_history()
    assert db.history_start() is None


def test_a_retention_policy_prunes_what_its_window_does_not_need(db):
    with pytest.raises(plexus.PlexusError, match="history"):
        db.set_history_retention(60)
    db.keep_history()
    assert db.history_retention() is None
    db.query("CREATE (:Person {name: 'Ann', age: 30})")
    then = db.system_time()
    db.set_history_retention(dt.timedelta(days=30))
    assert db.history_retention() == dt.timedelta(days=30)
    assert db.enforce_history_retention() == {"default": 0}
    with pytest.raises(ValueError, match="positive"):
        db.set_history_retention(-1)
    db.query("MATCH (p:Person) SET p.age = 31")
    db.set_history_retention(0.000001)
    db.enforce_history_retention()
    q = "MATCH (p:Person) FOR SYSTEM_TIME AS OF $t RETURN p.age AS age"
    with pytest.raises(plexus.PlexusError, match="keeps history from"):
        db.query(q, t=then).rows()
    assert db.query(q, t=db.history_start()).scalar() == 31
    db.set_history_retention(None)
    assert db.history_retention() is None
