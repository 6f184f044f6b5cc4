//! The LDBC SNB Interactive reference queries (`../shared/suites/ldbc`),
//! run through `Database::query` on the SNB-like generated graph.
//!
//! Parameters are not taken from LDBC's substitution files (their ids do
//! not exist in a generated graph) but picked from the loaded graph by
//! Cypher: the best-connected person, a friend of a friend, a post with
//! replies, dates inside the generated range. Reads run first, then the
//! inserts (IU1–8), then the deletes (DEL1–8), each on fresh ids so that
//! every statement has something to do.

mod export;
pub mod side;
pub mod tiny;

use crate::engine;
use crate::snb::Snb;
use plexus::{Database, IndexSpec, Params, Table, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One query's run.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    pub file: String,
    pub rows: usize,
    pub millis: f64,
    /// The first row, for a reader to judge plausibility.
    pub first: Option<String>,
    pub error: Option<String>,
}

/// The default location: `shared/suites/ldbc` beside the repository.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/suites/ldbc")
}

/// The queries in the order they run: `(name, version folder, file stem)`.
fn catalogue() -> Vec<(String, &'static str, String)> {
    let mut q = Vec::new();
    for i in 1..=7 {
        q.push((format!("IS{i}"), "v1", format!("interactive-short-{i}")));
    }
    for i in 1..=14 {
        q.push((format!("IC{i}"), "v1", format!("interactive-complex-{i}")));
    }
    // Inserts build on each other (a person, their forum, a post in it, a
    // comment on it, likes, a friendship); deletes undo them innermost first.
    for i in [1, 4, 5, 6, 7, 2, 3, 8] {
        q.push((format!("IU{i}"), "v1", format!("interactive-update-{i}")));
    }
    for i in [2, 3, 5, 8, 7, 6, 4, 1] {
        q.push((format!("DEL{i}"), "v2", format!("interactive-delete-{i}")));
    }
    q
}

/// The reference Cypher of one query of the suite in `dir`.
fn reference(dir: &Path, version: &str, stem: &str) -> Result<String, String> {
    let file = dir
        .join(version)
        .join("queries")
        .join(format!("{stem}.cypher"));
    std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))
}

/// The reads (IS and IC) of the catalogue.
fn reads() -> Vec<(String, &'static str, String)> {
    catalogue()
        .into_iter()
        .filter(|(n, _, _)| n.starts_with("IS") || n.starts_with("IC"))
        .collect()
}

/// The reference Cypher of the read `name` (`IS1`…`IS7`, `IC1`…`IC14`) in
/// the suite `dir`, with the parameters picked from the SNB-like graph
/// `graph` of `db` (as `plexus-bench ldbc` runs it).
pub fn read_query(
    db: &Database,
    graph: &str,
    dir: &Path,
    name: &str,
) -> Result<(String, Params), String> {
    let (_, version, stem) = reads()
        .into_iter()
        .find(|(n, _, _)| n == name)
        .ok_or_else(|| format!("no LDBC read named '{name}' (IS1-IS7, IC1-IC14)"))?;
    Ok((reference(dir, version, &stem)?, parameters(db, graph)?))
}

fn one(db: &Database, graph: &str, q: &str, params: &Params) -> Result<Value, String> {
    let t = db
        .query(graph, q, params)
        .map_err(|e| format!("{q}: {e}"))?;
    t.rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .ok_or_else(|| format!("{q}: no row"))
}

fn p(pairs: &[(&str, Value)]) -> Params {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Picks parameters from the graph.
fn parameters(db: &Database, g: &str) -> Result<Params, String> {
    let none = Params::new();
    let person = one(
        db,
        g,
        "MATCH (p:Person)-[:KNOWS]-() RETURN p.id AS id, count(*) AS c ORDER BY c DESC, id LIMIT 1",
        &none,
    )?;
    let with_person = p(&[("p", person.clone())]);
    let fof = one(
        db,
        g,
        "MATCH (a:Person {id: $p})-[:KNOWS]-()-[:KNOWS]-(b:Person) WHERE a <> b AND NOT (a)-[:KNOWS]-(b) RETURN b.id ORDER BY b.id LIMIT 1",
        &with_person,
    )?;
    let first_name = one(
        db,
        g,
        "MATCH (b:Person {id: $p}) RETURN b.firstName",
        &p(&[("p", fof.clone())]),
    )?;
    let message = one(
        db,
        g,
        "MATCH (c:Comment)-[:REPLY_OF]->(m:Post) RETURN m.id AS id, count(c) AS n ORDER BY n DESC, id LIMIT 1",
        &none,
    )?;
    let comment = one(
        db,
        g,
        "MATCH (c:Comment)-[:REPLY_OF]->(:Post {id: $m}) RETURN c.id ORDER BY c.id LIMIT 1",
        &p(&[("m", message.clone())]),
    )?;
    let (lo, hi) = match (
        one(db, g, "MATCH (m:Message) RETURN min(m.creationDate)", &none)?,
        one(db, g, "MATCH (m:Message) RETURN max(m.creationDate)", &none)?,
    ) {
        (Value::Int(a), Value::Int(b)) => (a, b),
        other => return Err(format!("message dates are not integers: {other:?}")),
    };
    let mid = lo + (hi - lo) / 2;
    // A tag on friends' posts (IC6) and a country where friends work (IC11).
    let tag = one(
        db,
        g,
        "MATCH (:Person {id: $p})-[:KNOWS*1..2]-(f:Person)<-[:HAS_CREATOR]-(:Post)-[:HAS_TAG]->(t:Tag) RETURN t.name AS name, count(*) AS n ORDER BY n DESC, name LIMIT 1",
        &with_person,
    )?;
    let work_country = one(
        db,
        g,
        "MATCH (:Person {id: $p})-[:KNOWS*1..2]-(f:Person)-[:WORK_AT]->(:Company)-[:IS_LOCATED_IN]->(c:Country) RETURN c.name AS name, count(*) AS n ORDER BY n DESC, name LIMIT 1",
        &with_person,
    )
    .unwrap_or_default();
    let countries = db
        .query(
            g,
            "MATCH (c:Country) RETURN c.name AS name ORDER BY name LIMIT 2",
            &none,
        )
        .map_err(|e| e.to_string())?;
    let country = |i: usize| {
        countries
            .rows
            .get(i)
            .and_then(|r| r.first().cloned())
            .unwrap_or_default()
    };
    let tag_class = one(
        db,
        g,
        "MATCH (c:TagClass) WHERE NOT (c)-[:IS_SUBCLASS_OF]->() RETURN c.name",
        &none,
    )?;
    let forum = one(
        db,
        g,
        "MATCH (f:Forum) RETURN f.id ORDER BY f.id LIMIT 1",
        &none,
    )?;
    let city = one(
        db,
        g,
        "MATCH (c:City) RETURN c.id ORDER BY c.id LIMIT 1",
        &none,
    )?;
    let org = one(
        db,
        g,
        "MATCH (o:Organisation) RETURN o.id ORDER BY o.id LIMIT 1",
        &none,
    )?;
    let tag_id = one(
        db,
        g,
        "MATCH (t:Tag) RETURN t.id ORDER BY t.id LIMIT 1",
        &none,
    )?;
    let new_id = |base: i64| Value::Int(1_000_000_000_000 + base);
    Ok(p(&[
        ("personId", person.clone()),
        ("person1Id", person.clone()),
        ("person2Id", fof),
        ("firstName", first_name),
        ("messageId", message.clone()),
        ("maxDate", Value::Int(hi)),
        ("minDate", Value::Int(lo)),
        ("startDate", Value::Int(lo)),
        ("endDate", Value::Int(mid)),
        ("durationDays", Value::Int((mid - lo) / 86_400_000)),
        ("tagName", tag),
        ("countryXName", country(0)),
        ("countryYName", country(1)),
        ("countryName", work_country),
        ("workFromYear", Value::Int(2030)),
        ("month", Value::Int(6)),
        ("tagClassName", tag_class),
        // Inserts: new ids attached to existing entities.
        ("cityId", city),
        ("countryId", Value::Int(100)),
        ("personFirstName", "Ada".into()),
        ("personLastName", "Lovelace".into()),
        ("gender", "female".into()),
        ("birthday", Value::Int(lo - 86_400_000 * 365 * 30)),
        ("creationDate", Value::Int(hi + 1)),
        ("joinDate", Value::Int(hi + 1)),
        ("locationIP", "10.9.9.9".into()),
        ("browserUsed", "Firefox".into()),
        ("languages", Value::List(vec!["en".into()])),
        ("emails", Value::List(vec!["ada@example.org".into()])),
        ("tagIds", Value::List(vec![tag_id])),
        (
            "studyAt",
            Value::List(vec![Value::List(vec![org.clone(), Value::Int(2001)])]),
        ),
        (
            "workAt",
            Value::List(vec![Value::List(vec![org, Value::Int(2005)])]),
        ),
        ("postId", message),
        ("commentId", comment),
        ("forumId", forum),
        ("forumTitle", "A new forum".into()),
        ("moderatorPersonId", person.clone()),
        ("authorPersonId", person),
        ("imageFile", "".into()),
        ("language", "en".into()),
        ("content", "hello".into()),
        ("length", Value::Int(5)),
        ("replyToPostId", Value::Int(-1)),
        ("replyToCommentId", Value::Int(-1)),
        ("newPersonId", new_id(1)),
        ("newForumId", new_id(2)),
        ("newPostId", new_id(3)),
        ("newCommentId", new_id(4)),
    ]))
}

/// The parameter sets each read (IS and IC) runs with: one picked from the
/// graph, or one for each `given` set (LDBC's substitution parameters),
/// laid over it.
pub fn read_parameters(
    db: &Database,
    graph: &str,
    given: &std::collections::BTreeMap<String, Vec<Params>>,
) -> Result<std::collections::BTreeMap<String, Vec<Params>>, String> {
    let base = parameters(db, graph)?;
    Ok(reads()
        .into_iter()
        .map(|(name, _, _)| {
            let picked = bind(&name, &base);
            let sets = match given.get(&name) {
                Some(rows) if !rows.is_empty() => rows
                    .iter()
                    .map(|g| {
                        let mut p = picked.clone();
                        p.extend(g.clone());
                        p
                    })
                    .collect(),
                _ => vec![picked],
            };
            (name, sets)
        })
        .collect())
}

/// The parameters of one query: the new person likes an existing post and
/// comment (IU2/IU3, undone by DEL2/DEL3); the new forum, post and comment
/// get fresh ids, and IU7 replies to the new post.
fn bind(name: &str, base: &Params) -> Params {
    // (query, parameter, the fresh id it takes)
    const FRESH: &[(&str, &str, &str)] = &[
        ("IU1", "personId", "newPersonId"),
        ("IU2", "personId", "newPersonId"),
        ("IU3", "personId", "newPersonId"),
        ("IU4", "forumId", "newForumId"),
        ("IU5", "forumId", "newForumId"),
        ("IU5", "personId", "newPersonId"),
        ("IU6", "postId", "newPostId"),
        ("IU6", "forumId", "newForumId"),
        ("IU7", "commentId", "newCommentId"),
        ("IU7", "replyToPostId", "newPostId"),
        ("IU8", "person1Id", "newPersonId"),
        ("DEL1", "personId", "newPersonId"),
        ("DEL2", "personId", "newPersonId"),
        ("DEL3", "personId", "newPersonId"),
        ("DEL4", "forumId", "newForumId"),
        ("DEL5", "forumId", "newForumId"),
        ("DEL5", "personId", "newPersonId"),
        ("DEL6", "postId", "newPostId"),
        ("DEL7", "commentId", "newCommentId"),
        ("DEL8", "person1Id", "newPersonId"),
    ];
    let mut q = base.clone();
    for (_, param, fresh) in FRESH.iter().filter(|(n, _, _)| *n == name) {
        q.insert(
            param.to_string(),
            base.get(*fresh).cloned().unwrap_or_default(),
        );
    }
    q
}

/// Loads the SNB-like graph at scale factor `sf` into memory, with the
/// indexes of the reference `indices.cypher`.
pub fn load(sf: f64, seed: u64) -> Result<(Database, String), Box<dyn std::error::Error>> {
    load_from(&Snb::new(sf, seed))
}

/// Loads `g` (an SNB graph: the generated one, or LDBC's tiny set) into
/// memory, with the indexes of the reference `indices.cypher`.
pub fn load_from(
    g: &dyn crate::gen::Generator,
) -> Result<(Database, String), Box<dyn std::error::Error>> {
    load_into(Database::in_memory()?, g)
}

/// Loads `g` into `db` (in memory or on disk), with the indexes of the
/// reference `indices.cypher`.
pub fn load_into(
    db: Database,
    g: &dyn crate::gen::Generator,
) -> Result<(Database, String), Box<dyn std::error::Error>> {
    let graph = "snb".to_string();
    engine::load(&db, &graph, g, "id")?;
    let mut t = db.write(&graph)?;
    for (label, key) in [
        ("Person", "firstName"),
        ("Tag", "name"),
        ("TagClass", "name"),
        ("Country", "name"),
    ] {
        t.create_index(IndexSpec::property(label, key))?;
    }
    t.commit()?;
    Ok((db, graph))
}

/// Runs every query of the catalogue once; a query that fails is reported,
/// not fatal.
pub fn run(db: &Database, graph: &str, dir: &Path) -> Result<Vec<Outcome>, String> {
    if !dir.is_dir() {
        return Err(format!(
            "the LDBC suite is not at {} (pass --ldbc-dir)",
            dir.display()
        ));
    }
    let base = parameters(db, graph)?;
    let mut out = Vec::new();
    for (name, version, stem) in catalogue() {
        let text = reference(dir, version, &stem)?;
        let params = bind(&name, &base);
        let start = Instant::now();
        let r = db.query(graph, &text, &params);
        let millis = start.elapsed().as_secs_f64() * 1e3;
        let (rows, first, error) = match r {
            Ok(Table { rows, columns }) => {
                let first = rows.first().map(|r| {
                    columns
                        .iter()
                        .zip(r)
                        .map(|(c, v)| format!("{c}={}", short(v)))
                        .collect::<Vec<_>>()
                        .join(", ")
                });
                (rows.len(), first, None)
            }
            Err(e) => (0, None, Some(e.to_string())),
        };
        out.push(Outcome {
            name,
            file: format!("{version}/queries/{stem}.cypher"),
            rows,
            millis,
            first,
            error,
        });
    }
    Ok(out)
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// The report: one row per query.
pub fn markdown(outcomes: &[Outcome], sf: f64, command: &str) -> String {
    let ok = outcomes.iter().filter(|o| o.error.is_none()).count();
    let mut s = format!(
        "# LDBC SNB Interactive on Plexus\n\nGenerated by `{command}`: the reference Cypher of \
         `../shared/suites/ldbc` (v1 IS/IC/IU, v2 DEL) on the SNB-like graph at SF {sf}, \
         parameters picked from the graph, each query run once through `Database::query` \
         (in memory, cold plan cache).\n\n**{ok} of {} queries run.**\n\n\
         | query | rows | ms | first row, or the error |\n|---|---:|---:|---|\n",
        outcomes.len()
    );
    for o in outcomes {
        let what = match (&o.error, &o.first) {
            (Some(e), _) => format!("**error:** {e}"),
            (None, Some(f)) => f.clone(),
            (None, None) => "(no rows)".into(),
        };
        s += &format!(
            "| {} | {} | {:.1} | {} |\n",
            o.name,
            o.rows,
            o.millis,
            what.replace('|', "\\|").replace('\n', " ")
        );
    }
    s
}
