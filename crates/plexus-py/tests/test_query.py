"""Queries, results and every value type both ways."""

import datetime as dt
import zoneinfo

import pytest

import plexus


def test_rows_iterate_as_dicts_and_as_tuples(people):
    q = "MATCH (p:Person) RETURN p.name AS name, p.age AS age ORDER BY name"
    assert people.query(q).fetchall() == [
        {"name": "Ann", "age": 31},
        {"name": "Bob", "age": 42},
        {"name": "Cid", "age": None},
    ]
    assert people.query(q).rows() == [("Ann", 31), ("Bob", 42), ("Cid", None)]
    r = people.query(q)
    assert r.columns == ["name", "age"]
    assert r.fetchone() == {"name": "Ann", "age": 31}
    assert [row["name"] for row in r] == ["Bob", "Cid"]
    assert r.fetchone() is None


def test_a_large_result_streams_in_batches(db):
    r = db.query("UNWIND range(1, 5000) AS i RETURN i")
    total = 0
    for n, row in enumerate(r.tuples(), start=1):
        assert row == (n,)
        total += 1
    assert total == 5000


def test_parameters_by_dict_and_by_keyword(people):
    q = "MATCH (p:Person) WHERE p.age > $min RETURN p.name AS n ORDER BY n"
    assert people.query(q, {"min": 35}).rows() == [("Bob",)]
    assert people.query(q, min=30).rows() == [("Ann",), ("Bob",)]


def test_nodes_relationships_and_paths_are_objects(people):
    row = people.query(
        "MATCH p = (a:Person {name: 'Ann'})-[k:KNOWS]->(b) RETURN a, k, b, p"
    ).fetchone()
    a, k, b, p = row["a"], row["k"], row["b"], row["p"]
    assert isinstance(a, plexus.Node) and a.labels == ("Person",)
    assert a["name"] == "Ann" and a.get("missing", 0) == 0 and "age" in a
    with pytest.raises(KeyError):
        a["missing"]
    assert isinstance(k, plexus.Relationship) and k.type == "KNOWS"
    assert (k.start, k.end) == (a.id, b.id) and k.properties == {"since": 2010}
    assert isinstance(p, plexus.Path) and len(p) == 1
    assert p.start == a and p.end == b and p.relationships[0] == k
    # Element ids are the ids queries see.
    assert people.query("MATCH (n {name: 'Ann'}) RETURN elementId(n) AS e").scalar() == a.id
    assert len({a, a, b}) == 2


SCALARS = [
    None,
    True,
    False,
    0,
    -(2**63),
    2**63 - 1,
    1.5,
    float("inf"),
    "",
    "héllo ✓",
    b"\x00\xffbytes",
    [1, "two", [3.0, None]],
    {"a": 1, "nested": {"b": [True]}},
]


@pytest.mark.parametrize("value", SCALARS, ids=repr)
def test_scalars_round_trip(db, value):
    assert db.query("RETURN $v AS v", v=value).scalar() == value


TEMPORALS = [
    dt.date(2024, 2, 29),
    dt.date(1, 1, 1),
    dt.time(10, 11, 12, 123456),
    dt.time(10, 11, 12, tzinfo=dt.timezone(dt.timedelta(hours=-5, minutes=-30))),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
    dt.datetime(2024, 3, 31, 2, 30, tzinfo=dt.timezone.utc),
    dt.datetime(2024, 7, 1, 12, 0, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")),
    dt.timedelta(days=-3, seconds=5, microseconds=7),
]


@pytest.mark.parametrize("value", TEMPORALS, ids=repr)
def test_temporals_round_trip_exactly(db, value):
    back = db.query("RETURN $v AS v", v=value).scalar()
    assert back == value and type(back) is type(value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        assert back.utcoffset() == value.utcoffset()
        assert str(back.tzinfo) == str(value.tzinfo)


def test_cypher_temporals_become_datetime_types(db):
    row = db.query(
        "RETURN date('2015-07-21') AS d, localdatetime('2015-07-21T20:40:32.142') AS ldt, "
        "datetime('2015-07-21T20:40:32+01:00') AS zdt, duration('PT36H') AS dur"
    ).fetchone()
    assert row["d"] == dt.date(2015, 7, 21)
    assert row["ldt"] == dt.datetime(2015, 7, 21, 20, 40, 32, 142000)
    assert row["zdt"] == dt.datetime(2015, 7, 21, 19, 40, 32, tzinfo=dt.timezone.utc)
    assert row["zdt"].utcoffset() == dt.timedelta(hours=1)
    assert row["dur"] == dt.timedelta(hours=36)


def test_values_python_cannot_hold_exactly_keep_their_cypher_form(db):
    row = db.query(
        "RETURN duration('P1Y2M3DT4S') AS months, localtime('10:00:00.123456789') AS nanos, "
        "date({year: 10000, month: 1, day: 1}) AS far"
    ).fetchone()
    months, nanos, far = row["months"], row["nanos"], row["far"]
    assert isinstance(months, plexus.Duration)
    assert (months.months, months.days, months.seconds) == (14, 3, 4)
    assert isinstance(nanos, plexus.Temporal) and str(nanos) == "10:00:00.123456789"
    assert isinstance(far, plexus.Temporal) and "10000" in str(far)
    # Passed back, each is the same Cypher value again.
    same = db.query(
        "RETURN $m = duration('P1Y2M3DT4S') AS a, $n = localtime('10:00:00.123456789') AS b, "
        "$f = date({year: 10000, month: 1, day: 1}) AS c",
        m=months,
        n=nanos,
        f=far,
    ).fetchone()
    assert same == {"a": True, "b": True, "c": True}
    assert plexus.Duration(months=1, nanoseconds=1_500_000_000).seconds == 1


def test_numpy_values_are_parameters(db):
    np = pytest.importorskip("numpy")
    row = db.query(
        "RETURN $i AS i, $f AS f, $v AS v",
        i=np.int32(7),
        f=np.float32(0.5),
        v=np.arange(3, dtype=np.int64),
    ).fetchone()
    assert row == {"i": 7, "f": 0.5, "v": [0, 1, 2]}


def test_bad_parameters_say_which_and_why(db):
    with pytest.raises(OverflowError, match=r"\$big"):
        db.query("RETURN $big", big=2**64)
    with pytest.raises(TypeError, match=r"\$x\[1\]"):
        db.query("RETURN $x", x=[1, object()])
    with pytest.raises(TypeError, match="keys must be strings"):
        db.query("RETURN $m", m={1: 2})
    cycle = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="nests deeper"):
        db.query("RETURN $c", c=cycle)


def test_deep_results_convert_and_deeper_ones_are_refused(db):
    deep = db.query("RETURN reduce(acc = [], i IN range(1, 999) | [acc]) AS v").scalar()
    depth = 0
    while deep:
        deep = deep[0]
        depth += 1
    assert depth == 999
    with pytest.raises(plexus.CypherTypeError, match="NestingTooDeep"):
        db.query("RETURN reduce(acc = [], i IN range(1, 200000) | [acc]) AS v").fetchall()


def test_summary_counts_writes(db):
    s = db.query("CREATE (:A {x: 1})-[:R]->(:B)").consume()
    assert s["kind"] == "write"
    assert (s["nodes_created"], s["relationships_created"], s["properties_set"]) == (2, 1, 1)
    assert db.query("MATCH (n) RETURN n").consume()["kind"] == "read"


def test_named_graphs_are_apart(db):
    other = db.graph("other")
    other.query("CREATE (:X)").consume()
    assert sorted(db.graphs()) == ["default", "other"]
    assert other.query("MATCH (n) RETURN count(n)").scalar() == 1
    assert db.query("MATCH (n) RETURN count(n)").scalar() == 0
    db.drop_graph("other")
    assert db.graphs() == ["default"]


def test_a_database_on_disk_keeps_its_data(tmp_path):
    path = tmp_path / "db"
    with plexus.Database(path) as db:
        db.query("CREATE (:P {n: 1})").consume()
        assert db.path == str(path)
    with pytest.raises(plexus.PlexusError, match="closed"):
        db.query("RETURN 1")
    assert repr(db) == "<plexus.Database closed>"
    del db
    again = plexus.Database(path, create=False)
    assert again.query("MATCH (p:P) RETURN p.n").scalar() == 1
    with pytest.raises(plexus.PlexusError, match="no Plexus database"):
        plexus.Database(tmp_path / "missing", create=False)


def test_vector_search_from_python(db):
    import numpy as np

    db.query(
        "CREATE VECTOR INDEX docs FOR (d:Doc) ON d.v "
        "OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}"
    ).consume()
    rows = [{"id": f"d{i}", "v": np.eye(3, dtype=np.float32)[i % 3].tolist()} for i in range(9)]
    db.query("UNWIND $rows AS r CREATE (:Doc {id: r.id, v: r.v})", rows=rows).consume()
    hits = db.vector_search("docs", np.array([0.0, 1.0, 0.1], dtype=np.float32), k=3)
    assert len(hits) == 3
    assert all(score > 0.99 for _, score in hits)
    ids = db.query(
        "CALL db.index.vector.queryNodes('docs', 3, $q) YIELD node RETURN node.id AS id",
        q=[0.0, 1.0, 0.1],
    ).fetchall()
    assert sorted(r["id"] for r in ids) == ["d1", "d4", "d7"]
    with pytest.raises(plexus.PlexusError, match="dimensions"):
        db.vector_search("docs", [1.0, 2.0], k=3)
    with pytest.raises(plexus.PlexusError, match="no index"):
        db.vector_search("missing", [1.0, 2.0, 3.0])
