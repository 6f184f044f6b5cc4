//! Procedures a caller registers for `CALL name(args) YIELD ...`: a
//! signature (typed inputs, named outputs) and a function from argument
//! values to output records. Calls are checked against the signature before
//! any row is produced.

use crate::error::QueryError;
use plexus_common::Value;
use plexus_cypher::{Clause, Expr, ExprKind, Query};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The type a procedure input accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    Integer,
    /// A float; integers are accepted and converted.
    Float,
    /// An integer or a float.
    Number,
    String,
    Boolean,
    Any,
}

impl ArgType {
    /// Parses `INTEGER?`, `FLOAT`, `NUMBER?`, `STRING?`, `BOOLEAN`, `ANY?`.
    pub fn parse(s: &str) -> Option<ArgType> {
        Some(
            match s.trim().trim_end_matches('?').to_ascii_uppercase().as_str() {
                "INTEGER" | "INT" => ArgType::Integer,
                "FLOAT" => ArgType::Float,
                "NUMBER" => ArgType::Number,
                "STRING" => ArgType::String,
                "BOOLEAN" | "BOOL" => ArgType::Boolean,
                "ANY" => ArgType::Any,
                _ => return None,
            },
        )
    }

    /// The type's name, as a signature writes it ([`ArgType::parse`] reads
    /// it back).
    pub fn name(self) -> &'static str {
        match self {
            ArgType::Integer => "INTEGER",
            ArgType::Float => "FLOAT",
            ArgType::Number => "NUMBER",
            ArgType::String => "STRING",
            ArgType::Boolean => "BOOLEAN",
            ArgType::Any => "ANY",
        }
    }

    /// The value as this type accepts it, or `None` when it does not.
    fn accept(self, v: Value) -> Option<Value> {
        match (self, v) {
            (_, v @ Value::Null)
            | (ArgType::Any, v)
            | (ArgType::Integer, v @ Value::Int(_))
            | (ArgType::Float | ArgType::Number, v @ Value::Float(_))
            | (ArgType::Number, v @ Value::Int(_))
            | (ArgType::String, v @ Value::String(_))
            | (ArgType::Boolean, v @ Value::Bool(_)) => Some(v),
            (ArgType::Float, Value::Int(i)) => Some(Value::Float(i as f64)),
            _ => None,
        }
    }
}

/// What a procedure takes and gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The dotted name, e.g. `test.my.proc`; matched case-insensitively.
    pub name: String,
    pub inputs: Vec<(String, ArgType)>,
    pub outputs: Vec<String>,
}

/// A procedure body: argument values (checked against the signature) to
/// output records, each with one value per output.
pub type ProcedureFn = dyn Fn(&[Value]) -> Result<Vec<Vec<Value>>, QueryError> + Send + Sync;

/// The procedures a query may call, besides the built-in `db.*` ones.
#[derive(Clone, Default)]
pub struct Procedures {
    by_name: BTreeMap<String, (Signature, Arc<ProcedureFn>)>,
}

impl Procedures {
    pub fn new() -> Procedures {
        Procedures::default()
    }

    /// Registers (or replaces) a procedure.
    pub fn register(&mut self, sig: Signature, body: Arc<ProcedureFn>) {
        self.by_name
            .insert(sig.name.to_ascii_lowercase(), (sig, body));
    }

    pub(crate) fn get(&self, name: &str) -> Option<&(Signature, Arc<ProcedureFn>)> {
        self.by_name.get(&name.to_ascii_lowercase())
    }
}

fn literal_type_mismatch(t: ArgType, e: &Expr) -> bool {
    let v = match &e.kind {
        ExprKind::Int(i) => Value::Int(*i),
        ExprKind::Float(f) => Value::Float(*f),
        ExprKind::String(s) => Value::String(s.clone()),
        ExprKind::Bool(b) => Value::Bool(*b),
        _ => return false,
    };
    t.accept(v).is_none()
}

/// Checks every CALL of a registered procedure before the query runs:
/// the procedure exists, the argument count and literal argument types fit,
/// and arguments are passed implicitly (from parameters) only by a query
/// that is nothing but the call.
pub fn check(q: &Query, procs: &Procedures) -> Result<(), QueryError> {
    for part in q.parts() {
        let standalone = part.clauses.len() == 1;
        for c in &part.clauses {
            if let Clause::Call {
                procedure, args, ..
            } = c
            {
                // Blamed on the CALL: the check runs before any clause.
                check_call(procedure, args.as_deref(), standalone, procs)
                    .map_err(|e| e.at(c.span().start))?;
            }
        }
    }
    Ok(())
}

/// [`check`] of one `CALL procedure(args)`.
fn check_call(
    procedure: &str,
    args: Option<&[Expr]>,
    standalone: bool,
    procs: &Procedures,
) -> Result<(), QueryError> {
    if procs.get(procedure).is_none() {
        if let Some(b) = crate::builtin::get(procedure) {
            return check_builtin_arity(b, procedure, args);
        }
    }
    let Some((sig, _)) = procs.get(procedure) else {
        return Err(QueryError::Procedure {
            code: "ProcedureNotFound",
            message: format!("there is no procedure {procedure}()"),
        });
    };
    match args {
        None if !standalone && !sig.inputs.is_empty() => Err(QueryError::Compile {
            code: "InvalidArgumentPassingMode",
            message: format!(
                "{procedure} takes arguments; implicit arguments work only in a standalone CALL"
            ),
        }),
        None => Ok(()),
        Some(a) if a.len() != sig.inputs.len() => Err(QueryError::Compile {
            code: "InvalidNumberOfArguments",
            message: format!(
                "{procedure} takes {} argument(s), not {}",
                sig.inputs.len(),
                a.len()
            ),
        }),
        Some(a) => {
            for ((name, t), e) in sig.inputs.iter().zip(a) {
                if literal_type_mismatch(*t, e) {
                    return Err(QueryError::Compile {
                        code: "InvalidArgumentType",
                        message: format!("argument `{name}` of {procedure} is a {t:?}"),
                    });
                }
            }
            Ok(())
        }
    }
}

/// A built-in procedure takes its required arguments and at most its
/// optional ones.
fn check_builtin_arity(
    b: &crate::builtin::Builtin,
    procedure: &str,
    args: Option<&[Expr]>,
) -> Result<(), QueryError> {
    let Some(a) = args else { return Ok(()) };
    if a.len() < b.required || a.len() > b.inputs.len() {
        let takes = if b.required == b.inputs.len() {
            b.required.to_string()
        } else {
            format!("{} to {}", b.required, b.inputs.len())
        };
        return Err(QueryError::Compile {
            code: "InvalidNumberOfArguments",
            message: format!("{procedure} takes {takes} argument(s), not {}", a.len()),
        });
    }
    Ok(())
}

/// Calls a registered procedure with evaluated arguments.
pub(crate) fn call(
    sig: &Signature,
    body: &ProcedureFn,
    args: Vec<Value>,
) -> Result<Vec<Vec<Value>>, QueryError> {
    let mut checked = Vec::with_capacity(args.len());
    for ((name, t), v) in sig.inputs.iter().zip(args) {
        let vt = v.value_type();
        checked.push(t.accept(v).ok_or_else(|| {
            QueryError::type_error(format!(
                "argument `{name}` of {} is a {t:?}, not {vt}",
                sig.name
            ))
        })?);
    }
    body(&checked)
}
