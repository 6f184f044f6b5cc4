//! The administration commands of Neo4j's `system` database that clients
//! send to manage databases and users: `SHOW DATABASES`, `CREATE DATABASE`,
//! `DROP DATABASE`, `SHOW USERS`, `CREATE USER`, `ALTER USER`, `DROP USER`,
//! `GRANT ROLE`. A Plexus database is a named graph; users are those of
//! [`crate::auth`].

use crate::auth::{Auth, Role, User};
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
    ShowUsers,
    /// `CREATE USER name [IF NOT EXISTS] SET [PLAINTEXT] PASSWORD 'pw' | $p
    /// [CHANGE [NOT] REQUIRED]`: a read-write user of every database.
    CreateUser {
        name: String,
        password: Secret,
        if_not_exists: bool,
    },
    DropUser {
        name: String,
        if_exists: bool,
    },
    /// `ALTER USER name SET [PLAINTEXT] PASSWORD …`
    AlterUser {
        name: String,
        password: Secret,
    },
    /// `GRANT ROLE role TO name`: Neo4j's `reader`, `editor`/`publisher`/
    /// `architect`, `admin`, or Plexus's own role names.
    GrantRole {
        role: String,
        user: String,
    },
}

/// A password as the command gives it.
#[derive(Clone, PartialEq, Eq)]
pub enum Secret {
    Literal(String),
    Param(String),
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Secret::Literal(_) => f.write_str("Literal(***)"),
            Secret::Param(p) => write!(f, "Param({p})"),
        }
    }
}

impl Command {
    /// Whether the command changes users or databases (admins only).
    pub fn manages(&self) -> bool {
        !matches!(self, Command::Show { .. })
    }
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
    if is(w.get(1), "USER") || is(w.get(1), "USERS") || is(w.first(), "GRANT") {
        return parse_user(&w, rest);
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

/// `text` after the keywords `kws` (any case), if it starts with them.
fn keywords<'a>(text: &'a str, kws: &[&str]) -> Option<&'a str> {
    let (w, rest) = words(text, kws.len());
    (w.len() == kws.len() && w.iter().zip(kws).all(|(a, b)| a.eq_ignore_ascii_case(b)))
        .then_some(rest)
}

/// A quoted string literal or a `$parameter` at the start of `text`, and
/// what follows it.
fn secret(text: &str) -> Option<(Secret, &str)> {
    let t = text.trim_start();
    if let Some(p) = t.strip_prefix('$') {
        let end = p
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(p.len());
        return (end > 0).then(|| (Secret::Param(p[..end].to_string()), &p[end..]));
    }
    let quote = t.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let mut out = String::new();
    let mut chars = t.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?.1),
            c if c == quote => return Some((Secret::Literal(out), &t[i + c.len_utf8()..])),
            c => out.push(c),
        }
    }
    None
}

/// The user commands, after their first two words `w`.
fn parse_user(w: &[String], rest: &str) -> Option<Command> {
    let verb = w.first()?.to_ascii_uppercase();
    if verb == "SHOW" && is(w.get(1), "USERS") && rest.is_empty() {
        return Some(Command::ShowUsers);
    }
    if verb == "GRANT" {
        // GRANT ROLE[S] role TO user
        let (w2, tail) = words(rest, 3);
        let role_kw = is(w.get(1), "ROLE") || is(w.get(1), "ROLES");
        return (role_kw && w2.len() == 3 && is(w2.get(1), "TO") && tail.is_empty()).then(|| {
            Command::GrantRole {
                role: w2[0].clone(),
                user: w2[2].clone(),
            }
        });
    }
    let (head, after) = words(rest, 1);
    let name = head.first()?.clone();
    match verb.as_str() {
        "DROP" => {
            let (g, tail) = words(after, 2);
            let if_exists = g.len() == 2 && is(g.first(), "IF") && is(g.get(1), "EXISTS");
            (tail.is_empty() && (g.is_empty() || if_exists))
                .then_some(Command::DropUser { name, if_exists })
        }
        "CREATE" | "ALTER" => {
            let mut t = after;
            let mut if_not_exists = false;
            if verb == "CREATE" {
                if let Some(r) = keywords(t, &["IF", "NOT", "EXISTS"]) {
                    (t, if_not_exists) = (r, true);
                }
            }
            t = keywords(t, &["SET"])?;
            t = keywords(t, &["PLAINTEXT"]).unwrap_or(t);
            t = keywords(t, &["PASSWORD"])?;
            let (password, mut t) = secret(t)?;
            if let Some(r) = keywords(t, &["CHANGE"]) {
                t = keywords(keywords(r, &["NOT"]).unwrap_or(r), &["REQUIRED"])?;
            }
            if !t.trim().is_empty() {
                return None;
            }
            Some(if verb == "CREATE" {
                Command::CreateUser {
                    name,
                    password,
                    if_not_exists,
                }
            } else {
                Command::AlterUser { name, password }
            })
        }
        _ => None,
    }
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

/// What a command runs against, and for whom.
pub struct Env<'a> {
    pub db: &'a Database,
    /// The graph no database name means.
    pub default: &'a str,
    pub auth: &'a Auth,
    pub user: &'a User,
}

type Answer = Result<(Cursor, QueryKind), Failure>;

/// A command's answer with no rows.
fn done() -> Answer {
    Ok((
        Cursor::from_table(Table::default(), QueryKind::Write),
        QueryKind::Write,
    ))
}

/// Runs a command; its result is a cursor as a query's is.
pub fn run(env: &Env<'_>, cmd: Command, params: &Params) -> Answer {
    if cmd.manages() && env.user.role != Role::Admin {
        return Err(Failure::new(
            status::FORBIDDEN,
            "managing databases and users needs the admin role",
        ));
    }
    match cmd {
        Command::Show { name, tail } => {
            let mut rows = database_rows(env.db, env.default, name.as_deref());
            rows.retain(|r| match r {
                Value::Map(m) => matches!(m.get("name"), Some(Value::String(n)) if n == "system" || env.user.may_use(n)),
                _ => false,
            });
            yield_rows(env, rows, &COLUMNS, tail, params)
        }
        Command::Create {
            name,
            if_not_exists,
        } => create_database(env.db, &name, if_not_exists),
        Command::Drop { name, if_exists } => drop_database(env, &name, if_exists),
        Command::ShowUsers => {
            let rows = with_users(env, |u| Ok(u.list()))?
                .into_iter()
                .map(|u| {
                    let dbs = crate::auth::database_specs(&u).map_or(Value::Null, |d| {
                        Value::List(d.into_iter().map(Value::String).collect())
                    });
                    let vals = [
                        Value::String(u.name),
                        Value::List(vec![Value::String(u.role.name().into())]),
                        dbs,
                        Value::Bool(false),
                        Value::Bool(false),
                    ];
                    Value::Map(
                        USER_COLUMNS
                            .iter()
                            .map(|c| c.to_string())
                            .zip(vals)
                            .collect(),
                    )
                })
                .collect();
            yield_rows(env, rows, &USER_COLUMNS, None, params)
        }
        Command::CreateUser {
            name,
            password,
            if_not_exists,
        } => {
            let pw = reveal(&password, params)?;
            with_users(env, |u| {
                if if_not_exists && u.list().iter().any(|x| x.name == name) {
                    return Ok(());
                }
                u.add(&name, &pw, Role::ReadWrite, &[], false)
            })?;
            done()
        }
        Command::AlterUser { name, password } => {
            let pw = reveal(&password, params)?;
            with_users(env, |u| {
                let Some(existing) = u.list().into_iter().find(|x| x.name == name) else {
                    return Err(crate::auth::AuthError::NoSuchUser(name.clone()));
                };
                let specs = crate::auth::database_specs(&existing).unwrap_or_default();
                u.add(&name, &pw, existing.role, &specs, true)
            })?;
            done()
        }
        Command::DropUser { name, if_exists } => {
            with_users(env, |u| match u.remove(&name) {
                Err(crate::auth::AuthError::NoSuchUser(_)) if if_exists => Ok(()),
                other => other,
            })?;
            done()
        }
        Command::GrantRole { role, user } => {
            let r = Role::parse(&role).ok_or_else(|| {
                Failure::new(
                    status::ARGUMENT,
                    format!("unknown role '{role}' (reader, editor, publisher, architect, admin)"),
                )
            })?;
            with_users(env, |u| u.set_role(&user, r))?;
            done()
        }
    }
}

const USER_COLUMNS: [&str; 5] = [
    "user",
    "roles",
    "databases",
    "passwordChangeRequired",
    "suspended",
];

/// A password from the command text or its parameter.
fn reveal(s: &Secret, params: &Params) -> Result<String, Failure> {
    match s {
        Secret::Literal(p) => Ok(p.clone()),
        Secret::Param(name) => match params.get(name) {
            Some(Value::String(p)) => Ok(p.clone()),
            _ => Err(Failure::new(
                status::PARAMETER_MISSING,
                format!("the password parameter ${name} is missing or not a string"),
            )),
        },
    }
}

/// Runs `f` on the server's users; refused when authentication is off.
fn with_users<T>(
    env: &Env<'_>,
    f: impl FnOnce(&mut crate::auth::Users) -> Result<T, crate::auth::AuthError>,
) -> Result<T, Failure> {
    let Auth::Users(users) = env.auth else {
        return Err(Failure::new(
            status::UNSUPPORTED_ADMIN,
            "authentication is off (--auth none): there are no users to manage",
        ));
    };
    let mut users = users.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut users).map_err(|e| {
        let code = match e {
            crate::auth::AuthError::Io { .. } | crate::auth::AuthError::Hash(_) => {
                status::DATABASE_ERROR
            }
            _ => status::ARGUMENT,
        };
        Failure::new(code, e.to_string())
    })
}

/// Rows as a result, through an optional `YIELD … WHERE … RETURN …` tail:
/// the tail is Cypher over the rows, bound as a parameter.
fn yield_rows(
    env: &Env<'_>,
    rows: Vec<Value>,
    columns: &[&str],
    tail: Option<String>,
    params: &Params,
) -> Answer {
    let yield_part = tail.unwrap_or_else(|| columns.join(", "));
    let (items, rest) = split_yield(&yield_part, columns);
    let bindings: Vec<String> = items
        .iter()
        .map(|c| format!("__row.`{c}` AS `{c}`"))
        .collect();
    let ret = if rest.trim().is_empty() || !rest.to_ascii_uppercase().contains("RETURN") {
        let cols: Vec<String> = items.iter().map(|c| format!("`{c}`")).collect();
        format!("{rest} RETURN {}", cols.join(", "))
    } else {
        rest.to_string()
    };
    let query = format!("UNWIND $__rows AS __row WITH {} {ret}", bindings.join(", "));
    let mut params = params.clone();
    params.insert("__rows".into(), Value::List(rows));
    let fail = |e: plexus::Error| status::of(&e);
    let session = env.db.session(env.default).map_err(fail)?;
    let cursor = session.run(&query, &params).map_err(fail)?;
    Ok((cursor, QueryKind::Read))
}

fn create_database(db: &Database, name: &str, if_not_exists: bool) -> Answer {
    if name == "system" || db.graphs().iter().any(|g| g == name) {
        if if_not_exists {
            return done();
        }
        return Err(Failure::new(
            "Neo.ClientError.Database.ExistingDatabaseFound",
            format!("Failed to create the specified database '{name}': Database already exists."),
        ));
    }
    db.create_graph(name).map_err(|e| status::of(&e))?;
    done()
}

fn drop_database(env: &Env<'_>, name: &str, if_exists: bool) -> Answer {
    if name == "system" || name == env.default {
        return Err(Failure::new(
            status::FORBIDDEN,
            format!("the database '{name}' cannot be dropped"),
        ));
    }
    if !env.db.graphs().iter().any(|g| g == name) {
        if if_exists {
            return done();
        }
        return Err(Failure::new(
            status::DATABASE_NOT_FOUND,
            format!("Failed to delete the specified database '{name}': Database does not exist."),
        ));
    }
    env.db.drop_graph(name).map_err(|e| status::of(&e))?;
    done()
}

/// `name, currentStatus WHERE …` → the yielded columns and the rest.
fn split_yield<'a>(tail: &'a str, columns: &[&str]) -> (Vec<String>, &'a str) {
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
            items.extend(columns.iter().map(|c| c.to_string()));
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
        items.extend(columns.iter().map(|c| c.to_string()));
        rest = r;
    }
    if items.is_empty() {
        items.extend(columns.iter().map(|c| c.to_string()));
    }
    (items, rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Users;

    fn admin() -> User {
        User::anyone()
    }

    /// Runs `text` as `user` against `db` (users from `auth`).
    fn exec(
        db: &Database,
        auth: &Auth,
        user: &User,
        text: &str,
        params: &Params,
    ) -> Result<Table, Failure> {
        let env = Env {
            db,
            default: "default",
            auth,
            user,
        };
        let cmd = parse(text).unwrap_or_else(|| panic!("not a command: {text}"));
        run(&env, cmd, params).map(|(c, _)| c.into_table().unwrap())
    }

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
        assert_eq!(
            parse(
                "CREATE USER ann IF NOT EXISTS SET PLAINTEXT PASSWORD 'it''s' CHANGE NOT REQUIRED"
            ),
            None,
            "'' is not an escape here"
        );
        assert_eq!(
            parse(
                "CREATE USER ann IF NOT EXISTS SET PLAINTEXT PASSWORD 'p\\'w' CHANGE NOT REQUIRED"
            ),
            Some(Command::CreateUser {
                name: "ann".into(),
                password: Secret::Literal("p'w".into()),
                if_not_exists: true
            })
        );
        assert_eq!(
            parse("create user bob set password $pw"),
            Some(Command::CreateUser {
                name: "bob".into(),
                password: Secret::Param("pw".into()),
                if_not_exists: false
            })
        );
        assert_eq!(
            parse("ALTER USER bob SET PASSWORD 'x'"),
            Some(Command::AlterUser {
                name: "bob".into(),
                password: Secret::Literal("x".into())
            })
        );
        assert_eq!(
            parse("DROP USER bob IF EXISTS"),
            Some(Command::DropUser {
                name: "bob".into(),
                if_exists: true
            })
        );
        assert_eq!(
            parse("GRANT ROLE reader TO bob"),
            Some(Command::GrantRole {
                role: "reader".into(),
                user: "bob".into()
            })
        );
        assert_eq!(parse("SHOW USERS"), Some(Command::ShowUsers));
        assert_eq!(parse("CREATE USER bob"), None);
        assert_eq!(parse("CREATE DATABASE a b"), None);
        assert_eq!(parse("CREATE (n)"), None);
        assert_eq!(parse("MATCH (n) RETURN n"), None);
    }

    #[test]
    fn show_databases_filters_like_cypher() {
        let db = Database::in_memory().unwrap();
        db.create_graph("people").unwrap();
        let params = Params::from([("database_name".to_string(), Value::String("people".into()))]);
        let q = "SHOW DATABASES YIELD name, currentStatus WHERE name = $database_name RETURN currentStatus";
        let t = exec(&db, &Auth::None, &admin(), q, &params).unwrap();
        assert_eq!(t.columns, ["currentStatus"]);
        assert_eq!(t.rows, vec![vec![Value::String("online".into())]]);
        let t = exec(&db, &Auth::None, &admin(), "SHOW DATABASES", &Params::new()).unwrap();
        assert_eq!(t.columns.len(), COLUMNS.len());
        assert_eq!(t.rows.len(), 3, "default, people and system");
        // A user limited to one database sees that one (and system).
        let limited = User {
            databases: Some(vec!["people".into()]),
            ..admin()
        };
        let t = exec(
            &db,
            &Auth::None,
            &limited,
            "SHOW DATABASES YIELD name RETURN name ORDER BY name",
            &Params::new(),
        )
        .unwrap();
        assert_eq!(
            t.rows,
            vec![
                vec![Value::String("people".into())],
                vec![Value::String("system".into())]
            ]
        );
    }

    #[test]
    fn create_and_drop_databases() {
        let db = Database::in_memory().unwrap();
        let ok = |q: &str| exec(&db, &Auth::None, &admin(), q, &Params::new());
        ok("CREATE DATABASE g").unwrap();
        assert!(db.graphs().contains(&"g".to_string()));
        assert!(ok("CREATE DATABASE g")
            .unwrap_err()
            .message
            .contains("already exists"));
        ok("CREATE DATABASE g IF NOT EXISTS").unwrap();
        ok("DROP DATABASE g").unwrap();
        assert_eq!(
            ok("DROP DATABASE g").unwrap_err().code,
            status::DATABASE_NOT_FOUND
        );
        assert_eq!(
            ok("DROP DATABASE default").unwrap_err().code,
            status::FORBIDDEN
        );
        let writer = User {
            role: Role::ReadWrite,
            ..admin()
        };
        let e = exec(
            &db,
            &Auth::None,
            &writer,
            "CREATE DATABASE h",
            &Params::new(),
        )
        .unwrap_err();
        assert_eq!(e.code, status::FORBIDDEN);
    }

    #[test]
    fn users_are_managed_by_commands() {
        let dir = tempfile::tempdir().unwrap();
        let auth = Auth::users(Users::load(dir.path()).unwrap());
        let db = Database::in_memory().unwrap();
        let ok = |q: &str, p: &Params| exec(&db, &auth, &admin(), q, p);
        let pw = Params::from([("pw".to_string(), Value::String("s3cret".into()))]);
        ok("CREATE USER ann SET PASSWORD $pw", &pw).unwrap();
        assert!(
            ok("CREATE USER ann SET PASSWORD 'x'", &pw).is_err(),
            "exists"
        );
        ok("CREATE USER ann IF NOT EXISTS SET PASSWORD 'x'", &pw).unwrap();
        let token = |u: &str, p: &str| {
            crate::packstream::Pack::map([
                ("scheme", crate::packstream::Pack::string("basic")),
                ("principal", crate::packstream::Pack::string(u)),
                ("credentials", crate::packstream::Pack::string(p)),
            ])
        };
        assert_eq!(
            auth.check(&token("ann", "s3cret")).unwrap().role,
            Role::ReadWrite
        );
        ok("GRANT ROLE reader TO ann", &pw).unwrap();
        assert_eq!(
            auth.check(&token("ann", "s3cret")).unwrap().role,
            Role::ReadOnly
        );
        ok("ALTER USER ann SET PASSWORD 'new'", &pw).unwrap();
        assert!(auth.check(&token("ann", "s3cret")).is_err());
        assert_eq!(
            auth.check(&token("ann", "new")).unwrap().role,
            Role::ReadOnly,
            "the role is kept"
        );
        let users = ok("SHOW USERS", &pw).unwrap();
        assert_eq!(users.rows[0][0], Value::String("ann".into()));
        assert!(ok("GRANT ROLE wizard TO ann", &pw)
            .unwrap_err()
            .message
            .contains("unknown role"));
        ok("DROP USER ann", &pw).unwrap();
        assert!(ok("DROP USER ann", &pw).is_err());
        ok("DROP USER ann IF EXISTS", &pw).unwrap();
        assert!(auth.check(&token("ann", "new")).is_err());
        // With authentication off there is nobody to manage.
        let off = exec(&db, &Auth::None, &admin(), "SHOW USERS", &pw).unwrap_err();
        assert_eq!(off.code, status::UNSUPPORTED_ADMIN);
    }
}
