//! The administration commands of Neo4j's `system` database that clients
//! send to manage databases: `SHOW DATABASES`, `CREATE DATABASE`,
//! `DROP DATABASE`. A Plexus database is a named graph.

use crate::status::{self, Failure};
use plexus::{Cursor, Database, Params, QueryKind, Table, Value};

/// A recognised administration command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `SHOW DATABASE[S] [name] [YIELD … [WHERE …] [RETURN …]]`; the tail
    /// after YIELD is Cypher over the listed columns.
    Show {
        name: Option<String>,
        tail: Option<String>,
    },
    Create {
        name: String,
        if_not_exists: bool,
    },
    Drop {
        name: String,
        if_exists: bool,
    },
}

/// Splits the leading words off `text`: identifiers (backticks allowed)
/// separated by white space.
fn words(text: &str, n: usize) -> (Vec<String>, &str) {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while out.len() < n && !rest.is_empty() {
        let (word, after) = if let Some(quoted) = rest.strip_prefix('`') {
            match quoted.find('`') {
                Some(end) => (quoted[..end].to_string(), &quoted[end + 1..]),
                None => break,
            }
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
                .unwrap_or(rest.len());
            if end == 0 {
                break;
            }
            (rest[..end].to_string(), &rest[end..])
        };
        out.push(word);
        rest = after.trim_start();
    }
    (out, rest)
}

fn is(word: Option<&String>, kw: &str) -> bool {
    word.is_some_and(|w| w.eq_ignore_ascii_case(kw))
}

/// The command `text` is, if it is one.
pub fn parse(text: &str) -> Option<Command> {
    let text = text.trim().trim_end_matches(';');
    let (w, rest) = words(text, 2);
    if is(w.first(), "SHOW") && (is(w.get(1), "DATABASES") || is(w.get(1), "DATABASE")) {
        let (next, after) = words(rest, 1);
        return match next.first() {
            None if rest.is_empty() => Some(Command::Show {
                name: None,
                tail: None,
            }),
            Some(y) if y.eq_ignore_ascii_case("YIELD") => Some(Command::Show {
                name: None,
                tail: Some(after.to_string()),
            }),
            Some(name) => {
                let (y, tail) = words(after, 1);
                match y.first() {
                    None if after.is_empty() => Some(Command::Show {
                        name: Some(name.clone()),
                        tail: None,
                    }),
                    Some(y) if y.eq_ignore_ascii_case("YIELD") => Some(Command::Show {
                        name: Some(name.clone()),
                        tail: Some(tail.to_string()),
                    }),
                    _ => None,
                }
            }
            None => None,
        };
    }
    let create = is(w.first(), "CREATE");
    if !(create || is(w.first(), "DROP")) || !is(w.get(1), "DATABASE") {
        return None;
    }
    let (w, rest) = words(rest, 4);
    let name = w.first()?.clone();
    let guarded = match (create, w.len()) {
        (_, 1) => false,
        (true, 4) => is(w.get(1), "IF") && is(w.get(2), "NOT") && is(w.get(3), "EXISTS"),
        (false, 3) => is(w.get(1), "IF") && is(w.get(2), "EXISTS"),
        _ => return None,
    };
    // Options such as WAIT/NOWAIT are accepted: Plexus creates at once.
    let tail_ok = rest.is_empty()
        || is(words(rest, 1).0.first(), "WAIT")
        || is(words(rest, 1).0.first(), "NOWAIT");
    if (w.len() > 1 && !guarded) || !tail_ok {
        return None;
    }
    Some(if create {
        Command::Create {
            name,
            if_not_exists: guarded,
        }
    } else {
        Command::Drop {
            name,
            if_exists: guarded,
        }
    })
}

const COLUMNS: [&str; 7] = [
    "name",
    "type",
    "access",
    "currentStatus",
    "requestedStatus",
    "home",
    "default",
];

fn database_rows(db: &Database, default: &str, only: Option<&str>) -> Vec<Value> {
    let mut names = db.graphs();
    names.push("system".into());
    names
        .into_iter()
        .filter(|n| only.is_none_or(|o| o == n))
        .map(|n| {
            let is_default = n == default;
            let kind = if n == "system" { "system" } else { "standard" };
            let vals = [
                Value::String(n),
                Value::String(kind.into()),
                Value::String("read-write".into()),
                Value::String("online".into()),
                Value::String("online".into()),
                Value::Bool(is_default),
                Value::Bool(is_default),
            ];
            Value::Map(COLUMNS.iter().map(|c| c.to_string()).zip(vals).collect())
        })
        .collect()
}

/// Runs a command; its result is a cursor as a query's is.
pub fn run(
    db: &Database,
    default: &str,
    cmd: Command,
    params: &Params,
) -> Result<(Cursor, QueryKind), Failure> {
    let fail = |e: plexus::Error| status::of(&e);
    match cmd {
        Command::Show { name, tail } => {
            let rows = database_rows(db, default, name.as_deref());
            // The YIELD tail is Cypher over the rows: bind them as a parameter.
            let yield_part = tail.unwrap_or_else(|| COLUMNS.join(", "));
            let (items, rest) = split_yield(&yield_part);
            let bindings: Vec<String> = items
                .iter()
                .map(|c| format!("__db.`{c}` AS `{c}`"))
                .collect();
            let ret = if rest.trim().is_empty() || !rest.to_ascii_uppercase().contains("RETURN") {
                format!(
                    "{rest} RETURN {}",
                    items
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                rest.to_string()
            };
            let query = format!(
                "UNWIND $__databases AS __db WITH {} {ret}",
                bindings.join(", ")
            );
            let mut params = params.clone();
            params.insert("__databases".into(), Value::List(rows));
            let session = db.session(default).map_err(fail)?;
            let cursor = session.run(&query, &params).map_err(fail)?;
            Ok((cursor, QueryKind::Read))
        }
        Command::Create {
            name,
            if_not_exists,
        } => {
            if name == "system" || db.graphs().contains(&name) {
                if if_not_exists {
                    return Ok((
                        Cursor::from_table(Table::default(), QueryKind::Write),
                        QueryKind::Write,
                    ));
                }
                return Err(Failure::new(
                    "Neo.ClientError.Database.ExistingDatabaseFound",
                    format!("Failed to create the specified database '{name}': Database already exists."),
                ));
            }
            db.create_graph(&name).map_err(fail)?;
            Ok((
                Cursor::from_table(Table::default(), QueryKind::Write),
                QueryKind::Write,
            ))
        }
        Command::Drop { name, if_exists } => {
            if name == "system" || name == default {
                return Err(Failure::new(
                    status::FORBIDDEN,
                    format!("the database '{name}' cannot be dropped"),
                ));
            }
            if !db.graphs().contains(&name) {
                if if_exists {
                    return Ok((
                        Cursor::from_table(Table::default(), QueryKind::Write),
                        QueryKind::Write,
                    ));
                }
                return Err(Failure::new(
                    status::DATABASE_NOT_FOUND,
                    format!("Failed to delete the specified database '{name}': Database does not exist."),
                ));
            }
            db.drop_graph(&name).map_err(fail)?;
            Ok((
                Cursor::from_table(Table::default(), QueryKind::Write),
                QueryKind::Write,
            ))
        }
    }
}

/// `name, currentStatus WHERE …` → the yielded columns and the rest.
fn split_yield(tail: &str) -> (Vec<String>, &str) {
    let mut items = Vec::new();
    let mut rest = tail.trim_start();
    loop {
        let (w, after) = words(rest, 1);
        let Some(word) = w.into_iter().next() else {
            break;
        };
        if ["WHERE", "RETURN", "ORDER", "SKIP", "LIMIT"]
            .iter()
            .any(|k| word.eq_ignore_ascii_case(k))
        {
            break;
        }
        if word == "*" {
            items.extend(COLUMNS.iter().map(|c| c.to_string()));
        } else {
            items.push(word);
        }
        rest = after;
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None => break,
        }
    }
    if let Some(r) = rest.strip_prefix('*') {
        items.extend(COLUMNS.iter().map(|c| c.to_string()));
        rest = r;
    }
    if items.is_empty() {
        items.extend(COLUMNS.iter().map(|c| c.to_string()));
    }
    (items, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_recognised_and_other_text_is_not() {
        assert_eq!(
            parse("SHOW DATABASES"),
            Some(Command::Show {
                name: None,
                tail: None
            })
        );
        assert_eq!(
            parse("CREATE DATABASE `cognee01` IF NOT EXISTS;"),
            Some(Command::Create {
                name: "cognee01".into(),
                if_not_exists: true
            })
        );
        assert_eq!(
            parse("drop database x if exists"),
            Some(Command::Drop {
                name: "x".into(),
                if_exists: true
            })
        );
        assert_eq!(parse("CREATE DATABASE a b"), None);
        assert_eq!(parse("CREATE (n)"), None);
        assert_eq!(parse("MATCH (n) RETURN n"), None);
    }

    #[test]
    fn show_databases_filters_like_cypher() {
        let db = Database::in_memory().unwrap();
        db.create_graph("people").unwrap();
        let cmd = parse("SHOW DATABASES YIELD name, currentStatus WHERE name = $database_name RETURN currentStatus").unwrap();
        let params = Params::from([("database_name".to_string(), Value::String("people".into()))]);
        let (cursor, _) = run(&db, "default", cmd, &params).unwrap();
        let t = cursor.into_table().unwrap();
        assert_eq!(t.columns, ["currentStatus"]);
        assert_eq!(t.rows, vec![vec![Value::String("online".into())]]);
        let (all, _) = run(
            &db,
            "default",
            parse("SHOW DATABASES").unwrap(),
            &Params::new(),
        )
        .unwrap();
        let t = all.into_table().unwrap();
        assert_eq!(t.columns.len(), COLUMNS.len());
        assert_eq!(t.rows.len(), 3, "default, people and system");
    }

    #[test]
    fn create_and_drop() {
        let db = Database::in_memory().unwrap();
        run(
            &db,
            "default",
            parse("CREATE DATABASE g").unwrap(),
            &Params::new(),
        )
        .unwrap();
        assert!(db.graphs().contains(&"g".to_string()));
        let again = run(
            &db,
            "default",
            parse("CREATE DATABASE g").unwrap(),
            &Params::new(),
        )
        .unwrap_err();
        assert!(again.message.contains("already exists"));
        run(
            &db,
            "default",
            parse("CREATE DATABASE g IF NOT EXISTS").unwrap(),
            &Params::new(),
        )
        .unwrap();
        run(
            &db,
            "default",
            parse("DROP DATABASE g").unwrap(),
            &Params::new(),
        )
        .unwrap();
        let gone = run(
            &db,
            "default",
            parse("DROP DATABASE g").unwrap(),
            &Params::new(),
        )
        .unwrap_err();
        assert_eq!(gone.code, status::DATABASE_NOT_FOUND);
        let default = run(
            &db,
            "default",
            parse("DROP DATABASE default").unwrap(),
            &Params::new(),
        )
        .unwrap_err();
        assert_eq!(default.code, status::FORBIDDEN);
    }
}
