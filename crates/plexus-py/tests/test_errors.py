"""Errors: a small hierarchy mirroring the Rust kinds, with positions."""

import pytest

import plexus


def test_the_hierarchy_has_one_root():
    for cls in [
        plexus.QueryError,
        plexus.CypherSyntaxError,
        plexus.CypherTypeError,
        plexus.ConstraintError,
        plexus.ConflictError,
        plexus.ResourceLimitError,
        plexus.DatabaseIOError,
        plexus.TransactionError,
        plexus.UnsupportedError,
        plexus.CorruptionError,
        plexus.IngestError,
    ]:
        assert issubclass(cls, plexus.PlexusError)
    assert issubclass(plexus.CypherSyntaxError, plexus.QueryError)
    assert issubclass(plexus.CypherTypeError, plexus.QueryError)


def test_a_syntax_error_names_line_and_column(db):
    with pytest.raises(plexus.CypherSyntaxError) as e:
        db.query("MATCH (n)\nRETURN n +")
    assert "line 2" in str(e.value) and "column" in str(e.value)
    assert e.value.kind == "bad_input"


def test_an_unknown_variable_is_a_syntax_error_with_its_position(db):
    with pytest.raises(plexus.CypherSyntaxError, match="column"):
        db.query("RETURN nope")


def test_type_and_arithmetic_errors(db):
    with pytest.raises(plexus.CypherTypeError):
        db.query("RETURN 1 + 'a' + {}").fetchall()
    with pytest.raises(plexus.CypherTypeError):
        db.query("RETURN 9223372036854775807 + 1").fetchall()


def test_constraint_errors(db):
    db.query("CREATE CONSTRAINT FOR (p:P) REQUIRE p.k IS UNIQUE").consume()
    db.query("CREATE (:P {k: 1})").consume()
    with pytest.raises(plexus.ConstraintError) as e:
        db.query("CREATE (:P {k: 1})").consume()
    assert e.value.kind == "bad_input"
    db.query("MATCH (p:P) CREATE (p)-[:R]->(:Q)").consume()
    with pytest.raises(plexus.ConstraintError):
        db.query("MATCH (p:P) DELETE p").consume()


def test_resource_limits(db):
    with pytest.raises(plexus.ResourceLimitError) as e:
        db.query("UNWIND range(1, 100000000000) AS x RETURN count(x)", timeout=0.2).fetchall()
    assert e.value.kind == "resource_limit"
    small = plexus.Database.in_memory(memory_limit=1 << 20)
    with pytest.raises(plexus.ResourceLimitError, match="memory"):
        small.query("UNWIND range(1, 10000000) AS x RETURN collect(x)").fetchall()


def test_a_database_open_elsewhere_is_an_io_error(tmp_path):
    path = tmp_path / "db"
    plexus.Database(path)
    # The same process may open it again (one environment per process);
    # a file in the way of a database is a clear error.
    (tmp_path / "file").write_text("not a database")
    with pytest.raises(plexus.PlexusError):
        plexus.Database(tmp_path / "file")
