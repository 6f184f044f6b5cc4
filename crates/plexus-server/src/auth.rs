//! Who may connect. Users live beside the database in a `users` file: one
//! line per user, `name:role:argon2-PHC-hash`, replaced atomically (written
//! to a temporary file, synced, renamed) so a crash never leaves half a
//! file. Passwords are hashed with Argon2id; the file never holds one.

use crate::packstream::Pack;
use crate::status::{self, Failure};
use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file name, inside the database's folder.
pub const USERS_FILE: &str = "users";

/// What a user may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Read and write every database, and manage databases.
    Admin,
    /// Read and write every database.
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

    pub fn parse(s: &str) -> Option<Role> {
        [Role::Admin, Role::ReadWrite, Role::ReadOnly]
            .into_iter()
            .find(|r| r.name() == s)
    }

    pub fn can_write(self) -> bool {
        self != Role::ReadOnly
    }
}

/// A user who has logged on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub role: Role,
}

#[derive(Debug)]
pub enum AuthError {
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A line of the users file that is not `name:role:hash`.
    Malformed {
        path: PathBuf,
        line: usize,
    },
    /// A user name that cannot be stored (empty, or with `:` or a newline).
    BadName(String),
    Exists(String),
    NoSuchUser(String),
    Hash(String),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            AuthError::Malformed { path, line } => {
                write!(
                    f,
                    "{} line {line}: not a user entry (name:role:hash)",
                    path.display()
                )
            }
            AuthError::BadName(n) => write!(
                f,
                "'{n}' cannot be a user name (1 to 100 characters, no ':' or line breaks)"
            ),
            AuthError::Exists(n) => write!(f, "the user '{n}' exists already"),
            AuthError::NoSuchUser(n) => write!(f, "no user '{n}'"),
            AuthError::Hash(e) => write!(f, "cannot hash the password: {e}"),
        }
    }
}

impl std::error::Error for AuthError {}

/// The users of one database.
#[derive(Debug, Clone)]
pub struct Users {
    path: PathBuf,
    entries: Vec<(String, Role, String)>,
}

impl Users {
    /// Reads `folder/users`; none yet is an empty list.
    pub fn load(folder: &Path) -> Result<Users, AuthError> {
        let path = folder.join(USERS_FILE);
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
            let mut parts = line.splitn(3, ':');
            let (Some(name), Some(role), Some(hash)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(AuthError::Malformed { path, line: i + 1 });
            };
            let Some(role) = Role::parse(role) else {
                return Err(AuthError::Malformed { path, line: i + 1 });
            };
            entries.push((name.to_string(), role, hash.to_string()));
        }
        Ok(Users { path, entries })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn list(&self) -> Vec<(String, Role)> {
        self.entries
            .iter()
            .map(|(n, r, _)| (n.clone(), *r))
            .collect()
    }

    /// Adds a user (or, with `replace`, sets an existing one's password and role).
    pub fn add(
        &mut self,
        name: &str,
        password: &str,
        role: Role,
        replace: bool,
    ) -> Result<(), AuthError> {
        if name.is_empty() || name.chars().count() > 100 || name.contains([':', '\n', '\r']) {
            return Err(AuthError::BadName(name.to_string()));
        }
        let salt = SaltString::generate(&mut OsRng);
        let hash = Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map_err(|e| AuthError::Hash(e.to_string()))?
            .to_string();
        match self.entries.iter_mut().find(|(n, _, _)| n == name) {
            Some(_) if !replace => return Err(AuthError::Exists(name.to_string())),
            Some(entry) => *entry = (name.to_string(), role, hash),
            None => self.entries.push((name.to_string(), role, hash)),
        }
        self.save()
    }

    pub fn remove(&mut self, name: &str) -> Result<(), AuthError> {
        let before = self.entries.len();
        self.entries.retain(|(n, _, _)| n != name);
        if self.entries.len() == before {
            return Err(AuthError::NoSuchUser(name.to_string()));
        }
        self.save()
    }

    fn save(&self) -> Result<(), AuthError> {
        let io = |error| AuthError::Io {
            path: self.path.clone(),
            error,
        };
        let tmp = self.path.with_extension("tmp");
        let mut text = String::new();
        for (n, r, h) in &self.entries {
            text.push_str(&format!("{n}:{}:{h}\n", r.name()));
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
        Ok(())
    }

    /// The user, when the password is theirs.
    pub fn verify(&self, name: &str, password: &str) -> Option<User> {
        let (n, role, hash) = self.entries.iter().find(|(n, _, _)| n == name)?;
        let parsed = PasswordHash::new(hash).ok()?;
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .ok()?;
        Some(User {
            name: n.clone(),
            role: *role,
        })
    }
}

/// How a server authenticates.
#[derive(Debug, Clone)]
pub enum Auth {
    /// Everyone is let in, with every right (loopback only; see `Config`).
    None,
    Users(Users),
}

impl Auth {
    /// Checks a HELLO (5.0) or LOGON auth token.
    pub fn check(&self, token: &Pack) -> Result<User, Failure> {
        let denied = || {
            Failure::new(
                status::UNAUTHORIZED,
                "The client is unauthorized due to authentication failure.",
            )
        };
        match self {
            Auth::None => Ok(User {
                name: String::new(),
                role: Role::Admin,
            }),
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
        users.add("ann", "s3cret", Role::Admin, false).unwrap();
        users.add("bob", "pw", Role::ReadOnly, false).unwrap();
        assert!(matches!(
            users.add("ann", "x", Role::Admin, false),
            Err(AuthError::Exists(_))
        ));
        assert!(matches!(
            users.add("a:b", "x", Role::Admin, false),
            Err(AuthError::BadName(_))
        ));
        let text = std::fs::read_to_string(dir.path().join(USERS_FILE)).unwrap();
        assert!(
            !text.contains("s3cret") && text.contains("$argon2id$"),
            "{text}"
        );
        let again = Users::load(dir.path()).unwrap();
        assert_eq!(
            again.verify("ann", "s3cret").map(|u| u.role),
            Some(Role::Admin)
        );
        assert_eq!(again.verify("ann", "wrong"), None);
        assert_eq!(again.verify("nobody", "s3cret"), None);
        let auth = Auth::Users(again);
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
    fn a_damaged_users_file_is_named_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(USERS_FILE), "ann:admin:$x\nbroken\n").unwrap();
        let e = Users::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }
}
