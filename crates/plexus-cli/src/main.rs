//! `plexus`: the command line of the Plexus graph database.

/// Prints a line to stdout; a closed pipe (as with `| head`) ends the program quietly.
macro_rules! say {
    ($($t:tt)*) => {
        $crate::output::emit(&format!($($t)*))
    };
}

mod commands;
mod cypher;
mod demo;
mod history;
mod output;
mod serve;
mod traverse;
mod values;
mod vector;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// Limits for each query (a query past one fails with a clear error).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct QueryLimitArgs {
    /// Stop a query after this long: 500ms, 30s, 5m, or seconds.
    #[arg(long)]
    pub timeout: Option<String>,
    /// The memory one query may hold (rows, groups, sorts, lists): 256M, 2G
    /// (default 4G).
    #[arg(long)]
    pub memory_limit: Option<String>,
}

#[derive(Parser)]
#[command(
    name = "plexus",
    version,
    about = "An embedded property-graph database",
    propagate_version = true
)]
pub struct Cli {
    /// The database folder.
    #[arg(long, global = true, env = "PLEXUS_DB", default_value = "plexus-data")]
    pub db: PathBuf,
    /// The named graph to work on.
    #[arg(
        long,
        short,
        global = true,
        env = "PLEXUS_GRAPH",
        default_value = "default"
    )]
    pub graph: String,
    /// Print JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Skip the sync to disk at each commit: faster; a process crash loses nothing, but an
    /// OS crash or power loss may lose recent commits and, on LMDB, damage the database
    /// (for data you can load again).
    #[arg(long, global = true)]
    pub no_sync: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Create a new, empty database.
    Init {
        /// Storage backend (postgres when `--store` is given).
        #[arg(long, value_enum, default_value_t = BackendArg::Lmdb)]
        backend: BackendArg,
        /// Keep the data in a PostgreSQL server instead of the folder:
        /// `postgres://user@host:port/database` (builds with the `postgres`
        /// feature). The folder then holds only the manifest.
        #[arg(long)]
        store: Option<String>,
    },
    /// Counts per label and relationship type, and the size on disk.
    Stats {
        /// Where the bytes go instead: every keyspace's entries, key and
        /// value bytes and stored size, per node or edge (reads the whole
        /// database; all graphs together).
        #[arg(long)]
        space: bool,
    },
    /// Create, read or delete nodes.
    #[command(subcommand)]
    Node(NodeCmd),
    /// Create, read or delete edges.
    #[command(subcommand)]
    Edge(EdgeCmd),
    /// The edges at a node and the nodes at their other ends.
    Neighbors {
        /// The node's id.
        id: String,
        /// Only edges of this type.
        #[arg(long = "type", short = 't')]
        rel_type: Option<String>,
        #[arg(long, short, value_enum, default_value_t = DirectionArg::Both)]
        direction: DirectionArg,
    },
    /// A shortest path between two nodes (unweighted, or by --weight).
    Path {
        from: String,
        to: String,
        #[command(flatten)]
        follow: Follow,
        /// Minimise the sum of this numeric edge property (Dijkstra).
        #[arg(long)]
        weight: Option<String>,
        /// Every shortest path, not just one.
        #[arg(long, conflicts_with = "weight")]
        all: bool,
        /// Give up beyond this many hops.
        #[arg(long)]
        max_depth: Option<u32>,
        /// At most this many paths with --all.
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Breadth-first search: the distinct nodes within --depth hops.
    Bfs {
        id: String,
        #[arg(long, default_value_t = 3)]
        depth: u32,
        #[command(flatten)]
        follow: Follow,
    },
    /// Seeded, reproducible sampling of neighbours and random walks.
    #[command(subcommand)]
    Sample(SampleCmd),
    /// Manage named graphs.
    #[command(subcommand)]
    Graph(GraphCmd),
    /// Keep a graph's history, so that queries can read it as it was
    /// (`MATCH … FOR SYSTEM_TIME AS OF t`); show or prune it.
    #[command(subcommand)]
    History(HistoryCmd),
    /// Manage property and list-element indexes.
    #[command(subcommand)]
    Index(IndexCmd),
    /// Manage unique and not-null constraints.
    #[command(subcommand)]
    Constraint(ConstraintCmd),
    /// Vector indexes: create one, list them, search one (drop one with
    /// `plexus index drop`).
    #[command(subcommand)]
    Vector(VectorCmd),
    /// Import node and edge files (CSV with typed headers, JSON lines,
    /// Parquet, Arrow) into an empty graph (or, with --upsert, any graph),
    /// as one commit.
    Import {
        /// A node file, as LABEL=path or path (labels from a :LABEL column).
        #[arg(long = "nodes", required = true)]
        nodes: Vec<String>,
        /// An edge file, as TYPE=path or path (types from a :TYPE column).
        #[arg(long = "edges")]
        edges: Vec<String>,
        /// CSV field delimiter.
        #[arg(long, default_value = ",")]
        delimiter: char,
        /// CSV quote character.
        #[arg(long, default_value = "\"")]
        quote: char,
        /// Separates the elements of list columns (tags:STRING[]).
        #[arg(long, default_value = ";")]
        array_delimiter: char,
        /// Leave bad rows out (listing them in this file) instead of failing.
        #[arg(long, value_name = "REPORT")]
        skip_bad_rows: Option<PathBuf>,
        /// Import into a graph that holds data: nodes by id are created or
        /// merged (labels added, given properties set), edges with an id
        /// created or updated; one transaction, slower than the bulk path.
        #[arg(long)]
        upsert: bool,
        /// How the graph's indexes are treated: filled by the import
        /// (maintain), left stale to rebuild later with `plexus index
        /// rebuild` (defer), or rebuilt before the import returns
        /// (defer-rebuild). Unique indexes are always maintained.
        #[arg(long, value_enum, default_value = "maintain")]
        index_mode: IndexModeArg,
        /// Memory for the import's keys at most (e.g. 2G, or `none`): past
        /// it, they are sorted into files in the database folder and merged
        /// as written, so imports larger than memory fit. A quarter of the
        /// machine's memory by default.
        #[arg(long, value_name = "SIZE")]
        memory_limit: Option<String>,
    },
    /// Verify every invariant of the graph (reads everything).
    Check,
    /// Convert a database written by an older format of Plexus to this
    /// build's, in place (run again if interrupted; back it up first).
    Upgrade,
    /// Rewrite the database compactly and give back the space deletes
    /// freed (an LMDB store reuses freed pages but never shrinks its
    /// file). Needs the database to itself (no server or reader open);
    /// from a program, `Database::compact` runs beside its queries and
    /// writes.
    Compact,
    /// Run a Cypher query and print its result.
    Query {
        /// The query, e.g. "MATCH (n:Person) RETURN n.name LIMIT 5".
        text: String,
        /// A parameter as name=value ($name in the query); the value is read as JSON when it is JSON.
        #[arg(long = "param", short = 'p')]
        params: Vec<String>,
        /// Output format (--json means jsonl).
        #[arg(long, value_enum, default_value_t = cypher::Format::Table)]
        format: cypher::Format,
        #[command(flatten)]
        limits: QueryLimitArgs,
    },
    /// An interactive Cypher shell: statements end with ';', :help lists commands.
    Shell {
        #[arg(long, value_enum, default_value_t = cypher::Format::Table)]
        format: cypher::Format,
        #[command(flatten)]
        limits: QueryLimitArgs,
    },
    /// Serve the database to Neo4j drivers over Bolt (bolt:// and neo4j:// URIs).
    Serve {
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1:7687")]
        listen: String,
        /// The host:port clients reach the server at, for routing tables
        /// (default: the listen address).
        #[arg(long)]
        advertised_address: Option<String>,
        /// `users`: clients log on as a user of `plexus user add`; `none`:
        /// everyone may do everything (only on a loopback address).
        #[arg(long, value_enum, default_value_t = AuthArg::Users)]
        auth: AuthArg,
        /// Connections served at once.
        #[arg(long, default_value_t = 256)]
        max_connections: usize,
        /// Serve TLS (bolt+s://, neo4j+s://) with this PEM certificate chain.
        #[arg(long, requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// The PEM private key of --tls-cert.
        #[arg(long, requires = "tls_cert")]
        tls_key: Option<PathBuf>,
        #[command(flatten)]
        limits: QueryLimitArgs,
    },
    /// Manage the users the server lets in.
    #[command(subcommand)]
    User(UserCmd),
    /// Build a small sample graph in a folder and show some reads.
    Demo {
        /// Where to build the sample database.
        #[arg(long, default_value = "sample.plexus")]
        path: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum NodeCmd {
    /// Create or update a node (labels and properties replaced; --merge keeps the rest).
    Put {
        id: String,
        #[arg(long = "label", short = 'l')]
        labels: Vec<String>,
        /// A property as key=value; the value is read as JSON when it is JSON.
        #[arg(long = "prop", short = 'p')]
        props: Vec<String>,
        /// Add labels and set the given properties, keeping the others.
        #[arg(long)]
        merge: bool,
    },
    /// Show a node.
    Get { id: String },
    /// Delete a node.
    Delete {
        id: String,
        /// Also delete its edges (otherwise a node with edges is refused).
        #[arg(long)]
        detach: bool,
    },
}

#[derive(Subcommand)]
pub enum EdgeCmd {
    /// Create an edge, or replace the properties of the edge with --id.
    Put {
        /// Source node id.
        src: String,
        /// Relationship type.
        rel_type: String,
        /// Target node id.
        dst: String,
        /// The edge's id (generated when absent).
        #[arg(long)]
        id: Option<String>,
        #[arg(long = "prop", short = 'p')]
        props: Vec<String>,
    },
    /// Show an edge.
    Get { id: String },
    /// Delete an edge.
    Delete { id: String },
}

/// Which edges a traversal follows.
#[derive(Args, Clone)]
pub struct Follow {
    /// Only edges of these types (repeat the option for several).
    #[arg(long = "type", short = 't')]
    pub types: Vec<String>,
    #[arg(long, short, value_enum, default_value_t = DirectionArg::Out)]
    pub direction: DirectionArg,
}

#[derive(Subcommand)]
pub enum SampleCmd {
    /// Up to --k edges of a node.
    Neighbors {
        id: String,
        #[arg(long, default_value_t = 5)]
        k: usize,
        #[arg(long, value_enum, default_value_t = SampleModeArg::Uniform)]
        mode: SampleModeArg,
        /// The weight property for --mode weighted.
        #[arg(long, required_if_eq("mode", "weighted"))]
        weight: Option<String>,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        #[command(flatten)]
        follow: Follow,
    },
    /// A random walk (node2vec when --p or --q is not 1).
    Walk {
        id: String,
        #[arg(long, default_value_t = 10)]
        length: usize,
        #[arg(long, default_value_t = 1.0)]
        p: f64,
        #[arg(long, default_value_t = 1.0)]
        q: f64,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        #[command(flatten)]
        follow: Follow,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SampleModeArg {
    /// Without replacement.
    Uniform,
    /// With replacement.
    Replace,
    /// Distinct neighbours only.
    Unique,
    /// Proportional to --weight.
    Weighted,
}

#[derive(Subcommand)]
pub enum HistoryCmd {
    /// Keep every later change of the graph as a version (what it holds
    /// now becomes the first version).
    On,
    /// Stop keeping history and delete what was kept.
    Off,
    /// Whether history is kept, since when, and the latest system time.
    Status,
    /// Delete the versions no read as of BEFORE or later needs; without
    /// --before, prune every graph as its retention policy says.
    Prune {
        /// An instant: an ISO 8601 datetime (`2026-12-01T10:00:00Z`) or
        /// microseconds since 1970.
        #[arg(long)]
        before: Option<String>,
    },
    /// Keep the history for a time only (later commits prune the rest in
    /// the background), or `off` to keep it for ever.
    Retain {
        /// `30d`, `12h`, `15m`, `90s`, an ISO 8601 duration (`P30D`,
        /// `PT12H`), or `off`.
        ttl: String,
    },
    /// Write the index entries of every valid-time version again (claims,
    /// labels, relationship endpoints): for versions written before those
    /// indexes existed, or to repair them.
    Reindex,
}

#[derive(Subcommand)]
pub enum GraphCmd {
    Create {
        name: String,
    },
    List,
    /// Delete a graph and everything in it.
    Drop {
        name: String,
    },
}

#[derive(Subcommand)]
pub enum IndexCmd {
    /// Index a property of nodes with a label.
    Create {
        label: String,
        key: String,
        /// Index each element of a list property.
        #[arg(long)]
        list: bool,
        /// Refuse values of other types (INT, FLOAT, STRING, DATE, ...).
        #[arg(long = "type")]
        value_type: Option<String>,
        #[arg(long)]
        name: Option<String>,
    },
    List,
    Drop {
        name: String,
    },
    /// Rebuild indexes whose maintenance was deferred.
    Rebuild,
    /// Nodes whose indexed property equals a value.
    Lookup {
        label: String,
        key: String,
        /// The value, read as JSON when it is JSON.
        value: String,
        /// Match list elements (needs a list-element index).
        #[arg(long)]
        list: bool,
    },
}

#[derive(Subcommand)]
pub enum VectorCmd {
    /// Index a property of nodes with a label holding lists of numbers, for
    /// nearest-neighbour search (HNSW).
    Create {
        /// The label (with `--relationships`: the relationship type).
        label: String,
        key: String,
        /// Index relationships of the type `label` rather than nodes.
        #[arg(long)]
        relationships: bool,
        /// The vectors' length.
        #[arg(long)]
        dimensions: usize,
        /// cosine, euclidean or dot.
        #[arg(long, default_value = "cosine")]
        similarity: String,
        /// Keep the vectors as f32 in the index (default: f16, half the
        /// bytes).
        #[arg(long)]
        f32: bool,
        /// Links per vector in the graph (default 16).
        #[arg(long)]
        m: Option<usize>,
        /// How wide linking searches (default 128).
        #[arg(long)]
        ef_construction: Option<usize>,
        #[arg(long)]
        name: Option<String>,
    },
    /// The vector indexes and their options.
    List,
    /// The nodes (or relationships, in a relationship index) nearest a
    /// vector, nearest first, with Neo4j's scores.
    Search {
        /// The index's name.
        name: String,
        /// The query vector, as a JSON list: '[0.1, 0.2, 0.3]'.
        vector: String,
        /// How many results.
        #[arg(short, long, default_value_t = 10)]
        k: usize,
        /// How wide the search is (default 64; wider finds more of the true
        /// nearest, slower).
        #[arg(long)]
        ef: Option<usize>,
    },
}

#[derive(Subcommand)]
pub enum ConstraintCmd {
    Create {
        label: String,
        key: String,
        #[command(flatten)]
        kind: ConstraintKindArg,
        #[arg(long)]
        name: Option<String>,
    },
    List,
    Drop {
        name: String,
    },
}

#[derive(Args)]
#[group(required = true, multiple = false)]
pub struct ConstraintKindArg {
    #[arg(long)]
    pub unique: bool,
    #[arg(long)]
    pub not_null: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum IndexModeArg {
    Maintain,
    Defer,
    DeferRebuild,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum BackendArg {
    Lmdb,
    Fjall,
    Postgres,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum AuthArg {
    Users,
    None,
}

#[derive(Subcommand)]
pub enum UserCmd {
    /// Add a user; the password is read from standard input.
    Add {
        name: String,
        /// admin (also manages databases and users), read-write or read-only.
        #[arg(long, default_value = "read-write")]
        role: String,
        /// Only this database (repeat for several; default: every database);
        /// `sales=read-only` also gives a role of its own there.
        #[arg(long = "database")]
        databases: Vec<String>,
        /// Replace the password and role of an existing user.
        #[arg(long)]
        replace: bool,
    },
    /// Remove a user.
    Remove { name: String },
    /// List the users and their roles.
    List,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DirectionArg {
    Out,
    In,
    Both,
}

/// mimalloc, as `plexus-alloc` enters it: see the workspace manifest for why.
#[global_allocator]
static GLOBAL: plexus_alloc::Alloc = plexus_alloc::Alloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match commands::run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
