//! Round trips to a remote store (the postgres backend on the server the
//! test command starts): what a point read, a one-hop read and a three-hop
//! count cost today. Run with `--nocapture` to see the counts
//! (docs/distributed.md quotes them).
#![cfg(feature = "postgres")]

use plexus::{Backend, Database, Direction, GraphRead, Options, Params, Props, Value};

#[test]
fn round_trips_of_reads_on_postgres() {
    let url = std::env::var("PLEXUS_TEST_POSTGRES")
        .expect("PLEXUS_TEST_POSTGRES names no PostgreSQL server: run scripts/test");
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(
        dir.path().join("db"),
        Options {
            backend: Some(Backend::Postgres),
            store: Some(url),
            durable: false,
            ..Default::default()
        },
    )
    .unwrap();
    // A tree: the hub, 10 children, 100 grandchildren, 1,000 below them.
    let mut t = db.write("default").unwrap();
    let hub = t.create_node(Some("hub"), &["N"], &Props::new()).unwrap();
    let mut level = vec![hub];
    for depth in 1..=3 {
        let mut next = Vec::new();
        for (i, parent) in level.iter().enumerate() {
            for j in 0..10 {
                let key = format!("n{depth}_{i}_{j}");
                let n = t.create_node(Some(&key), &["N"], &Props::new()).unwrap();
                t.create_edge(None, *parent, n, "E", &Props::new()).unwrap();
                next.push(n);
            }
        }
        level = next;
    }
    t.commit().unwrap();
    let kv = db.storage().kv().clone();
    let trips = || kv.round_trips().unwrap();
    let measure = |what: &str, f: &dyn Fn()| -> u64 {
        f(); // statements prepared, caches warm
        let before = trips();
        f();
        let n = trips() - before;
        println!("{what}: {n} round trips");
        n
    };
    let snapshot = measure("a read transaction (begin and end)", &|| {
        drop(db.read("default").unwrap());
    });
    assert!(snapshot >= 1);
    measure("a node by its id", &|| {
        let r = db.read("default").unwrap();
        assert!(r.node_by_key("hub").unwrap().is_some());
    });
    measure("the hub's 10 neighbours", &|| {
        let r = db.read("default").unwrap();
        assert_eq!(r.neighbors(hub, Direction::Out, None).unwrap().len(), 10);
    });
    let reach = measure(
        "the 1,110 nodes within three hops (plexus::algo::reach)",
        &|| {
            let r = db.read("default").unwrap();
            let view = plexus::algo::StoreView(&r);
            let filter = plexus::algo::Filter::any(Direction::Out);
            assert_eq!(plexus::algo::reach(&view, hub, &filter, 3).unwrap(), 1110);
        },
    );
    // One round trip per hop: each level's adjacency in one read.
    assert_eq!(reach - snapshot, 3);
    // A Cypher count, measured: its round trips.
    let count = |what: &str, text: &str, expect: i64| -> u64 {
        measure(what, &|| {
            let rows = db.query("default", text, &Params::new()).unwrap().rows;
            assert_eq!(rows, vec![vec![Value::Int(expect)]], "{text}");
        })
    };
    count(
        "Cypher: a label scan of 1,111 nodes with a filter",
        "MATCH (h:N {id: 'none'}) RETURN count(h)",
        0,
    );
    // Counting relationships by type reads the type counter, not the graph.
    let typed = count(
        "Cypher: the 1,110 relationships of type E",
        "MATCH ()-[:E]->() RETURN count(*)",
        1110,
    );
    assert!(typed <= snapshot + 2, "{typed} round trips");
    let hub = "MATCH (h) WHERE elementId(h) = 'hub'";
    let found = count(
        "Cypher: the hub by its id",
        &format!("{hub} RETURN count(h)"),
        1,
    );
    // Each case: what, the query after finding the hub, its count, and
    // the round trips it may take beyond finding the hub. The matcher
    // reads a level's adjacency at once (depth first along fixed hops,
    // breadth first for a variable length), and a level's records at once
    // where a WHERE reads them.
    let cases = [
        (
            "the 1,000 nodes three hops away",
            "MATCH (h)-->()-->()-->(d) RETURN count(d)",
            1000,
            3,
        ),
        (
            "the 1,110 nodes within three hops",
            "MATCH (h)-[*1..3]->(d) RETURN count(DISTINCT d)",
            1110,
            3,
        ),
        (
            "the 1,000 nodes three hops away, filtered on a label",
            "MATCH (h)-->()-->()-->(d) WHERE d:N RETURN count(d)",
            1000,
            4,
        ),
        (
            "the 1,110 nodes within three hops, filtered on a label",
            "MATCH (h)-[*1..3]->(d) WHERE d:N RETURN count(DISTINCT d)",
            1110,
            6,
        ),
    ];
    for (what, query, expect, beyond) in cases {
        let n = count(
            &format!("Cypher: {what}"),
            &format!("{hub} {query}"),
            expect,
        );
        assert_eq!(n - found, beyond, "{what}");
    }
}
