use plexus::{Backend, Database, Error, ErrorKind, GraphRead, Options, Props};

fn each_backend() -> Vec<Backend> {
    plexus_kv::Backend::available()
        .into_iter()
        .filter(|b| *b != Backend::Memory)
        .collect()
}

/// The postgres backend's server, which the test command starts
/// (`scripts/postgres`); other backends ignore it.
fn store() -> Option<String> {
    let url = std::env::var("PLEXUS_TEST_POSTGRES").ok();
    assert!(
        url.is_some() || !each_backend().contains(&Backend::Postgres),
        "PLEXUS_TEST_POSTGRES names no PostgreSQL server: run the tests with scripts/test"
    );
    url
}

#[test]
fn data_survives_reopen_on_every_backend() {
    for backend in each_backend() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        {
            let db = Database::create(
                &path,
                Options {
                    backend: Some(backend),
                    store: store(),
                    ..Default::default()
                },
            )
            .unwrap();
            let mut t = db.write("default").unwrap();
            let a = t.create_node(Some("a"), &["L"], &Props::new()).unwrap();
            t.create_edge(None, a, a, "T", &Props::new()).unwrap();
            t.commit().unwrap();
        }
        let db = Database::open(&path, Options::default()).unwrap();
        assert_eq!(db.backend(), backend);
        let s = db.stats("default").unwrap();
        assert_eq!((s.nodes, s.edges), (1, 1), "{backend:?}");
        assert_eq!(s.labels, vec![("L".to_string(), 1)]);
        assert!(db.check("default").unwrap().is_ok());
        // New ids continue after the old ones.
        let mut t = db.write("default").unwrap();
        let b = t.create_node(None, &[], &Props::new()).unwrap();
        t.commit().unwrap();
        assert!(b.0 > db.read("default").unwrap().node_id("a").unwrap().unwrap().0);
    }
}

#[test]
fn refuses_what_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing");
    assert!(matches!(
        Database::open(&missing, Options::default()),
        Err(Error::Missing(_))
    ));
    let file = dir.path().join("file");
    std::fs::write(&file, "hello").unwrap();
    assert!(matches!(
        Database::open(&file, Options::default()),
        Err(Error::NotADatabase { .. })
    ));
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("x.txt"), "x").unwrap();
    assert!(matches!(
        Database::open(&other, Options::default()),
        Err(Error::NotADatabase { .. })
    ));
    assert!(matches!(
        Database::create(&other, Options::default()),
        Err(Error::NotADatabase { .. })
    ));
    let future = dir.path().join("future");
    Database::create(&future, Options::default()).unwrap();
    std::fs::write(
        future.join(plexus::MANIFEST_FILE),
        "plexus-database\nformat = 99\nbackend = lmdb\n",
    )
    .unwrap();
    let e = Database::open(&future, Options::default()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.to_string().contains("format version 99"), "{e}");
}

/// A creation killed before its manifest landed leaves its marker: the
/// folder is no database yet, and creating it again starts over. Without
/// the marker, such a folder is refused and nothing in it is touched.
#[test]
fn an_interrupted_creation_is_started_over() {
    for backend in each_backend() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let opts = Options {
            backend: Some(backend),
            store: store(),
            ..Default::default()
        };
        {
            let db = Database::create(&path, opts.clone()).unwrap();
            let mut t = db.write("default").unwrap();
            t.create_node(Some("a"), &["L"], &Props::new()).unwrap();
            t.commit().unwrap();
        }
        assert!(!path.join("PLEXUS.creating").exists(), "{backend:?}");
        std::fs::remove_file(path.join(plexus::MANIFEST_FILE)).unwrap();
        let e = Database::open(&path, opts.clone()).err().unwrap();
        assert!(matches!(e, Error::NotADatabase { .. }), "{e}");
        // (A postgres database's data is in its server, not the folder.)
        assert!(
            backend == Backend::Postgres || path.join("data").exists(),
            "an unmarked folder is left alone"
        );
        std::fs::write(path.join("PLEXUS.creating"), "").unwrap();
        let e = Database::open(&path, opts.clone()).err().unwrap();
        assert!(matches!(e, Error::Missing(_)), "{e}");
        let db = Database::open_or_create(&path, opts.clone()).unwrap();
        assert_eq!(db.stats("default").unwrap().nodes, 0, "{backend:?}");
        assert!(!path.join("PLEXUS.creating").exists());
        drop(db);
        Database::open(&path, opts).unwrap();
    }
}

#[test]
fn a_second_open_is_refused_while_the_first_holds_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Database::create(&path, Options::default()).unwrap();
    assert!(matches!(
        Database::open(&path, Options::default()),
        Err(Error::Locked(..))
    ));
    drop(db);
    Database::open(&path, Options::default()).unwrap();
}

/// A read-only open beside the writer sees its commits and refuses to
/// write; it never creates a database.
#[test]
fn a_read_only_open_reads_beside_the_writer_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let ro = Options {
        read_only: true,
        ..Options::default()
    };
    assert!(matches!(
        Database::open_or_create(&path, ro.clone()),
        Err(Error::Missing(_))
    ));
    assert!(!path.exists(), "a read-only open created nothing");
    let db = Database::create(&path, Options::default()).unwrap();
    let e = Database::open(&path, Options::default()).err().unwrap();
    assert!(
        e.to_string()
            .contains(&format!("pid {}", std::process::id())),
        "{e}"
    );
    drop(db);
}

/// A store whose nodes were mostly deleted: 3,000 written with 2 KiB
/// each, all but 300 deleted.
fn mostly_deleted(db: &Database) {
    let big = "x".repeat(2048);
    let mut t = db.write("default").unwrap();
    let mut ids = Vec::new();
    for i in 0..3000i64 {
        let props = Props::from([
            ("i".to_string(), plexus::Value::Int(i)),
            ("text".to_string(), plexus::Value::String(big.clone())),
        ]);
        ids.push(t.create_node(None, &["L"], &props).unwrap());
    }
    t.commit().unwrap();
    let mut t = db.write("default").unwrap();
    for id in ids.iter().skip(300) {
        t.delete_node(*id, plexus::DeleteMode::Detach).unwrap();
    }
    t.commit().unwrap();
}

fn count(db: &Database) -> i64 {
    let rows = db
        .query(
            "default",
            "MATCH (n:L) RETURN count(n)",
            &Default::default(),
        )
        .unwrap()
        .rows;
    rows[0][0].as_int().unwrap()
}

/// Compaction gives back the space deletes freed while queries go on, and
/// the database reads the same before, during, after and once reopened.
#[test]
fn compaction_gives_space_back_while_queries_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Database::create(&path, Options::default()).unwrap();
    mostly_deleted(&db);
    assert_eq!(count(&db), 300);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (started, reading) = std::sync::mpsc::channel();
    let c = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut reads = 0;
            while reads == 0 || !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(count(&db), 300);
                reads += 1;
                if reads == 1 {
                    started.send(()).unwrap();
                }
            }
            reads
        });
        // The compaction starts once the reader reads: on a busy machine
        // the reader might otherwise not run before it ends.
        reading.recv().unwrap();
        let c = db.compact().unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Its reads, each checked, went on while the compaction ran.
        let reads: u32 = reader.join().unwrap();
        assert!(reads >= 1);
        c
    });
    assert!(c.bytes_after * 3 < c.bytes_before, "{c:?}");
    assert_eq!(db.disk_size().unwrap(), c.bytes_after);
    let mut t = db.write("default").unwrap();
    t.create_node(None, &["L"], &Props::new()).unwrap();
    t.commit().unwrap();
    drop(db);
    let db = Database::open(&path, Options::default()).unwrap();
    assert_eq!(count(&db), 301);
    assert!(db.check("default").unwrap().is_ok());
}

/// A reader in another process (its share of the readers' lock, taken
/// here as that process would) makes compaction refuse; so do databases
/// that have nothing to compact this way.
#[test]
fn compaction_is_refused_beside_readers_and_where_it_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Database::create(&path, Options::default()).unwrap();
    let readers = std::fs::File::open(path.join("READERS")).unwrap();
    readers.lock_shared().unwrap();
    let e = db.compact().unwrap_err();
    assert!(matches!(e, Error::ReadersOpen(_)), "{e}");
    assert!(e.to_string().contains("read-only"), "{e}");
    drop(readers);
    db.compact().unwrap();
    let e = Database::in_memory().unwrap().compact().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
}
