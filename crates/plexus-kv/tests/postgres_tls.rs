//! TLS to the PostgreSQL server the test command starts (`scripts/postgres`:
//! a certificate for 127.0.0.1 from a throwaway authority, and a role
//! `plexus_tls` the server lets in over TLS only).
#![cfg(feature = "postgres")]

use plexus_kv::{open_postgres, KvOptions, WriteBatch};

/// The server's URL for the TLS-only role, with `query` appended.
fn url(query: &str) -> String {
    let base = std::env::var("PLEXUS_TEST_POSTGRES")
        .expect("PLEXUS_TEST_POSTGRES names no PostgreSQL server: run scripts/test");
    let base = base.replacen("postgres://postgres@", "postgres://plexus_tls@", 1);
    format!("{base}{query}")
}

fn authority(file: &str) -> String {
    let dir = std::env::var("PLEXUS_TEST_POSTGRES_TLS")
        .expect("PLEXUS_TEST_POSTGRES_TLS names no certificates: run scripts/test");
    format!("{dir}/{file}")
}

fn error_of(url: &str) -> String {
    match open_postgres(url, "plexus_tls_test", &["a"], &KvOptions::default()) {
        Ok(_) => panic!("{url} connected"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_store_over_tls_verifies_the_server() {
    // Without TLS the role is refused: the server insists.
    let plain = error_of(&url(""));
    assert!(plain.contains("cannot connect to the store"), "{plain}");
    // With TLS and the authority that signed the server's certificate.
    let ca = authority("ca.pem");
    let good = url(&format!("?sslmode=verify-full&sslrootcert={ca}"));
    let kv = open_postgres(&good, "plexus_tls_test", &["a"], &KvOptions::default())
        .unwrap_or_else(|e| panic!("{good}: {e}"));
    let mut b = WriteBatch::new();
    b.put(plexus_kv::Ks(0), b"k".to_vec(), b"v".to_vec());
    kv.write(b).unwrap();
    let snap = kv.snapshot().unwrap();
    assert_eq!(
        snap.get(plexus_kv::Ks(0), b"k").unwrap(),
        Some(b"v".to_vec())
    );
    drop(snap);
    drop(kv);
    plexus_kv::destroy_postgres(&good, "plexus_tls_test").unwrap();
    // An authority that signed nothing of the server's: refused, and said why.
    let other = authority("other-ca.pem");
    let e = error_of(&url(&format!("?sslmode=require&sslrootcert={other}")));
    assert!(
        e.contains("cannot connect to the store") && e.contains("certificate"),
        "{e}"
    );
    // A root file that is not there is named.
    let e = error_of(&url("?sslmode=require&sslrootcert=/nonexistent/ca.pem"));
    assert!(e.contains("/nonexistent/ca.pem"), "{e}");
}
