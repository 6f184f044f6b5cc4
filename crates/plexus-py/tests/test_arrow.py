"""Results to pyarrow, Polars and pandas through the Arrow C stream."""

import datetime as dt
import tracemalloc

import pytest

import plexus

pa = pytest.importorskip("pyarrow")


def test_types_map_to_arrow(people):
    t = people.query(
        "MATCH (p:Person) RETURN p.name AS name, p.age AS age, 1.5 AS f, true AS b, "
        "date('2020-01-02') AS d, datetime('2020-01-02T03:04:05Z') AS ts, "
        "duration('P1M2DT3S') AS dur, [1, 2] AS l, {k: 'v'} AS m ORDER BY name"
    ).to_arrow()
    assert t.schema.field("name").type == pa.string()
    assert t.schema.field("age").type == pa.int64()
    assert t.schema.field("f").type == pa.float64()
    assert t.schema.field("b").type == pa.bool_()
    assert t.schema.field("d").type == pa.date32()
    assert t.schema.field("ts").type == pa.timestamp("ns", tz="UTC")
    assert t.schema.field("dur").type == pa.month_day_nano_interval()
    assert t.schema.field("l").type == pa.list_(pa.int64())
    assert t.schema.field("m").type == pa.struct([("k", pa.string())])
    assert t.column("age").to_pylist() == [31, 42, None]
    assert t.column("d").to_pylist()[0] == dt.date(2020, 1, 2)


def test_nodes_become_structs_with_their_identity(people):
    t = people.query("MATCH (p:Person {name: 'Ann'}) RETURN p").to_arrow()
    node = t.column("p").to_pylist()[0]
    assert node["_labels"] == ["Person"] and node["name"] == "Ann" and node["age"] == 31
    assert node["_id"] == people.query("MATCH (p {name: 'Ann'}) RETURN elementId(p)").scalar()


def test_an_empty_result_keeps_its_columns(db):
    t = db.query("MATCH (n:Nothing) RETURN n.x AS x, n.y AS y").to_arrow()
    assert t.num_rows == 0 and t.column_names == ["x", "y"]


def test_consumers_read_plexus_buffers_in_place(db):
    """Zero-copy: pyarrow and Polars see the very buffer Plexus filled."""
    pl = pytest.importorskip("polars")
    stream = db.query("UNWIND range(1, 50000) AS i RETURN i, i * 2.0 AS f")._stream()
    addresses = stream._buffer_addresses
    t = pa.table(stream)
    assert t.column("i").chunks[0].buffers()[1].address == addresses[0]
    assert t.column("f").chunks[0].buffers()[1].address == addresses[1]
    df = pl.from_arrow(t)
    assert df["i"].to_numpy(allow_copy=False).__array_interface__["data"][0] == addresses[0]
    with pytest.raises(ValueError, match="consumed"):
        pa.table(stream)


def test_conversion_makes_no_python_object_per_value(db):
    r = db.query("UNWIND range(1, 200000) AS i RETURN i, toString(i) AS s")
    tracemalloc.start()
    try:
        t = r.to_arrow()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert t.num_rows == 200000
    # 200,000 Python ints and strings would take megabytes of Python heap.
    assert peak < 200_000


def test_polars_and_pandas(people):
    pl = pytest.importorskip("polars")
    pd = pytest.importorskip("pandas")
    q = "MATCH (p:Person) RETURN p.name AS name, p.age AS age ORDER BY name"
    df = people.query(q).to_polars()
    assert isinstance(df, pl.DataFrame) and df["name"].to_list() == ["Ann", "Bob", "Cid"]
    pdf = people.query(q).to_pandas()
    assert isinstance(pdf, pd.DataFrame) and list(pdf["name"]) == ["Ann", "Bob", "Cid"]
    assert pd.isna(pdf["age"][2])
    # The PyCapsule protocol directly: any Arrow consumer takes a Result.
    assert pl.DataFrame(people.query(q)).height == 3


def test_converting_after_iterating_is_refused(db):
    r = db.query("UNWIND range(1, 3) AS i RETURN i")
    r.fetchone()
    with pytest.raises(plexus.PlexusError, match="read already"):
        r.to_arrow()
