//! Expression evaluation with openCypher's semantics: nulls propagate,
//! comparisons are three-valued, integers and floats stay distinct but
//! compare numerically, integer overflow is an error.

use crate::error::QueryError;
use crate::limits::Guard;
use plexus_common::Value;
use plexus_cypher::{BinOp, Expr, ExprKind, Quantifier, UnOp};
use plexus_storage::{GraphRead, NodeId};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;

pub use crate::row::Row;

/// What evaluation may read besides the row.
pub struct Ctx<'a> {
    pub params: &'a BTreeMap<String, Value>,
    /// The graph, for property reads, label checks and patterns; `None`
    /// for queries that run without one.
    pub graph: Option<&'a dyn GraphRead>,
    /// The aggregates' results of a group, by the address of their call
    /// (Fx: looked up at every evaluation inside an aggregating projection).
    pub aggregates: Option<&'a rustc_hash::FxHashMap<usize, Value>>,
    /// The query's limits: every loop over rows, matches or elements checks it.
    pub guard: &'a Guard,
    /// One-hop pattern predicates' neighbour sets (`pattern/adjacent.rs`),
    /// in a query that only reads.
    pub(crate) adjacent: Option<&'a std::cell::RefCell<crate::pattern::adjacent::Adjacent>>,
    /// Under PROFILE: where each pattern's walks started (`pattern/start.rs`).
    pub(crate) starts: Option<&'a std::cell::RefCell<crate::pattern::start::Taken>>,
    /// The parameters by name for a whole run ([`ParamIndex`]); without
    /// one they are searched in `params`.
    pub(crate) by_name: Option<&'a dyn ParamLookup>,
}

/// A query run's parameters by name. A parameter is read at every row
/// that compares with it, and the map's search compares the bytes of every
/// name it passes: with the ~40 parameters LDBC's driver gives every read,
/// 400 instructions a read, 6% of IC4 (a binary search by length and name
/// still took 250). So a run that reads parameters often, among more than
/// fit one leaf of the map's tree, puts them in a hash table first; one
/// that reads a few (IS1 reads one) does not pay for the table.
pub(crate) struct ParamIndex<'p> {
    params: &'p BTreeMap<String, Value>,
    reads: std::cell::Cell<u32>,
    table: std::cell::OnceCell<rustc_hash::FxHashMap<&'p str, &'p Value>>,
}

/// Reads from the map before the table is built.
const PARAM_READS_BEFORE_TABLE: u32 = 64;

impl<'p> ParamIndex<'p> {
    pub(crate) fn new(params: &'p BTreeMap<String, Value>) -> ParamIndex<'p> {
        ParamIndex {
            params,
            reads: std::cell::Cell::new(0),
            table: std::cell::OnceCell::new(),
        }
    }
}

/// What [`Ctx`] finds parameters through: a [`ParamIndex`], whose
/// lifetime a `Ctx` borrowing it for less need not name.
pub(crate) trait ParamLookup {
    fn param(&self, name: &str) -> Option<&Value>;
}

impl ParamLookup for ParamIndex<'_> {
    fn param(&self, name: &str) -> Option<&Value> {
        if let Some(table) = self.table.get() {
            return table.get(name).copied();
        }
        if self.params.len() > 8 {
            let reads = self.reads.get().saturating_add(1);
            self.reads.set(reads);
            if reads > PARAM_READS_BEFORE_TABLE {
                let table = self
                    .table
                    .get_or_init(|| self.params.iter().map(|(k, v)| (k.as_str(), v)).collect());
                return table.get(name).copied();
            }
        }
        self.params.get(name)
    }
}

impl<'a> Ctx<'a> {
    /// Evaluation of what reads no graph (parameters, options, constants),
    /// outside aggregation.
    pub(crate) fn without_graph(params: &'a BTreeMap<String, Value>, guard: &'a Guard) -> Ctx<'a> {
        Ctx {
            params,
            graph: None,
            aggregates: None,
            guard,
            adjacent: None,
            starts: None,
            by_name: None,
        }
    }

    /// Evaluation over a graph, outside aggregation.
    pub fn with_graph(
        params: &'a BTreeMap<String, Value>,
        g: &'a dyn GraphRead,
        guard: &'a Guard,
    ) -> Ctx<'a> {
        Ctx {
            params,
            graph: Some(g),
            aggregates: None,
            guard,
            adjacent: None,
            starts: None,
            by_name: None,
        }
    }
}

type R = Result<Value, QueryError>;

/// Whether a call is an aggregate (by name, case-insensitively).
pub fn is_aggregate(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::CountStar => true,
        ExprKind::Call { name, .. } => crate::functions::aggregating(name),
        _ => false,
    }
}

/// Calls `f` on every aggregate call in `e` (not inside nested scopes' own aggregates).
pub fn visit_aggregates<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e Expr)) {
    if is_aggregate(e) {
        f(e);
        return;
    }
    let mut go = |x: &'e Expr| visit_aggregates(x, f);
    match &e.kind {
        ExprKind::List(items) => items.iter().for_each(go),
        ExprKind::Map(entries) => entries.iter().for_each(|(_, v)| go(v)),
        ExprKind::Property(b, _) => go(b),
        ExprKind::Index(a, b) => {
            go(a);
            go(b)
        }
        ExprKind::Slice(a, b, c) => {
            go(a);
            b.iter().for_each(|x| go(x));
            c.iter().for_each(|x| go(x));
        }
        ExprKind::Unary(_, x) | ExprKind::IsNull(x, _) => go(x),
        ExprKind::Binary(_, a, b) => {
            go(a);
            go(b)
        }
        ExprKind::Case {
            operand,
            whens,
            else_,
        } => {
            operand.iter().for_each(|x| go(x));
            whens.iter().for_each(|(a, b)| {
                go(a);
                go(b)
            });
            else_.iter().for_each(|x| go(x));
        }
        ExprKind::Call { args, .. } => args.iter().for_each(go),
        // The list a comprehension, quantifier or reduce walks is computed
        // once, in the projection's scope (`[x IN collect(r) WHERE …]`);
        // what it does per element is not.
        ExprKind::ListComprehension { list, .. } | ExprKind::Quantified { list, .. } => go(list),
        ExprKind::Reduce { init, list, .. } => {
            go(init);
            go(list)
        }
        _ => {}
    }
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// Compares two numbers exactly: integers as integers at any size, and an
/// integer with a float without rounding the integer to a float first
/// (2^53 + 1 is greater than 2^53 as a float). `None` with a NaN.
fn num_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Int(i), Value::Float(f)) => int_float_cmp(*i, *f),
        (Value::Float(f), Value::Int(i)) => int_float_cmp(*i, *f).map(Ordering::reverse),
        _ => None,
    }
}

fn nan_against_number(a: &Value, b: &Value) -> bool {
    let nan = |v: &Value| matches!(v, Value::Float(f) if f.is_nan());
    num(a).is_some() && num(b).is_some() && (nan(a) || nan(b))
}

fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Every i64 lies in (-2^63 - 1, 2^63]; beyond that the float decides.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f >= TWO_63 {
        return Some(Ordering::Less);
    }
    if f < -TWO_63 {
        return Some(Ordering::Greater);
    }
    // Here f's integer part fits in i128 exactly; compare integer parts,
    // then the fraction.
    let whole = f.trunc();
    let fi = whole as i128;
    match i128::from(i).cmp(&fi) {
        Ordering::Equal => 0.0f64.partial_cmp(&(f - whole)),
        o => Some(o),
    }
}

/// Cypher equality over paired elements: false as soon as one pair differs,
/// null when none differs but some pair is unknown, else true.
fn all_equal<'a>(pairs: impl Iterator<Item = (&'a Value, &'a Value)>) -> Option<bool> {
    let mut unknown = false;
    for (p, q) in pairs {
        match equals(p, q) {
            Some(false) => return Some(false),
            None => unknown = true,
            Some(true) => {}
        }
    }
    if unknown {
        None
    } else {
        Some(true)
    }
}

/// `=` with nulls: `None` is null.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Int(x), Value::Int(y)) => Some(x == y),
        // The commonest comparisons first, without asking each side its
        // type (a string's equality was most of a `b.id <> $id` check).
        (Value::String(x), Value::String(y)) => Some(x == y),
        (Value::Bool(x), Value::Bool(y)) => Some(x == y),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => match (a, b) {
            (Value::Int(i), Value::Float(f)) | (Value::Float(f), Value::Int(i)) => {
                Some(*f == *i as f64 && f.fract() == 0.0 && (*f as i64) == *i)
            }
            _ => Some(num(a) == num(b)),
        },
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            all_equal(x.iter().zip(y))
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() || x.keys().ne(y.keys()) {
                return Some(false);
            }
            all_equal(x.values().zip(y.values()))
        }
        _ if a.value_type() != b.value_type() => Some(false),
        _ => Some(a == b),
    }
}

/// `<` and friends: `None` when the values are not comparable (null result).
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => num_cmp(a, b),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y) {
                match compare(p, q)? {
                    Ordering::Equal => {}
                    o => return Some(o),
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        (Value::Date(x), Value::Date(y)) => Some(x.cmp(y)),
        (Value::LocalTime(x), Value::LocalTime(y)) => Some(x.cmp(y)),
        (Value::LocalDateTime(x), Value::LocalDateTime(y)) => Some(x.cmp(y)),
        _ => crate::temporal::compare(a, b),
    }
}

fn type_rank(v: &Value) -> u8 {
    match v {
        Value::Map(_) => 0,
        Value::Node(_) => 1,
        Value::Relationship(_) => 2,
        Value::List(_) => 3,
        Value::Path(_) => 4,
        Value::String(_) => 5,
        Value::Bool(_) => 6,
        Value::Int(_) | Value::Float(_) => 7,
        Value::Null => 9,
        _ => 8,
    }
}

/// The total order of ORDER BY: by type (maps, lists, strings, booleans,
/// numbers, then null), then by value; NaN after every other number.
pub fn order(a: &Value, b: &Value) -> Ordering {
    let (ra, rb) = (type_rank(a), type_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            let nan = |v: &Value| matches!(v, Value::Float(f) if f.is_nan());
            match (nan(a), nan(b)) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => num_cmp(a, b)
                    .unwrap_or(Ordering::Equal)
                    .then_with(|| matches!(a, Value::Float(_)).cmp(&matches!(b, Value::Float(_)))),
            }
        }
        (Value::Node(x), Value::Node(y)) => x.id.cmp(&y.id),
        (Value::Relationship(x), Value::Relationship(y)) => x.id.cmp(&y.id),
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y) {
                match order(p, q) {
                    Ordering::Equal => {}
                    o => return o,
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Map(x), Value::Map(y)) => {
            let xs: Vec<_> = x.iter().collect();
            let ys: Vec<_> = y.iter().collect();
            for ((kx, vx), (ky, vy)) in xs.iter().zip(&ys) {
                match kx.cmp(ky).then_with(|| order(vx, vy)) {
                    Ordering::Equal => {}
                    o => return o,
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

fn truth(v: &Value) -> Result<Option<bool>, QueryError> {
    match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::Null => Ok(None),
        other => Err(QueryError::type_error(format!(
            "expected a boolean, got {}",
            other.value_type()
        ))),
    }
}

fn tri(b: Option<bool>) -> Value {
    b.map_or(Value::Null, Value::Bool)
}

fn int_op(a: i64, b: i64, op: BinOp) -> R {
    let r = match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mul => a.checked_mul(b),
        BinOp::Div if b == 0 => return Err(QueryError::Arithmetic("division by zero".into())),
        BinOp::Div => a.checked_div(b),
        BinOp::Mod if b == 0 => return Err(QueryError::Arithmetic("modulo by zero".into())),
        BinOp::Mod => a.checked_rem(b),
        BinOp::Pow => return Ok(Value::Float((a as f64).powf(b as f64))),
        _ => None,
    };
    r.map(Value::Int)
        .ok_or_else(|| QueryError::Arithmetic("integer overflow".into()))
}

fn arith(a: Value, b: Value, op: BinOp) -> R {
    if let Some(r) = crate::temporal::arith(op, &a, &b) {
        return r;
    }
    Ok(match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (Value::Int(x), Value::Int(y)) => return int_op(x, y, op),
        (x @ (Value::Int(_) | Value::Float(_)), y @ (Value::Int(_) | Value::Float(_))) => {
            let (x, y) = (num(&x).unwrap_or(0.0), num(&y).unwrap_or(0.0));
            Value::Float(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Mod => x % y,
                _ => x.powf(y),
            })
        }
        (Value::String(x), Value::String(y)) if op == BinOp::Add => Value::String(x + &y),
        (Value::String(x), y @ (Value::Int(_) | Value::Float(_))) if op == BinOp::Add => {
            Value::String(x + &y.to_string())
        }
        (x @ (Value::Int(_) | Value::Float(_)), Value::String(y)) if op == BinOp::Add => {
            Value::String(x.to_string() + &y)
        }
        (Value::List(mut x), Value::List(y)) if op == BinOp::Add => {
            x.extend(y);
            Value::List(x)
        }
        (Value::List(mut x), y) if op == BinOp::Add => {
            x.push(y);
            Value::List(x)
        }
        (x, Value::List(mut y)) if op == BinOp::Add => {
            y.insert(0, x);
            Value::List(y)
        }
        (x, y) => {
            return Err(QueryError::type_error(format!(
                "cannot apply {} to {} and {}",
                op.symbol(),
                x.value_type(),
                y.value_type()
            )))
        }
    })
}

fn list_index(len: usize, i: i64) -> Option<usize> {
    let i = if i < 0 { len as i64 + i } else { i };
    (0..len as i64).contains(&i).then_some(i as usize)
}

fn slice_bound(len: usize, v: Value) -> Result<Option<usize>, QueryError> {
    match v {
        Value::Null => Ok(None),
        Value::Int(i) => {
            let i = if i < 0 {
                (len as i64 + i).max(0)
            } else {
                i.min(len as i64)
            };
            Ok(Some(i as usize))
        }
        other => Err(QueryError::type_error(format!(
            "list slice bounds must be integers, not {}",
            other.value_type()
        ))),
    }
}

/// Evaluates `e` in `row`. An error is blamed on the innermost expression
/// that failed (`QueryError::at` keeps a blame already made inside), so
/// `RETURN a, b + 1` names where `b + 1` starts, not the clause.
pub fn eval(e: &Expr, row: &Row, ctx: &Ctx<'_>) -> R {
    // Only an error pays for the blame: `map_err` on the path `?` takes.
    eval_unblamed(e, row, ctx).map_err(|err| err.at(e.span.start))
}

fn eval_unblamed(e: &Expr, row: &Row, ctx: &Ctx<'_>) -> R {
    // A variable, a parameter or a property of a variable recurses no
    // further: no stack check, and not `eval_here`'s large frame (most of
    // what a row evaluates, and the bulk of its cost in IC4's profile).
    match &e.kind {
        ExprKind::Var(v) => row.get(v).cloned().ok_or_else(|| undefined(v)),
        ExprKind::Param(p) => param(p, ctx).cloned(),
        // Nor does a constant (`THEN 1 ELSE 0`, `x > 0`).
        ExprKind::Null => Ok(Value::Null),
        ExprKind::Bool(b) => Ok(Value::Bool(*b)),
        ExprKind::Int(i) => Ok(Value::Int(*i)),
        ExprKind::Float(f) => Ok(Value::Float(*f)),
        ExprKind::String(s) => Ok(Value::String(s.clone())),
        ExprKind::Property(base, key) if matches!(base.kind, ExprKind::Var(_)) => {
            property(operand(base, row, ctx)?.as_ref(), key, ctx)
        }
        // So does a comparison of a node's property with one of those (a
        // WHERE checked at every step of a walk: `b.id <> $id`), answered
        // on the stored value when it can be, else as `binary` answers it;
        // and any operator between two of those (`x > 0`, `a = b`), which
        // `binary` evaluates without going deeper.
        ExprKind::Binary(op, a, b) => match lent_shape(*op, a, b) {
            Some(shape) => match lent_comparison(*op, shape, row, ctx)? {
                Some(v) => Ok(v),
                None => binary(*op, a, b, row, ctx),
            },
            None if is_leaf(a) && is_leaf(b) => binary(*op, a, b, row, ctx),
            None => crate::deep(|| eval_here(e, row, ctx)),
        },
        _ => crate::deep(|| eval_here(e, row, ctx)),
    }
}

fn param<'a>(p: &str, ctx: &'a Ctx<'_>) -> Result<&'a Value, QueryError> {
    let found = match ctx.by_name {
        Some(index) => index.param(p),
        None => ctx.params.get(p),
    };
    found.ok_or_else(|| QueryError::missing(p))
}

/// Property `key` of a value: a map's entry, a temporal value's component,
/// a node's or relationship's property read from the graph.
fn property(base: &Value, key: &str, ctx: &Ctx<'_>) -> R {
    Ok(match base {
        Value::Null => Value::Null,
        Value::Map(m) => m.get(key).cloned().unwrap_or(Value::Null),
        t @ (Value::Date(_)
        | Value::LocalTime(_)
        | Value::Time(_)
        | Value::LocalDateTime(_)
        | Value::DateTime(_)
        | Value::Duration(_)) => match crate::temporal::component(t, key) {
            Some(v) => v?,
            None => {
                return Err(QueryError::Semantic {
                    code: "InvalidPropertyAccess",
                    message: format!("a {} has no component `{key}`", t.value_type()),
                })
            }
        },
        entity @ (Value::Node(_) | Value::Relationship(_)) if ctx.graph.is_some() => {
            match ctx
                .graph
                .and_then(|g| crate::graph::property(g, entity, key))
            {
                Some(v) => v?,
                None => Value::Null,
            }
        }
        other => {
            return Err(QueryError::type_error(format!(
                "cannot read property '{key}' of {}",
                other.value_type()
            )))
        }
    })
}

fn eval_here(e: &Expr, row: &Row, ctx: &Ctx<'_>) -> R {
    if let Some(aggs) = ctx.aggregates {
        if let Some(v) = aggs.get(&(e as *const Expr as usize)) {
            return Ok(v.clone());
        }
    }
    let ev = |x: &Expr| eval(x, row, ctx);
    Ok(match &e.kind {
        ExprKind::Null => Value::Null,
        ExprKind::Bool(b) => Value::Bool(*b),
        ExprKind::Int(i) => Value::Int(*i),
        ExprKind::Float(f) => Value::Float(*f),
        ExprKind::String(s) => Value::String(s.clone()),
        ExprKind::Param(p) => param(p, ctx)?.clone(),
        ExprKind::Var(v) => row.get(v).cloned().ok_or_else(|| undefined(v))?,
        ExprKind::List(items) => {
            shallow(Value::List(items.iter().map(ev).collect::<Result<_, _>>()?))?
        }
        ExprKind::Map(entries) => shallow(Value::Map(
            entries
                .iter()
                .map(|(k, v)| Ok((k.clone(), ev(v)?)))
                .collect::<Result<_, QueryError>>()?,
        ))?,
        ExprKind::Property(base, key) => property(operand(base, row, ctx)?.as_ref(), key, ctx)?,
        ExprKind::Index(base, idx) => match (ev(base)?, ev(idx)?) {
            (Value::Null, _) | (_, Value::Null) => Value::Null,
            (Value::List(l), Value::Int(i)) => {
                list_index(l.len(), i).map_or(Value::Null, |i| l[i].clone())
            }
            (Value::Map(m), Value::String(k)) => m.get(&k).cloned().unwrap_or(Value::Null),
            (Value::Map(_), i) => {
                return Err(QueryError::Type {
                    code: "MapElementAccessByNonString",
                    message: format!("a map is indexed by a string, not {}", i.value_type()),
                })
            }
            (entity @ (Value::Node(_) | Value::Relationship(_)), Value::String(k))
                if ctx.graph.is_some() =>
            {
                match ctx
                    .graph
                    .and_then(|g| crate::graph::property(g, &entity, &k))
                {
                    Some(v) => v?,
                    None => Value::Null,
                }
            }
            (b, i) => {
                return Err(QueryError::type_error(format!(
                    "cannot index {} with {}",
                    b.value_type(),
                    i.value_type()
                )))
            }
        },
        ExprKind::Slice(base, from, to) => match ev(base)? {
            Value::Null => Value::Null,
            Value::List(l) => {
                let f = match from {
                    Some(x) => ev(x)?,
                    None => Value::Int(0),
                };
                let t = match to {
                    Some(x) => ev(x)?,
                    None => Value::Int(l.len() as i64),
                };
                if f.is_null() || t.is_null() {
                    return Ok(Value::Null);
                }
                let (f, t) = (
                    slice_bound(l.len(), f)?.unwrap_or(0),
                    slice_bound(l.len(), t)?.unwrap_or(0),
                );
                Value::List(if f < t { l[f..t].to_vec() } else { vec![] })
            }
            other => {
                return Err(QueryError::type_error(format!(
                    "cannot slice {}",
                    other.value_type()
                )))
            }
        },
        ExprKind::Unary(op, x) => match (op, ev(x)?) {
            (_, Value::Null) => Value::Null,
            (UnOp::Not, v) => tri(truth(&v)?.map(|b| !b)),
            (UnOp::Neg, Value::Int(i)) => Value::Int(
                i.checked_neg()
                    .ok_or_else(|| QueryError::Arithmetic("integer overflow".into()))?,
            ),
            (UnOp::Neg, Value::Float(f)) => Value::Float(-f),
            (UnOp::Plus, v @ (Value::Int(_) | Value::Float(_))) => v,
            (_, v) => {
                return Err(QueryError::type_error(format!(
                    "cannot negate {}",
                    v.value_type()
                )))
            }
        },
        ExprKind::Binary(op, a, b) => binary(*op, a, b, row, ctx)?,
        ExprKind::IsNull(x, negated) => Value::Bool(ev(x)?.is_null() != *negated),
        ExprKind::Case {
            operand,
            whens,
            else_,
        } => {
            let subject = operand.as_ref().map(|o| ev(o)).transpose()?;
            for (w, t) in whens {
                let hit = match &subject {
                    Some(s) => equals(s, &ev(w)?) == Some(true),
                    None => truth(&ev(w)?)? == Some(true),
                };
                if hit {
                    return ev(t);
                }
            }
            match else_ {
                Some(x) => ev(x)?,
                None => Value::Null,
            }
        }
        ExprKind::Call {
            name,
            args,
            distinct: _,
        } => {
            if is_aggregate(e) {
                return Err(QueryError::Semantic {
                    code: "InvalidAggregation",
                    message: format!("aggregation {name}() is not allowed here"),
                });
            }
            let vals = args.iter().map(ev).collect::<Result<Vec<_>, _>>()?;
            if name.eq_ignore_ascii_case("range") {
                range_fits(&vals, ctx)?;
            }
            if crate::temporal::reads_statement_clock(name, vals.len()) {
                let lname = name.to_ascii_lowercase();
                return crate::temporal::now_at(&lname, &vals, ctx.guard.started_at());
            }
            if name.eq_ignore_ascii_case("timestamp") && vals.is_empty() {
                // The statement's clock, as `datetime()`'s: one value for
                // the whole query, as Neo4j documents.
                let ms = ctx
                    .guard
                    .started_at()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis());
                return Ok(Value::Int(i64::try_from(ms).unwrap_or(i64::MAX)));
            }
            if name.eq_ignore_ascii_case("exists") && vals.len() == 1 {
                return Ok(Value::Bool(!vals[0].is_null()));
            }
            if let Some(g) = ctx.graph {
                if let Some(v) = crate::graph::call(g, name, &vals)? {
                    return Ok(v);
                }
            }
            crate::eval::call(name, vals)?
        }
        ExprKind::CountStar => {
            return Err(QueryError::Semantic {
                code: "InvalidAggregation",
                message: "count(*) is not allowed here".into(),
            })
        }
        ExprKind::ListComprehension {
            var,
            list,
            filter,
            map,
        } => match ev(list)? {
            Value::Null => Value::Null,
            Value::List(items) => {
                let mut out = Vec::new();
                let mut inner = row.clone();
                for it in items {
                    ctx.guard.check()?;
                    inner.insert(var, it.clone());
                    if let Some(f) = filter {
                        if truth(&eval(f, &inner, ctx)?)? != Some(true) {
                            continue;
                        }
                    }
                    out.push(match map {
                        Some(m) => eval(m, &inner, ctx)?,
                        None => it,
                    });
                }
                shallow(Value::List(out))?
            }
            other => {
                return Err(QueryError::type_error(format!(
                    "expected a list, got {}",
                    other.value_type()
                )))
            }
        },
        ExprKind::Quantified {
            q,
            var,
            list,
            filter,
        } => match ev(list)? {
            Value::Null => Value::Null,
            Value::List(items) => {
                let (mut t, mut n, mut f) = (0usize, 0usize, 0usize);
                let mut inner = row.clone();
                for it in items {
                    ctx.guard.check()?;
                    inner.insert(var, it);
                    let r = match filter {
                        Some(p) => truth(&eval(p, &inner, ctx)?)?,
                        None => Some(true),
                    };
                    match r {
                        Some(true) => t += 1,
                        Some(false) => f += 1,
                        None => n += 1,
                    }
                }
                match q {
                    Quantifier::All => quantify(f, n, false),
                    Quantifier::Any => quantify(t, n, true),
                    Quantifier::None => quantify(t, n, false),
                    Quantifier::Single if t > 1 => Value::Bool(false),
                    Quantifier::Single if n > 0 => Value::Null,
                    Quantifier::Single => Value::Bool(t == 1),
                }
            }
            other => {
                return Err(QueryError::type_error(format!(
                    "expected a list, got {}",
                    other.value_type()
                )))
            }
        },
        ExprKind::Reduce {
            acc,
            init,
            var,
            list,
            expr,
        } => match ev(list)? {
            Value::Null => Value::Null,
            Value::List(items) => {
                let mut inner = row.clone();
                let mut a = ev(init)?;
                for it in items {
                    ctx.guard.check()?;
                    inner.insert(acc, a);
                    inner.insert(var, it);
                    a = eval(expr, &inner, ctx)?;
                }
                a
            }
            other => {
                return Err(QueryError::type_error(format!(
                    "expected a list, got {}",
                    other.value_type()
                )))
            }
        },
        ExprKind::HasLabels(x, labels) => match (ev(x)?, ctx.graph) {
            (Value::Null, _) => Value::Null,
            (Value::Node(n), Some(g)) => {
                Value::Bool(crate::graph::labels_match(g, NodeId(n.id), labels)?)
            }
            (Value::Relationship(r), Some(g)) => {
                let t = crate::graph::rel_type(g, &r)?.unwrap_or_default();
                Value::Bool(crate::graph::type_matches(&t, labels))
            }
            (other, _) => {
                return Err(QueryError::type_error(format!(
                    "cannot test the labels of {}",
                    other.value_type()
                )))
            }
        },
        ExprKind::Pattern(element) => match ctx.graph {
            Some(g) => {
                if let Some(memo) = ctx.adjacent {
                    if let Some(hit) = memo.borrow_mut().check(g, element, row)? {
                        return Ok(Value::Bool(hit));
                    }
                }
                let p = plexus_cypher::PathPattern::plain(None, element.clone(), e.span);
                Value::Bool(crate::pattern::match_all(
                    g,
                    ctx,
                    std::slice::from_ref(&p),
                    None,
                    row,
                    &mut |_, _| Ok(true),
                )?)
            }
            None => Value::Bool(false),
        },
        ExprKind::Exists(q) => Value::Bool(crate::exec::subquery_rows(q, row, ctx, true)? > 0),
        ExprKind::CountSubquery(q) => {
            Value::Int(crate::exec::subquery_rows(q, row, ctx, false)? as i64)
        }
        ExprKind::PatternComprehension {
            var,
            pattern,
            filter,
            map,
        } => {
            let mut out = Vec::new();
            if let Some(g) = ctx.graph {
                let p = plexus_cypher::PathPattern::plain(var.clone(), pattern.clone(), e.span);
                // The filter is the match's WHERE, as a MATCH's is: its
                // conjuncts prune the walk and its equalities seek
                // (`[(a:P)-->(b) WHERE a.id = $x OR a.id = $y | …]`).
                crate::pattern::match_all(
                    g,
                    ctx,
                    std::slice::from_ref(&p),
                    filter.as_deref(),
                    row,
                    &mut |r, times| {
                        let v = eval(map, r, ctx)?;
                        out.extend(std::iter::repeat_n(v, times as usize));
                        Ok(false)
                    },
                )?;
            }
            Value::List(out)
        }
        ExprKind::MapProjection(base, items) => {
            let b = ev(base)?;
            let b = match (b, ctx.graph) {
                (entity @ (Value::Node(_) | Value::Relationship(_)), Some(g)) => {
                    crate::graph::call(g, "properties", &[entity])?.unwrap_or_default()
                }
                (b, _) => b,
            };
            let Value::Map(src) = &b else {
                if b.is_null() {
                    return Ok(Value::Null);
                }
                return Err(QueryError::type_error(format!(
                    "cannot project {}",
                    b.value_type()
                )));
            };
            let mut out = BTreeMap::new();
            for it in items {
                match it {
                    plexus_cypher::MapProjectionItem::Property(k) => {
                        out.insert(k.clone(), src.get(k).cloned().unwrap_or(Value::Null));
                    }
                    plexus_cypher::MapProjectionItem::AllProperties => out.extend(src.clone()),
                    plexus_cypher::MapProjectionItem::Literal(k, x) => {
                        out.insert(k.clone(), ev(x)?);
                    }
                    plexus_cypher::MapProjectionItem::Variable(v) => {
                        out.insert(
                            v.clone(),
                            ev(&Expr {
                                kind: ExprKind::Var(v.clone()),
                                span: e.span,
                            })?,
                        );
                    }
                }
            }
            shallow(Value::Map(out))?
        }
    })
}

/// A quantifier's answer: `on_hit` as soon as one element decides it,
/// else null when some element was unknown, else the opposite.
fn quantify(hits: usize, unknown: usize, on_hit: bool) -> Value {
    if hits > 0 {
        Value::Bool(on_hit)
    } else if unknown > 0 {
        Value::Null
    } else {
        Value::Bool(!on_hit)
    }
}

/// An operand's value: a variable or a parameter borrowed where it is,
/// anything else evaluated.
pub(crate) fn operand<'a>(
    e: &Expr,
    row: &'a Row,
    ctx: &'a Ctx<'_>,
) -> Result<Cow<'a, Value>, QueryError> {
    match &e.kind {
        ExprKind::Var(v) => row.get(v).map(Cow::Borrowed).ok_or_else(|| undefined(v)),
        ExprKind::Param(p) => param(p, ctx).map(Cow::Borrowed),
        _ => eval(e, row, ctx).map(Cow::Owned),
    }
}

fn undefined(v: &str) -> QueryError {
    QueryError::Semantic {
        code: "UndefinedVariable",
        message: format!("variable `{v}` is not defined"),
    }
}

/// `x IN [a, b, …]` with the list written out: each element compared as it
/// is (a variable where it is), without building the list —
/// `country IN [countryX, countryY]` of LDBC's IC3 cloned two nodes a row.
/// The same three-valued answer as IN over the built list.
fn in_literal(x: &Expr, items: &[Expr], row: &Row, ctx: &Ctx<'_>) -> R {
    let x = operand(x, row, ctx)?;
    // Every element is evaluated, as the list would be, before any is
    // compared: an error in a later one is not skipped by an earlier match.
    let values = items
        .iter()
        .map(|it| operand(it, row, ctx))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(member(x.as_ref(), values.iter().map(|v| v.as_ref())))
}

/// `x IN list` over the list's elements: true on an equal one, else null
/// when some comparison was unknown, else false.
pub(crate) fn member<'v>(x: &Value, items: impl Iterator<Item = &'v Value>) -> Value {
    let mut unknown = false;
    for it in items {
        // A node or relationship by its id: `equals` would first compare
        // the two values' types, at every element (`friend IN friends`,
        // LDBC's IC5, checks a list of nodes for each of 10,000 rows).
        let same = match (x, it) {
            (Value::Node(a), Value::Node(b)) => Some(a.id == b.id),
            (Value::Relationship(a), Value::Relationship(b)) => Some(a.id == b.id),
            _ => equals(x, it),
        };
        match same {
            Some(true) => return Value::Bool(true),
            None => unknown = true,
            Some(false) => {}
        }
    }
    if unknown {
        Value::Null
    } else {
        Value::Bool(false)
    }
}

fn binary(op: BinOp, a: &Expr, b: &Expr, row: &Row, ctx: &Ctx<'_>) -> R {
    let ev = |x: &Expr| eval(x, row, ctx);
    match op {
        BinOp::And | BinOp::Or | BinOp::Xor => {
            if op == BinOp::And {
                if let Some(v) = lent_between(a, b, row, ctx)? {
                    return Ok(v);
                }
            }
            let (x, y) = (truth(&ev(a)?)?, truth(&ev(b)?)?);
            return Ok(tri(match op {
                BinOp::And => and(x, y),
                BinOp::Or => match (x, y) {
                    (Some(true), _) | (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                },
                _ => match (x, y) {
                    (Some(p), Some(q)) => Some(p != q),
                    _ => None,
                },
            }));
        }
        _ => {}
    }
    if let (BinOp::In, ExprKind::List(items)) = (op, &b.kind) {
        return in_literal(a, items, row, ctx);
    }
    // A node's property compared with a name or a constant was tried on
    // the stored value first (`eval`, `lent_comparison`).
    // Variables and parameters are compared where they are, not cloned:
    // a node in a row is boxed, and a list may be long.
    let (x, y) = (operand(a, row, ctx)?, operand(b, row, ctx)?);
    let (x, y) = (x.as_ref(), y.as_ref());
    if let Some(v) = comparison(op, x, y) {
        return Ok(v);
    }
    Ok(match op {
        BinOp::In => match y {
            Value::Null => Value::Null,
            Value::List(items) => member(x, items.iter()),
            other => {
                return Err(QueryError::type_error(format!(
                    "IN expects a list, got {}",
                    other.value_type()
                )))
            }
        },
        BinOp::StartsWith | BinOp::EndsWith | BinOp::Contains => match (x, y) {
            (Value::String(s), Value::String(t)) => Value::Bool(match op {
                BinOp::StartsWith => s.starts_with(t.as_str()),
                BinOp::EndsWith => s.ends_with(t.as_str()),
                _ => s.contains(t.as_str()),
            }),
            _ => Value::Null,
        },
        BinOp::RegexMatch => match (x, y) {
            (Value::String(s), Value::String(pattern)) => {
                Value::Bool(crate::regex::matches(pattern, s)?)
            }
            _ => Value::Null,
        },
        _ => arith(x.clone(), y.clone(), op)?,
    })
}

/// Whether `x op y` is true (null counts as false) for the comparison
/// operators; `None` for the others. An equality asks `equals` alone,
/// without making a value of [`comparison`]'s answer and comparing that
/// with `true` (most of a check of `b.id <> $id` against a column).
#[inline]
pub(crate) fn comparison_holds(op: BinOp, x: &Value, y: &Value) -> Option<bool> {
    match op {
        BinOp::Eq => Some(equals(x, y) == Some(true)),
        BinOp::Neq => Some(equals(x, y) == Some(false)),
        _ => comparison(op, x, y).map(|v| v == Value::Bool(true)),
    }
}

/// `x op y` for the comparison operators; `None` for the others.
fn comparison(op: BinOp, x: &Value, y: &Value) -> Option<Value> {
    Some(match op {
        BinOp::Eq => tri(equals(x, y)),
        BinOp::Neq => tri(equals(x, y).map(|b| !b)),
        // NaN is not less, greater or equal to any number: false, not null.
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge if nan_against_number(x, y) => {
            Value::Bool(false)
        }
        BinOp::Lt => tri(compare(x, y).map(|o| o == Ordering::Less)),
        BinOp::Gt => tri(compare(x, y).map(|o| o == Ordering::Greater)),
        BinOp::Le => tri(compare(x, y).map(|o| o != Ordering::Greater)),
        BinOp::Ge => tri(compare(x, y).map(|o| o != Ordering::Less)),
        _ => return None,
    })
}

/// A comparison of a node's property (`b.id <> $id`, or `$end >
/// m.creationDate` with the property on the right) with a variable,
/// parameter or literal, made on the value where the store holds it
/// (`GraphRead::with_node_property`) rather than on a clone of it. `None`
/// when that does not apply or the node has no such property: the general
/// path then answers (null, or that the query deleted the node). The other
/// side, a name or a constant, is evaluated first: only a missing parameter
/// can fail there, and the general path would fail on it too. The operands
/// keep their sides, so the answer is the general path's exactly. The
/// sides come as [`lent_shape`] found them.
fn lent_comparison(
    op: BinOp,
    (prop, other, right): (&Expr, &Expr, bool),
    row: &Row,
    ctx: &Ctx<'_>,
) -> Result<Option<Value>, QueryError> {
    let Some((g, n, key)) = lent_node(prop, row, ctx) else {
        return Ok(None);
    };
    let y = operand(other, row, ctx)?;
    let mut out = None;
    g.with_node_property(n, key, &mut |x| {
        out = x.and_then(|x| match right {
            false => comparison(op, x, y.as_ref()),
            true => comparison(op, y.as_ref(), x),
        });
    })?;
    Ok(out)
}

/// Three-valued AND.
fn and(x: Option<bool>, y: Option<bool>) -> Option<bool> {
    match (x, y) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// `a AND b` when both compare the same node property with a name or a
/// constant — a chained comparison, `$end > m.date >= $start`, is one —
/// with the property read once for both (each read was a sixth of IC4's
/// projection). `None` when that does not apply or the node has no such
/// property, or `b`'s other side fails: the general path then answers, in
/// its own order (so `b`'s error comes after `a` was answered, as when
/// each is evaluated alone).
fn lent_between(a: &Expr, b: &Expr, row: &Row, ctx: &Ctx<'_>) -> Result<Option<Value>, QueryError> {
    let (ExprKind::Binary(op1, a1, a2), ExprKind::Binary(op2, b1, b2)) = (&a.kind, &b.kind) else {
        return Ok(None);
    };
    let (Some(s1), Some(s2)) = (lent_shape(*op1, a1, a2), lent_shape(*op2, b1, b2)) else {
        return Ok(None);
    };
    // The same property of the same variable on both sides.
    if var_property(s1.0).is_none() || var_property(s1.0) != var_property(s2.0) {
        return Ok(None);
    }
    let Some((g, n, key)) = lent_node(s1.0, row, ctx) else {
        return Ok(None);
    };
    let y1 = operand(s1.1, row, ctx)?;
    // `b`'s other side failing is the general path's to report, after `a`.
    let Ok(y2) = operand(s2.1, row, ctx) else {
        return Ok(None);
    };
    let side = |op: BinOp, x: &Value, y: &Value, right: bool| match right {
        false => comparison(op, x, y),
        true => comparison(op, y, x),
    };
    let mut out = None;
    g.with_node_property(n, key, &mut |x| {
        out = x.and_then(|x| {
            let first = side(*op1, x, y1.as_ref(), s1.2)?;
            Some((first, side(*op2, x, y2.as_ref(), s2.2)?))
        });
    })?;
    match out {
        Some((first, second)) => Ok(Some(tri(and(truth(&first)?, truth(&second)?)))),
        None => Ok(None),
    }
}

/// The graph, node and key of `prop`, a property of a variable bound to a
/// node, for [`lent_comparison`] and [`lent_between`].
fn lent_node<'e, 'g>(
    prop: &'e Expr,
    row: &Row,
    ctx: &Ctx<'g>,
) -> Option<(&'g dyn GraphRead, NodeId, &'e str)> {
    let ((v, key), g) = (var_property(prop)?, ctx.graph?);
    match row.get(v) {
        Some(Value::Node(n)) => Some((g, NodeId(n.id), key)),
        _ => None,
    }
}

/// The variable and key of `v.key`.
fn var_property(e: &Expr) -> Option<(&str, &str)> {
    match &e.kind {
        ExprKind::Property(base, key) => match &base.kind {
            ExprKind::Var(v) => Some((v, key)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `a op b` is a comparison [`lent_comparison`] may answer: which
/// side is the variable's property (the left one, `n.k < 3`, else the
/// right one, `3 > n.k`, the first half of `$a > n.k >= $b`), the other
/// side, and whether the property is on the right. Neither side recurses
/// any further.
pub(crate) fn lent_shape<'e>(
    op: BinOp,
    a: &'e Expr,
    b: &'e Expr,
) -> Option<(&'e Expr, &'e Expr, bool)> {
    use BinOp::{Eq, Ge, Gt, Le, Lt, Neq};
    let property = |e: &Expr| matches!(&e.kind, ExprKind::Property(base, _) if matches!(base.kind, ExprKind::Var(_)));
    if !matches!(op, Eq | Neq | Lt | Gt | Le | Ge) {
        None
    } else if property(a) && is_leaf(b) {
        Some((a, b, false))
    } else if property(b) && is_leaf(a) {
        Some((b, a, true))
    } else {
        None
    }
}

/// Refuses a `range()` whose list would not fit the query's memory budget
/// before any of it is built.
fn range_fits(args: &[Value], ctx: &Ctx<'_>) -> Result<(), QueryError> {
    let ints: Vec<i64> = args.iter().filter_map(Value::as_int).collect();
    let (start, end, step) = match ints.as_slice() {
        [s, e] => (*s, *e, 1),
        [s, e, st] if *st != 0 => (*s, *e, *st),
        _ => return Ok(()),
    };
    let span = (i128::from(end) - i128::from(start)) / i128::from(step);
    let count = if span < 0 { 0 } else { span + 1 };
    let bytes = usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(std::mem::size_of::<Value>()))
        .unwrap_or(usize::MAX);
    ctx.guard.fits(bytes)
}

/// A uniform float in [0, 1): SplitMix64 per thread, seeded by the
/// standard library's random hasher keys.
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    thread_local! {
        static STATE: std::cell::Cell<u64> = std::cell::Cell::new(std::collections::hash_map::RandomState::new().build_hasher().finish());
    }
    STATE.with(|s| {
        let x = s.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        s.set(x);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    })
}

fn arg_error(name: &str, v: &Value) -> QueryError {
    QueryError::type_error(format!("{name}() does not take a {}", v.value_type()))
}

/// A conversion or graph function given a value of a type it cannot take
/// at run time: openCypher calls that an invalid value.
fn value_error(name: &str, v: &Value) -> QueryError {
    QueryError::Type {
        code: "InvalidArgumentValue",
        message: format!("{name}() does not take a {}", v.value_type()),
    }
}

/// `date('2015-07-21')` and its siblings: a temporal value from its ISO
/// string, or the value itself when it already has that type. Map arguments
/// and the zero-argument "now" forms are not supported yet.
fn temporal_from(name: &str, v: Value) -> R {
    if v.is_null() {
        return Ok(Value::Null);
    }
    crate::temporal::convert(name, &v).unwrap_or_else(|| {
        Err(QueryError::type_error(format!(
            "{name}() takes a map, a string or a temporal value, not {}",
            v.value_type()
        )))
    })
}

/// Cypher's name of a value's type, as `valueType()` reports it.
fn value_type_name(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bool(_) => "BOOLEAN NOT NULL".into(),
        Value::Int(_) => "INTEGER NOT NULL".into(),
        Value::Float(_) => "FLOAT NOT NULL".into(),
        Value::String(_) => "STRING NOT NULL".into(),
        Value::Bytes(_) => "BYTES NOT NULL".into(),
        Value::List(items) => {
            let mut inner: Vec<String> = items.iter().map(value_type_name).collect();
            inner.sort();
            inner.dedup();
            match inner.as_slice() {
                [one] => format!("LIST<{one}> NOT NULL"),
                _ => "LIST<ANY> NOT NULL".into(),
            }
        }
        Value::Map(_) => "MAP NOT NULL".into(),
        Value::Date(_) => "DATE NOT NULL".into(),
        Value::LocalTime(_) => "LOCAL TIME NOT NULL".into(),
        Value::Time(_) => "ZONED TIME NOT NULL".into(),
        Value::LocalDateTime(_) => "LOCAL DATETIME NOT NULL".into(),
        Value::DateTime(_) => "ZONED DATETIME NOT NULL".into(),
        Value::Duration(_) => "DURATION NOT NULL".into(),
        Value::Node(_) => "NODE NOT NULL".into(),
        Value::Relationship(_) => "RELATIONSHIP NOT NULL".into(),
        Value::Path(_) => "PATH NOT NULL".into(),
    }
}

/// A scalar function by name (case-insensitive).
pub fn call(name: &str, args: Vec<Value>) -> R {
    let lname = name.to_ascii_lowercase();
    let arity = |n: usize| -> Result<(), QueryError> {
        if args.len() == n {
            Ok(())
        } else {
            Err(QueryError::Semantic {
                code: "InvalidNumberOfArguments",
                message: format!("{name}() takes {n} argument(s), not {}", args.len()),
            })
        }
    };
    let a0 = args.first().cloned().unwrap_or(Value::Null);
    Ok(match lname.as_str() {
        "vector.similarity.cosine" | "vector.similarity.euclidean" => {
            arity(2)?;
            crate::vector::similarity(name, &args[0], &args[1])?
        }
        // APOC's list de-duplication, which cognee sends on every node write:
        // the first of equal elements kept, in order.
        "apoc.coll.toset" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::List(items) => {
                    // Keyed by the grouping encoding: linear, whatever the list.
                    let mut seen = std::collections::HashSet::with_capacity(items.len());
                    let mut key = Vec::new();
                    let mut out = Vec::with_capacity(items.len());
                    for x in items {
                        key.clear();
                        plexus_common::encode_key_value(&x, &mut key);
                        if seen.insert(key.clone()) {
                            out.push(x);
                        }
                    }
                    Value::List(out)
                }
                other => {
                    return Err(QueryError::type_error(format!(
                        "apoc.coll.toSet() takes a list, not {}",
                        other.value_type()
                    )))
                }
            }
        }
        "coalesce" => args
            .into_iter()
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null),
        "size" => {
            arity(1)?;
            match &a0 {
                Value::Null => Value::Null,
                Value::List(l) => Value::Int(l.len() as i64),
                Value::String(s) => Value::Int(s.chars().count() as i64),
                v => return Err(arg_error(name, v)),
            }
        }
        "head" | "last" => {
            arity(1)?;
            match &a0 {
                Value::Null => Value::Null,
                Value::List(l) => (if lname == "head" { l.first() } else { l.last() })
                    .cloned()
                    .unwrap_or(Value::Null),
                v => return Err(arg_error(name, v)),
            }
        }
        "tail" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::List(l) => Value::List(l.into_iter().skip(1).collect()),
                v => return Err(arg_error(name, &v)),
            }
        }
        "reverse" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::List(mut l) => {
                    l.reverse();
                    Value::List(l)
                }
                Value::String(s) => Value::String(s.chars().rev().collect()),
                v => return Err(arg_error(name, &v)),
            }
        }
        "range" => {
            let ints: Vec<i64> = args
                .iter()
                .map(|v| {
                    v.as_int().ok_or_else(|| QueryError::Argument {
                        code: "InvalidArgumentType",
                        message: format!("range() takes integers, not a {}", v.value_type()),
                    })
                })
                .collect::<Result<_, _>>()?;
            let (start, end, step) = match ints.as_slice() {
                [s, e] => (*s, *e, 1),
                [s, e, st] => (*s, *e, *st),
                _ => {
                    return Err(QueryError::Semantic {
                        code: "InvalidNumberOfArguments",
                        message: "range() takes 2 or 3 arguments".into(),
                    })
                }
            };
            if step == 0 {
                return Err(QueryError::Argument {
                    code: "NumberOutOfRange",
                    message: "range() step must not be 0".into(),
                });
            }
            let mut out = Vec::new();
            let mut i = start;
            while (step > 0 && i <= end) || (step < 0 && i >= end) {
                out.push(Value::Int(i));
                match i.checked_add(step) {
                    Some(n) => i = n,
                    None => break,
                }
            }
            Value::List(out)
        }
        "keys" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::Map(m) => Value::List(m.into_keys().map(Value::String).collect()),
                v => return Err(arg_error(name, &v)),
            }
        }
        "date" | "localtime" | "time" | "localdatetime" | "datetime" if args.len() == 1 => {
            temporal_from(&lname, a0)?
        }
        "date" | "localtime" | "time" | "localdatetime" | "datetime" if args.is_empty() => {
            crate::temporal::now(&lname, &[])?
        }
        "duration" => {
            arity(1)?;
            crate::temporal::duration(a0)?
        }
        "tostring" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::String(s) => Value::String(s),
                Value::Int(i) => Value::String(i.to_string()),
                Value::Float(f) => Value::String(Value::Float(f).to_string()),
                Value::Bool(b) => Value::String(b.to_string()),
                v @ (Value::Date(_)
                | Value::LocalTime(_)
                | Value::Time(_)
                | Value::LocalDateTime(_)
                | Value::DateTime(_)
                | Value::Duration(_)) => {
                    Value::String(v.to_string().trim_matches('\'').to_string())
                }
                v => return Err(value_error(name, &v)),
            }
        }
        "tointeger" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::Int(i) => Value::Int(i),
                Value::Float(f) if f.is_finite() => Value::Int(f.trunc() as i64),
                Value::Float(_) => Value::Null,
                Value::Bool(b) => Value::Int(b as i64),
                Value::String(s) => match s.trim().parse::<i64>() {
                    Ok(i) => Value::Int(i),
                    Err(_) => s
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite())
                        .map_or(Value::Null, |f| Value::Int(f.trunc() as i64)),
                },
                v => return Err(value_error(name, &v)),
            }
        }
        "tofloat" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::Int(i) => Value::Float(i as f64),
                Value::Float(f) => Value::Float(f),
                Value::String(s) => s.trim().parse::<f64>().map_or(Value::Null, Value::Float),
                v => return Err(value_error(name, &v)),
            }
        }
        "toboolean" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::Bool(b) => Value::Bool(b),
                Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => Value::Null,
                },
                Value::Int(i) => Value::Bool(i != 0),
                v => return Err(value_error(name, &v)),
            }
        }
        "abs" | "sign" | "ceil" | "floor" | "round" | "sqrt" | "exp" | "log" | "log10" | "sin"
        | "cos" | "tan" | "asin" | "acos" | "atan" | "degrees" | "radians" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::Int(i) if lname == "abs" => Value::Int(
                    i.checked_abs()
                        .ok_or_else(|| QueryError::Arithmetic("integer overflow".into()))?,
                ),
                Value::Int(i) if lname == "sign" => Value::Int(i.signum()),
                v @ (Value::Int(_) | Value::Float(_)) => {
                    let x = num(&v).unwrap_or(0.0);
                    if lname == "sign" {
                        return Ok(Value::Int(if x > 0.0 {
                            1
                        } else if x < 0.0 {
                            -1
                        } else {
                            0
                        }));
                    }
                    Value::Float(match lname.as_str() {
                        "abs" => x.abs(),
                        "ceil" => x.ceil(),
                        "floor" => x.floor(),
                        "round" => (x + 0.5).floor(),
                        "sqrt" => x.sqrt(),
                        "exp" => x.exp(),
                        "log" => x.ln(),
                        "log10" => x.log10(),
                        "sin" => x.sin(),
                        "cos" => x.cos(),
                        "tan" => x.tan(),
                        "asin" => x.asin(),
                        "acos" => x.acos(),
                        "atan" => x.atan(),
                        "degrees" => x.to_degrees(),
                        _ => x.to_radians(),
                    })
                }
                v => return Err(arg_error(name, &v)),
            }
        }
        "atan2" => {
            arity(2)?;
            match (&args[0], &args[1]) {
                (a, b) if a.is_null() || b.is_null() => Value::Null,
                (y, x) => match (num(y), num(x)) {
                    (Some(y), Some(x)) => Value::Float(y.atan2(x)),
                    _ => return Err(arg_error(name, if num(y).is_none() { y } else { x })),
                },
            }
        }
        "cot" | "haversin" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                v => {
                    let x = num(&v).ok_or_else(|| arg_error(name, &v))?;
                    Value::Float(if lname == "cot" {
                        1.0 / x.tan()
                    } else {
                        (1.0 - x.cos()) / 2.0
                    })
                }
            }
        }
        "isempty" => {
            arity(1)?;
            match &a0 {
                Value::Null => Value::Null,
                Value::List(l) => Value::Bool(l.is_empty()),
                Value::Map(m) => Value::Bool(m.is_empty()),
                Value::String(s) => Value::Bool(s.is_empty()),
                v => return Err(arg_error(name, v)),
            }
        }
        "char_length" | "character_length" => {
            arity(1)?;
            match &a0 {
                Value::Null => Value::Null,
                Value::String(s) => Value::Int(s.chars().count() as i64),
                v => return Err(arg_error(name, v)),
            }
        }
        "valuetype" => {
            arity(1)?;
            Value::String(value_type_name(&a0))
        }
        "tobooleanornull" | "tofloatornull" | "tointegerornull" | "tostringornull" => {
            arity(1)?;
            let base = lname.trim_end_matches("ornull");
            call(base, vec![a0]).unwrap_or(Value::Null)
        }
        "tobooleanlist" | "tofloatlist" | "tointegerlist" | "tostringlist" => {
            arity(1)?;
            let base = lname.trim_end_matches("list");
            match a0 {
                Value::Null => Value::Null,
                Value::List(items) => Value::List(
                    items
                        .into_iter()
                        .map(|v| call(base, vec![v]).unwrap_or(Value::Null))
                        .collect(),
                ),
                v => return Err(arg_error(name, &v)),
            }
        }
        // The graph functions, reached here when their argument is not an
        // entity (the graph answered otherwise).
        "type" | "labels" | "startnode" | "endnode" | "nodes" | "relationships" | "length"
        | "id" | "elementid" | "versionid" | "validfrom" | "validto" | "systemfrom" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                v => return Err(value_error(name, &v)),
            }
        }
        "properties" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                m @ Value::Map(_) => m,
                v => return Err(value_error(name, &v)),
            }
        }
        "pi" => Value::Float(std::f64::consts::PI),
        "rand" => Value::Float(random_unit()),
        // Neo4j's: a random (version 4) UUID, a new one at every call.
        "randomuuid" => {
            arity(0)?;
            Value::String(uuid::Uuid::new_v4().to_string())
        }
        "e" => Value::Float(std::f64::consts::E),
        "toupper" | "tolower" | "trim" | "ltrim" | "rtrim" => {
            arity(1)?;
            match a0 {
                Value::Null => Value::Null,
                Value::String(s) => Value::String(match lname.as_str() {
                    "toupper" => s.to_uppercase(),
                    "tolower" => s.to_lowercase(),
                    "trim" => s.trim().to_string(),
                    "ltrim" => s.trim_start().to_string(),
                    _ => s.trim_end().to_string(),
                }),
                v => return Err(arg_error(name, &v)),
            }
        }
        "replace" => {
            arity(3)?;
            match (&args[0], &args[1], &args[2]) {
                (Value::String(s), Value::String(f), Value::String(t)) => {
                    Value::String(s.replace(f.as_str(), t))
                }
                (a, b, c) if a.is_null() || b.is_null() || c.is_null() => Value::Null,
                (v, _, _) => return Err(arg_error(name, v)),
            }
        }
        "split" => {
            arity(2)?;
            match (&args[0], &args[1]) {
                (Value::String(s), Value::String(d)) => Value::List(
                    s.split(d.as_str())
                        .map(|p| Value::String(p.into()))
                        .collect(),
                ),
                (a, b) if a.is_null() || b.is_null() => Value::Null,
                (v, _) => return Err(arg_error(name, v)),
            }
        }
        "substring" | "left" | "right" => {
            let s = match &a0 {
                Value::Null => return Ok(Value::Null),
                Value::String(s) => s.chars().collect::<Vec<char>>(),
                v => return Err(arg_error(name, v)),
            };
            let int = |i: usize| -> Result<i64, QueryError> {
                let v = args.get(i).cloned().unwrap_or(Value::Null);
                v.as_int().ok_or_else(|| arg_error(name, &v))
            };
            let (from, len) = match lname.as_str() {
                "left" => (0, int(1)?),
                "right" => {
                    let n = int(1)?;
                    ((s.len() as i64 - n).max(0), n)
                }
                _ => (int(1)?, if args.len() > 2 { int(2)? } else { i64::MAX }),
            };
            if from < 0 || len < 0 {
                return Err(QueryError::Argument {
                    code: "NumberOutOfRange",
                    message: format!("{name}() takes non-negative positions"),
                });
            }
            let from = (from as usize).min(s.len());
            let to = from
                .saturating_add(len.min(s.len() as i64) as usize)
                .min(s.len());
            Value::String(s[from..to].iter().collect())
        }
        _ => {
            return crate::temporal::call(&lname, &args).unwrap_or_else(|| {
                // Every function of the registry runs with its arguments
                // (`functions_are_listed_and_run`): a known one that falls
                // through here was given the wrong number of them.
                Err(match crate::functions::known(name) {
                    true => QueryError::Semantic {
                        code: "InvalidNumberOfArguments",
                        message: format!("{name}() does not take {} argument(s)", args.len()),
                    },
                    false => QueryError::Unsupported(format!("function {name}()")),
                })
            });
        }
    })
}

/// How deep lists and maps may nest in a value a query builds. Values are
/// dropped, cloned, compared and encoded by recursion, so a value nested
/// without bound (`reduce(a = [], x IN range(1, 200000) | [a])`) would
/// overflow a thread's stack; Neo4j's drivers decode 100 levels at most.
pub const MAX_NESTING: usize = 1000;

/// `v`, or an error when it nests deeper than [`MAX_NESTING`].
pub fn shallow(v: Value) -> Result<Value, QueryError> {
    if v.nests_deeper_than(MAX_NESTING) {
        return Err(QueryError::Argument {
            code: "NestingTooDeep",
            message: format!("a list or map nested more than {MAX_NESTING} levels deep"),
        });
    }
    Ok(v)
}

/// Whether `e` gives the same value each time for the same row: built
/// only of variables, parameters, literals, properties, label tests,
/// operators, slices, CASE, maps, lists and calls of functions other than
/// `rand()` and `randomUUID()`. Anything else (a comprehension, a pattern, a subquery)
/// is taken not to, to be safe.
pub(crate) fn repeatable(e: &Expr) -> bool {
    admits(e, &mut |x| match &x.kind {
        ExprKind::Call { name, .. }
            if name.eq_ignore_ascii_case("rand") || name.eq_ignore_ascii_case("randomuuid") =>
        {
            Some(false)
        }
        _ => None,
    })
}

/// A variable, a parameter or a constant: what [`eval`] answers without
/// recursing.
fn is_leaf(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Var(_)) || is_constant_leaf(&e.kind)
}

/// A literal scalar or a parameter: reads no variable.
pub(crate) fn is_constant_leaf(k: &ExprKind) -> bool {
    matches!(
        k,
        ExprKind::Null
            | ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::String(_)
            | ExprKind::Param(_)
    )
}

/// Whether `e` certainly does not read the variable `var`: false for any
/// expression this does not look into (subqueries, comprehensions,
/// patterns), so that a predicate is pushed down only when it is safe.
pub(crate) fn free_of(e: &Expr, var: &str) -> bool {
    reads_only(e, &|v| v != var)
}

/// Whether every variable `e` may read is one `allowed` admits: false for
/// any expression this does not look into, as for [`free_of`].
pub(crate) fn reads_only(e: &Expr, allowed: &dyn Fn(&str) -> bool) -> bool {
    admits(e, &mut |x| match &x.kind {
        ExprKind::Var(v) => Some(allowed(v)),
        _ => None,
    })
}

/// The variables `e` reads, each once, or `None` when it holds a part this
/// does not look into: `reads_only(e, allowed)` is whether each of them
/// is allowed, found without walking `e` again.
pub(crate) fn vars_read(e: &Expr) -> Option<Vec<String>> {
    let mut vars: Vec<String> = Vec::new();
    let whole = admits(e, &mut |x| match &x.kind {
        ExprKind::Var(v) => {
            if !vars.contains(v) {
                vars.push(v.clone());
            }
            Some(true)
        }
        _ => None,
    });
    whole.then_some(vars)
}

/// Whether `decide` admits every part of `e`: it is asked first of `e`,
/// then of each part it leaves undecided (`None`), down to the leaves. A
/// variable it leaves undecided is admitted; any expression this does not
/// look into (subqueries, comprehensions, patterns) is not.
pub(crate) fn admits<'e>(e: &'e Expr, decide: &mut dyn FnMut(&'e Expr) -> Option<bool>) -> bool {
    if let Some(yes) = decide(e) {
        return yes;
    }
    let mut all = |xs: &mut dyn Iterator<Item = &'e Expr>| {
        for x in xs {
            if !admits(x, decide) {
                return false;
            }
        }
        true
    };
    match &e.kind {
        k if is_constant_leaf(k) => true,
        // `count(*)` counts rows; it reads none of their variables.
        ExprKind::CountStar | ExprKind::Var(_) => true,
        ExprKind::List(items) => all(&mut items.iter()),
        ExprKind::Map(entries) => all(&mut entries.iter().map(|(_, v)| v)),
        ExprKind::Property(b, _) | ExprKind::Unary(_, b) | ExprKind::IsNull(b, _) => {
            all(&mut std::iter::once(&**b))
        }
        ExprKind::HasLabels(b, _) => all(&mut std::iter::once(&**b)),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => all(&mut [&**a, &**b].into_iter()),
        ExprKind::Slice(a, b, c) => all(&mut std::iter::once(&**a)
            .chain(b.as_deref())
            .chain(c.as_deref())),
        ExprKind::Case {
            operand,
            whens,
            else_,
        } => all(&mut operand
            .as_deref()
            .into_iter()
            .chain(whens.iter().flat_map(|(a, b)| [a, b]))
            .chain(else_.as_deref())),
        ExprKind::Call { args, .. } => all(&mut args.iter()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_of_is_conservative() {
        let e = |s: &str| plexus_cypher::parse_expression(s).unwrap();
        assert!(free_of(&e("node.x = 1 AND $p > 2"), "score"));
        assert!(!free_of(&e("node.x = 1 AND score > 0.5"), "score"));
        assert!(!free_of(&e("[x IN [1] | x] = [1]"), "score"));
        assert!(free_of(&e("count(*) + 1"), "score"));
        let outputs = |v: &str| v == "a" || v == "b";
        assert!(reads_only(&e("a.x > 1 AND b IS NOT NULL"), &outputs));
        assert!(!reads_only(&e("a.x > c"), &outputs));
        assert!(!reads_only(&e("any(x IN a WHERE x > 1)"), &outputs));
    }

    #[test]
    fn vars_read_answers_as_reads_only() {
        let e = |s: &str| plexus_cypher::parse_expression(s).unwrap();
        let names = |vs: &[&str]| Some(vs.iter().map(|v| v.to_string()).collect::<Vec<_>>());
        assert_eq!(
            vars_read(&e("a.x > 1 AND b IS NOT NULL AND a.y < $p")),
            names(&["a", "b"])
        );
        assert_eq!(vars_read(&e("1 < 2")), names(&[]));
        assert_eq!(vars_read(&e("any(x IN a WHERE x > 1)")), None);
        let texts = [
            "a.x > 1 AND b IS NOT NULL",
            "a.x > c",
            "CASE WHEN a > 0 THEN b ELSE c END",
            "[x IN [1] | x] = [a]",
            "count(*) + 1",
        ];
        let sets: [&[&str]; 4] = [&[], &["a"], &["a", "b"], &["a", "b", "c"]];
        for t in texts {
            for set in sets {
                let allowed = |v: &str| set.contains(&v);
                let by_list = vars_read(&e(t)).is_some_and(|vs| vs.iter().all(|v| allowed(v)));
                assert_eq!(by_list, reads_only(&e(t), &allowed), "{t} over {set:?}");
            }
        }
    }

    /// A parameter is found by name among few parameters and among many,
    /// before and after the index builds its table, names of one length
    /// told apart; a missing one is named either way.
    #[test]
    fn parameters_are_found_by_name() {
        for n in [1usize, 8, 9, 12, 40, 150] {
            let params: BTreeMap<String, Value> = (0..n)
                .map(|i| (format!("p{i}"), Value::Int(i as i64)))
                .collect();
            let guard = crate::limits::Guard::unlimited();
            let index = ParamIndex::new(&params);
            let ctx = Ctx {
                by_name: Some(&index),
                ..Ctx::without_graph(&params, &guard)
            };
            for round in 0..(2 * PARAM_READS_BEFORE_TABLE as usize / n + 2) {
                for i in 0..n {
                    let v = param(&format!("p{i}"), &ctx).unwrap();
                    assert_eq!(v, &Value::Int(i as i64), "round {round}");
                }
                for missing in ["p", "q0", "p00", "p1000"] {
                    let err = param(missing, &ctx).unwrap_err();
                    assert!(err.to_string().contains(&format!("${missing}")), "{err}");
                }
            }
            assert_eq!(index.table.get().is_some(), n > 8, "{n} parameters");
        }
    }

    /// `eval` answers a constant, and an operator between names and
    /// constants, without `eval_here`: the same values and errors.
    #[test]
    fn the_short_paths_answer_as_eval_here() {
        let params: BTreeMap<String, Value> = [("p".to_string(), Value::Int(3))].into();
        let guard = crate::limits::Guard::unlimited();
        let ctx = Ctx::without_graph(&params, &guard);
        let mut row = Row::new();
        row.insert("x", Value::Int(2));
        row.insert("s", Value::from("ab"));
        row.insert("l", Value::List(vec![Value::Int(2), Value::Null]));
        row.insert("n", Value::Null);
        let texts = [
            "1",
            "2.5",
            "'a'",
            "true",
            "null",
            "x > 0",
            "x = $p",
            "x + 1",
            "$p * x",
            "s + 'c'",
            "s STARTS WITH 'a'",
            "s =~ 'a.'",
            "x IN l",
            "3 IN l",
            "n = x",
            "x / 0",
            "x AND true",
            "n OR false",
            "s < x",
            "x - 9223372036854775807 - 2",
            "y > 1",
        ];
        for t in texts {
            let e = plexus_cypher::parse_expression(t).unwrap();
            let (short, long) = (eval_unblamed(&e, &row, &ctx), eval_here(&e, &row, &ctx));
            match (short, long) {
                (Ok(a), Ok(b)) => {
                    assert!(a == b || (a.is_null() && b.is_null()), "{t}: {a:?} {b:?}")
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{t}"),
                (a, b) => panic!("{t}: {a:?} against {b:?}"),
            }
        }
    }

    #[test]
    fn repeatable_refuses_draws_and_what_it_does_not_look_into() {
        let e = |s: &str| plexus_cypher::parse_expression(s).unwrap();
        assert!(repeatable(&e("n.k STARTS WITH $p AND toLower(n.k) <> 'x'")));
        assert!(repeatable(&e(
            "CASE WHEN n.k > 1 THEN [n.k][0] ELSE {a: 1}.a END"
        )));
        assert!(!repeatable(&e("rand() < n.k")));
        assert!(!repeatable(&e("n.k = toString(RandomUUID())")));
        assert!(!repeatable(&e("[x IN [1] | x] = [1]")));
    }
}
