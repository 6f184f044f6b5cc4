//! The server on the wire, driven by a minimal Bolt client: negotiation,
//! the state machine, interrupts, and hostile clients that must leave the
//! server serving everyone else.

use plexus::Database;
use plexus_server::message::frame;
use plexus_server::packstream::{decode, encode, Pack};
use plexus_server::{Config, Handle};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

struct Running {
    addr: SocketAddr,
    handle: Handle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.handle.shutdown();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn start(tweak: impl FnOnce(&mut Config)) -> Running {
    start_on(Database::in_memory().unwrap(), tweak)
}

fn start_on(db: Database, tweak: impl FnOnce(&mut Config)) -> Running {
    let mut config = Config::new("127.0.0.1:0".parse().unwrap());
    tweak(&mut config);
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        plexus_server::serve_blocking(db, config, false, |addr, handle| {
            tx.send((addr, handle)).unwrap();
        })
        .unwrap();
    });
    let (addr, handle) = rx.recv().unwrap();
    Running {
        addr,
        handle,
        thread: Some(thread),
    }
}

struct Client {
    s: TcpStream,
}

const MAGIC: [u8; 4] = [0x60, 0x60, 0xB0, 0x17];

impl Client {
    fn raw(addr: SocketAddr) -> Client {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        Client { s }
    }

    /// Connected, negotiated (5.8 down to 5.0) and logged on.
    fn ready(addr: SocketAddr) -> Client {
        let mut c = Client::raw(addr);
        c.s.write_all(&MAGIC).unwrap();
        c.s.write_all(&[0, 8, 8, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
        assert_eq!(c.read_n(4), [0, 0, 8, 5]);
        c.send(
            0x01,
            vec![Pack::map([("user_agent", Pack::string("test/1"))])],
        );
        assert_eq!(c.recv().0, 0x70);
        c.send(0x6A, vec![Pack::map([("scheme", Pack::string("none"))])]);
        assert_eq!(c.recv().0, 0x70);
        c
    }

    fn read_n(&mut self, n: usize) -> Vec<u8> {
        let mut b = vec![0; n];
        self.s.read_exact(&mut b).unwrap();
        b
    }

    fn send(&mut self, tag: u8, fields: Vec<Pack>) {
        let mut out = Vec::new();
        frame(&mut out, &encode(&Pack::Struct(tag, fields)));
        self.s.write_all(&out).unwrap();
    }

    fn run(&mut self, q: &str) {
        self.send(
            0x10,
            vec![Pack::string(q), Pack::Map(vec![]), Pack::Map(vec![])],
        );
    }

    fn pull(&mut self, n: i64) {
        self.send(0x3F, vec![Pack::map([("n", Pack::Int(n))])]);
    }

    /// The next message: its tag and fields.
    fn recv(&mut self) -> (u8, Vec<Pack>) {
        let mut msg = Vec::new();
        loop {
            let len = self.read_n(2);
            let n = usize::from(u16::from_be_bytes([len[0], len[1]]));
            if n == 0 {
                if msg.is_empty() {
                    continue;
                }
                break;
            }
            msg.extend(self.read_n(n));
        }
        match decode(&msg).unwrap() {
            Pack::Struct(t, f) => (t, f),
            other => panic!("not a message: {other:?}"),
        }
    }

    /// Messages up to and including the next SUCCESS, FAILURE or IGNORED.
    fn summary(&mut self) -> (u8, Pack, usize) {
        let mut records = 0;
        loop {
            let (t, mut f) = self.recv();
            if t == 0x71 {
                records += 1;
                continue;
            }
            return (t, f.pop().unwrap_or(Pack::Null), records);
        }
    }

    /// Whether the server closed the connection (reads end).
    fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.s.read(&mut b), Ok(0) | Err(_))
    }
}

fn code(meta: &Pack) -> &str {
    meta.get("code").and_then(Pack::as_str).unwrap_or("")
}

#[test]
fn a_query_runs_and_streams_in_batches() {
    let srv = start(|_| {});
    let mut c = Client::ready(srv.addr);
    c.run("UNWIND range(1, 5) AS x RETURN x");
    let (t, meta, _) = c.summary();
    assert_eq!(t, 0x70);
    assert_eq!(
        meta.get("fields"),
        Some(&Pack::List(vec![Pack::string("x")]))
    );
    c.pull(2);
    let (t, meta, n) = c.summary();
    assert_eq!((t, n), (0x70, 2));
    assert_eq!(meta.get("has_more"), Some(&Pack::Bool(true)));
    c.pull(-1);
    let (_, meta, n) = c.summary();
    assert_eq!(n, 3);
    assert_eq!(meta.get("type").and_then(Pack::as_str), Some("r"));
    assert!(meta.get("bookmark").is_some());
}

#[test]
fn after_a_failure_requests_are_ignored_until_reset() {
    let srv = start(|_| {});
    let mut c = Client::ready(srv.addr);
    c.run("RETURN 1 +");
    c.pull(-1);
    c.run("RETURN 1");
    let (t, meta, _) = c.summary();
    assert_eq!(
        (t, code(&meta)),
        (0x7F, "Neo.ClientError.Statement.SyntaxError")
    );
    // 5.7+ also sends the GQL fields.
    assert_eq!(meta.get("gql_status").and_then(Pack::as_str), Some("42001"));
    assert_eq!(c.summary().0, 0x7E);
    assert_eq!(c.summary().0, 0x7E);
    c.send(0x0F, vec![]);
    assert_eq!(c.summary().0, 0x70);
    c.run("RETURN 7 AS x");
    c.pull(-1);
    assert_eq!(c.summary().0, 0x70);
    assert_eq!(c.summary().2, 1);
}

#[test]
fn reset_interrupts_a_long_query() {
    let srv = start(|_| {});
    for q in [
        // A read, running on its own thread while the connection waits.
        "UNWIND range(1, 1000000000000) AS x RETURN count(x)",
        // A write, running on the connection's worker.
        "UNWIND range(1, 1000000000000) AS x CREATE (:Busy) RETURN count(*)",
    ] {
        let mut c = Client::ready(srv.addr);
        c.run(q);
        c.pull(-1);
        std::thread::sleep(Duration::from_millis(200));
        let t0 = Instant::now();
        c.send(0x0F, vec![]);
        // Three answers, to RUN, PULL and RESET: the query is stopped
        // (a FAILURE, or IGNORED once the interrupt is seen), RESET succeeds.
        let tags: Vec<u8> = (0..3).map(|_| c.summary().0).collect();
        assert_eq!(tags[2], 0x70, "{q}: {tags:x?}");
        assert!(
            tags[..2].iter().any(|t| *t == 0x7F || *t == 0x7E),
            "{q}: {tags:x?}"
        );
        assert!(t0.elapsed() < Duration::from_secs(10), "{q}");
        c.run("RETURN 1 AS one");
        c.pull(-1);
        assert_eq!(c.summary().0, 0x70, "{q}");
        assert_eq!(c.summary().2, 1, "{q}");
    }
    // Nothing of the interrupted write was committed.
    let mut c = Client::ready(srv.addr);
    c.run("MATCH (b:Busy) RETURN count(b) AS c");
    c.pull(-1);
    c.summary();
    let (tag, fields) = c.recv();
    assert_eq!(tag, 0x71);
    assert_eq!(fields, vec![Pack::List(vec![Pack::Int(0)])]);
}

#[test]
fn explicit_transactions_number_their_results() {
    let srv = start(|_| {});
    let mut c = Client::ready(srv.addr);
    c.send(0x11, vec![Pack::Map(vec![])]);
    assert_eq!(c.summary().0, 0x70);
    c.run("UNWIND [1, 2] AS x RETURN x");
    let (_, first, _) = c.summary();
    c.run("UNWIND [3, 4, 5] AS x RETURN x");
    let (_, second, _) = c.summary();
    assert_eq!(first.get("qid"), Some(&Pack::Int(0)));
    assert_eq!(second.get("qid"), Some(&Pack::Int(1)));
    c.send(
        0x3F,
        vec![Pack::map([("n", Pack::Int(-1)), ("qid", Pack::Int(0))])],
    );
    assert_eq!(c.summary().2, 2);
    c.pull(-1); // the last one opened
    assert_eq!(c.summary().2, 3);
    c.send(0x12, vec![]);
    let (t, meta, _) = c.summary();
    assert_eq!(t, 0x70);
    assert!(meta.get("bookmark").is_some());
}

#[test]
fn no_common_version_is_answered_with_zeros() {
    let srv = start(|_| {});
    let mut c = Client::raw(srv.addr);
    c.s.write_all(&MAGIC).unwrap();
    c.s.write_all(&[0, 2, 4, 4, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0])
        .unwrap();
    assert_eq!(c.read_n(4), [0, 0, 0, 0]);
    assert!(c.closed());
}

#[test]
fn the_manifest_handshake_lists_every_version() {
    let srv = start(|_| {});
    let mut c = Client::raw(srv.addr);
    c.s.write_all(&MAGIC).unwrap();
    c.s.write_all(&[0, 0, 1, 0xFF, 0, 8, 8, 5, 0, 0, 0, 0, 0, 0, 0, 0])
        .unwrap();
    assert_eq!(c.read_n(4), [0, 0, 1, 0xFF]);
    assert_eq!(c.read_n(1), [1], "one offer");
    assert_eq!(c.read_n(4), [0, 8, 8, 5], "5.0 to 5.8");
    assert_eq!(c.read_n(1), [0], "no capabilities");
    c.s.write_all(&[0, 0, 6, 5, 0]).unwrap(); // the client picks 5.6
    c.send(0x01, vec![Pack::Map(vec![])]);
    let (t, f) = c.recv();
    assert_eq!(t, 0x70);
    assert_eq!(
        f[0].get("protocol_version").and_then(Pack::as_str),
        Some("5.6")
    );
}

#[test]
fn hostile_clients_leave_the_server_serving_others() {
    let srv = start(|c| c.max_message = 1 << 16);
    // Garbage instead of the handshake.
    let mut garbage = Client::raw(srv.addr);
    garbage.s.write_all(&[0xDE; 64]).unwrap();
    assert!(garbage.closed());
    // A message beyond the limit.
    let mut big = Client::ready(srv.addr);
    let mut chunks = Vec::new();
    for _ in 0..3 {
        chunks.extend_from_slice(&[0xFF, 0xFF]);
        chunks.extend(std::iter::repeat_n(0u8, 0xFFFF));
    }
    big.s.write_all(&chunks).unwrap();
    let (t, meta, _) = big.summary();
    assert_eq!(t, 0x7F);
    assert!(
        meta.get("message")
            .and_then(Pack::as_str)
            .unwrap()
            .contains("limit"),
        "{meta:?}"
    );
    assert!(big.closed());
    // Bytes that are not PackStream, and an unknown message.
    let mut bad = Client::ready(srv.addr);
    let mut out = Vec::new();
    frame(&mut out, &[0xB1, 0x10, 0xC7]);
    bad.s.write_all(&out).unwrap();
    assert_eq!(bad.summary().0, 0x7F);
    assert!(bad.closed());
    let mut unknown = Client::ready(srv.addr);
    unknown.send(0x55, vec![]);
    let (t, meta, _) = unknown.summary();
    assert_eq!((t, code(&meta)), (0x7F, "Neo.ClientError.Request.Invalid"));
    assert!(unknown.closed());
    // A request before HELLO.
    let mut early = Client::raw(srv.addr);
    early.s.write_all(&MAGIC).unwrap();
    early
        .s
        .write_all(&[0, 0, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        .unwrap();
    early.read_n(4);
    early.run("RETURN 1");
    assert_eq!(early.summary().0, 0x7F);
    // A slow reader: asks for a huge result and reads none of it.
    let mut slow = Client::ready(srv.addr);
    slow.run("UNWIND range(1, 100000000) AS x RETURN x, 'padding padding padding' AS p");
    slow.pull(-1);
    std::thread::sleep(Duration::from_millis(300));
    // Everyone else is served meanwhile.
    let mut fine = Client::ready(srv.addr);
    fine.run("RETURN 42 AS x");
    fine.pull(-1);
    assert_eq!(fine.summary().0, 0x70);
    let (t, fields) = fine.recv();
    assert_eq!((t, fields), (0x71, vec![Pack::List(vec![Pack::Int(42)])]));
    drop(slow);
}

#[test]
fn connections_beyond_the_limit_are_told_why() {
    let srv = start(|c| c.max_connections = 2);
    let a = Client::ready(srv.addr);
    let b = Client::ready(srv.addr);
    let mut third = Client::raw(srv.addr);
    third.s.write_all(&MAGIC).unwrap();
    third
        .s
        .write_all(&[0, 0, 8, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        .unwrap();
    assert_eq!(third.read_n(4), [0, 0, 8, 5]);
    third.send(0x01, vec![Pack::Map(vec![])]);
    let (t, meta, _) = third.summary();
    assert_eq!(t, 0x7F);
    assert_eq!(code(&meta), "Neo.TransientError.Request.NoThreadsAvailable");
    assert!(meta
        .get("message")
        .and_then(Pack::as_str)
        .unwrap()
        .contains("maximum of 2"));
    assert!(third.closed());
    drop((a, b));
    // Room again once they are gone.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut c = Client::raw(srv.addr);
        c.s.write_all(&MAGIC).unwrap();
        c.s.write_all(&[0, 0, 8, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap();
        assert_eq!(c.read_n(4), [0, 0, 8, 5]);
        c.send(0x01, vec![Pack::Map(vec![])]);
        if c.summary().0 == 0x70 {
            break;
        }
        assert!(Instant::now() < deadline, "no room after the others left");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn shutdown_rolls_back_open_transactions_and_returns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Database::create(&path, Default::default()).unwrap();
    let mut srv = start_on(db, |_| {});
    let mut c = Client::ready(srv.addr);
    c.run("CREATE (:Committed)");
    c.pull(-1);
    assert_eq!(c.summary().0, 0x70);
    assert_eq!(c.summary().0, 0x70);
    c.send(0x11, vec![Pack::Map(vec![])]);
    assert_eq!(c.summary().0, 0x70);
    c.run("CREATE (:Pending)");
    c.pull(-1);
    assert_eq!(c.summary().0, 0x70);
    assert_eq!(c.summary().0, 0x70);
    // Stop with the transaction open: the server returns, the client is
    // disconnected, and the database can be opened again.
    srv.handle.shutdown();
    srv.thread.take().unwrap().join().unwrap();
    assert!(c.closed());
    let db = Database::open(&path, Default::default()).unwrap();
    let count = |label: &str| {
        db.query(
            "default",
            &format!("MATCH (n:{label}) RETURN count(n)"),
            &Default::default(),
        )
        .unwrap()
        .rows[0][0]
            .clone()
    };
    assert_eq!(count("Committed"), plexus::Value::Int(1));
    assert_eq!(count("Pending"), plexus::Value::Int(0));
}
