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
