//! The syntax tree of a Cypher query. Every node keeps its source span so
//! that later stages (binder, planner) report errors at the right place.

use crate::error::Span;

/// A whole statement: one or more single queries joined by UNION.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub first: SingleQuery,
    /// `(all, query)` for each `UNION [ALL] query` that follows.
    pub unions: Vec<(bool, SingleQuery)>,
    /// The `FOR SYSTEM_TIME AS OF …` / `FOR VALID_TIME AS OF …` qualifiers
    /// written after the patterns of its MATCH clauses: they say as of
    /// which instant the whole query reads the graph.
    pub as_of: Vec<TimeQualifier>,
    pub span: Span,
}

/// `FOR SYSTEM_TIME AS OF at` (or `FOR VALID_TIME AS OF at`) after the
/// patterns of a MATCH; for valid time also a range, `BETWEEN at AND end`
/// or `FROM at TO end`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeQualifier {
    /// Valid time rather than system time.
    pub valid: bool,
    /// The instant, or where the range starts.
    pub at: Expr,
    /// Where the range ends, for a range.
    pub end: Option<RangeEnd>,
    pub span: Span,
}

/// The end of a range of valid time.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeEnd {
    pub at: Expr,
    /// `BETWEEN … AND end` includes the end; `FROM … TO end` does not.
    pub inclusive: bool,
}

/// What one statement asks: a query (possibly under EXPLAIN or PROFILE)
/// or a schema command.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    Query(Query),
    /// Show the plan without running the query.
    Explain(Query),
    /// Run the query and show the plan with the rows each step produced.
    Profile(Query),
    /// `CREATE [VECTOR] INDEX [name] [IF NOT EXISTS] FOR (n:Label) ON (n.key)
    /// [OPTIONS {…}]`, or `FOR ()-[r:TYPE]-() ON (r.key)` for relationships.
    CreateIndex {
        name: Option<String>,
        /// The label, or the relationship type when `relationship`; `None`
        /// for an index of every node (`FOR (n)`) or of every relationship
        /// type (`FOR ()-[r]-()`).
        label: Option<String>,
        /// The index holds relationships (`FOR ()-[r:TYPE]-()`).
        relationship: bool,
        key: String,
        if_not_exists: bool,
        /// A vector index (`CREATE VECTOR INDEX`).
        vector: bool,
        /// A list-element index (`ON EACH (n.key)`): each element of a
        /// list property is indexed, for `x IN n.key`.
        each: bool,
        /// The `OPTIONS` map, evaluated with the query's parameters.
        options: Option<Expr>,
    },
    /// `CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR (n:Label) REQUIRE n.key IS UNIQUE | IS NOT NULL`.
    CreateConstraint {
        name: Option<String>,
        label: String,
        key: String,
        unique: bool,
        if_not_exists: bool,
    },
    /// `DROP INDEX name [IF EXISTS]`, `DROP CONSTRAINT name [IF EXISTS]`.
    Drop {
        constraint: bool,
        name: String,
        if_exists: bool,
    },
    /// `SHOW [<type>] INDEXES`, `SHOW CONSTRAINTS`, `SHOW [ALL | BUILT IN]
    /// FUNCTIONS | PROCEDURES`, each with an optional tail over the listed
    /// columns.
    Show {
        what: Shown,
        tail: Option<Box<ShowTail>>,
    },
}

/// What a SHOW statement lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Indexes; of one type only for `SHOW VECTOR INDEXES`, `SHOW RANGE
    /// INDEXES` and the like.
    Indexes {
        only: Option<IndexType>,
    },
    Constraints,
    Functions,
    Procedures,
}

/// The index types of Neo4j's `SHOW <type> INDEXES` (Plexus has range,
/// list-element and vector indexes; a SHOW of another type lists none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexType {
    Range,
    Vector,
    FullText,
    Text,
    Point,
    Lookup,
}

impl IndexType {
    /// The keyword, and the `type` column's value for an index of the type.
    pub const ALL: [(&'static str, IndexType); 6] = [
        ("RANGE", IndexType::Range),
        ("VECTOR", IndexType::Vector),
        ("FULLTEXT", IndexType::FullText),
        ("TEXT", IndexType::Text),
        ("POINT", IndexType::Point),
        ("LOOKUP", IndexType::Lookup),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("", |(n, _)| n)
    }
}

/// `YIELD items [ORDER BY …] [SKIP …] [LIMIT …] [WHERE …] [RETURN …]`
/// after a SHOW, or a bare `WHERE …`: a query over the listed columns.
#[derive(Debug, Clone, PartialEq)]
pub struct ShowTail {
    /// The YIELD as a WITH's projection (`*` for a bare WHERE, which keeps
    /// the columns listed without a YIELD).
    pub yielded: Projection,
    /// Whether the statement wrote YIELD (`YIELD *` lists every column; no
    /// YIELD, only those shown by default).
    pub explicit: bool,
    /// The RETURN, when written; else the yielded columns are returned.
    pub ret: Option<Projection>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SingleQuery {
    pub clauses: Vec<Clause>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Clause {
    Match {
        optional: bool,
        patterns: Vec<PathPattern>,
        where_: Option<Expr>,
        span: Span,
    },
    Unwind {
        expr: Expr,
        alias: String,
        span: Span,
    },
    Create {
        patterns: Vec<PathPattern>,
        span: Span,
    },
    Merge {
        pattern: PathPattern,
        on_create: Vec<SetItem>,
        on_match: Vec<SetItem>,
        span: Span,
    },
    Set {
        items: Vec<SetItem>,
        span: Span,
    },
    Remove {
        items: Vec<RemoveItem>,
        span: Span,
    },
    Delete {
        detach: bool,
        exprs: Vec<Expr>,
        span: Span,
    },
    With(Projection),
    Return(Projection),
    Call {
        procedure: String,
        args: Option<Vec<Expr>>,
        yields: Option<Yield>,
        span: Span,
    },
    Subquery {
        query: Box<Query>,
        /// `IN TRANSACTIONS [OF n ROWS]`: the batch size, if given.
        in_transactions: Option<InTransactions>,
        span: Span,
    },
    Foreach {
        var: String,
        list: Expr,
        clauses: Vec<Clause>,
        span: Span,
    },
}

impl Clause {
    pub fn span(&self) -> Span {
        match self {
            Clause::Match { span, .. }
            | Clause::Unwind { span, .. }
            | Clause::Create { span, .. }
            | Clause::Merge { span, .. }
            | Clause::Set { span, .. }
            | Clause::Remove { span, .. }
            | Clause::Delete { span, .. }
            | Clause::Call { span, .. }
            | Clause::Subquery { span, .. }
            | Clause::Foreach { span, .. } => *span,
            Clause::With(p) | Clause::Return(p) => p.span,
        }
    }
}

/// `YIELD *` or `YIELD a, b AS c [WHERE …]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Yield {
    pub star: bool,
    pub items: Vec<(String, Option<String>)>,
    pub where_: Option<Expr>,
}

/// The body of WITH and RETURN.
/// `CALL { … } IN TRANSACTIONS [OF n ROWS]`.
#[derive(Debug, Clone, PartialEq)]
pub struct InTransactions {
    pub rows: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub distinct: bool,
    pub star: bool,
    pub items: Vec<ProjectionItem>,
    pub order_by: Vec<SortItem>,
    pub skip: Option<Expr>,
    pub limit: Option<Expr>,
    /// WITH … WHERE.
    pub where_: Option<Expr>,
    pub span: Span,
    /// For a query's final `RETURN *`: the variables in scope, sorted (the
    /// star's columns even when no row comes). The parser leaves it empty;
    /// the query engine's binder fills it in.
    pub star_scope: Vec<String>,
}

impl Projection {
    /// A projection of `items` (and of every variable when `star`), with
    /// no DISTINCT, ordering, SKIP, LIMIT or WHERE.
    pub fn plain(star: bool, items: Vec<ProjectionItem>, span: Span) -> Projection {
        Projection {
            distinct: false,
            star,
            items,
            order_by: vec![],
            skip: None,
            limit: None,
            where_: None,
            span,
            star_scope: vec![],
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProjectionItem {
    pub expr: Expr,
    pub alias: Option<String>,
    /// The expression as written: the column name when there is no alias.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortItem {
    pub expr: Expr,
    pub descending: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SetItem {
    /// `n.p = v` (the target may be any property expression).
    Property { target: Expr, value: Expr },
    /// `n = {map}` or `n += {map}`.
    Replace {
        var: String,
        value: Expr,
        merge: bool,
    },
    /// `n:A:B`.
    Labels { var: String, labels: Vec<String> },
    /// `n:$(expr)` (Neo4j 5.26's dynamic labels), possibly beside static
    /// ones (as string literals): each expression gives a label or a list.
    DynamicLabels { var: String, labels: Vec<Expr> },
}

#[derive(Debug, Clone, PartialEq)]
pub enum RemoveItem {
    Property(Expr),
    Labels {
        var: String,
        labels: Vec<String>,
    },
    /// `n:$(expr)`, as for [`SetItem::DynamicLabels`].
    DynamicLabels {
        var: String,
        labels: Vec<Expr>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    Normal,
    Shortest,
    AllShortest,
}

/// `[p =] [shortestPath(] (a)-[r]->(b)… [)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct PathPattern {
    pub var: Option<String>,
    pub kind: PathKind,
    pub element: PatternElement,
    pub span: Span,
}

impl PathPattern {
    /// A plain (not shortest) path pattern around one element, as pattern
    /// predicates and comprehensions are matched.
    pub fn plain(var: Option<String>, element: PatternElement, span: Span) -> PathPattern {
        PathPattern {
            var,
            kind: PathKind::Normal,
            element,
            span,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PatternElement {
    pub start: NodePattern,
    pub chain: Vec<(RelPattern, NodePattern)>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NodePattern {
    pub var: Option<String>,
    pub labels: Option<LabelExpr>,
    pub props: Option<Box<Expr>>,
    pub where_: Option<Box<Expr>>,
    pub span: Span,
}

/// Label (or relationship type) expressions: `:A:B` is `And`, `:A|B` is
/// `Or`, `:!A` is `Not`, `:%` any label.
#[derive(Debug, Clone, PartialEq)]
pub enum LabelExpr {
    Name(String),
    And(Vec<LabelExpr>),
    Or(Vec<LabelExpr>),
    Not(Box<LabelExpr>),
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelDirection {
    /// `-[]->`
    Right,
    /// `<-[]-`
    Left,
    /// `-[]-` (or `<-[]->`)
    Either,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RelPattern {
    pub var: Option<String>,
    pub types: Option<LabelExpr>,
    pub direction: RelDirection,
    /// `*`, `*2`, `*1..3`, `*..3`, `*2..`: `Some((min, max))`.
    pub length: Option<(Option<u64>, Option<u64>)>,
    pub props: Option<Box<Expr>>,
    pub where_: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Or,
    Xor,
    And,
    Eq,
    Neq,
    Lt,
    Gt,
    Le,
    Ge,
    RegexMatch,
    In,
    StartsWith,
    EndsWith,
    Contains,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
}

impl BinOp {
    /// The operator as a query writes it, for messages.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "OR",
            BinOp::Xor => "XOR",
            BinOp::And => "AND",
            BinOp::Eq => "=",
            BinOp::Neq => "<>",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::RegexMatch => "=~",
            BinOp::In => "IN",
            BinOp::StartsWith => "STARTS WITH",
            BinOp::EndsWith => "ENDS WITH",
            BinOp::Contains => "CONTAINS",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Pow => "^",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Not,
    Neg,
    Plus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantifier {
    All,
    Any,
    None,
    Single,
}

impl Query {
    /// The single queries a UNION joins, the first one first.
    pub fn parts(&self) -> impl Iterator<Item = &SingleQuery> {
        std::iter::once(&self.first).chain(self.unions.iter().map(|(_, p)| p))
    }

    /// [`Query::parts`], to change them.
    pub fn parts_mut(&mut self) -> impl Iterator<Item = &mut SingleQuery> {
        std::iter::once(&mut self.first).chain(self.unions.iter_mut().map(|(_, p)| p))
    }
}

impl Expr {
    /// Whether `other` is written the same, spans aside, for the forms
    /// grouping keys, aggregates and projected items take (variables,
    /// properties, literals, parameters, operators and calls over them);
    /// any other form is never the same as anything.
    pub fn same_as(&self, other: &Expr) -> bool {
        use ExprKind as K;
        let all = |xs: &[Expr], ys: &[Expr]| {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| x.same_as(y))
        };
        match (&self.kind, &other.kind) {
            (K::Var(x), K::Var(y)) | (K::Param(x), K::Param(y)) | (K::String(x), K::String(y)) => {
                x == y
            }
            (K::Null, K::Null) | (K::CountStar, K::CountStar) => true,
            (K::Int(x), K::Int(y)) => x == y,
            (K::Bool(x), K::Bool(y)) => x == y,
            (K::Float(x), K::Float(y)) => x.to_bits() == y.to_bits(),
            (K::List(xs), K::List(ys)) => all(xs, ys),
            (K::Property(x, k), K::Property(y, l)) => k == l && x.same_as(y),
            (K::Index(x1, x2), K::Index(y1, y2)) => x1.same_as(y1) && x2.same_as(y2),
            (K::Unary(o, x), K::Unary(p, y)) => o == p && x.same_as(y),
            (K::Binary(o, x1, x2), K::Binary(p, y1, y2)) => {
                o == p && x1.same_as(y1) && x2.same_as(y2)
            }
            (
                K::Call {
                    name: n,
                    distinct: d,
                    args: xs,
                },
                K::Call {
                    name: m,
                    distinct: e,
                    args: ys,
                },
            ) => n.eq_ignore_ascii_case(m) && d == e && all(xs, ys),
            _ => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum MapProjectionItem {
    /// `.name`
    Property(String),
    /// `.*`
    AllProperties,
    /// `key: expr`
    Literal(String, Expr),
    /// `var` (the variable's value under its own name)
    Variable(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Param(String),
    Var(String),
    List(Vec<Expr>),
    Map(Vec<(String, Expr)>),
    Property(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Slice(Box<Expr>, Option<Box<Expr>>, Option<Box<Expr>>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    IsNull(Box<Expr>, bool),
    HasLabels(Box<Expr>, LabelExpr),
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        else_: Option<Box<Expr>>,
    },
    Call {
        name: String,
        distinct: bool,
        args: Vec<Expr>,
    },
    CountStar,
    ListComprehension {
        var: String,
        list: Box<Expr>,
        filter: Option<Box<Expr>>,
        map: Option<Box<Expr>>,
    },
    PatternComprehension {
        var: Option<String>,
        pattern: PatternElement,
        filter: Option<Box<Expr>>,
        map: Box<Expr>,
    },
    Quantified {
        q: Quantifier,
        var: String,
        list: Box<Expr>,
        filter: Option<Box<Expr>>,
    },
    Reduce {
        acc: String,
        init: Box<Expr>,
        var: String,
        list: Box<Expr>,
        expr: Box<Expr>,
    },
    /// A pattern used as a predicate: `WHERE (a)-->(b)`.
    Pattern(PatternElement),
    Exists(Box<Query>),
    CountSubquery(Box<Query>),
    MapProjection(Box<Expr>, Vec<MapProjectionItem>),
}

#[cfg(test)]
mod tests {
    use crate::parse_expression;

    fn same(a: &str, b: &str) -> bool {
        let (a, b) = (parse_expression(a).unwrap(), parse_expression(b).unwrap());
        a.same_as(&b)
    }

    #[test]
    fn expressions_are_the_same_as_written_whatever_their_spacing() {
        assert!(same("a.name", "a . name"));
        assert!(same("me.age + count(you.age)", "me.age  +  COUNT(you.age)"));
        assert!(same(
            "[1, $p, 'x', null, true, 2.5][0]",
            "[1,$p,'x',null,true,2.5][0]"
        ));
        assert!(!same("a.name", "b.name"));
        assert!(!same("count(x)", "count(DISTINCT x)"));
        assert!(!same("a - b", "a + b"));
        assert!(!same("[1, 2]", "[1]"));
        // Forms outside the list are never the same, not even as themselves.
        assert!(!same("[x IN l | x]", "[x IN l | x]"));
    }
}
