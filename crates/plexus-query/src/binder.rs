//! Semantic checks before running: variables in scope and of one kind,
//! aliases, aggregation placement, pattern rules of CREATE, UNION shapes.
//! Errors are reported as openCypher reports them (SyntaxError with a
//! detail code) before any row is produced.

use crate::error::QueryError;
use crate::eval::{is_aggregate, visit_aggregates};
use plexus_cypher::*;
use std::collections::HashMap;

mod grouping;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Node,
    Rel,
    Path,
    /// Known not to be a node, relationship or path (a literal, a list of
    /// relationships from a variable-length pattern, an arithmetic result).
    Scalar,
    /// A scalar known to be a string or a boolean: the variable of a list
    /// comprehension or quantifier over a literal list of strings or of
    /// booleans, which no arithmetic but `+` takes.
    NotNumber,
    /// Anything: not known before running.
    Value,
}

/// What an expression is known to evaluate to, before running.
fn kind_of(e: &Expr, scope: &Scope) -> Kind {
    match &e.kind {
        ExprKind::Var(v) => scope.get(v).copied().unwrap_or(Kind::Value),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::String(_)
        | ExprKind::Bool(_)
        | ExprKind::List(_)
        | ExprKind::Map(_)
        | ExprKind::ListComprehension { .. }
        | ExprKind::PatternComprehension { .. }
        | ExprKind::Pattern(_)
        | ExprKind::Binary(..)
        | ExprKind::Unary(..)
        | ExprKind::IsNull(..)
        | ExprKind::HasLabels(..)
        | ExprKind::CountStar => Kind::Scalar,
        _ => Kind::Value,
    }
}

impl Kind {
    fn is_scalar(self) -> bool {
        matches!(self, Kind::Scalar | Kind::NotNumber)
    }
}

/// The kind of the elements of `list`, for the variable that iterates it:
/// [`Kind::NotNumber`] for a literal list of only strings or only booleans.
fn element_kind(list: &Expr) -> Kind {
    let ExprKind::List(items) = &list.kind else {
        return Kind::Value;
    };
    let all = |f: fn(&ExprKind) -> bool| !items.is_empty() && items.iter().all(|i| f(&i.kind));
    if all(|k| matches!(k, ExprKind::String(_))) || all(|k| matches!(k, ExprKind::Bool(_))) {
        return Kind::NotNumber;
    }
    Kind::Value
}

type Scope = HashMap<String, Kind>;

fn err(code: &'static str, message: impl Into<String>) -> QueryError {
    QueryError::Compile {
        code,
        message: message.into(),
    }
}

/// Blames an error on the byte `offset` of the query ([`QueryError::at`]).
fn at(offset: usize) -> impl FnOnce(QueryError) -> QueryError {
    move |e| e.at(offset)
}

/// Checks a query; its columns.
pub fn check(q: &Query) -> Result<Vec<String>, QueryError> {
    query_columns(q, &Scope::new())
}

/// Gives each final `RETURN *` of `q` (checked, with these `columns`) the
/// variables its star stands for: the columns before its own items. A
/// result without rows then still has the star's columns.
pub(crate) fn star_scope(q: &mut Query, columns: &[String]) {
    for part in q.parts_mut() {
        if let Some(Clause::Return(p)) = part.clauses.last_mut() {
            if p.star {
                let n = columns.len().saturating_sub(p.items.len());
                p.star_scope = columns.get(..n).unwrap_or_default().to_vec();
            }
        }
    }
}

/// Checks a query (its UNION parts alike) seeing `outer`; its columns.
fn query_columns(q: &Query, outer: &Scope) -> Result<Vec<String>, QueryError> {
    let cols = single(&q.first, outer)?;
    let mut all = None;
    for (is_all, part) in &q.unions {
        if all.is_some_and(|a| a != *is_all) {
            return Err(at(part.span.start)(err(
                "InvalidClauseComposition",
                "UNION and UNION ALL cannot be mixed",
            )));
        }
        all = Some(*is_all);
        if single(part, outer)? != cols {
            return Err(at(part.span.start)(err(
                "DifferentColumnsInUnion",
                "all parts of a UNION must return the same column names",
            )));
        }
    }
    Ok(cols)
}

fn bind(scope: &mut Scope, name: &str, kind: Kind) -> Result<(), QueryError> {
    match scope.get(name) {
        Some(k) if *k != kind && *k != Kind::Value && kind != Kind::Value => Err(err(
            "VariableTypeConflict",
            format!("`{name}` is a {k:?} here and a {kind:?} elsewhere"),
        )),
        _ => {
            scope.insert(name.to_string(), kind);
            Ok(())
        }
    }
}

fn bind_pattern(scope: &mut Scope, p: &PathPattern, creating: bool) -> Result<(), QueryError> {
    bind_pattern_here(scope, p, creating).map_err(at(p.span.start))
}

fn bind_pattern_here(scope: &mut Scope, p: &PathPattern, creating: bool) -> Result<(), QueryError> {
    let before = scope.clone();
    if let Some(v) = &p.var {
        if scope.contains_key(v) {
            return Err(err(
                "VariableAlreadyBound",
                format!("path variable `{v}` is already bound"),
            ));
        }
        // A path variable named again inside its own pattern is bound twice.
        if crate::exec::pattern_vars(&PathPattern {
            var: None,
            ..p.clone()
        })
        .contains(v)
        {
            return Err(err(
                "VariableAlreadyBound",
                format!("path variable `{v}` is used inside its own pattern"),
            ));
        }
        bind(scope, v, Kind::Path)?;
    }
    if creating && p.element.chain.is_empty() {
        if let Some(v) = p
            .element
            .start
            .var
            .as_ref()
            .filter(|v| before.contains_key(*v))
        {
            return Err(err(
                "VariableAlreadyBound",
                format!("`{v}` is already bound; there is nothing to create"),
            ));
        }
    }
    let mut rels_here: Vec<&str> = Vec::new();
    let nodes = std::iter::once(&p.element.start).chain(p.element.chain.iter().map(|(_, n)| n));
    for n in nodes {
        if let Some(v) = &n.var {
            if creating && before.contains_key(v) && (n.labels.is_some() || n.props.is_some()) {
                return Err(err(
                    "VariableAlreadyBound",
                    format!("`{v}` is already bound; CREATE cannot add labels or properties to it"),
                ));
            }
            bind(scope, v, Kind::Node)?;
        }
    }
    for (r, _) in &p.element.chain {
        // A bound relationship is reported first: it could not be created
        // with any type.
        if let Some(v) = r
            .var
            .as_ref()
            .filter(|v| creating && before.contains_key(*v))
        {
            return Err(err(
                "VariableAlreadyBound",
                format!("relationship `{v}` is already bound"),
            ));
        }
        if creating {
            let single_type = matches!(r.types, Some(LabelExpr::Name(_)));
            if !single_type {
                return Err(err(
                    "NoSingleRelationshipType",
                    "a relationship to create needs exactly one type",
                ));
            }
            if r.length.is_some() {
                return Err(err(
                    "CreatingVarLength",
                    "variable-length relationships cannot be created",
                ));
            }
        }
        if let Some(v) = &r.var {
            if rels_here.contains(&v.as_str()) {
                return Err(err(
                    "RelationshipUniquenessViolation",
                    format!("relationship `{v}` appears twice in one pattern"),
                ));
            }
            rels_here.push(v);
            let kind = if r.length.is_some() {
                Kind::Scalar
            } else {
                Kind::Rel
            };
            bind(scope, v, kind)?;
        }
    }
    Ok(())
}

fn inline_props(e: &Expr, scope: &Scope) -> Result<(), QueryError> {
    if matches!(e.kind, ExprKind::Param(_)) {
        return Err(err(
            "InvalidParameterUse",
            "a parameter cannot stand for a pattern's property map in MATCH; write {key: $param}",
        ));
    }
    expr(e, scope, false)
}

fn pattern_exprs(p: &PathPattern, scope: &Scope) -> Result<(), QueryError> {
    let nodes = std::iter::once(&p.element.start).chain(p.element.chain.iter().map(|(_, n)| n));
    for n in nodes {
        if let Some(e) = &n.props {
            inline_props(e, scope)?;
        }
        if let Some(e) = &n.where_ {
            expr(e, scope, false)?;
        }
    }
    for (r, _) in &p.element.chain {
        if let Some(e) = &r.props {
            inline_props(e, scope)?;
        }
    }
    Ok(())
}

/// Checks one single query; returns its column names.
fn single(q: &SingleQuery, outer: &Scope) -> Result<Vec<String>, QueryError> {
    let mut scope = outer.clone();
    let mut columns = Vec::new();
    let n = q.clauses.len();
    for (i, c) in q.clauses.iter().enumerate() {
        if matches!(c, Clause::Return(_)) && i + 1 != n {
            return Err(at(c.span().start)(err(
                "InvalidClauseComposition",
                "RETURN can only be the last clause",
            )));
        }
        if let Some(cols) = clause(c, &mut scope, n).map_err(at(c.span().start))? {
            columns = cols;
        }
    }
    let last = q.clauses.last();
    let concludes = matches!(
        last,
        Some(
            Clause::Return(_)
                | Clause::Create { .. }
                | Clause::Merge { .. }
                | Clause::Set { .. }
                | Clause::Remove { .. }
                | Clause::Delete { .. }
                | Clause::Foreach { .. }
                | Clause::Call { .. }
                | Clause::Subquery { .. }
        )
    );
    if !concludes {
        return Err(at(last.map_or(q.span, Clause::span).start)(err(
            "InvalidClauseComposition",
            "a query must end with RETURN or a clause that writes",
        )));
    }
    Ok(columns)
}

/// Checks one clause of a single query of `n` clauses against `scope`,
/// which it updates; the columns when it projects (WITH, RETURN).
fn clause(c: &Clause, scope: &mut Scope, n: usize) -> Result<Option<Vec<String>>, QueryError> {
    match c {
        Clause::Match {
            patterns, where_, ..
        } => {
            for p in patterns {
                bind_pattern(scope, p, false)?;
            }
            for p in patterns {
                pattern_exprs(p, scope)?;
            }
            if let Some(w) = where_ {
                expr(w, scope, false)?;
                if matches!(kind_of(w, scope), Kind::Node | Kind::Rel | Kind::Path) {
                    return Err(err(
                        "InvalidArgumentType",
                        "WHERE takes a boolean, not a node, relationship or path",
                    ));
                }
            }
        }
        Clause::Create { patterns, .. } => {
            for p in patterns {
                for (r, _) in &p.element.chain {
                    if r.direction == RelDirection::Either {
                        return Err(err(
                            "RequiresDirectedRelationship",
                            "relationships to create need a direction",
                        ));
                    }
                }
                bind_pattern(scope, p, true)?;
            }
            for p in patterns {
                pattern_exprs(p, scope)?;
            }
        }
        Clause::Merge {
            pattern,
            on_create,
            on_match,
            ..
        } => {
            bind_pattern(scope, pattern, true)?;
            pattern_exprs(pattern, scope)?;
            for s in on_create.iter().chain(on_match) {
                set_item(s, scope)?;
            }
        }
        Clause::Unwind { expr: e, alias, .. } => {
            expr(e, scope, false)?;
            if scope.contains_key(alias) {
                return Err(err(
                    "VariableAlreadyBound",
                    format!("`{alias}` is already bound"),
                ));
            }
            scope.insert(alias.clone(), Kind::Value);
        }
        Clause::Set { .. } | Clause::Remove { .. } | Clause::Delete { .. } => updates(c, scope)?,
        Clause::With(p) => {
            let (cols, new_scope) = projection(p, scope, true)?;
            *scope = new_scope;
            return Ok(Some(cols));
        }
        Clause::Return(p) => return Ok(Some(projection(p, scope, false)?.0)),
        Clause::Foreach { .. } | Clause::Call { .. } | Clause::Subquery { .. } => {
            nested(c, scope, n)?
        }
    }
    Ok(None)
}

/// [`clause`] for SET, REMOVE and DELETE.
fn updates(c: &Clause, scope: &Scope) -> Result<(), QueryError> {
    match c {
        Clause::Set { items, .. } => {
            for s in items {
                set_item(s, scope)?;
            }
        }
        Clause::Remove { items, .. } => {
            for r in items {
                match r {
                    RemoveItem::Property(e) => expr(e, scope, false)?,
                    RemoveItem::Labels { var, .. } => need(var, scope)?,
                    RemoveItem::DynamicLabels { var, labels } => {
                        need(var, scope)?;
                        for l in labels {
                            expr(l, scope, false)?;
                        }
                    }
                }
            }
        }
        Clause::Delete { exprs, .. } => {
            for e in exprs {
                if matches!(e.kind, ExprKind::HasLabels(..)) {
                    return Err(err(
                        "InvalidDelete",
                        "DELETE takes nodes, relationships or paths, not labels",
                    ));
                }
                expr(e, scope, false)?;
                if kind_of(e, scope).is_scalar() {
                    return Err(err(
                        "InvalidArgumentType",
                        "DELETE takes nodes, relationships or paths",
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// [`clause`] for the clauses that hold others or call out: FOREACH, CALL
/// and CALL subqueries.
fn nested(c: &Clause, scope: &mut Scope, n: usize) -> Result<(), QueryError> {
    match c {
        Clause::Foreach {
            var, list, clauses, ..
        } => {
            expr(list, scope, false)?;
            let mut inner = scope.clone();
            inner.insert(var.clone(), Kind::Value);
            single(
                &SingleQuery {
                    clauses: clauses.clone(),
                    span: c.span(),
                },
                &inner,
            )?;
        }
        Clause::Call { args, yields, .. } => {
            for a in args.iter().flatten() {
                expr(a, scope, false)?;
            }
            if let Some(y) = yields {
                if y.star && n > 1 {
                    return Err(err(
                        "UnexpectedSyntax",
                        "YIELD * is only allowed in a standalone CALL",
                    ));
                }
                for (name, alias) in &y.items {
                    let v = alias.clone().unwrap_or_else(|| name.clone());
                    if scope.contains_key(&v) {
                        return Err(err(
                            "VariableAlreadyBound",
                            format!("`{v}` is already bound"),
                        ));
                    }
                    scope.insert(v, Kind::Value);
                }
                if let Some(w) = &y.where_ {
                    expr(w, scope, false)?;
                }
            }
        }
        Clause::Subquery {
            query,
            in_transactions,
            ..
        } => {
            if let Some(b) = in_transactions {
                limit_arg(&b.rows, "the batch size of IN TRANSACTIONS")?;
            }
            // The subquery sees the row; what it returns joins it (a
            // unit subquery, one that ends in an update, returns nothing).
            let cols = query_columns(query, scope)?;
            let returns = matches!(query.first.clauses.last(), Some(Clause::Return(_)));
            for c in cols.into_iter().filter(|_| returns) {
                if scope.contains_key(&c) {
                    return Err(err(
                        "VariableAlreadyBound",
                        format!("the subquery returns `{c}`, which is already bound"),
                    ));
                }
                scope.insert(c, Kind::Value);
            }
        }
        _ => {}
    }
    Ok(())
}

fn need(var: &str, scope: &Scope) -> Result<(), QueryError> {
    if scope.contains_key(var) {
        Ok(())
    } else {
        Err(err(
            "UndefinedVariable",
            format!("variable `{var}` is not defined"),
        ))
    }
}

fn set_item(s: &SetItem, scope: &Scope) -> Result<(), QueryError> {
    match s {
        SetItem::Property { target, value } => {
            expr(target, scope, false)?;
            if matches!(value.kind, ExprKind::Pattern(_)) {
                return Err(err(
                    "UnexpectedSyntax",
                    "a pattern cannot be a property value",
                ));
            }
            expr(value, scope, false)
        }
        SetItem::Replace { var, value, .. } => {
            need(var, scope)?;
            expr(value, scope, false)
        }
        SetItem::Labels { var, .. } => need(var, scope),
        SetItem::DynamicLabels { var, labels } => {
            need(var, scope)?;
            labels.iter().try_for_each(|l| expr(l, scope, false))
        }
    }
}

fn limit_arg(e: &Option<Expr>, what: &str) -> Result<(), QueryError> {
    let Some(e) = e else { return Ok(()) };
    match &e.kind {
        ExprKind::Int(i) if *i < 0 => Err(err(
            "NegativeIntegerArgument",
            format!("{what} must not be negative"),
        )),
        ExprKind::Float(_) => Err(err(
            "InvalidArgumentType",
            format!("{what} takes an integer"),
        )),
        ExprKind::Unary(UnOp::Neg, x) if matches!(x.kind, ExprKind::Int(_)) => Err(err(
            "NegativeIntegerArgument",
            format!("{what} must not be negative"),
        )),
        _ => expr(e, &Scope::new(), false).map_err(|_| {
            err(
                "NonConstantExpression",
                format!("{what} must not depend on variables"),
            )
        }),
    }
}

/// Checks WITH/RETURN; returns the columns and the scope after it.
fn projection(
    p: &Projection,
    scope: &Scope,
    is_with: bool,
) -> Result<(Vec<String>, Scope), QueryError> {
    // `WITH *` with nothing in scope passes nothing on (openCypher allows
    // it between updating clauses); `RETURN *` would return no column.
    if p.star && scope.is_empty() && !is_with {
        return Err(err(
            "NoVariablesInScope",
            "RETURN * needs variables in scope",
        ));
    }
    let mut out = if p.star { scope.clone() } else { Scope::new() };
    let mut columns: Vec<String> = if p.star {
        let mut k: Vec<String> = scope.keys().cloned().collect();
        k.sort();
        k
    } else {
        vec![]
    };
    let mut aggregating = false;
    // A WITH item without its alias is reported after the grouping checks,
    // which openCypher makes first (an ambiguous ORDER BY key wins).
    let mut no_alias = None;
    for item in &p.items {
        expr(&item.expr, scope, true)?;
        aggregating |= contains_aggregate(&item.expr);
        let name = match (&item.alias, &item.expr.kind) {
            (Some(a), _) => a.clone(),
            (None, ExprKind::Var(v)) => v.clone(),
            (None, _) => {
                if is_with && no_alias.is_none() {
                    no_alias = Some(err(
                        "NoExpressionAlias",
                        format!("`{}` needs an alias (AS name) in WITH", item.text),
                    ));
                }
                item.text.clone()
            }
        };
        if columns.contains(&name) {
            return Err(err(
                "ColumnNameConflict",
                format!("column `{name}` appears twice"),
            ));
        }
        if matches!(item.expr.kind, ExprKind::Pattern(_)) {
            return Err(err(
                "UnexpectedSyntax",
                "a pattern is a predicate: use it in WHERE, or write a pattern comprehension",
            ));
        }
        let kind = kind_of(&item.expr, scope);
        out.insert(name.clone(), kind);
        columns.push(name);
    }
    let grouping = aggregating.then(|| grouping::Grouping::of(p, scope));
    if let Some(g) = &grouping {
        for item in p.items.iter().filter(|i| contains_aggregate(&i.expr)) {
            g.item(&item.expr)?;
        }
    }
    // ORDER BY sees the projection, and the incoming variables unless the
    // projection is DISTINCT; a key that aggregates after an aggregating
    // projection sees its columns only (`grouping.rs`).
    let mut order_scope = if p.distinct && !aggregating {
        Scope::new()
    } else {
        scope.clone()
    };
    order_scope.extend(out.clone());
    for s in &p.order_by {
        if let Some(g) = grouping.as_ref().filter(|_| contains_aggregate(&s.expr)) {
            g.order_key(&s.expr, &out)?;
        }
        expr(&s.expr, &order_scope, aggregating)?;
    }
    if let Some(e) = no_alias {
        return Err(e);
    }
    limit_arg(&p.skip, "SKIP")?;
    limit_arg(&p.limit, "LIMIT")?;
    if let Some(w) = &p.where_ {
        let mut where_scope = if aggregating || p.distinct {
            Scope::new()
        } else {
            scope.clone()
        };
        where_scope.extend(out.clone());
        expr(w, &where_scope, false)?;
    }
    Ok((columns, out))
}

/// Whether `e` calls `rand()` (through operators, lists and calls).
fn calls_rand(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { name, args, .. } => {
            name.eq_ignore_ascii_case("rand") || args.iter().any(calls_rand)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => calls_rand(a) || calls_rand(b),
        ExprKind::Unary(_, x) | ExprKind::Property(x, _) | ExprKind::IsNull(x, _) => calls_rand(x),
        ExprKind::List(items) => items.iter().any(calls_rand),
        _ => false,
    }
}

fn contains_aggregate(e: &Expr) -> bool {
    let mut found = false;
    visit_aggregates(e, &mut |_| found = true);
    found
}

/// Checks an expression: variables in scope, functions known, aggregates
/// only where `allow_aggregates` and never nested.
/// A call of `name` with `n` arguments is one of a function the registry
/// lists, with as many arguments as it takes (a namespaced name, `ns.f`, is
/// checked where it runs).
fn registered(name: &str, n: usize) -> Result<(), QueryError> {
    if name.contains('.') {
        return Ok(());
    }
    let Some(f) = crate::functions::get(name) else {
        return Err(err("UnknownFunction", format!("unknown function {name}()")));
    };
    if !f.takes(n) {
        return Err(err(
            "InvalidNumberOfArguments",
            format!("{name}() takes {}, not {n}", f.arity()),
        ));
    }
    Ok(())
}

fn expr(e: &Expr, scope: &Scope, allow_aggregates: bool) -> Result<(), QueryError> {
    crate::deep(|| expr_checked(e, scope, allow_aggregates)).map_err(at(e.span.start))
}

fn expr_checked(e: &Expr, scope: &Scope, allow_aggregates: bool) -> Result<(), QueryError> {
    if is_aggregate(e) {
        if !allow_aggregates {
            return Err(err(
                "InvalidAggregation",
                "aggregations are only allowed in WITH, RETURN and ORDER BY",
            ));
        }
        if let ExprKind::Call { name, args, .. } = &e.kind {
            registered(name, args.len())?;
            for a in args {
                if contains_aggregate(a) {
                    return Err(err("NestedAggregation", "aggregations cannot be nested"));
                }
                if calls_rand(a) {
                    return Err(err(
                        "NonConstantExpression",
                        "an aggregation cannot take rand(): its result would change per run",
                    ));
                }
                expr(a, scope, false)?;
            }
        }
        return Ok(());
    }
    let sub = |x: &Expr| expr(x, scope, allow_aggregates);
    // A literal that can never be a boolean, given to a boolean operator, is
    // a compile-time type error.
    let boolean_operand = |x: &Expr| -> Result<(), QueryError> {
        if matches!(
            x.kind,
            ExprKind::Int(_)
                | ExprKind::Float(_)
                | ExprKind::String(_)
                | ExprKind::List(_)
                | ExprKind::Map(_)
        ) {
            return Err(err(
                "InvalidArgumentType",
                "a boolean operator takes booleans",
            ));
        }
        Ok(())
    };
    match &e.kind {
        ExprKind::Binary(BinOp::And | BinOp::Or | BinOp::Xor, a, b) => {
            boolean_operand(a)?;
            boolean_operand(b)?;
            sub(a)?;
            sub(b)
        }
        ExprKind::Unary(UnOp::Not, x) => {
            boolean_operand(x)?;
            sub(x)
        }
        ExprKind::Var(v) => need(v, scope),
        ExprKind::List(items) => items.iter().try_for_each(sub),
        ExprKind::Map(entries) => entries.iter().try_for_each(|(_, v)| sub(v)),
        ExprKind::Property(b, _) if kind_of(b, scope) == Kind::Path => {
            Err(err("InvalidArgumentType", "a path has no properties"))
        }
        ExprKind::Property(b, _)
        | ExprKind::Unary(_, b)
        | ExprKind::IsNull(b, _)
        | ExprKind::HasLabels(b, _) => sub(b),
        ExprKind::Binary(BinOp::In, _, b)
            if matches!(
                b.kind,
                ExprKind::Bool(_)
                    | ExprKind::Int(_)
                    | ExprKind::Float(_)
                    | ExprKind::String(_)
                    | ExprKind::Map(_)
            ) =>
        {
            Err(err("InvalidArgumentType", "IN takes a list on its right"))
        }
        ExprKind::Binary(
            op @ (BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Pow),
            a,
            b,
        ) if [a, b].iter().any(|x| kind_of(x, scope) == Kind::NotNumber) => Err(err(
            "InvalidArgumentType",
            format!(
                "`{}` takes numbers (or temporal values), not a string or a boolean",
                op.symbol()
            ),
        )),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            sub(a)?;
            sub(b)
        }
        ExprKind::Slice(a, b, c) => {
            sub(a)?;
            b.iter().try_for_each(|x| sub(x))?;
            c.iter().try_for_each(|x| sub(x))
        }
        ExprKind::Case {
            operand,
            whens,
            else_,
        } => {
            operand.iter().try_for_each(|x| sub(x))?;
            whens.iter().try_for_each(|(a, b)| {
                sub(a)?;
                sub(b)
            })?;
            else_.iter().try_for_each(|x| sub(x))
        }
        ExprKind::Call { name, args, .. } => {
            let lname = name.to_ascii_lowercase();
            registered(name, args.len())?;
            // A pattern is a predicate: only exists() takes one (size() is
            // told to use COUNT below).
            if lname != "exists"
                && lname != "size"
                && args.iter().any(|a| matches!(a.kind, ExprKind::Pattern(_)))
            {
                return Err(err(
                    "UnexpectedSyntax",
                    format!("{name}() of a pattern: a pattern is a predicate; use it in WHERE, or write a pattern comprehension"),
                ));
            }
            if let [a] = args.as_slice() {
                let k = kind_of(a, scope);
                if lname == "size" && matches!(a.kind, ExprKind::Pattern(_)) {
                    return Err(err(
                        "UnexpectedSyntax",
                        "size() of a pattern: use COUNT { pattern } instead",
                    ));
                }
                let wrong = match lname.as_str() {
                    "size" => k == Kind::Path,
                    "length" => matches!(k, Kind::Node | Kind::Rel),
                    "type" => k == Kind::Node,
                    "labels" => matches!(k, Kind::Rel | Kind::Path),
                    // A literal that is not a map, node or relationship.
                    "properties" => matches!(
                        a.kind,
                        ExprKind::Int(_)
                            | ExprKind::Float(_)
                            | ExprKind::String(_)
                            | ExprKind::Bool(_)
                            | ExprKind::List(_)
                    ),
                    _ => false,
                };
                if wrong {
                    return Err(err(
                        "InvalidArgumentType",
                        format!("{name}() cannot take a {k:?}"),
                    ));
                }
            }
            args.iter().try_for_each(sub)
        }
        ExprKind::ListComprehension {
            var,
            list,
            filter,
            map,
        } => {
            sub(list)?;
            let mut inner = scope.clone();
            inner.insert(var.clone(), element_kind(list));
            filter.iter().try_for_each(|x| expr(x, &inner, false))?;
            map.iter().try_for_each(|x| expr(x, &inner, false))
        }
        ExprKind::Quantified {
            var, list, filter, ..
        } => {
            sub(list)?;
            let mut inner = scope.clone();
            inner.insert(var.clone(), element_kind(list));
            filter.iter().try_for_each(|x| expr(x, &inner, false))
        }
        ExprKind::Reduce {
            acc,
            init,
            var,
            list,
            expr: body,
        } => {
            sub(init)?;
            sub(list)?;
            let mut inner = scope.clone();
            inner.insert(acc.clone(), Kind::Value);
            inner.insert(var.clone(), Kind::Value);
            expr(body, &inner, false)
        }
        ExprKind::PatternComprehension {
            var,
            pattern,
            filter,
            map,
        } => {
            let mut inner = scope.clone();
            let p = PathPattern::plain(var.clone(), pattern.clone(), e.span);
            bind_pattern(&mut inner, &p, false)?;
            filter.iter().try_for_each(|x| expr(x, &inner, false))?;
            expr(map, &inner, false)
        }
        ExprKind::Pattern(element) => {
            let vars = std::iter::once(&element.start.var)
                .chain(element.chain.iter().flat_map(|(r, n)| [&r.var, &n.var]))
                .flatten();
            for v in vars {
                need(v, scope)?;
            }
            let mut inner = scope.clone();
            let p = PathPattern::plain(None, element.clone(), e.span);
            bind_pattern(&mut inner, &p, false)
        }
        ExprKind::Exists(q) | ExprKind::CountSubquery(q) => {
            let writes = q.parts().flat_map(|p| &p.clauses).any(|c| {
                matches!(
                    c,
                    Clause::Create { .. }
                        | Clause::Merge { .. }
                        | Clause::Set { .. }
                        | Clause::Remove { .. }
                        | Clause::Delete { .. }
                        | Clause::Foreach { .. }
                )
            });
            if writes {
                return Err(err(
                    "InvalidClauseComposition",
                    "an EXISTS or COUNT subquery only reads",
                ));
            }
            Ok(())
        }
        ExprKind::MapProjection(base, items) => {
            sub(base)?;
            for it in items {
                match it {
                    MapProjectionItem::Literal(_, x) => sub(x)?,
                    MapProjectionItem::Variable(v) => need(v, scope)?,
                    _ => {}
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message `check` gives `q`, placed in its text.
    fn message(q: &str) -> String {
        let parsed = plexus_cypher::parse(q).expect("parses");
        match check(&parsed) {
            Ok(_) => panic!("{q} passes"),
            Err(e) => e.located(q).to_string(),
        }
    }

    #[test]
    fn every_error_names_the_line_and_column_of_what_failed() {
        let cases = [
            // The innermost expression that failed.
            (
                "MATCH (a)\nRETURN count(count(a.x))",
                "NestedAggregation",
                (2, 8),
            ),
            (
                "MATCH (a)\nRETURN a.x + (true AND nope)",
                "UndefinedVariable",
                (2, 24),
            ),
            (
                "MATCH (a)\nRETURN a.x + (1 AND a)",
                "InvalidArgumentType",
                (2, 14),
            ),
            // Columns count characters, not bytes.
            ("RETURN 'é', 'ü' + nope", "UndefinedVariable", (1, 19)),
            // The pattern.
            (
                "MATCH (a)-[r]->(b)-[r]->(c) RETURN 1",
                "RelationshipUniqueness",
                (1, 7),
            ),
            // The clause, when no part of it is to blame.
            (
                "MATCH (a), (b)\nCREATE (a)-[:T]-(b)",
                "RequiresDirected",
                (2, 1),
            ),
            ("MATCH (a)\nWITH a.x\nRETURN 1", "NoExpressionAlias", (2, 1)),
            (
                "RETURN 1 AS x\nRETURN 2 AS x",
                "InvalidClauseComposition",
                (1, 1),
            ),
            ("MATCH (n)\n  WITH n", "InvalidClauseComposition", (2, 3)),
            // The part of a union.
            (
                "RETURN 1 AS x\nUNION\nRETURN 2 AS y",
                "DifferentColumnsInUnion",
                (3, 1),
            ),
        ];
        for (q, code, (line, column)) in cases {
            let m = message(q);
            assert!(m.contains(code), "{q}: {m}");
            assert!(
                m.ends_with(&format!("(line {line}, column {column})")),
                "{q}: {m}"
            );
        }
    }

    #[test]
    fn an_offset_off_a_character_boundary_is_placed_without_a_panic() {
        let e = QueryError::At {
            offset: 3,
            error: Box::new(err("X", "bad")),
        };
        assert_eq!(
            e.located("éé").to_string(),
            "SyntaxError (X): bad (line 1, column 2)"
        );
        let past = QueryError::At {
            offset: 99,
            error: Box::new(err("X", "bad")),
        };
        assert!(past
            .located("ab\nc")
            .to_string()
            .ends_with("(line 2, column 2)"));
    }
}
