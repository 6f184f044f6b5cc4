"""Loading graphs from pyarrow, Polars, pandas and files."""

import pytest

import plexus

pa = pytest.importorskip("pyarrow")


def node_table():
    return pa.table({"id": ["a", "b", "c"], "name": ["Ann", "Bob", "Cid"], "age": [31, 42, None]})


def edge_table():
    return pa.table({"src": ["a", "b"], "dst": ["b", "c"], "since": [2010, 2015]})


def test_pyarrow_tables_by_label_and_type(db):
    report = db.import_data(nodes={"Person": node_table()}, edges={"KNOWS": edge_table()})
    assert report == {"nodes": 3, "edges": 2, "skipped": 0}
    rows = db.query(
        "MATCH (a:Person)-[k:KNOWS]->(b) RETURN a.name AS a, k.since AS s, b.name AS b ORDER BY s"
    ).rows()
    assert rows == [("Ann", 2010, "Bob"), ("Bob", 2015, "Cid")]
    assert db.query("MATCH (p {name: 'Cid'}) RETURN p.age").scalar() is None


def test_labels_and_types_from_columns(db):
    nodes = pa.table({"id": ["x", "y"], "label": ["A", "B"]})
    edges = pa.table({"src": ["x"], "dst": ["y"], "type": ["R"]})
    db.import_data(nodes=[nodes], edges=[edges])
    assert db.query("MATCH (:A)-[:R]->(:B) RETURN count(*)").scalar() == 1


def test_polars_and_pandas_frames(db):
    pl = pytest.importorskip("polars")
    pd = pytest.importorskip("pandas")
    people = pl.DataFrame({"id": ["a", "b"], "name": ["Ann", "Bob"]})
    cities = pd.DataFrame({"id": ["paris"], "pop": [2.1]})
    lives = pd.DataFrame({"src": ["a", "b"], "dst": ["paris", "paris"]})
    db.import_data(nodes={"Person": people, "City": cities}, edges={"LIVES_IN": lives})
    assert db.query("MATCH (p:Person)-[:LIVES_IN]->(c:City) RETURN count(p), c.pop").rows() == [(2, 2.1)]


def test_record_batch_readers_stream_in(db):
    batches = [pa.record_batch({"id": [f"n{i}" for i in range(k, k + 100)]}) for k in range(0, 1000, 100)]
    reader = pa.RecordBatchReader.from_batches(batches[0].schema, batches)
    assert db.import_data(nodes={"N": reader})["nodes"] == 1000


def test_files_by_path(db, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(node_table(), tmp_path / "people.parquet")
    (tmp_path / "knows.csv").write_text(":START_ID,:END_ID,since:int\na,b,2010\n")
    db.import_data(nodes={"Person": tmp_path / "people.parquet"}, edges={"KNOWS": str(tmp_path / "knows.csv")})
    assert db.query("MATCH (:Person)-[k:KNOWS]->() RETURN k.since").scalar() == 2010


def test_upsert_merges_into_a_graph_with_data(db):
    db.import_data(nodes={"Person": node_table()})
    changes = pa.table({"id": ["a", "d"], "age": [32, 5]})
    report = db.import_data(nodes={"Person": changes}, upsert=True)
    assert report["nodes"] == 2
    rows = db.query("MATCH (p:Person) RETURN elementId(p) AS id, p.name AS n, p.age AS age ORDER BY id").rows()
    assert rows == [("a", "Ann", 32), ("b", "Bob", 42), ("c", "Cid", None), ("d", None, 5)]


def test_a_bulk_import_needs_an_empty_graph(db):
    db.import_data(nodes={"Person": node_table()})
    with pytest.raises(plexus.PlexusError, match="empty|upsert"):
        db.import_data(nodes={"Person": node_table()})


def test_a_bad_row_names_its_place_and_leaves_nothing(db):
    nodes = pa.table({"id": ["a", None, "c"]})
    # The message names the input and its row: "batches #1:2:1: the id is null".
    with pytest.raises(plexus.IngestError, match="#1:2:1: the id is null"):
        db.import_data(nodes={"N": nodes})
    assert db.query("MATCH (n) RETURN count(n)").scalar() == 0
    dangling = pa.table({"src": ["a"], "dst": ["nowhere"]})
    with pytest.raises(plexus.PlexusError, match="nowhere"):
        db.import_data(nodes={"N": pa.table({"id": ["a"]})}, edges={"R": dangling})
    assert db.query("MATCH (n) RETURN count(n)").scalar() == 0


def test_a_duplicate_id_is_a_constraint_error(db):
    with pytest.raises(plexus.ConstraintError):
        db.import_data(nodes={"N": pa.table({"id": ["a", "a"]})})
    assert db.query("MATCH (n) RETURN count(n)").scalar() == 0


def test_progress_is_reported(db):
    seen = []
    n = 250_000
    db.import_data(nodes={"N": pa.table({"id": pa.array([str(i) for i in range(n)])})}, progress=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == n


def test_progress_bar(db, capsys):
    pytest.importorskip("tqdm")
    db.import_data(nodes={"N": node_table()}, progress=True)
    assert "plexus import" in capsys.readouterr().err


def test_what_is_not_a_table_is_refused(db):
    with pytest.raises(TypeError, match="not a table"):
        db.import_data(nodes={"N": 42})
    with pytest.raises(TypeError, match="not both"):
        db.import_data(nodes={"N": node_table(), "M": "file.csv"})


@pytest.mark.parametrize("frames", [True, False], ids=["arrow", "files"])
def test_index_modes(db, tmp_path, frames):
    pq = pytest.importorskip("pyarrow.parquet")
    db.query("CREATE INDEX FOR (p:Person) ON (p.name)").consume()
    source = node_table()
    if not frames:
        pq.write_table(source, tmp_path / "people.parquet")
        source = tmp_path / "people.parquet"
    db.import_data(nodes={"Person": source}, index_mode="defer")
    assert db.rebuild_indexes() != []
    assert db.query("MATCH (p:Person {name: 'Bob'}) RETURN p.age").scalar() == 42
    assert db.rebuild_indexes() == []
    with pytest.raises(ValueError, match="index_mode"):
        db.import_data(nodes={"Person": node_table()}, upsert=True, index_mode="sometimes")
