use std::fmt;

/// Who is to blame for an error, shared by every crate's own error enum so
/// that callers (CLI exit codes, the server, bindings) can react uniformly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The caller's input is wrong: a missing node, a bad value, a violated constraint.
    BadInput,
    /// A concurrent transaction committed a conflicting change first; retrying may succeed.
    Conflict,
    /// The request is valid but Plexus does not do it (yet).
    Unsupported,
    /// The operating system failed us: disk, permissions, file locks.
    Io,
    /// Stored data is not what Plexus wrote: a format mismatch or damage.
    Corruption,
    /// A limit was reached: map size, key length, memory.
    ResourceLimit,
    /// A bug in Plexus.
    Internal,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorKind::BadInput => "bad input",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Io => "I/O error",
            ErrorKind::Corruption => "corruption",
            ErrorKind::ResourceLimit => "resource limit",
            ErrorKind::Internal => "internal error",
        })
    }
}
