//! `plexus serve` and `plexus user`: the Bolt server and its users.

use crate::commands::CliResult;
use crate::output::Out;
use crate::{AuthArg, Cli, UserCmd};
use plexus::Database;
use plexus_server::{Auth, Config, Role, Users};
use serde_json::json;
use std::io::BufRead;
use std::net::SocketAddr;

pub struct ServeArgs<'a> {
    pub listen: &'a str,
    pub advertised: Option<&'a String>,
    pub auth: AuthArg,
    pub max_connections: usize,
    /// The certificate and key files for TLS.
    pub tls: Option<(&'a std::path::Path, &'a std::path::Path)>,
}

pub fn serve(db: Database, cli: &Cli, args: ServeArgs<'_>) -> CliResult {
    let listen: SocketAddr = args.listen.parse().map_err(|_| {
        format!(
            "'{}' is not an address to listen on (say 127.0.0.1:7687)",
            args.listen
        )
    })?;
    let auth = match args.auth {
        AuthArg::None => Auth::None,
        AuthArg::Users => {
            let users = Users::load(&cli.db)?;
            if users.is_empty() {
                return Err(format!(
                    "the database at {} has no users: add one with `plexus user add NAME`, \
                     or serve without authentication on loopback with `--auth none`",
                    cli.db.display()
                )
                .into());
            }
            Auth::users(users)
        }
    };
    let mut config = Config::new(listen);
    config.auth = auth;
    config.advertised = args.advertised.cloned();
    config.default_graph = cli.graph.clone();
    config.max_connections = args.max_connections;
    if let Some((cert, key)) = args.tls {
        config.tls = Some(plexus_server::Tls(plexus_server::tls::acceptor(cert, key)?));
    }
    let scheme = if config.tls.is_some() {
        "bolt+s"
    } else {
        "bolt"
    };
    plexus_server::serve_blocking(db, config, true, |addr, _| {
        eprintln!("plexus: serving {scheme}://{addr} (Ctrl-C stops)");
    })
    .map_err(|e| e.to_string())?;
    eprintln!("plexus: stopped");
    Ok(())
}

/// The password: the first line of standard input (so it is in no shell
/// history and no process list).
fn read_password() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the password from standard input: {e}"))?;
    let pw = line.trim_end_matches(['\n', '\r']).to_string();
    if pw.is_empty() {
        return Err("an empty password: give it on standard input".into());
    }
    Ok(pw)
}

pub fn user(cli: &Cli, cmd: &UserCmd, out: &Out) -> CliResult {
    // The users file sits in the database's folder: make sure it is one.
    drop(Database::open(&cli.db, plexus::Options::default())?);
    let mut users = Users::load(&cli.db)?;
    match cmd {
        UserCmd::Add {
            name,
            role,
            databases,
            replace,
        } => {
            let role = Role::parse(role).ok_or_else(|| {
                format!("'{role}' is not a role (admin, read-write or read-only)")
            })?;
            users.add(name, &read_password()?, role, databases, *replace)?;
            let on = if databases.is_empty() {
                "every database".to_string()
            } else {
                databases.join(", ")
            };
            out.done(
                json!({"user": name, "role": role.name(), "databases": databases}),
                &format!("user '{name}' ({} on {on})", role.name()),
            );
        }
        UserCmd::Remove { name } => {
            users.remove(name)?;
            out.done(json!({"removed": name}), &format!("removed user '{name}'"));
        }
        UserCmd::List => {
            for u in users.list() {
                let dbs = u
                    .databases
                    .as_ref()
                    .map_or_else(|| "*".to_string(), |d| d.join(","));
                if out.json {
                    say!(
                        "{}",
                        json!({"user": u.name, "role": u.role.name(), "databases": u.databases})
                    );
                } else {
                    say!("{}\t{}\t{dbs}", u.name, u.role.name());
                }
            }
        }
    }
    Ok(())
}
