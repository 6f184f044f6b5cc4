//! The database on disk: a folder with a manifest, a lock file and the
//! backend's files.
//!
//! ```text
//! <path>/PLEXUS   manifest: format version and backend (text)
//! <path>/LOCK     held exclusively while a process has the database open
//!                 for writing (it holds that process's id); read-only
//!                 openers do not take it, nor does any opener of a
//!                 database whose store is on a server (`postgres`), which
//!                 several processes may write at once
//! <path>/data/    the key-value backend's files
//! ```
//!
//! The manifest lets Plexus refuse, with a clear message, a folder that is
//! not a database or one written by an incompatible version, before any
//! backend touches it.

use crate::error::{Error, Result};
use plexus_kv::{Backend, KvOptions};
use plexus_storage::{
    GraphRead, Isolation, NodeId, ReadTxn, Storage, WriteTxn, FORMAT_VERSION, KEYSPACE_NAMES,
};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The manifest file's name inside a database folder.
pub const MANIFEST_FILE: &str = "PLEXUS";

/// The lock file readers in other processes share while they have the
/// database open (see [`Database::compact`]).
const READERS_FILE: &str = "READERS";

/// Present while a database is being created: a folder holding it and no
/// manifest is an interrupted creation, which the next create starts over.
const CREATING_FILE: &str = "PLEXUS.creating";
const MAGIC: &str = "plexus-database";

/// How to open a database.
#[derive(Debug, Clone)]
pub struct Options {
    /// The backend for a new database; an existing one uses the backend it
    /// was created with. Default: LMDB.
    pub backend: Option<Backend>,
    /// Where the `postgres` backend keeps the data: the server's URL
    /// (`postgres://user@host:port/database`). Required to create such a
    /// database; the manifest keeps it, and a URL given when opening wins
    /// (say, one with a password the manifest should not hold).
    pub store: Option<String>,
    /// Sync each commit to disk before acknowledging it (default true).
    /// Without, an OS crash or power loss may lose recent commits and, on
    /// LMDB, damage the database (see `plexus_kv::KvOptions::durable`).
    pub durable: bool,
    /// How long a query may run unless it says otherwise (default: no limit).
    pub query_timeout: Option<Duration>,
    /// The bytes one query may hold in rows, groups, sort buffers and lists
    /// unless it says otherwise (default: [`DEFAULT_QUERY_MEMORY`]).
    pub query_memory_limit: Option<usize>,
    /// Open an existing database for reading only, beside a process that
    /// may have it open for writing (LMDB only). Reads see each commit of
    /// the writer as it lands; writes fail with a clear error.
    pub read_only: bool,
}

/// The default memory budget of one query: 4 GiB. Large enough for any
/// interactive query, small enough that a runaway one fails with a clear
/// error instead of taking the process down.
pub const DEFAULT_QUERY_MEMORY: usize = 4 << 30;

impl Default for Options {
    fn default() -> Self {
        Options {
            backend: None,
            store: None,
            durable: true,
            query_timeout: None,
            query_memory_limit: Some(DEFAULT_QUERY_MEMORY),
            read_only: false,
        }
    }
}

/// Counts and size of one graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphStats {
    pub graph: String,
    pub nodes: u64,
    pub edges: u64,
    pub labels: Vec<(String, u64)>,
    pub types: Vec<(String, u64)>,
}

/// An open database. Cheap to clone and share between threads.
#[derive(Clone)]
pub struct Database {
    storage: Storage,
    path: Option<PathBuf>,
    /// Dropped with the last clone: writes the vector indexes' checkpoint,
    /// then releases the write lock (declared in that order).
    _close: std::sync::Arc<Close>,
    _lock: Option<std::sync::Arc<File>>,
    plans: std::sync::Arc<crate::query::PlanCache>,
    limits: plexus_query::QueryLimits,
}

/// What closing a database does once its last clone is dropped.
struct Close(Storage);

impl Drop for Close {
    fn drop(&mut self) {
        // Persisted links spare the next open their linking; if writing
        // them fails, the next open links what it finds.
        if !self.0.is_read_only() {
            let _ = self.0.checkpoint_indexes();
        }
    }
}

/// Moves the valid-time entries of each graph written before they were
/// split in two parts (`plexus_temporal::convert_layout`): once, when a
/// store written by an older build is first opened for writing. Read-only,
/// such a graph is refused (its reads would miss the entries).
fn convert_valid_time(storage: &Storage, read_only: bool) -> Result<()> {
    for g in storage.graphs() {
        let r = storage.read(&g)?;
        if read_only {
            plexus_temporal::refuse_unconverted(&r, &g)?;
        } else if plexus_temporal::needs_converting(&r)? {
            drop(r);
            plexus_temporal::convert_layout(storage, &g)?;
        }
    }
    Ok(())
}

/// The store with the maintainers of the indexes storage does not keep
/// itself (vectors), registered before anything reads it.
fn with_maintainers(storage: Storage) -> Result<Storage> {
    storage.register_maintainer(
        plexus_storage::IndexKind::Vector,
        std::sync::Arc::new(plexus_vector_index::VectorMaintainer),
    )?;
    Ok(storage)
}

fn limits_of(opts: &Options) -> plexus_query::QueryLimits {
    plexus_query::QueryLimits {
        timeout: opts.query_timeout,
        memory: opts.query_memory_limit,
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |error| Error::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Writes a file and syncs it to disk before returning.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = File::create(path).map_err(io(path))?;
    f.write_all(bytes).map_err(io(path))?;
    f.sync_all().map_err(io(path))
}

/// What a manifest says: the format, the backend, and for a backend in a
/// server, where its data is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Manifest {
    format: u32,
    backend: Backend,
    /// The server's URL (`postgres`).
    store: Option<String>,
    /// The schema holding the database's tables in that server.
    schema: Option<String>,
}

/// The manifest, whatever its format version.
fn read_manifest_any(path: &Path) -> Result<Manifest> {
    let file = path.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&file).map_err(io(&file))?;
    let not_db = |why: String| Error::NotADatabase {
        path: path.to_path_buf(),
        why,
    };
    let mut lines = text.lines();
    if lines.next() != Some(MAGIC) {
        return Err(not_db(format!(
            "{MANIFEST_FILE} does not start with '{MAGIC}'"
        )));
    }
    let (mut format, mut backend, mut store, mut schema) = (None, None, None, None);
    for line in lines {
        match line.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
            Some(("format", v)) => format = v.parse::<u32>().ok(),
            Some(("backend", v)) => backend = Some(v.to_string()),
            Some(("store", v)) => store = Some(v.to_string()),
            Some(("schema", v)) => schema = Some(v.to_string()),
            _ => {}
        }
    }
    let format = format.ok_or_else(|| not_db(format!("{MANIFEST_FILE} has no format version")))?;
    let name = backend.ok_or_else(|| not_db(format!("{MANIFEST_FILE} names no backend")))?;
    let backend =
        Backend::parse(&name).ok_or_else(|| not_db(format!("unknown backend '{name}'")))?;
    if backend == Backend::Postgres && (store.is_none() || schema.is_none()) {
        return Err(not_db(format!(
            "{MANIFEST_FILE} names the postgres backend without its store and schema"
        )));
    }
    Ok(Manifest {
        format,
        backend,
        store,
        schema,
    })
}

/// The manifest of a database of this build's format.
fn read_manifest(path: &Path) -> Result<Manifest> {
    let m = read_manifest_any(path)?;
    let unsupported = |why: String| Error::Storage(plexus_storage::StorageError::Unsupported(why));
    match (m.format, plexus_storage::convertible(m.format)) {
        (FORMAT_VERSION, _) => Ok(m),
        (v, Some(what)) => Err(unsupported(format!(
            "the database at {} has format version {v} ({what}); convert it in place with `plexus --db {} upgrade`, then open it",
            path.display(),
            path.display()
        ))),
        (v, None) => Err(unsupported(format!(
            "the database at {} has format version {v}; this build of Plexus reads version {FORMAT_VERSION}",
            path.display()
        ))),
    }
}

/// Writes the manifest for this build's format: to a side file, synced,
/// renamed over, the folder synced, so a crash leaves the old or the new.
fn write_manifest(path: &Path, m: &Manifest) -> Result<()> {
    let mut manifest = format!(
        "{MAGIC}\nformat = {FORMAT_VERSION}\nbackend = {}\n",
        m.backend.name()
    );
    if let (Some(store), Some(schema)) = (&m.store, &m.schema) {
        manifest.push_str(&format!("store = {store}\nschema = {schema}\n"));
    }
    let tmp = path.join(format!("{MANIFEST_FILE}.tmp"));
    write_synced(&tmp, manifest.as_bytes())?;
    std::fs::rename(&tmp, path.join(MANIFEST_FILE)).map_err(io(path))?;
    // The rename is durable only once the folder is synced.
    sync_folder(path)
}

/// The manifest of a new database: for the postgres backend, the store's
/// URL and a schema of its own (so that one server holds many databases).
fn new_manifest(backend: Backend, opts: &Options) -> Result<Manifest> {
    let (store, schema) = if backend == Backend::Postgres {
        let url = opts.store.clone().ok_or_else(|| {
            Error::Storage(plexus_storage::StorageError::Invalid(
                "a postgres database needs its store's URL (Options::store; `plexus init --store postgres://…`)".into(),
            ))
        })?;
        (
            Some(url),
            Some(format!("plexus_{}", uuid::Uuid::new_v4().simple())),
        )
    } else {
        (None, None)
    };
    Ok(Manifest {
        format: FORMAT_VERSION,
        backend,
        store,
        schema,
    })
}

/// The key-value store a manifest names: the `data` folder beside it, or
/// the server's schema.
fn open_store(
    path: &Path,
    m: &Manifest,
    opts: &Options,
    kv_opts: &KvOptions,
) -> Result<std::sync::Arc<dyn plexus_kv::KvStore>> {
    match (m.backend, &m.schema) {
        #[cfg(feature = "postgres")]
        (Backend::Postgres, Some(schema)) => {
            let url = opts.store.as_ref().or(m.store.as_ref()).ok_or_else(|| {
                Error::Storage(plexus_storage::StorageError::Invalid(
                    "the postgres store's URL is unknown".into(),
                ))
            })?;
            Ok(plexus_kv::open_postgres(
                url,
                schema,
                KEYSPACE_NAMES,
                kv_opts,
            )?)
        }
        #[cfg(not(feature = "postgres"))]
        (Backend::Postgres, _) => {
            let _ = opts;
            Err(Error::Storage(plexus_storage::StorageError::Unsupported(
                "this build of Plexus has no postgres backend (build with the `postgres` feature)"
                    .into(),
            )))
        }
        _ => Ok(plexus_kv::open(
            m.backend,
            &path.join("data"),
            KEYSPACE_NAMES,
            kv_opts,
        )?),
    }
}

/// Opens (creating when missing, never truncating) a file that is locked
/// rather than read.
fn lock_file(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io(path))
}

/// Makes the folder's entries (files created, renamed, removed) durable.
fn sync_folder(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|d| d.sync_all())
        .map_err(io(path))
}

impl Database {
    /// Creates a new database in `path` (a missing or empty folder, or
    /// one whose creation was interrupted).
    pub fn create(path: impl AsRef<Path>, opts: Options) -> Result<Database> {
        let path = path.as_ref();
        if path.join(MANIFEST_FILE).exists() {
            return Err(Error::Exists(path.to_path_buf()));
        }
        let restart = path.join(CREATING_FILE).exists();
        if path.exists() && !restart {
            let mut entries = std::fs::read_dir(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotADirectory => Error::NotADatabase {
                    path: path.to_path_buf(),
                    why: "it is a file, not a folder".into(),
                },
                _ => io(path)(e),
            })?;
            if entries.next().is_some() {
                return Err(Error::NotADatabase {
                    path: path.to_path_buf(),
                    why: "the folder is not empty and has no manifest".into(),
                });
            }
        }
        std::fs::create_dir_all(path).map_err(io(path))?;
        let backend = opts.backend.unwrap_or(Backend::Lmdb);
        let lock = Self::lock(path)?;
        // The marker first, the manifest last: a crash in between leaves
        // the marker, and the next creation clears what the last one wrote
        // (only ever its own `data` folder) instead of refusing the folder.
        let marker = path.join(CREATING_FILE);
        write_synced(&marker, b"a Plexus database is being created here\n")?;
        sync_folder(path)?;
        if restart {
            let data = path.join("data");
            if data.exists() {
                std::fs::remove_dir_all(&data).map_err(io(&data))?;
            }
        }
        let opts = Options {
            read_only: false,
            ..opts
        };
        let manifest = new_manifest(backend, &opts)?;
        let db = Self::open_backend(path, &manifest, &opts, Some(lock))?;
        write_manifest(path, &manifest)?;
        std::fs::remove_file(&marker).map_err(io(&marker))?;
        sync_folder(path)?;
        Ok(db)
    }

    /// Opens an existing database.
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Database> {
        let path = path.as_ref();
        if !path.exists() {
            return Err(Error::Missing(path.to_path_buf()));
        }
        if !path.is_dir() {
            return Err(Error::NotADatabase {
                path: path.to_path_buf(),
                why: "it is a file, not a folder".into(),
            });
        }
        if !path.join(MANIFEST_FILE).exists() {
            let empty = std::fs::read_dir(path).map_err(io(path))?.next().is_none();
            // An interrupted creation holds no database yet.
            let creating = path.join(CREATING_FILE).exists();
            return Err(if empty || creating {
                Error::Missing(path.to_path_buf())
            } else {
                Error::NotADatabase {
                    path: path.to_path_buf(),
                    why: format!("it has no {MANIFEST_FILE} manifest"),
                }
            });
        }
        let manifest = read_manifest(path)?;
        if let Some(asked) = opts.backend.filter(|b| *b != manifest.backend) {
            return Err(Error::NotADatabase {
                path: path.to_path_buf(),
                why: format!(
                    "it uses the {} backend, not {}",
                    manifest.backend.name(),
                    asked.name()
                ),
            });
        }
        // A store on a server coordinates its writers itself (several
        // processes may write it at once: plexus_storage's `coord.rs`); the
        // folder holds only the manifest then.
        if manifest.store.is_some() {
            return Self::open_backend(path, &manifest, &opts, None);
        }
        if opts.read_only {
            let readers = Self::reader_lock(path)?;
            return Self::open_backend(path, &manifest, &opts, readers);
        }
        let lock = Self::lock(path)?;
        Self::open_backend(path, &manifest, &opts, Some(lock))
    }

    /// Removes the database at `path` for good: its folder, and for a store
    /// on a server its schema there (`opts.store` names the server when the
    /// manifest's URL lacks a password). A local database must not be open
    /// for writing (its lock is taken first); a server's, in no process.
    pub fn destroy(path: impl AsRef<Path>, opts: &Options) -> Result<()> {
        let path = path.as_ref();
        if !path.join(MANIFEST_FILE).exists() {
            return Err(Error::Missing(path.to_path_buf()));
        }
        let manifest = read_manifest_any(path)?;
        match (&manifest.store, &manifest.schema) {
            #[cfg(feature = "postgres")]
            (Some(url), Some(schema)) => {
                plexus_kv::destroy_postgres(opts.store.as_ref().unwrap_or(url), schema)?;
            }
            _ => {
                let _ = opts;
                drop(Self::lock(path)?);
            }
        }
        std::fs::remove_dir_all(path).map_err(io(path))
    }

    /// Converts the database at `path`, written by an older format of
    /// Plexus, to this build's format in place (see
    /// [`Storage::upgrade`]); a database of this format is left as it
    /// is. Takes the write lock: no other process may have it open.
    /// `progress` hears the keys converted so far.
    pub fn upgrade(
        path: impl AsRef<Path>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<plexus_storage::UpgradeReport> {
        let path = path.as_ref();
        if !path.join(MANIFEST_FILE).exists() {
            return Err(Error::Missing(path.to_path_buf()));
        }
        let manifest = read_manifest_any(path)?;
        let _lock = Self::lock(path)?;
        let kv = open_store(path, &manifest, &Options::default(), &KvOptions::default())?;
        let report = Storage::upgrade(&*kv, progress)?;
        drop(kv);
        // Also when only the manifest is behind (a conversion stopped
        // between the store's last write and the manifest's).
        if manifest.format != FORMAT_VERSION {
            write_manifest(path, &manifest)?;
        }
        Ok(report)
    }

    /// Opens an existing database for reading only, beside a process that
    /// may be writing it (see [`Options::read_only`]).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Database> {
        Self::open(
            path,
            Options {
                read_only: true,
                ..Options::default()
            },
        )
    }

    /// Opens the database at `path`, creating it when missing (unless
    /// asked to open it read-only: then a missing database is an error).
    pub fn open_or_create(path: impl AsRef<Path>, opts: Options) -> Result<Database> {
        match Self::open(path.as_ref(), opts.clone()) {
            Err(Error::Missing(_)) if !opts.read_only => Self::create(path, opts),
            other => other,
        }
    }

    /// A database that lives in memory only.
    pub fn in_memory() -> Result<Database> {
        Self::in_memory_with(Options::default())
    }

    /// A database in memory, with `opts`' query limits.
    pub fn in_memory_with(opts: Options) -> Result<Database> {
        let storage = with_maintainers(Storage::in_memory()?)?;
        Ok(Database {
            _close: std::sync::Arc::new(Close(storage.clone())),
            storage,
            path: None,
            _lock: None,
            plans: Default::default(),
            limits: limits_of(&opts),
        })
    }

    /// Takes the write lock, and writes this process's id into the lock
    /// file so that a second writer's error can name the holder.
    fn lock(path: &Path) -> Result<File> {
        use std::io::{Seek, Write};
        let lock_path = path.join("LOCK");
        let mut f = lock_file(&lock_path)?;
        match f.try_lock() {
            Ok(()) => {
                // For readers to share (`reader_lock`), which they may not
                // be allowed to create.
                lock_file(&path.join(READERS_FILE))?;
                f.set_len(0)
                    .and_then(|()| f.rewind())
                    .and_then(|()| write!(f, "{}", std::process::id()))
                    .map_err(io(&lock_path))?;
                Ok(f)
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&lock_path)
                    .ok()
                    .and_then(|s| s.trim().parse().ok());
                Err(Error::Locked(path.to_path_buf(), holder))
            }
            Err(std::fs::TryLockError::Error(e)) => Err(io(&lock_path)(e)),
        }
    }

    /// A reader's share of the `READERS` lock, held while it has the
    /// database open: a compaction, which needs it alone, then refuses
    /// (and a reader opening during one waits for its end). None when the
    /// file is missing (no writer of this version has opened the folder)
    /// or cannot be opened (a folder this process may only read).
    fn reader_lock(path: &Path) -> Result<Option<File>> {
        let lock_path = path.join(READERS_FILE);
        let Ok(f) = File::open(&lock_path) else {
            return Ok(None);
        };
        f.lock_shared().map_err(io(&lock_path))?;
        Ok(Some(f))
    }

    /// Rewrites the database compactly and swaps the copy in, giving back
    /// the space that deletes freed (an LMDB store reuses freed pages but
    /// never shrinks its file). Reads go on throughout, on the old copy
    /// until the swap; so do writes, which wait only while the copy takes
    /// what they wrote during it (bulk loads wait for the whole
    /// compaction). Refused while another process has the database open
    /// read-only, on a read-only or in-memory database, and on backends
    /// that reclaim space by themselves (fjall) or keep it on a server.
    pub fn compact(&self) -> Result<crate::Compaction> {
        let _readers = match (&self.path, &self._lock) {
            (Some(path), Some(_)) if !self.storage.is_read_only() => {
                let lock_path = path.join(READERS_FILE);
                let f = lock_file(&lock_path)?;
                match f.try_lock() {
                    Ok(()) => Some(f),
                    Err(std::fs::TryLockError::WouldBlock) => {
                        return Err(Error::ReadersOpen(path.clone()))
                    }
                    Err(std::fs::TryLockError::Error(e)) => return Err(io(&lock_path)(e)),
                }
            }
            _ => None,
        };
        Ok(self
            .storage
            .kv()
            .compact()
            .map_err(plexus_storage::StorageError::Kv)?)
    }

    fn open_backend(
        path: &Path,
        manifest: &Manifest,
        opts: &Options,
        lock: Option<File>,
    ) -> Result<Database> {
        let kv_opts = KvOptions {
            durable: opts.durable,
            read_only: opts.read_only,
            ..KvOptions::default()
        };
        let kv = open_store(path, manifest, opts, &kv_opts)?;
        let storage = with_maintainers(if opts.read_only {
            Storage::open_read_only(kv)?
        } else {
            Storage::open(kv)?
        })?;
        convert_valid_time(&storage, opts.read_only)?;
        Ok(Database {
            _close: std::sync::Arc::new(Close(storage.clone())),
            storage,
            path: Some(path.to_path_buf()),
            _lock: lock.map(std::sync::Arc::new),
            plans: Default::default(),
            limits: limits_of(opts),
        })
    }

    pub(crate) fn plans(&self) -> &crate::query::PlanCache {
        &self.plans
    }

    /// The limits a query gets unless it sets its own.
    pub fn query_defaults(&self) -> plexus_query::QueryLimits {
        self.limits
    }

    /// A session on `graph`: auto-commit queries, explicit transactions and
    /// result cursors (see [`crate::Session`]).
    pub fn session(&self, graph: &str) -> Result<crate::Session> {
        crate::Session::new(self.clone(), graph)
    }

    /// The folder of the database (`None` in memory).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn backend(&self) -> Backend {
        self.storage.kv().backend()
    }

    /// The storage layer, for tools that need it directly.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    pub fn graphs(&self) -> Vec<String> {
        self.storage.graphs()
    }

    pub fn create_graph(&self, name: &str) -> Result<()> {
        Ok(self.storage.create_graph(name)?)
    }

    pub fn drop_graph(&self, name: &str) -> Result<()> {
        Ok(self.storage.drop_graph(name)?)
    }

    /// A read-only snapshot of `graph`.
    pub fn read(&self, graph: &str) -> Result<ReadTxn> {
        Ok(self.storage.read(graph)?)
    }

    /// Keeps the history of `graph` from now on, so that it can be read
    /// as it was at any later instant (`read_as_of`, or Cypher's
    /// `MATCH … FOR SYSTEM_TIME AS OF t`). Returns the instant history
    /// starts, in microseconds since the epoch.
    ///
    /// ```
    /// use plexus::{Database, Params, Value};
    /// let db = Database::in_memory().unwrap();
    /// db.keep_history("default").unwrap();
    /// db.query("default", "CREATE (:Person {name: 'Ann', age: 30})", &Params::new()).unwrap();
    /// let then = db.system_time().unwrap();
    /// db.query("default", "MATCH (p:Person) SET p.age = 31", &Params::new()).unwrap();
    /// let params = Params::from([("then".to_string(), Value::Int(then as i64))]);
    /// let t = db.query("default", "MATCH (p:Person) FOR SYSTEM_TIME AS OF $then RETURN p.age AS age", &params).unwrap();
    /// assert_eq!(t.rows, vec![vec![Value::Int(30)]]);
    /// ```
    pub fn keep_history(&self, graph: &str) -> Result<u64> {
        Ok(self.storage.keep_history(graph)?)
    }

    /// Stops keeping the history of `graph` and deletes it.
    pub fn drop_history(&self, graph: &str) -> Result<()> {
        Ok(self.storage.drop_history(graph)?)
    }

    /// The instant `graph`'s history starts at, when it keeps one.
    pub fn history_start(&self, graph: &str) -> Result<Option<u64>> {
        Ok(self.storage.history_start(graph)?)
    }

    /// The system time of the latest commit that kept history (µs).
    pub fn system_time(&self) -> Result<u64> {
        Ok(self.storage.system_time()?)
    }

    /// A read-only snapshot of `graph` as it was at system time `at` (µs).
    pub fn read_as_of(&self, graph: &str, at: u64) -> Result<ReadTxn> {
        Ok(self.storage.read_as_of(graph, at)?)
    }

    /// Removes the history of `graph` that no read as of `before` or later
    /// needs; returns the versions removed.
    pub fn prune_history(&self, graph: &str, before: u64) -> Result<u64> {
        Ok(self.storage.prune_history(graph, before)?)
    }

    /// Keeps `graph`'s history for `ttl` only (`None`: for ever, the
    /// default): later commits prune, in the background and at most once
    /// per tenth of the ttl (between a second and an hour), what no read
    /// as of the last `ttl` needs. The graph must keep history; the policy
    /// is stored with it and dropped with it.
    ///
    /// ```
    /// use plexus::Database;
    /// use std::time::Duration;
    /// let db = Database::in_memory().unwrap();
    /// db.keep_history("default").unwrap();
    /// db.set_history_retention("default", Some(Duration::from_secs(30 * 86_400))).unwrap();
    /// assert_eq!(db.history_retention("default").unwrap(), Some(Duration::from_secs(30 * 86_400)));
    /// ```
    pub fn set_history_retention(&self, graph: &str, ttl: Option<Duration>) -> Result<()> {
        let micros = ttl.map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        Ok(self.storage.set_history_retention(graph, micros)?)
    }

    /// How long `graph` keeps its history, when a retention policy says.
    pub fn history_retention(&self, graph: &str) -> Result<Option<Duration>> {
        Ok(self
            .storage
            .history_retention(graph)?
            .map(Duration::from_micros))
    }

    /// Prunes now every graph whose history has a retention policy, as
    /// commits would in the background; returns each graph's name and the
    /// versions removed.
    pub fn enforce_history_retention(&self) -> Result<Vec<(String, u64)>> {
        Ok(self.storage.enforce_history_retention()?)
    }

    /// The `k` nodes nearest `query` in the vector index `index` of
    /// `graph`, nearest first, that `filter` passes (exactly `min(k,
    /// passing)`). In a transaction, `plexus::vectors::search` does the
    /// same on the transaction's view.
    pub fn vector_search(
        &self,
        graph: &str,
        index: &str,
        query: &[f32],
        k: usize,
        filter: Option<&dyn Fn(NodeId) -> bool>,
    ) -> Result<Vec<plexus_vector_index::Hit>> {
        let r = self.storage.read(graph)?;
        Ok(plexus_vector_index::search(
            &r, index, query, k, None, filter,
        )?)
    }

    /// A write transaction on `graph` (snapshot isolation).
    pub fn write(&self, graph: &str) -> Result<WriteTxn> {
        Ok(self.storage.write(graph)?)
    }

    pub fn write_with(&self, graph: &str, isolation: Isolation) -> Result<WriteTxn> {
        Ok(self.storage.write_with(graph, isolation)?)
    }

    /// Counts per label and type, read from statistics (no scan).
    pub fn stats(&self, graph: &str) -> Result<GraphStats> {
        let r = self.read(graph)?;
        Ok(GraphStats {
            graph: graph.to_string(),
            nodes: r.node_count()?,
            edges: r.edge_count()?,
            labels: r.label_counts()?,
            types: r.type_counts()?,
        })
    }

    /// Commits, conflicts, commit groups (one backend write and sync each)
    /// and time spent writing, since this database was opened.
    pub fn commit_stats(&self) -> plexus_storage::CommitStats {
        self.storage.commit_stats()
    }

    /// The store broken down by keyspace: entries, key and value bytes and
    /// stored size of each (reads every key: as long as a full scan).
    pub fn space(&self) -> Result<plexus_storage::SpaceReport> {
        Ok(self.storage.space()?)
    }

    /// Bytes the database occupies on disk.
    pub fn disk_size(&self) -> Result<u64> {
        Ok(self.storage.kv().disk_size()?)
    }

    /// Checks every invariant of `graph`.
    pub fn check(&self, graph: &str) -> Result<plexus_storage::IntegrityReport> {
        Ok(self.storage.check_integrity(graph)?)
    }

    /// Imports node and edge files into `graph` (created when missing; it
    /// must be empty) as one commit. With `skip`, bad rows are handed to it
    /// (as messages naming file and line) and left out instead of failing.
    pub fn import(
        &self,
        graph: &str,
        nodes: &[plexus_ingest::Input],
        edges: &[plexus_ingest::Input],
        opts: &plexus_ingest::ImportOptions,
        progress: &mut dyn FnMut(u64),
        skip: Option<&mut dyn FnMut(&str)>,
    ) -> std::result::Result<plexus_ingest::ImportReport, plexus_ingest::IngestError> {
        self.ensure_graph(graph)?;
        self.spilling_here(opts, |opts| {
            plexus_ingest::import(&self.storage, graph, nodes, edges, opts, progress, skip)
        })
    }

    /// Runs an import with keys past the memory limit spilled into the
    /// database's folder unless `opts` names one (the system's temporary
    /// folder may live in memory, which spilling is meant to spare); the
    /// files go with the import, and the folder after it.
    fn spilling_here<T>(
        &self,
        opts: &plexus_ingest::ImportOptions,
        import: impl FnOnce(&plexus_ingest::ImportOptions) -> T,
    ) -> T {
        let here = match (&opts.spill_dir, &self.path) {
            (None, Some(p)) => p.join("import-spill"),
            _ => return import(opts),
        };
        let mut opts = opts.clone();
        opts.spill_dir = Some(here.clone());
        let result = import(&opts);
        // Empty by now (or never made); a folder still holding files is left.
        let _ = std::fs::remove_dir(&here);
        result
    }

    /// Imports files into `graph` (created when missing) whether or not it
    /// holds data: nodes by id are created or merged, edges with an id
    /// created or updated, as one transaction; see [`plexus_ingest::upsert`].
    pub fn import_upsert(
        &self,
        graph: &str,
        nodes: &[plexus_ingest::Input],
        edges: &[plexus_ingest::Input],
        opts: &plexus_ingest::ImportOptions,
        progress: &mut dyn FnMut(u64),
        skip: Option<&mut dyn FnMut(&str)>,
    ) -> std::result::Result<plexus_ingest::ImportReport, plexus_ingest::IngestError> {
        self.ensure_graph(graph)?;
        plexus_ingest::upsert(&self.storage, graph, nodes, edges, opts, progress, skip)
    }

    /// Imports Arrow record batches into `graph` (created when missing; it
    /// must be empty) as one commit; see [`plexus_ingest::import_batches`].
    pub fn import_batches(
        &self,
        graph: &str,
        nodes: Vec<plexus_ingest::BatchInput>,
        edges: Vec<plexus_ingest::BatchInput>,
        opts: &plexus_ingest::ImportOptions,
        progress: &mut dyn FnMut(u64),
    ) -> std::result::Result<plexus_ingest::ImportReport, plexus_ingest::IngestError> {
        self.ensure_graph(graph)?;
        self.spilling_here(opts, |opts| {
            plexus_ingest::import_batches(&self.storage, graph, nodes, edges, opts, progress)
        })
    }

    /// Upserts Arrow record batches into `graph` (created when missing),
    /// as [`Database::import_upsert`] does files.
    pub fn upsert_batches(
        &self,
        graph: &str,
        nodes: Vec<plexus_ingest::BatchInput>,
        edges: Vec<plexus_ingest::BatchInput>,
        opts: &plexus_ingest::ImportOptions,
        progress: &mut dyn FnMut(u64),
        skip: Option<&mut dyn FnMut(&str)>,
    ) -> std::result::Result<plexus_ingest::ImportReport, plexus_ingest::IngestError> {
        self.ensure_graph(graph)?;
        plexus_ingest::upsert_batches(&self.storage, graph, nodes, edges, opts, progress, skip)
    }

    fn ensure_graph(&self, graph: &str) -> std::result::Result<(), plexus_storage::StorageError> {
        if !self.storage.has_graph(graph) {
            self.storage.create_graph(graph)?;
        }
        Ok(())
    }

    pub fn rebuild_indexes(&self, graph: &str) -> Result<Vec<String>> {
        Ok(self.storage.rebuild_indexes(graph)?)
    }
}
