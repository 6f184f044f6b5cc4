//! Who may connect, and to what. Users live beside the database in a
//! `users` file: one line per user, `name:role:databases:argon2-PHC-hash`
//! (`databases` is `*` or a comma-separated list), replaced atomically
//! (written to a temporary file, synced, renamed) so a crash never leaves
//! half a file. Passwords are hashed with Argon2id; the file never holds
//! one. A running server sees changes made by `plexus user` (it reloads
//! the file when it changed) and makes its own (`CREATE USER`, …).

use crate::packstream::Pack;
use crate::status::{self, Failure};
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// The file name, inside the database's folder.
pub const USERS_FILE: &str = "users";

/// What a user may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Read and write, and manage databases and users.
    Admin,
    /// Read and write.
    ReadWrite,
    /// Only read.
    ReadOnly,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::ReadWrite => "read-write",
            Role::ReadOnly => "read-only",
        }
    }

    /// A Plexus role name, or one of Neo4j's built-in roles (`reader`;
    /// `editor`, `publisher`, `architect`; `admin`).
    pub fn parse(s: &str) -> Option<Role> {
        Some(match s.to_ascii_lowercase().as_str() {
            "admin" => Role::Admin,
            "read-write" | "editor" | "publisher" | "architect" => Role::ReadWrite,
            "read-only" | "reader" => Role::ReadOnly,
            _ => return None,
        })
    }

    pub fn can_write(self) -> bool {
        self != Role::ReadOnly
    }
}

/// A user who has logged on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    /// The role on every database the user may use, unless `roles` says
    /// otherwise for one.
    pub role: Role,
    /// The databases the user may use; `None`: all of them.
    pub databases: Option<Vec<String>>,
    /// A role of its own on some databases (`sales=read-only`).
    pub roles: Vec<(String, Role)>,
}

impl User {
    pub fn may_use(&self, db: &str) -> bool {
        self.databases
            .as_ref()
            .is_none_or(|dbs| dbs.iter().any(|d| d == db))
    }

    /// The user's role on `db`.
    pub fn role_on(&self, db: &str) -> Role {
        self.roles
            .iter()
            .find(|(d, _)| d == db)
            .map_or(self.role, |(_, r)| *r)
    }

    /// Everyone, with every right: the user of a server without authentication.
    pub fn anyone() -> User {
        User {
            name: String::new(),
            role: Role::Admin,
            databases: None,
            roles: vec![],
        }
    }
}

/// `sales` or `sales=read-only`, as `--database` and the users file take them.
pub fn parse_database(spec: &str) -> Result<(String, Option<Role>), AuthError> {
    let (db, role) = match spec.split_once('=') {
        Some((db, r)) => (
            db,
            Some(Role::parse(r).ok_or_else(|| AuthError::BadRole(r.to_string()))?),
        ),
        None => (spec, None),
    };
    check_name(db)?;
    Ok((db.to_string(), role))
}

#[derive(Debug)]
pub enum AuthError {
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A line of the users file that is not `name:role:databases:hash`.
    Malformed {
        path: PathBuf,
        line: usize,
    },
    /// A name that cannot be stored (empty, or with `:`, `,` or a line break).
    BadName(String),
    Exists(String),
    NoSuchUser(String),
    BadRole(String),
    Hash(String),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            AuthError::Malformed { path, line } => write!(
                f,
                "{} line {line}: not a user entry (name:role:databases:hash)",
                path.display()
            ),
            AuthError::BadName(n) => write!(
                f,
                "'{n}' cannot be a user or database name here (1 to 100 characters, no ':', ',' or line breaks)"
            ),
            AuthError::Exists(n) => write!(f, "the user '{n}' exists already"),
            AuthError::NoSuchUser(n) => write!(f, "no user '{n}'"),
            AuthError::BadRole(r) => write!(f, "'{r}' is not a role (admin, read-write or read-only)"),
            AuthError::Hash(e) => write!(f, "cannot hash the password: {e}"),
        }
    }
}

impl std::error::Error for AuthError {}

#[derive(Debug, Clone)]
struct Entry {
    user: User,
    hash: String,
}

/// A user from its databases as specified (`None`: every database).
fn user_of(name: &str, role: Role, specs: Option<&[(String, Option<Role>)]>) -> User {
    User {
        name: name.to_string(),
        role,
        databases: specs.map(|s| s.iter().map(|(d, _)| d.clone()).collect()),
        roles: specs
            .unwrap_or_default()
            .iter()
            .filter_map(|(d, r)| r.map(|r| (d.clone(), r)))
            .collect(),
    }
}

/// A user's databases as the file and `--database` write them.
pub fn database_specs(u: &User) -> Option<Vec<String>> {
    u.databases.as_ref().map(|dbs| {
        dbs.iter()
            .map(|d| match u.roles.iter().find(|(x, _)| x == d) {
                Some((_, r)) => format!("{d}={}", r.name()),
                None => d.clone(),
            })
            .collect()
    })
}

/// The users of one database.
#[derive(Debug, Clone)]
pub struct Users {
    path: PathBuf,
    entries: Vec<Entry>,
    /// When the file was last read or written (to notice others' changes).
    seen: Option<SystemTime>,
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn check_name(n: &str) -> Result<(), AuthError> {
    if n.is_empty() || n.chars().count() > 100 || n.contains([':', ',', '\n', '\r']) {
        return Err(AuthError::BadName(n.to_string()));
    }
    Ok(())
}

impl Users {
    /// Reads `folder/users`; none yet is an empty list.
    pub fn load(folder: &Path) -> Result<Users, AuthError> {
        let path = folder.join(USERS_FILE);
        let seen = modified(&path);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(error) => return Err(AuthError::Io { path, error }),
        };
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = || AuthError::Malformed {
                path: path.clone(),
                line: i + 1,
            };
            let mut parts = line.splitn(4, ':');
            let (Some(name), Some(role), Some(dbs), Some(hash)) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Err(bad());
            };
            let role = Role::parse(role).ok_or_else(bad)?;
            let specs = if dbs == "*" {
                None
            } else {
                let parsed: Result<Vec<_>, _> = dbs.split(',').map(parse_database).collect();
                Some(parsed.map_err(|_| bad())?)
            };
            entries.push(Entry {
                user: user_of(name, role, specs.as_deref()),
                hash: hash.to_string(),
            });
        }
        Ok(Users {
            path,
            entries,
            seen,
        })
    }

    /// Re-reads the file when someone else changed it.
    fn refresh(&mut self) -> Result<(), AuthError> {
        if modified(&self.path) != self.seen {
            let folder = self.path.parent().unwrap_or_else(|| Path::new("."));
            *self = Users::load(folder)?;
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn list(&self) -> Vec<User> {
        self.entries.iter().map(|e| e.user.clone()).collect()
    }

    /// Adds a user (or, with `replace`, sets an existing one's password,
    /// role and databases). `databases` (`sales` or `sales=read-only`)
    /// empty: every database.
    pub fn add(
        &mut self,
        name: &str,
        password: &str,
        role: Role,
        databases: &[String],
        replace: bool,
    ) -> Result<(), AuthError> {
        check_name(name)?;
        let specs: Vec<_> = databases
            .iter()
            .map(|d| parse_database(d))
            .collect::<Result<_, _>>()?;
        self.refresh()?;
        let salt = SaltString::generate(&mut OsRng);
        let hash = Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map_err(|e| AuthError::Hash(e.to_string()))?
            .to_string();
        let entry = Entry {
            user: user_of(name, role, (!specs.is_empty()).then_some(specs.as_slice())),
            hash,
        };
        match self.entries.iter_mut().find(|e| e.user.name == name) {
            Some(_) if !replace => return Err(AuthError::Exists(name.to_string())),
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
        self.save()
    }

    /// Gives a user another role.
    pub fn set_role(&mut self, name: &str, role: Role) -> Result<(), AuthError> {
        self.refresh()?;
        let e = self
            .entries
            .iter_mut()
            .find(|e| e.user.name == name)
            .ok_or_else(|| AuthError::NoSuchUser(name.to_string()))?;
        e.user.role = role;
        self.save()
    }

    pub fn remove(&mut self, name: &str) -> Result<(), AuthError> {
        self.refresh()?;
        let before = self.entries.len();
        self.entries.retain(|e| e.user.name != name);
        if self.entries.len() == before {
            return Err(AuthError::NoSuchUser(name.to_string()));
        }
        self.save()
    }

    fn save(&mut self) -> Result<(), AuthError> {
        let io = |error| AuthError::Io {
            path: self.path.clone(),
            error,
        };
        let tmp = self.path.with_extension("tmp");
        let mut text = String::new();
        for e in &self.entries {
            let dbs = database_specs(&e.user).map_or_else(|| "*".to_string(), |d| d.join(","));
            text.push_str(&format!(
                "{}:{}:{dbs}:{}\n",
                e.user.name,
                e.user.role.name(),
                e.hash
            ));
        }
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)?;
        if let Some(dir) = self.path.parent() {
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(io)?;
        }
        self.seen = modified(&self.path);
        Ok(())
    }

    /// The user, when the password is theirs.
    pub fn verify(&mut self, name: &str, password: &str) -> Option<User> {
        // A damaged file after a change keeps the users known before it.
        let _ = self.refresh();
        let e = self.entries.iter().find(|e| e.user.name == name)?;
        let parsed = PasswordHash::new(&e.hash).ok()?;
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .ok()?;
        Some(e.user.clone())
    }
}

/// How a server authenticates.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Everyone is let in, with every right (loopback only; see `Config`).
    None,
    Users(Arc<Mutex<Users>>),
}

impl Auth {
    pub fn users(users: Users) -> Auth {
        Auth::Users(Arc::new(Mutex::new(users)))
    }

    /// Checks a HELLO (5.0) or LOGON auth token.
    pub fn check(&self, token: &Pack) -> Result<User, Failure> {
        let denied = || {
            Failure::new(
                status::UNAUTHORIZED,
                "The client is unauthorized due to authentication failure.",
            )
        };
        match self {
            Auth::None => Ok(User::anyone()),
            Auth::Users(users) => {
                if token.get("scheme").and_then(Pack::as_str) != Some("basic") {
                    return Err(denied());
                }
                let name = token
                    .get("principal")
                    .and_then(Pack::as_str)
                    .unwrap_or_default();
                let password = token
                    .get("credentials")
                    .and_then(Pack::as_str)
                    .unwrap_or_default();
                let mut users = users.lock().unwrap_or_else(|p| p.into_inner());
                users.verify(name, password).ok_or_else(denied)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_stored_hashed_and_verified() {
        let dir = tempfile::tempdir().unwrap();
        let mut users = Users::load(dir.path()).unwrap();
        assert!(users.is_empty());
        users.add("ann", "s3cret", Role::Admin, &[], false).unwrap();
        users
            .add("bob", "pw", Role::ReadOnly, &["sales".into()], false)
            .unwrap();
        assert!(matches!(
            users.add("ann", "x", Role::Admin, &[], false),
            Err(AuthError::Exists(_))
        ));
        assert!(matches!(
            users.add("a:b", "x", Role::Admin, &[], false),
            Err(AuthError::BadName(_))
        ));
        let text = std::fs::read_to_string(dir.path().join(USERS_FILE)).unwrap();
        assert!(
            !text.contains("s3cret") && text.contains("$argon2id$"),
            "{text}"
        );
        let mut again = Users::load(dir.path()).unwrap();
        assert_eq!(
            again.verify("ann", "s3cret").map(|u| u.role),
            Some(Role::Admin)
        );
        assert_eq!(again.verify("ann", "wrong"), None);
        assert_eq!(again.verify("nobody", "s3cret"), None);
        let bob = again.verify("bob", "pw").unwrap();
        assert!(bob.may_use("sales") && !bob.may_use("hr"));
        again
            .add(
                "cy",
                "pw",
                Role::ReadOnly,
                &["sales=read-write".into(), "hr".into()],
                false,
            )
            .unwrap();
        let cy = Users::load(dir.path()).unwrap().verify("cy", "pw").unwrap();
        assert_eq!(
            (cy.role_on("sales"), cy.role_on("hr")),
            (Role::ReadWrite, Role::ReadOnly)
        );
        assert!(!cy.may_use("other"));
        assert!(matches!(
            again.add("dee", "pw", Role::ReadOnly, &["x=wizard".into()], false),
            Err(AuthError::BadRole(_))
        ));
        let auth = Auth::users(again);
        let token = |p: &str| {
            Pack::map([
                ("scheme", Pack::string("basic")),
                ("principal", Pack::string("bob")),
                ("credentials", Pack::string(p)),
            ])
        };
        assert_eq!(auth.check(&token("pw")).unwrap().role, Role::ReadOnly);
        assert_eq!(
            auth.check(&token("nope")).unwrap_err().code,
            status::UNAUTHORIZED
        );
        assert!(auth
            .check(&Pack::map([("scheme", Pack::string("none"))]))
            .is_err());
    }

    #[test]
    fn changes_by_another_process_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let mut server_view = Users::load(dir.path()).unwrap();
        let mut cli = Users::load(dir.path()).unwrap();
        // File times can be coarse: make sure the change is visible.
        std::thread::sleep(std::time::Duration::from_millis(20));
        cli.add("late", "pw", Role::ReadWrite, &[], false).unwrap();
        assert!(server_view.verify("late", "pw").is_some());
        cli.remove("late").unwrap();
        assert!(server_view.verify("late", "pw").is_none());
    }

    #[test]
    fn a_damaged_users_file_is_named_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(USERS_FILE), "ann:admin:*:$x\nbroken\n").unwrap();
        let e = Users::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }
}
