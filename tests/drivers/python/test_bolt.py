"""The official Neo4j Python driver against `plexus serve`: what
applications and the GraphRAG tools built on the driver do."""

import datetime
import socket
import struct
import threading

import neo4j
import pytest
from neo4j import GraphDatabase, exceptions as nx


@pytest.fixture
def driver(open_server):
    d = GraphDatabase.driver(f"bolt://{open_server.address}", auth=None)
    yield d
    d.close()


def fresh_db(driver, name):
    """A database (named graph) of its own for a test."""
    driver.execute_query(f"CREATE DATABASE `{name}` IF NOT EXISTS", database_="system")
    driver.execute_query("MATCH (n) DETACH DELETE n", database_=name)
    return name


def test_server_identity_and_version(driver):
    info = driver.get_server_info()
    assert info.agent.startswith("Plexus/")
    assert info.protocol_version >= (5, 2)  # cognee's floor


def test_auto_commit_nodes_relationships_and_element_ids(driver):
    db = fresh_db(driver, "autocommit")
    with driver.session(database=db) as s:
        s.run(
            "CREATE (a:Person {id: 'a', name: 'Ann'})-[:KNOWS {since: 2015}]->(b:Person:Admin {id: 'b'})"
        ).consume()
        rec = s.run("MATCH (a)-[r:KNOWS]->(b) RETURN a, r, b, elementId(a) AS ea, elementId(r) AS er").single()
    a, r, b = rec["a"], rec["r"], rec["b"]
    assert a.labels == {"Person"} and b.labels == {"Person", "Admin"}
    assert dict(a) == {"id": "a", "name": "Ann"}
    assert r.type == "KNOWS" and r["since"] == 2015
    # Element ids agree with elementId() and between a relationship and its endpoints.
    assert a.element_id == rec["ea"] and r.element_id == rec["er"]
    assert r.start_node.element_id == a.element_id and r.end_node.element_id == b.element_id
    # cognee reads a relationship through Result.data() as (start props, type, end props).
    with driver.session(database=db) as s:
        data = s.run("MATCH (a)-[r]->(b) RETURN a, r, b").data()
    assert data[0]["r"] == ({"id": "a", "name": "Ann"}, "KNOWS", {"id": "b"})
    # An element id round-trips as a parameter.
    found = driver.execute_query(
        "MATCH (n) WHERE elementId(n) = $e RETURN n.name AS name", e=a.element_id, database_=db
    ).records
    assert [x["name"] for x in found] == ["Ann"]


def test_summary_counters(driver):
    db = fresh_db(driver, "counters")
    summary = driver.execute_query(
        "CREATE (:A {x: 1})-[:T]->(:B)", database_=db
    ).summary
    c = summary.counters
    assert (c.nodes_created, c.relationships_created, c.labels_added, c.properties_set) == (2, 1, 2, 1)
    assert c.contains_updates and summary.query_type == "rw"
    c = driver.execute_query("MATCH (n) DETACH DELETE n", database_=db).summary.counters
    assert (c.nodes_deleted, c.relationships_deleted) == (2, 1)
    read = driver.execute_query("MATCH (n) RETURN n", database_=db).summary
    assert not read.counters.contains_updates and read.query_type == "r"


def test_schema_commands_and_procedures(driver):
    db = fresh_db(driver, "schema")
    driver.execute_query("CREATE INDEX person_name IF NOT EXISTS FOR (p:Person) ON (p.name)", database_=db)
    driver.execute_query(
        "CREATE CONSTRAINT person_id IF NOT EXISTS FOR (p:Person) REQUIRE p.id IS UNIQUE", database_=db
    )
    indexes = driver.execute_query("SHOW INDEXES", database_=db).records
    assert "person_name" in {r["name"] for r in indexes}
    constraints = driver.execute_query("SHOW CONSTRAINTS", database_=db).records
    assert "person_id" in {r["name"] for r in constraints}
    rec = driver.execute_query("CALL dbms.components() YIELD name, versions, edition").records[0]
    assert rec["versions"][0].startswith("5.") and rec["edition"] == "community"


def test_transaction_timeouts(driver):
    slow = "UNWIND range(1, 100000000000) AS x RETURN count(x)"
    with driver.session() as s:
        with pytest.raises(nx.ClientError) as e:
            s.run(neo4j.Query(slow, timeout=0.3)).consume()
        assert "TransactionTimedOut" in e.value.code
        tx = s.begin_transaction(timeout=0.3)
        with pytest.raises(nx.ClientError) as e:
            tx.run(slow).consume()
        assert "TransactionTimedOut" in e.value.code
        tx.close()
        assert s.run("RETURN 1 AS x").single()["x"] == 1


def test_paths(driver):
    db = fresh_db(driver, "paths")
    driver.execute_query(
        "CREATE (:P {i: 0})-[:N]->(:P {i: 1})<-[:N]-(:P {i: 2})", database_=db
    )
    rec = driver.execute_query("MATCH p = (x {i: 0})-->()<--(y) RETURN p", database_=db).records[0]
    p = rec["p"]
    assert [n["i"] for n in p.nodes] == [0, 1, 2]
    assert len(p.relationships) == 2
    # The second relationship is walked against its direction.
    second = p.relationships[1]
    assert second.start_node["i"] == 2 and second.end_node["i"] == 1


VALUES = {
    "null": None,
    "true": True,
    "int": -(2**63),
    "big": 2**63 - 1,
    "float": 1.5,
    "string": "grüße ✓",
    "bytes": b"\x00\xff",
    "list": [1, "two", [3.0, None]],
    "map": {"k": {"nested": [1, 2]}},
    "date": datetime.date(2024, 2, 29),
    "localtime": datetime.time(13, 14, 15, 123456),
    "localdatetime": datetime.datetime(2024, 1, 2, 3, 4, 5, 6),
    "datetime": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
    "duration": datetime.timedelta(days=3, seconds=7, microseconds=9),
}


def test_every_value_type_round_trips_as_parameter_and_property(driver):
    db = fresh_db(driver, "values")
    echoed = driver.execute_query("RETURN $v AS v", v=VALUES, database_=db).records[0]["v"]
    stored_props = {k: v for k, v in VALUES.items() if k not in ("null", "map", "list")}
    driver.execute_query("CREATE (n:V) SET n = $p", p=stored_props, database_=db)
    stored = driver.execute_query("MATCH (n:V) RETURN n", database_=db).records[0]["n"]
    for source in (echoed, dict(stored)):
        for k, want in VALUES.items():
            if k not in source:
                assert k in ("null", "map", "list") and source is not echoed
                continue
            got = source[k]
            if hasattr(got, "to_native"):
                got = got.to_native()
            if k == "duration":
                assert got == neo4j.time.Duration(days=3, seconds=7, microseconds=9)
                continue
            assert got == want, k


def test_temporal_values_made_in_cypher_come_back_typed(driver):
    rec = driver.execute_query(
        "RETURN datetime('2015-07-21T21:40:32.142+01:00') AS dt, "
        "datetime({year: 2020, month: 6, day: 1, hour: 12, timezone: 'Europe/Stockholm'}) AS zoned, "
        "time('10:00+02:00') AS t, duration('P1Y2M3DT4H') AS d"
    ).records[0]
    assert rec["dt"].utcoffset() == datetime.timedelta(hours=1)
    assert rec["dt"].to_native() == datetime.datetime(
        2015, 7, 21, 21, 40, 32, 142000, tzinfo=datetime.timezone(datetime.timedelta(hours=1))
    )
    assert rec["zoned"].tzinfo.zone == "Europe/Stockholm" and rec["zoned"].hour == 12
    assert rec["t"].utc_offset() == datetime.timedelta(hours=2)
    assert rec["d"] == neo4j.time.Duration(years=1, months=2, days=3, hours=4)


def test_fetch_size_streams_in_batches(driver):
    with driver.session(fetch_size=7) as s:
        result = s.run("UNWIND range(1, 100) AS x RETURN x")
        assert [r["x"] for r in result] == list(range(1, 101))
    with driver.session(fetch_size=3) as s:
        # Two results open in one transaction, read alternately (qid).
        with s.begin_transaction() as tx:
            r1 = tx.run("UNWIND range(1, 10) AS x RETURN x")
            r2 = tx.run("UNWIND range(11, 20) AS x RETURN x")
            assert r1.fetch(4) and r2.fetch(4)
            assert [x["x"] for x in r1] == list(range(5, 11))
            assert [x["x"] for x in r2] == list(range(15, 21))


def test_explicit_transactions_commit_and_roll_back(driver):
    db = fresh_db(driver, "explicit")
    with driver.session(database=db) as s:
        tx = s.begin_transaction()
        tx.run("CREATE (:T {v: 1})").consume()
        # Seen inside, not outside, before commit.
        assert tx.run("MATCH (t:T) RETURN count(t) AS c").single()["c"] == 1
        assert driver.execute_query("MATCH (t:T) RETURN count(t) AS c", database_=db).records[0]["c"] == 0
        tx.commit()
        tx = s.begin_transaction()
        tx.run("CREATE (:T {v: 2})").consume()
        tx.rollback()
    assert driver.execute_query("MATCH (t:T) RETURN collect(t.v) AS v", database_=db).records[0]["v"] == [1]


def test_managed_write_retries_a_conflict(driver):
    db = fresh_db(driver, "conflict")
    driver.execute_query("CREATE (:C {n: 0})", database_=db)
    attempts = []

    def work(tx):
        attempts.append(1)
        tx.run("MATCH (c:C) SET c.n = c.n + 1").consume()
        if len(attempts) == 1:
            # Another client commits a change to the same node first.
            driver.execute_query("MATCH (c:C) SET c.n = c.n + 100", database_=db)
        return tx.run("MATCH (c:C) RETURN c.n AS n").single()["n"]

    with driver.session(database=db) as s:
        assert s.execute_write(work) == 101
    assert len(attempts) == 2, "the conflict was retried once"
    with driver.session(database=db) as s:
        assert s.execute_read(lambda tx: tx.run("MATCH (c:C) RETURN c.n AS n").single()["n"]) == 101


def test_read_transaction_reads_one_snapshot_and_refuses_writes(driver):
    db = fresh_db(driver, "readtx")
    driver.execute_query("CREATE (:R {n: 1})", database_=db)

    def work(tx):
        first = tx.run("MATCH (r:R) RETURN sum(r.n) AS s").single()["s"]
        # Another client commits meanwhile; the read transaction keeps the
        # snapshot it began with.
        driver.execute_query("CREATE (:R {n: 2})", database_=db)
        second = tx.run("MATCH (r:R) RETURN sum(r.n) AS s").single()["s"]
        return first, second

    with driver.session(database=db) as s:
        assert s.execute_read(work) == (1, 1)
        assert driver.execute_query("MATCH (r:R) RETURN sum(r.n) AS s", database_=db).records[0]["s"] == 3
    with driver.session(database=db, default_access_mode=neo4j.READ_ACCESS) as s:
        tx = s.begin_transaction()
        with pytest.raises(nx.ClientError) as e:
            tx.run("CREATE (:R {n: 10})").consume()
        assert "AccessMode" in e.value.code
        tx.close()
    assert driver.execute_query("MATCH (r:R) RETURN count(r) AS c", database_=db).records[0]["c"] == 2


def test_explain_and_profile_put_their_plan_in_the_summary(driver):
    db = fresh_db(driver, "plans")
    driver.execute_query("UNWIND range(1, 5) AS i CREATE (:P {n: i})", database_=db)
    q = "MATCH (p:P) WHERE p.n > 2 RETURN p.n AS n ORDER BY n"

    def operators(plan):
        out = []
        while plan:
            out.append(plan["operatorType"])
            plan = plan["children"][0] if plan["children"] else None
        return out

    with driver.session(database=db) as s:
        result = s.run("EXPLAIN " + q)
        assert list(result) == [], "EXPLAIN runs nothing"
        summary = result.consume()
        assert summary.plan and summary.profile is None
        assert len(operators(summary.plan)) >= 2
        assert "args" in summary.plan and "identifiers" in summary.plan

        result = s.run("PROFILE " + q)
        assert [r["n"] for r in result] == [3, 4, 5], "PROFILE returns the query's rows"
        profile = result.consume().profile
        assert profile and profile["rows"] >= 0 and "dbHits" in profile and "time" in profile
        assert operators(profile) == operators(summary.plan)

    def in_tx(tx):
        r = tx.run("PROFILE CREATE (:Q) RETURN 1 AS one")
        return [x["one"] for x in r], r.consume()

    with driver.session(database=db) as s:
        rows, summary = s.execute_write(in_tx)
    assert rows == [1] and summary.profile and summary.counters.nodes_created == 1
    assert driver.execute_query("MATCH (q:Q) RETURN count(q) AS c", database_=db).records[0]["c"] == 1


def test_execute_query_routing_read_refuses_writes(driver):
    with pytest.raises(nx.ClientError) as e:
        driver.execute_query("CREATE (:X)", routing_=neo4j.RoutingControl.READ)
    assert "AccessMode" in e.value.code


def test_errors_map_to_driver_exceptions(driver):
    with pytest.raises(nx.CypherSyntaxError):
        driver.execute_query("MATCH (n RETURN n")
    with pytest.raises(nx.CypherTypeError):
        driver.execute_query("RETURN toUpper(1)")
    with pytest.raises(nx.ClientError) as e:
        driver.execute_query("RETURN 1", database_="no_such_db")
    assert e.value.code == "Neo.ClientError.Database.DatabaseNotFound"


def test_reset_after_failure_keeps_the_connection_usable(driver):
    with driver.session() as s:
        with pytest.raises(nx.ClientError):
            s.run("RETURN 1 / 0").consume()
        assert s.run("RETURN 2 AS x").single()["x"] == 2
        tx = s.begin_transaction()
        with pytest.raises(nx.ClientError):
            tx.run("RETURN $missing").consume()
        tx.close()
        assert s.run("RETURN 3 AS x").single()["x"] == 3


def test_neo4j_scheme_routes_to_the_one_server(open_server):
    with GraphDatabase.driver(f"neo4j://{open_server.address}", auth=None) as d:
        assert d.execute_query("RETURN 42 AS x").records[0]["x"] == 42
        with d.session(default_access_mode=neo4j.READ_ACCESS) as s:
            assert s.run("RETURN 1 AS x").single()["x"] == 1


def test_cognee_driver_options(open_server):
    # cognee builds its driver like this; Bolt before 5.2 would refuse it.
    with GraphDatabase.driver(
        f"bolt://{open_server.address}", auth=None, notifications_min_severity="OFF",
        max_connection_lifetime=120, keep_alive=True,
    ) as d:
        with d.session() as s:
            assert s.run("MATCH () RETURN count(*) AS c LIMIT 1").data()[0]["c"] >= 0


def test_databases_are_named_graphs(driver):
    driver.execute_query("CREATE DATABASE tenant_a IF NOT EXISTS", database_="system")
    driver.execute_query("CREATE (:Only {here: true})", database_="tenant_a")
    status = driver.execute_query(
        "SHOW DATABASES YIELD name, currentStatus WHERE name = $n RETURN currentStatus",
        n="tenant_a", database_="system",
    ).records
    assert [r["currentStatus"] for r in status] == ["online"]
    assert driver.execute_query("MATCH (n:Only) RETURN count(n) AS c", database_="tenant_a").records[0]["c"] == 1
    assert driver.execute_query("MATCH (n:Only) RETURN count(n) AS c").records[0]["c"] == 0
    driver.execute_query("DROP DATABASE tenant_a", database_="system")
    with pytest.raises(nx.ClientError):
        driver.execute_query("RETURN 1", database_="tenant_a")


def test_a_client_that_leaves_mid_stream_does_not_hurt_the_server(open_server, driver):
    host, port = open_server.address.split(":")
    for _ in range(3):
        d = GraphDatabase.driver(f"bolt://{open_server.address}", auth=None)
        s = d.session(fetch_size=10)
        r = s.run("UNWIND range(1, 100000000) AS x RETURN x")
        assert r.fetch(5)
        # Drop the socket under the driver's feet.
        d.close()
    assert driver.execute_query("RETURN 1 AS x").records[0]["x"] == 1


def test_authentication(auth_server):
    uri = f"bolt://{auth_server.address}"
    with GraphDatabase.driver(uri, auth=("writer", "wrong")) as d:
        with pytest.raises(nx.AuthError):
            d.verify_connectivity()
    with GraphDatabase.driver(uri, auth=None) as d:
        with pytest.raises(nx.AuthError):
            d.verify_connectivity()
    with GraphDatabase.driver(uri, auth=("writer", "writer-pw")) as d:
        d.execute_query("CREATE (:W)")
        with pytest.raises(nx.ClientError):  # only admins manage databases
            d.execute_query("CREATE DATABASE w2", database_="system")
    with GraphDatabase.driver(uri, auth=("reader", "reader-pw")) as d:
        assert d.execute_query("MATCH (w:W) RETURN count(w) AS c").records[0]["c"] == 1
        with pytest.raises(nx.Forbidden):
            d.execute_query("CREATE (:W)")
    with GraphDatabase.driver(uri, auth=("admin", "admin-pw")) as d:
        d.execute_query("CREATE DATABASE w2 IF NOT EXISTS", database_="system")
        d.execute_query("CREATE DATABASE sales IF NOT EXISTS", database_="system")
        # Users made through Cypher, as Neo4j's admin commands.
        d.execute_query("CREATE USER late IF NOT EXISTS SET PASSWORD $pw CHANGE NOT REQUIRED",
                        pw="late-pw", database_="system")
        d.execute_query("GRANT ROLE reader TO late", database_="system")
        users = d.execute_query("SHOW USERS", database_="system").records
        assert {"admin", "writer", "reader", "sales", "late"} <= {r["user"] for r in users}
    with GraphDatabase.driver(uri, auth=("late", "late-pw")) as d:
        assert d.execute_query("RETURN 1 AS x").records[0]["x"] == 1
        with pytest.raises(nx.Forbidden):
            d.execute_query("CREATE (:Late)")
    # A user of one database only.
    with GraphDatabase.driver(uri, auth=("sales", "sales-pw")) as d:
        d.execute_query("CREATE (:Deal)", database_="sales")
        with pytest.raises(nx.Forbidden):
            d.execute_query("MATCH (n) RETURN n")
        names = [r["name"] for r in d.execute_query("SHOW DATABASES", database_="system").records]
        assert sorted(names) == ["sales", "system"]
    # Read-only on one database, read-write on another.
    with GraphDatabase.driver(uri, auth=("admin", "admin-pw")) as d:
        d.execute_query("CREATE DATABASE audit IF NOT EXISTS", database_="system")
    with GraphDatabase.driver(uri, auth=("auditor", "auditor-pw")) as d:
        d.execute_query("CREATE (:Finding)", database_="audit")
        assert d.execute_query("MATCH (n:Deal) RETURN count(n) AS c", database_="sales").records[0]["c"] == 1
        with pytest.raises(nx.Forbidden):
            d.execute_query("CREATE (:Deal)", database_="sales")
    with GraphDatabase.driver(uri, auth=("admin", "admin-pw")) as d:
        d.execute_query("DROP USER late", database_="system")
    with GraphDatabase.driver(uri, auth=("late", "late-pw")) as d:
        with pytest.raises(nx.AuthError):
            d.verify_connectivity()


def test_concurrent_clients(driver):
    db = fresh_db(driver, "concurrent")
    errors = []

    def client(i):
        try:
            with driver.session(database=db) as s:
                for j in range(20):
                    s.execute_write(lambda tx: tx.run("CREATE (:K {c: $c, j: $j})", c=i, j=j).consume())
                    s.execute_read(lambda tx: tx.run("MATCH (k:K) RETURN count(k) AS c").single())
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    assert driver.execute_query("MATCH (k:K) RETURN count(k) AS c", database_=db).records[0]["c"] == 160


def test_tls(tls_server):
    auth = ("writer", "writer-pw")
    # A self-signed certificate: the drivers' "+ssc" schemes accept it.
    for scheme in ("bolt+ssc", "neo4j+ssc"):
        with GraphDatabase.driver(f"{scheme}://{tls_server.address}", auth=auth) as d:
            assert d.execute_query("RETURN 'secret' AS x").records[0]["x"] == "secret"
    # Verified TLS: the driver checks the certificate against the one trusted.
    with GraphDatabase.driver(f"bolt://{tls_server.address}", auth=auth, encrypted=True,
                              trusted_certificates=neo4j.TrustCustomCAs(tls_server.cert)) as d:
        assert d.execute_query("RETURN 2 AS x").records[0]["x"] == 2
    # Plain Bolt to a TLS server does not get through; nor does a client
    # that checks certificates against the system's authorities.
    for scheme in ("bolt", "bolt+s"):
        with GraphDatabase.driver(f"{scheme}://{tls_server.address}", auth=auth, connection_timeout=5) as d:
            with pytest.raises((nx.ServiceUnavailable, nx.SessionExpired, nx.UnsupportedServerProduct)):
                d.verify_connectivity()
