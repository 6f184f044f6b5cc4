//! Recursive descent over the token list, with precedence climbing for
//! expressions. Backtracking is cheap (an index into the tokens) and is used
//! where Cypher's grammar needs look-ahead: `(a)-->(b)` as an expression,
//! pattern comprehensions, function names with namespaces.

use crate::ast::*;
use crate::error::{ParseError, Span};
use crate::lexer::{lex, Spanned, Tok};

/// Parses one statement.
pub fn parse(src: &str) -> Result<Query, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser::new(src, toks);
    let q = p.query()?;
    p.eat(&Tok::Semi);
    if let Some(t) = p.peek() {
        return Err(p.error_at(
            t.span,
            "UnexpectedSyntax",
            format!("unexpected {} after the end of the query", describe(&t.tok)),
            "a statement ends here; run one statement at a time",
        ));
    }
    Ok(q)
}

/// The parameters `src` names (`$id`, `$0`), each once, with the byte
/// offset of its first use, in the order of first use: a run checks them
/// all before it starts, as Neo4j does, so a missing one is an error that
/// names its place whether or not the run would have reached it. Text that
/// does not lex names none (it does not parse either).
pub fn parameters(src: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for t in lex(src).unwrap_or_default() {
        if let Tok::Param(name) = t.tok {
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, t.span.start));
            }
        }
    }
    out
}

/// Parses one statement: a query, `EXPLAIN`/`PROFILE` and a query, or a
/// schema command (`CREATE INDEX`, `CREATE CONSTRAINT`, `DROP`, `SHOW`).
pub fn parse_statement(src: &str) -> Result<Statement, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser::new(src, toks);
    let typed_index =
        p.is_kw_at(2, "INDEX") && IndexType::ALL.iter().any(|(kw, _)| p.is_kw_at(1, kw));
    let schema = (p.is_kw("CREATE")
        && (p.is_kw_at(1, "INDEX") || p.is_kw_at(1, "CONSTRAINT") || typed_index))
        || p.is_kw("DROP")
        || p.is_kw("SHOW");
    if !schema && !p.is_kw("EXPLAIN") && !p.is_kw("PROFILE") {
        return parse(src).map(Statement::Query);
    }
    let st = if p.eat_kw("EXPLAIN") {
        Statement::Explain(p.query()?)
    } else if p.eat_kw("PROFILE") {
        Statement::Profile(p.query()?)
    } else {
        p.schema()?
    };
    p.eat(&Tok::Semi);
    if let Some(t) = p.peek() {
        return Err(p.error_at(
            t.span,
            "UnexpectedSyntax",
            format!(
                "unexpected {} after the end of the statement",
                describe(&t.tok)
            ),
            "run one statement at a time",
        ));
    }
    Ok(st)
}

/// Parses a standalone expression (used by tools and tests).
pub fn parse_expression(src: &str) -> Result<Expr, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser::new(src, toks);
    let e = p.expr()?;
    if let Some(t) = p.peek() {
        return Err(p.error_at(
            t.span,
            "UnexpectedSyntax",
            format!("unexpected {} after the expression", describe(&t.tok)),
            "",
        ));
    }
    Ok(e)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("'{s}'"),
        Tok::Quoted(s) => format!("`{s}`"),
        Tok::Param(s) => format!("parameter ${s}"),
        Tok::Int(s) | Tok::HexInt(s) | Tok::OctInt(s) | Tok::Float(s) => format!("number {s}"),
        Tok::Str(s) => format!("string {s}"),
        other => format!("'{}'", symbol(other)),
    }
}

fn symbol(t: &Tok) -> &'static str {
    match t {
        Tok::LParen => "(",
        Tok::RParen => ")",
        Tok::LBracket => "[",
        Tok::RBracket => "]",
        Tok::LBrace => "{",
        Tok::RBrace => "}",
        Tok::Comma => ",",
        Tok::Dot => ".",
        Tok::DotDot => "..",
        Tok::Colon => ":",
        Tok::Semi => ";",
        Tok::Pipe => "|",
        Tok::Amp => "&",
        Tok::Bang => "!",
        Tok::Percent => "%",
        Tok::Plus => "+",
        Tok::PlusEq => "+=",
        Tok::Minus => "-",
        Tok::Star => "*",
        Tok::Slash => "/",
        Tok::Caret => "^",
        Tok::Eq => "=",
        Tok::Neq => "<>",
        Tok::BangEq => "!=",
        Tok::Lt => "<",
        Tok::Gt => ">",
        Tok::Le => "<=",
        Tok::Ge => ">=",
        Tok::RegexMatch => "=~",
        _ => "token",
    }
}

/// Words that end an expression or start a clause; they cannot be bare variable names.
const RESERVED: &[&str] = &[
    "MATCH",
    "OPTIONAL",
    "WHERE",
    "RETURN",
    "WITH",
    "UNWIND",
    "CREATE",
    "MERGE",
    "SET",
    "REMOVE",
    "DELETE",
    "DETACH",
    "ORDER",
    "BY",
    "SKIP",
    "LIMIT",
    "UNION",
    "AS",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "IS",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "STARTS",
    "ENDS",
    "CONTAINS",
    "DISTINCT",
    "CALL",
    "YIELD",
    "FOREACH",
    "ON",
    "ASC",
    "DESC",
    "ASCENDING",
    "DESCENDING",
];

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Spanned>,
    pos: usize,
    /// How deeply the expression being parsed is nested.
    depth: usize,
    /// Token positions where a `(` was tried as a pattern and is not one:
    /// each is tried once, so nested parentheses parse in polynomial time
    /// instead of twice per level.
    not_patterns: std::collections::HashSet<usize>,
    /// The time qualifiers of the MATCH clauses parsed so far; each query
    /// takes those written inside it.
    as_of: Vec<TimeQualifier>,
    /// How many queries the one being parsed is nested in.
    queries: usize,
}

/// How deeply expressions may nest (parentheses, operators, chains of
/// operators, property accesses): every later phase walks the tree
/// recursively, and this keeps every walk far from a stack overflow.
pub const MAX_NESTING: usize = 500;

type R<T> = Result<T, ParseError>;

impl<'a> Parser<'a> {
    fn new(src: &'a str, toks: Vec<Spanned>) -> Parser<'a> {
        Parser {
            src,
            toks,
            pos: 0,
            depth: 0,
            not_patterns: Default::default(),
            as_of: Vec::new(),
            queries: 0,
        }
    }

    /// Parses one nesting level deeper, refusing past [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.deep_enough(0)?;
        self.depth += 1;
        // Each level of nesting takes several frames of the descent; the
        // stack grows on the heap when less than 128 KiB is left.
        let r = stacker::maybe_grow(128 << 10, 4 << 20, || f(self));
        self.depth -= 1;
        r
    }

    /// Refuses an expression whose nesting, with `links` more levels from
    /// a chain of operators, would pass [`MAX_NESTING`].
    fn deep_enough(&self, links: usize) -> R<()> {
        if self.depth.saturating_add(links) >= MAX_NESTING {
            return Err(self.error_at(
                self.here(),
                "NestingTooDeep",
                format!("the expression is nested more than {MAX_NESTING} levels deep"),
                "split it, or pass the value as a parameter",
            ));
        }
        Ok(())
    }

    fn peek(&self) -> Option<&Spanned> {
        self.toks.get(self.pos)
    }

    fn peek_tok(&self, ahead: usize) -> Option<&Tok> {
        self.toks.get(self.pos + ahead).map(|t| &t.tok)
    }

    fn here(&self) -> Span {
        match self.peek() {
            Some(t) => t.span,
            None => Span {
                start: self.src.len(),
                end: self.src.len(),
            },
        }
    }

    fn prev_end(&self) -> usize {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(0, |t| t.span.end)
    }

    fn span_from(&self, start: usize) -> Span {
        Span {
            start,
            end: self.prev_end().max(start),
        }
    }

    fn bump(&mut self) -> Option<Spanned> {
        let t = self.toks.get(self.pos).cloned();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    fn at(&self, t: &Tok) -> bool {
        self.peek_tok(0) == Some(t)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.at(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn error_at(
        &self,
        span: Span,
        code: &'static str,
        msg: impl Into<String>,
        hint: impl Into<String>,
    ) -> ParseError {
        ParseError::new(self.src, span, code, msg, hint)
    }

    fn unexpected(&self, expected: &str) -> ParseError {
        let found = self
            .peek()
            .map_or_else(|| "the end of the query".to_string(), |t| describe(&t.tok));
        self.error_at(
            self.here(),
            "UnexpectedSyntax",
            format!("expected {expected}, found {found}"),
            "",
        )
    }

    fn expect(&mut self, t: &Tok) -> R<Span> {
        if self.at(t) {
            Ok(self.bump().expect("checked").span)
        } else {
            Err(self.unexpected(&format!("'{}'", symbol(t))))
        }
    }

    fn is_kw_at(&self, ahead: usize, kw: &str) -> bool {
        matches!(self.peek_tok(ahead), Some(Tok::Ident(s)) if s.eq_ignore_ascii_case(kw))
    }

    fn is_kw(&self, kw: &str) -> bool {
        self.is_kw_at(0, kw)
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_kw(&mut self, kw: &str) -> R<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.unexpected(kw))
        }
    }

    /// The schema commands.
    fn schema(&mut self) -> R<Statement> {
        if self.eat_kw("SHOW") {
            if !self.eat_kw("ALL") && self.eat_kw("BUILT") {
                self.expect_kw("IN")?;
            }
            let what = if self.eat_kw("FUNCTIONS") || self.eat_kw("FUNCTION") {
                Shown::Functions
            } else if self.eat_kw("PROCEDURES") || self.eat_kw("PROCEDURE") {
                Shown::Procedures
            } else {
                let only = self.index_type();
                if only.is_none() && (self.eat_kw("CONSTRAINTS") || self.eat_kw("CONSTRAINT")) {
                    Shown::Constraints
                } else if self.eat_kw("INDEXES") || self.eat_kw("INDEX") {
                    Shown::Indexes { only }
                } else {
                    return Err(self.unexpected("INDEXES, CONSTRAINTS, FUNCTIONS or PROCEDURES"));
                }
            };
            let tail = self.show_tail()?;
            return Ok(Statement::Show { what, tail });
        }
        if self.eat_kw("DROP") {
            let constraint = if self.eat_kw("CONSTRAINT") {
                true
            } else {
                self.expect_kw("INDEX")?;
                false
            };
            let name = self.name()?;
            let if_exists = self.eat_kw("IF");
            if if_exists {
                self.expect_kw("EXISTS")?;
            }
            return Ok(Statement::Drop {
                constraint,
                name,
                if_exists,
            });
        }
        self.expect_kw("CREATE")?;
        let at = self.here();
        let typed = self.index_type();
        if let Some(t) = typed {
            if !matches!(t, IndexType::Range | IndexType::Vector) {
                return Err(self.error_at(
                    at,
                    "UnsupportedIndexType",
                    format!(
                        "Plexus has no {} indexes: it has range (`CREATE INDEX`), list-element \
                         (`ON EACH`) and vector (`CREATE VECTOR INDEX`) indexes",
                        t.name()
                    ),
                    "",
                ));
            }
        }
        let vector = typed == Some(IndexType::Vector);
        let constraint = if typed.is_none() && self.eat_kw("CONSTRAINT") {
            true
        } else {
            self.expect_kw("INDEX")?;
            false
        };
        let name = if self.is_kw("IF") || self.is_kw("FOR") || self.is_kw("ON") {
            None
        } else {
            Some(self.name()?)
        };
        let if_not_exists = self.eat_kw("IF");
        if if_not_exists {
            self.expect_kw("NOT")?;
            self.expect_kw("EXISTS")?;
        }
        // FOR (n:Label) or FOR ()-[r:TYPE]-()
        self.expect_kw("FOR")?;
        let at = self.here();
        let (var, label, relationship) = self.schema_target()?;
        if relationship && constraint {
            return Err(self.error_at(
                at,
                "InvalidSyntax",
                "constraints are on nodes (`FOR (n:Label)`); relationships take indexes only",
                "",
            ));
        }
        let property = |p: &mut Self| -> R<String> {
            let at = p.here();
            let v = p.name()?;
            if v != var {
                return Err(p.error_at(
                    at,
                    "UndefinedVariable",
                    format!("`{v}` is not the pattern's variable `{var}`"),
                    "",
                ));
            }
            p.expect(&Tok::Dot)?;
            p.name()
        };
        if !constraint {
            self.expect_kw("ON")?;
            // `ON EACH (n.key)`: Plexus's list-element index.
            let each_at = self.here();
            let each = self.eat_kw("EACH");
            if each && vector {
                return Err(self.error_at(
                    each_at,
                    "InvalidSyntax",
                    "`ON EACH` makes a list-element index of a property; not a vector index",
                    "",
                ));
            }
            // Neo4j takes `ON (n.key)`, and `ON n.key` for vector indexes.
            let key = if self.eat(&Tok::LParen) {
                let key = property(self)?;
                self.expect(&Tok::RParen)?;
                key
            } else {
                property(self)?
            };
            let options = if self.eat_kw("OPTIONS") {
                Some(self.map_literal()?)
            } else {
                None
            };
            return Ok(Statement::CreateIndex {
                name,
                label,
                relationship,
                key,
                if_not_exists,
                vector,
                each,
                options,
            });
        }
        if !self.eat_kw("REQUIRE") {
            self.expect_kw("ASSERT")?;
        }
        let key = property(self)?;
        self.expect_kw("IS")?;
        let unique = if self.eat_kw("UNIQUE") {
            true
        } else if self.eat_kw("NOT") {
            self.expect_kw("NULL")?;
            false
        } else {
            return Err(self.unexpected("UNIQUE or NOT NULL"));
        };
        let Some(label) = label else {
            return Err(self.error_at(at, "InvalidSyntax", "a constraint needs a label", ""));
        };
        Ok(Statement::CreateConstraint {
            name,
            label,
            key,
            unique,
            if_not_exists,
        })
    }

    /// What a schema command is for: `(n:Label)`, or `()-[r:TYPE]-()` with
    /// either arrow or none; the variable, the label or type, and whether
    /// it is a relationship.
    fn schema_target(&mut self) -> R<(String, Option<String>, bool)> {
        self.expect(&Tok::LParen)?;
        if !self.eat(&Tok::RParen) {
            let var = self.name()?;
            // Without a label, the index holds every node.
            let label = if self.eat(&Tok::Colon) {
                Some(self.name()?)
            } else {
                None
            };
            self.expect(&Tok::RParen)?;
            return Ok((var, label, false));
        }
        self.eat(&Tok::Lt);
        self.expect(&Tok::Minus)?;
        self.expect(&Tok::LBracket)?;
        let var = self.name()?;
        // Without a type, the index holds relationships of every type.
        let rel_type = if self.eat(&Tok::Colon) {
            Some(self.name()?)
        } else {
            None
        };
        self.expect(&Tok::RBracket)?;
        self.expect(&Tok::Minus)?;
        self.eat(&Tok::Gt);
        self.expect(&Tok::LParen)?;
        self.expect(&Tok::RParen)?;
        Ok((var, rel_type, true))
    }

    /// A name: an identifier (keywords allowed) or a backtick-quoted name.
    fn name(&mut self) -> R<String> {
        match self.peek_tok(0) {
            Some(Tok::Ident(s)) | Some(Tok::Quoted(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.unexpected("a name")),
        }
    }

    /// A variable name: not a reserved word unless quoted.
    fn is_variable_start(&self) -> bool {
        match self.peek_tok(0) {
            Some(Tok::Quoted(_)) => true,
            Some(Tok::Ident(s)) => !RESERVED.iter().any(|k| s.eq_ignore_ascii_case(k)),
            _ => false,
        }
    }

    fn variable(&mut self) -> R<String> {
        if self.is_variable_start() {
            self.name()
        } else {
            Err(self.unexpected("a variable name"))
        }
    }

    // ---- statements and clauses ----

    fn query(&mut self) -> R<Query> {
        let start = self.here().start;
        let mark = self.as_of.len();
        self.queries += 1;
        let parts = self.query_parts();
        self.queries -= 1;
        let (first, unions) = parts?;
        let as_of = self.as_of.split_off(mark);
        if let (true, Some(q)) = (self.queries > 0, as_of.first()) {
            return Err(self.error_at(
                q.span,
                "InvalidTimeQualifier",
                "a subquery cannot read as of another instant than its query",
                "write FOR SYSTEM_TIME AS OF after a MATCH of the outer query: it applies to the whole query",
            ));
        }
        Ok(Query {
            first,
            unions,
            as_of,
            span: self.span_from(start),
        })
    }

    /// A query's first part and its `UNION [ALL]` parts.
    fn query_parts(&mut self) -> R<(SingleQuery, Vec<(bool, SingleQuery)>)> {
        let first = self.single_query()?;
        let mut unions = Vec::new();
        while self.eat_kw("UNION") {
            let all = self.eat_kw("ALL");
            unions.push((all, self.single_query()?));
        }
        Ok((first, unions))
    }

    /// `FOR SYSTEM_TIME AS OF expr` or `FOR VALID_TIME AS OF expr`, any
    /// number, after a MATCH's patterns; valid time also takes a range:
    /// `BETWEEN expr AND expr` or `FROM expr TO expr`.
    fn time_qualifiers(&mut self) -> R<()> {
        while self.is_kw("FOR") {
            let start = self.here().start;
            self.pos += 1;
            let valid = if self.eat_kw("SYSTEM_TIME") {
                false
            } else if self.eat_kw("VALID_TIME") {
                true
            } else {
                return Err(self.unexpected("SYSTEM_TIME or VALID_TIME after FOR"));
            };
            let (at, end) = if valid && self.eat_kw("BETWEEN") {
                // The start stops before AND (a NOT-level expression).
                let at = self.nested(|p| p.binary_level(3))?;
                self.expect_kw("AND")?;
                let end = self.expr()?;
                (at, Some((end, true)))
            } else if valid && self.eat_kw("FROM") {
                let at = self.expr()?;
                self.expect_kw("TO")?;
                (at, Some((self.expr()?, false)))
            } else {
                if !valid && (self.is_kw("BETWEEN") || self.is_kw("FROM")) {
                    return Err(
                        self.unexpected("AS OF after FOR SYSTEM_TIME (a range is for valid time)")
                    );
                }
                self.expect_kw("AS")?;
                self.expect_kw("OF")?;
                (self.expr()?, None)
            };
            self.as_of.push(TimeQualifier {
                valid,
                at,
                end: end.map(|(at, inclusive)| RangeEnd { at, inclusive }),
                span: self.span_from(start),
            });
        }
        Ok(())
    }

    fn single_query(&mut self) -> R<SingleQuery> {
        let start = self.here().start;
        let mut clauses = Vec::new();
        while let Some(t) = self.peek() {
            if matches!(t.tok, Tok::Semi | Tok::RBrace) || self.is_kw("UNION") {
                break;
            }
            clauses.push(self.clause()?);
        }
        if clauses.is_empty() {
            return Err(self.unexpected("a clause such as MATCH, CREATE or RETURN"));
        }
        Ok(SingleQuery {
            clauses,
            span: self.span_from(start),
        })
    }

    fn clause(&mut self) -> R<Clause> {
        let start = self.here().start;
        if self.eat_kw("OPTIONAL") {
            self.expect_kw("MATCH")?;
            return self.match_rest(true, start);
        }
        if self.eat_kw("MATCH") {
            return self.match_rest(false, start);
        }
        if self.eat_kw("UNWIND") {
            let expr = self.expr()?;
            self.expect_kw("AS")?;
            let alias = self.variable()?;
            return Ok(Clause::Unwind {
                expr,
                alias,
                span: self.span_from(start),
            });
        }
        if self.eat_kw("CREATE") {
            let patterns = self.patterns()?;
            return Ok(Clause::Create {
                patterns,
                span: self.span_from(start),
            });
        }
        if self.eat_kw("MERGE") {
            let pattern = self.path_pattern()?;
            let (mut on_create, mut on_match) = (Vec::new(), Vec::new());
            while self.is_kw("ON") {
                self.pos += 1;
                if self.eat_kw("CREATE") {
                    self.expect_kw("SET")?;
                    on_create.extend(self.set_items()?);
                } else if self.eat_kw("MATCH") {
                    self.expect_kw("SET")?;
                    on_match.extend(self.set_items()?);
                } else {
                    return Err(self.unexpected("CREATE or MATCH after ON"));
                }
            }
            return Ok(Clause::Merge {
                pattern,
                on_create,
                on_match,
                span: self.span_from(start),
            });
        }
        if self.eat_kw("SET") {
            let items = self.set_items()?;
            return Ok(Clause::Set {
                items,
                span: self.span_from(start),
            });
        }
        if self.eat_kw("REMOVE") {
            let mut items = Vec::new();
            loop {
                if let Some((var, labels)) = self.dynamic_labels()? {
                    items.push(RemoveItem::DynamicLabels { var, labels });
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                    continue;
                }
                let e = self.postfix_expr()?;
                items.push(match e.kind {
                    ExprKind::Property(..) => RemoveItem::Property(e),
                    ExprKind::HasLabels(base, labels) => match (base.kind, label_names(&labels)) {
                        (ExprKind::Var(var), Some(labels)) => RemoveItem::Labels { var, labels },
                        _ => {
                            return Err(self.error_at(
                                e.span,
                                "InvalidSyntax",
                                "REMOVE takes a property or labels of a variable",
                                "write REMOVE n.prop or REMOVE n:Label",
                            ))
                        }
                    },
                    _ => {
                        return Err(self.error_at(
                            e.span,
                            "InvalidSyntax",
                            "REMOVE takes a property or labels of a variable",
                            "write REMOVE n.prop or REMOVE n:Label",
                        ))
                    }
                });
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            return Ok(Clause::Remove {
                items,
                span: self.span_from(start),
            });
        }
        let detach = self.eat_kw("DETACH");
        if self.eat_kw("DELETE")
            || (!detach && self.eat_kw("NODETACH") && {
                self.expect_kw("DELETE")?;
                true
            })
        {
            let mut exprs = vec![self.expr()?];
            while self.eat(&Tok::Comma) {
                exprs.push(self.expr()?);
            }
            return Ok(Clause::Delete {
                detach,
                exprs,
                span: self.span_from(start),
            });
        }
        if detach {
            return Err(self.unexpected("DELETE after DETACH"));
        }
        if self.eat_kw("WITH") {
            let mut p = self.projection(start)?;
            if self.eat_kw("WHERE") {
                p.where_ = Some(self.expr()?);
            }
            p.span = self.span_from(start);
            return Ok(Clause::With(p));
        }
        if self.eat_kw("RETURN") {
            return Ok(Clause::Return(self.projection(start)?));
        }
        if self.eat_kw("CALL") {
            return self.call_rest(start);
        }
        if self.eat_kw("FOREACH") {
            self.expect(&Tok::LParen)?;
            let var = self.variable()?;
            self.expect_kw("IN")?;
            let list = self.expr()?;
            self.expect(&Tok::Pipe)?;
            let mut clauses = Vec::new();
            while !self.at(&Tok::RParen) {
                if self.peek().is_none() {
                    return Err(self.unexpected("')' closing FOREACH"));
                }
                clauses.push(self.clause()?);
            }
            self.expect(&Tok::RParen)?;
            return Ok(Clause::Foreach {
                var,
                list,
                clauses,
                span: self.span_from(start),
            });
        }
        Err(self.unexpected("a clause such as MATCH, CREATE, WITH or RETURN"))
    }

    fn match_rest(&mut self, optional: bool, start: usize) -> R<Clause> {
        let patterns = self.patterns()?;
        self.time_qualifiers()?;
        let where_ = if self.eat_kw("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        Ok(Clause::Match {
            optional,
            patterns,
            where_,
            span: self.span_from(start),
        })
    }

    /// Whether `( vars ) {`, `(*) {` or `() {` is ahead: Neo4j 5.23's
    /// scope clause of a subquery, `CALL (a, b) { … }`.
    fn scope_clause_ahead(&self) -> bool {
        if self.peek_tok(0) != Some(&Tok::LParen) {
            return false;
        }
        if self.peek_tok(1) == Some(&Tok::Star) {
            return self.peek_tok(2) == Some(&Tok::RParen)
                && self.peek_tok(3) == Some(&Tok::LBrace);
        }
        let mut i = 1;
        if self.peek_tok(i) == Some(&Tok::RParen) {
            return self.peek_tok(i + 1) == Some(&Tok::LBrace);
        }
        loop {
            if !matches!(self.peek_tok(i), Some(Tok::Ident(_) | Tok::Quoted(_))) {
                return false;
            }
            match self.peek_tok(i + 1) {
                Some(Tok::Comma) => i += 2,
                Some(Tok::RParen) => return self.peek_tok(i + 2) == Some(&Tok::LBrace),
                _ => return false,
            }
        }
    }

    /// `(a, b)` / `(*)` / `()`: the WITH that imports them into the
    /// subquery, `None` for `()`.
    fn scope_clause(&mut self) -> R<Option<Clause>> {
        let start = self.here().start;
        self.expect(&Tok::LParen)?;
        let star = self.eat(&Tok::Star);
        let mut items = Vec::new();
        while !star && !self.at(&Tok::RParen) {
            let vstart = self.here().start;
            let v = self.variable()?;
            items.push(ProjectionItem {
                expr: Expr {
                    kind: ExprKind::Var(v.clone()),
                    span: self.span_from(vstart),
                },
                alias: None,
                text: v,
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        if !star && items.is_empty() {
            return Ok(None);
        }
        Ok(Some(Clause::With(Projection::plain(
            star,
            items,
            self.span_from(start),
        ))))
    }

    /// `IN TRANSACTIONS [OF n ROW[S]] [ON ERROR FAIL]` after a subquery.
    fn in_transactions(&mut self) -> R<Option<InTransactions>> {
        if !(self.is_kw("IN") && self.is_kw_at(1, "TRANSACTIONS")) {
            return Ok(None);
        }
        self.pos += 2;
        let mut rows = None;
        if self.eat_kw("OF") {
            rows = Some(self.expr()?);
            if !(self.eat_kw("ROWS") || self.eat_kw("ROW")) {
                return Err(self.unexpected("ROWS"));
            }
        }
        if self.eat_kw("ON") {
            self.expect_kw("ERROR")?;
            if !self.eat_kw("FAIL") {
                let here = self.here();
                return Err(self.error_at(
                    here,
                    "UnsupportedFeature",
                    "only ON ERROR FAIL is supported",
                    "drop the ON ERROR clause (FAIL is the default)",
                ));
            }
        }
        Ok(Some(InTransactions { rows }))
    }

    fn call_rest(&mut self, start: usize) -> R<Clause> {
        let scope = if self.scope_clause_ahead() {
            Some(self.scope_clause()?)
        } else {
            None
        };
        if scope.is_some() || self.eat(&Tok::LBrace) {
            if scope.is_some() {
                self.expect(&Tok::LBrace)?;
            }
            let mut query = self.query()?;
            self.expect(&Tok::RBrace)?;
            if let Some(Some(with)) = scope {
                // The scope clause imports as an importing WITH would, in
                // every part of a UNION.
                query.first.clauses.insert(0, with.clone());
                for (_, part) in &mut query.unions {
                    part.clauses.insert(0, with.clone());
                }
            }
            let in_transactions = self.in_transactions()?;
            return Ok(Clause::Subquery {
                query: Box::new(query),
                in_transactions,
                span: self.span_from(start),
            });
        }
        let mut procedure = self.name()?;
        while self.eat(&Tok::Dot) {
            procedure.push('.');
            procedure.push_str(&self.name()?);
        }
        let args = if self.eat(&Tok::LParen) {
            let mut args = Vec::new();
            if !self.at(&Tok::RParen) {
                args.push(self.expr()?);
                while self.eat(&Tok::Comma) {
                    args.push(self.expr()?);
                }
            }
            self.expect(&Tok::RParen)?;
            Some(args)
        } else {
            None
        };
        // `CALL proc(…) FOR SYSTEM_TIME AS OF t`: as after a MATCH's
        // patterns, the instant the whole query reads as of.
        self.time_qualifiers()?;
        let yields = if self.eat_kw("YIELD") {
            if self.eat(&Tok::Star) {
                Some(Yield {
                    star: true,
                    items: vec![],
                    where_: None,
                })
            } else {
                let mut items = Vec::new();
                loop {
                    let n = self.name()?;
                    let alias = if self.eat_kw("AS") {
                        Some(self.variable()?)
                    } else {
                        None
                    };
                    items.push((n, alias));
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                let where_ = if self.eat_kw("WHERE") {
                    Some(self.expr()?)
                } else {
                    None
                };
                Some(Yield {
                    star: false,
                    items,
                    where_,
                })
            }
        } else {
            None
        };
        Ok(Clause::Call {
            procedure,
            args,
            yields,
            span: self.span_from(start),
        })
    }

    /// An index type's keyword (`RANGE`, `VECTOR`, `FULLTEXT`, …) at the
    /// cursor, taken when `INDEX` or `INDEXES` follows it.
    fn index_type(&mut self) -> Option<IndexType> {
        if !(self.is_kw_at(1, "INDEX") || self.is_kw_at(1, "INDEXES")) {
            return None;
        }
        let t = IndexType::ALL.iter().find(|(kw, _)| self.is_kw(kw))?.1;
        self.eat_kw(t.name());
        Some(t)
    }

    /// What may follow a SHOW: `YIELD` and a WITH's projection (ORDER BY,
    /// SKIP, LIMIT, then WHERE, in that order as Neo4j writes them), or a
    /// bare `WHERE`; then an optional `RETURN`.
    fn show_tail(&mut self) -> R<Option<Box<ShowTail>>> {
        let start = self.here().start;
        let explicit = self.eat_kw("YIELD");
        let mut yielded = if explicit {
            let p = self.projection(start)?;
            if p.distinct {
                return Err(self.error_at(
                    p.span,
                    "InvalidSyntax",
                    "YIELD takes no DISTINCT (write it in the RETURN)",
                    "",
                ));
            }
            p
        } else if self.is_kw("WHERE") {
            Projection::plain(true, vec![], self.span_from(start))
        } else {
            return Ok(None);
        };
        if self.eat_kw("WHERE") {
            yielded.where_ = Some(self.expr()?);
        }
        yielded.span = self.span_from(start);
        let at = self.here().start;
        let ret = match self.eat_kw("RETURN") {
            true => Some(self.projection(at)?),
            false => None,
        };
        Ok(Some(Box::new(ShowTail {
            yielded,
            explicit,
            ret,
        })))
    }

    fn projection(&mut self, start: usize) -> R<Projection> {
        let distinct = self.eat_kw("DISTINCT");
        let mut star = false;
        let mut items = Vec::new();
        if self.eat(&Tok::Star) {
            star = true;
        }
        if !star || self.eat(&Tok::Comma) {
            loop {
                let from = self.here().start;
                let expr = self.expr()?;
                let text = self.src[from..self.prev_end()].to_string();
                let alias = if self.eat_kw("AS") {
                    Some(self.variable()?)
                } else {
                    None
                };
                items.push(ProjectionItem { expr, alias, text });
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let mut order_by = Vec::new();
        if self.eat_kw("ORDER") {
            self.expect_kw("BY")?;
            loop {
                let expr = self.expr()?;
                let descending = if self.eat_kw("DESC") || self.eat_kw("DESCENDING") {
                    true
                } else {
                    let _ = self.eat_kw("ASC") || self.eat_kw("ASCENDING");
                    false
                };
                order_by.push(SortItem { expr, descending });
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let skip = if self.eat_kw("SKIP") || self.eat_kw("OFFSET") {
            Some(self.expr()?)
        } else {
            None
        };
        let limit = if self.eat_kw("LIMIT") {
            Some(self.expr()?)
        } else {
            None
        };
        Ok(Projection {
            distinct,
            star,
            items,
            order_by,
            skip,
            limit,
            where_: None,
            span: self.span_from(start),
            star_scope: vec![],
        })
    }

    /// `var:$(expr)…` at the cursor (a SET or REMOVE item with dynamic
    /// labels): the variable and the label expressions, static labels
    /// among them as string literals.
    fn dynamic_labels(&mut self) -> R<Option<(String, Vec<Expr>)>> {
        let dynamic_ahead = matches!(self.peek_tok(0), Some(Tok::Ident(_) | Tok::Quoted(_)))
            && self.peek_tok(1) == Some(&Tok::Colon)
            && self.peek_tok(2) == Some(&Tok::DollarParen);
        if !dynamic_ahead {
            return Ok(None);
        }
        let var = self.variable()?;
        let mut labels = Vec::new();
        while self.eat(&Tok::Colon) {
            if self.eat(&Tok::DollarParen) {
                labels.push(self.expr()?);
                self.expect(&Tok::RParen)?;
            } else {
                let start = self.here().start;
                let name = self.name()?;
                labels.push(Expr {
                    kind: ExprKind::String(name),
                    span: self.span_from(start),
                });
            }
        }
        Ok(Some((var, labels)))
    }

    fn set_items(&mut self) -> R<Vec<SetItem>> {
        let mut items = Vec::new();
        loop {
            if let Some((var, labels)) = self.dynamic_labels()? {
                items.push(SetItem::DynamicLabels { var, labels });
                if !self.eat(&Tok::Comma) {
                    break;
                }
                continue;
            }
            let target = self.postfix_expr()?;
            let item = match (&target.kind, self.peek_tok(0)) {
                (ExprKind::Var(v), Some(Tok::Eq)) => {
                    let var = v.clone();
                    self.pos += 1;
                    SetItem::Replace {
                        var,
                        value: self.expr()?,
                        merge: false,
                    }
                }
                (ExprKind::Var(v), Some(Tok::PlusEq)) => {
                    let var = v.clone();
                    self.pos += 1;
                    SetItem::Replace {
                        var,
                        value: self.expr()?,
                        merge: true,
                    }
                }
                (ExprKind::Property(..), Some(Tok::Eq)) => {
                    self.pos += 1;
                    SetItem::Property {
                        target,
                        value: self.expr()?,
                    }
                }
                (ExprKind::HasLabels(base, labels), _) => match (&base.kind, label_names(labels)) {
                    (ExprKind::Var(var), Some(labels)) => SetItem::Labels {
                        var: var.clone(),
                        labels,
                    },
                    _ => {
                        return Err(self.error_at(
                            target.span,
                            "InvalidSyntax",
                            "labels can only be set on a variable",
                            "write SET n:Label",
                        ))
                    }
                },
                _ => {
                    return Err(self.error_at(
                        target.span,
                        "InvalidSyntax",
                        "SET expects n.prop = value, n = map, n += map or n:Label",
                        "",
                    ))
                }
            };
            items.push(item);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(items)
    }

    // ---- patterns ----

    fn patterns(&mut self) -> R<Vec<PathPattern>> {
        let mut v = vec![self.path_pattern()?];
        while self.eat(&Tok::Comma) {
            v.push(self.path_pattern()?);
        }
        Ok(v)
    }

    fn path_pattern(&mut self) -> R<PathPattern> {
        let start = self.here().start;
        let var = if self.is_variable_start() && self.peek_tok(1) == Some(&Tok::Eq) {
            let v = self.variable()?;
            self.pos += 1;
            Some(v)
        } else {
            None
        };
        let kind = if self.is_kw("shortestPath") && self.peek_tok(1) == Some(&Tok::LParen) {
            PathKind::Shortest
        } else if self.is_kw("allShortestPaths") && self.peek_tok(1) == Some(&Tok::LParen) {
            PathKind::AllShortest
        } else {
            PathKind::Normal
        };
        let element = if kind == PathKind::Normal {
            self.pattern_element()?
        } else {
            self.pos += 2;
            let e = self.pattern_element()?;
            self.expect(&Tok::RParen)?;
            e
        };
        Ok(PathPattern {
            var,
            kind,
            element,
            span: self.span_from(start),
        })
    }

    fn pattern_element(&mut self) -> R<PatternElement> {
        let start_pos = self.here().start;
        if self.at(&Tok::LParen) && self.peek_tok(1) == Some(&Tok::LParen) {
            // A parenthesised pattern element: ((a)-->(b))
            self.pos += 1;
            let e = self.pattern_element()?;
            self.expect(&Tok::RParen)?;
            return Ok(e);
        }
        let start = self.node_pattern()?;
        let mut chain = Vec::new();
        while self.at(&Tok::Minus) || (self.at(&Tok::Lt) && self.peek_tok(1) == Some(&Tok::Minus)) {
            let rel = self.rel_pattern()?;
            let node = self.node_pattern()?;
            chain.push((rel, node));
        }
        Ok(PatternElement {
            start,
            chain,
            span: self.span_from(start_pos),
        })
    }

    fn node_pattern(&mut self) -> R<NodePattern> {
        let start = self.expect(&Tok::LParen)?.start;
        let var = if self.is_variable_start() {
            Some(self.variable()?)
        } else {
            None
        };
        let labels = if self.at(&Tok::Colon) {
            Some(self.label_expr()?)
        } else {
            None
        };
        let props = self.pattern_props()?;
        let where_ = if self.eat_kw("WHERE") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        if !self.at(&Tok::RParen) {
            return Err(self.unexpected("')' closing the node pattern"));
        }
        self.pos += 1;
        Ok(NodePattern {
            var,
            labels,
            props,
            where_,
            span: self.span_from(start),
        })
    }

    fn pattern_props(&mut self) -> R<Option<Box<Expr>>> {
        if self.at(&Tok::LBrace) {
            Ok(Some(Box::new(self.map_literal()?)))
        } else if let Some(Tok::Param(p)) = self.peek_tok(0) {
            let p = p.clone();
            let span = self.bump().expect("checked").span;
            Ok(Some(Box::new(Expr {
                kind: ExprKind::Param(p),
                span,
            })))
        } else {
            Ok(None)
        }
    }

    /// After ':' — `:A:B`, `:A|B`, `:A&B`, `:!A`, `:%`, `:(A|B)`.
    fn label_expr(&mut self) -> R<LabelExpr> {
        let mut conj = Vec::new();
        while self.eat(&Tok::Colon) {
            conj.push(self.label_or()?);
        }
        Ok(if conj.len() == 1 {
            conj.pop().expect("one")
        } else {
            LabelExpr::And(conj)
        })
    }

    fn label_or(&mut self) -> R<LabelExpr> {
        let mut alts = vec![self.label_and()?];
        while self.eat(&Tok::Pipe) {
            self.eat(&Tok::Colon); // legacy `:A|:B`
            alts.push(self.label_and()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().expect("one")
        } else {
            LabelExpr::Or(alts)
        })
    }

    fn label_and(&mut self) -> R<LabelExpr> {
        let mut all = vec![self.label_not()?];
        while self.eat(&Tok::Amp) {
            all.push(self.label_not()?);
        }
        Ok(if all.len() == 1 {
            all.pop().expect("one")
        } else {
            LabelExpr::And(all)
        })
    }

    fn label_not(&mut self) -> R<LabelExpr> {
        if self.eat(&Tok::Bang) {
            return Ok(LabelExpr::Not(Box::new(self.label_not()?)));
        }
        if self.eat(&Tok::Percent) {
            return Ok(LabelExpr::Any);
        }
        if self.eat(&Tok::LParen) {
            let e = self.label_or()?;
            self.expect(&Tok::RParen)?;
            return Ok(e);
        }
        Ok(LabelExpr::Name(self.name()?))
    }

    fn rel_pattern(&mut self) -> R<RelPattern> {
        let start = self.here().start;
        let left = self.eat(&Tok::Lt);
        self.expect(&Tok::Minus)?;
        let (mut var, mut types, mut length, mut props, mut where_) =
            (None, None, None, None, None);
        if self.eat(&Tok::LBracket) {
            if self.is_variable_start() {
                var = Some(self.variable()?);
            }
            if self.at(&Tok::Colon) {
                types = Some(self.label_expr()?);
            }
            if self.eat(&Tok::Star) {
                length = Some(self.range()?);
            } else if self.at(&Tok::DotDot) || matches!(self.peek_tok(0), Some(Tok::Int(_))) {
                return Err(self.error_at(
                    self.here(),
                    "InvalidRelationshipPattern",
                    "a variable-length relationship needs '*' before its lengths",
                    "write -[:T*1..3]->",
                ));
            }
            props = self.pattern_props()?;
            if self.eat_kw("WHERE") {
                where_ = Some(Box::new(self.expr()?));
            }
            if !self.at(&Tok::RBracket) {
                return Err(self.unexpected("']' closing the relationship pattern"));
            }
            self.pos += 1;
        }
        self.expect(&Tok::Minus).map_err(|_| {
            self.error_at(
                self.here(),
                "InvalidRelationshipPattern",
                "a relationship pattern must end with '-' or '->'",
                "write -[r]-> or -[r]-",
            )
        })?;
        let right = self.eat(&Tok::Gt);
        let direction = match (left, right) {
            (false, true) => RelDirection::Right,
            (true, false) => RelDirection::Left,
            _ => RelDirection::Either,
        };
        Ok(RelPattern {
            var,
            types,
            direction,
            length,
            props,
            where_,
            span: self.span_from(start),
        })
    }

    fn range(&mut self) -> R<(Option<u64>, Option<u64>)> {
        let int = |p: &mut Self| -> R<Option<u64>> {
            if let Some(Tok::Int(s)) = p.peek_tok(0) {
                let s = s.clone();
                let span = p.bump().expect("checked").span;
                s.parse::<u64>().map(Some).map_err(|_| {
                    p.error_at(span, "IntegerOverflow", "path length is too large", "")
                })
            } else {
                Ok(None)
            }
        };
        let not_negative = |p: &Self| -> R<()> {
            if p.at(&Tok::Minus) {
                return Err(p.error_at(
                    p.here(),
                    "InvalidRelationshipPattern",
                    "a path length cannot be negative",
                    "write -[*2]-> or -[*1..3]->",
                ));
            }
            Ok(())
        };
        not_negative(self)?;
        let min = int(self)?;
        if self.eat(&Tok::DotDot) {
            not_negative(self)?;
            let max = int(self)?;
            Ok((min, max))
        } else {
            Ok((min, min))
        }
    }

    // ---- expressions ----

    fn expr(&mut self) -> R<Expr> {
        self.nested(|p| p.binary_level(0))
    }

    /// Levels: 0 OR, 1 XOR, 2 AND; then NOT, comparison, predicates, arithmetic.
    fn binary_level(&mut self, level: usize) -> R<Expr> {
        const KWS: [(&str, BinOp); 3] =
            [("OR", BinOp::Or), ("XOR", BinOp::Xor), ("AND", BinOp::And)];
        if level == 3 {
            return self.not_expr();
        }
        let mut lhs = self.binary_level(level + 1)?;
        let (kw, op) = KWS[level];
        let mut links = 0;
        while self.eat_kw(kw) {
            links += 1;
            self.deep_enough(links)?;
            let rhs = self.binary_level(level + 1)?;
            lhs = bin(op, lhs, rhs);
        }
        Ok(lhs)
    }

    fn not_expr(&mut self) -> R<Expr> {
        let start = self.here().start;
        if self.eat_kw("NOT") {
            let e = self.nested(Self::not_expr)?;
            return Ok(Expr {
                kind: ExprKind::Unary(UnOp::Not, Box::new(e)),
                span: self.span_from(start),
            });
        }
        self.comparison()
    }

    fn comparison(&mut self) -> R<Expr> {
        let first = self.predicate()?;
        let mut pairs: Vec<(BinOp, Expr)> = Vec::new();
        loop {
            let op = match self.peek_tok(0) {
                Some(Tok::Eq) => BinOp::Eq,
                Some(Tok::Neq) | Some(Tok::BangEq) => BinOp::Neq,
                Some(Tok::Lt) => BinOp::Lt,
                Some(Tok::Gt) => BinOp::Gt,
                Some(Tok::Le) => BinOp::Le,
                Some(Tok::Ge) => BinOp::Ge,
                _ => break,
            };
            self.pos += 1;
            self.deep_enough(2 * pairs.len() + 2)?;
            pairs.push((op, self.predicate()?));
        }
        // a < b < c means a < b AND b < c.
        let mut result: Option<Expr> = None;
        let mut left = first;
        for (op, right) in pairs {
            let cmp = bin(op, left, right.clone());
            result = Some(match result {
                None => cmp,
                Some(acc) => bin(BinOp::And, acc, cmp),
            });
            left = right;
        }
        Ok(result.unwrap_or(left))
    }

    fn predicate(&mut self) -> R<Expr> {
        let mut e = self.additive()?;
        let mut links = 0;
        loop {
            links += 1;
            self.deep_enough(links)?;
            let start = e.span.start;
            if self.is_kw("IS") {
                self.pos += 1;
                let negated = self.eat_kw("NOT");
                self.expect_kw("NULL")?;
                e = Expr {
                    kind: ExprKind::IsNull(Box::new(e), negated),
                    span: self.span_from(start),
                };
            } else if self.is_kw("STARTS") && self.is_kw_at(1, "WITH") {
                self.pos += 2;
                let r = self.additive()?;
                e = bin(BinOp::StartsWith, e, r);
            } else if self.is_kw("ENDS") && self.is_kw_at(1, "WITH") {
                self.pos += 2;
                let r = self.additive()?;
                e = bin(BinOp::EndsWith, e, r);
            } else if self.eat_kw("CONTAINS") {
                let r = self.additive()?;
                e = bin(BinOp::Contains, e, r);
            } else if self.eat_kw("IN") {
                let r = self.additive()?;
                e = bin(BinOp::In, e, r);
            } else if self.eat(&Tok::RegexMatch) {
                let r = self.additive()?;
                e = bin(BinOp::RegexMatch, e, r);
            } else {
                return Ok(e);
            }
        }
    }

    /// One left-associative level: `next (op next)*` for the operators given.
    fn left_assoc(&mut self, ops: &[(Tok, BinOp)], next: fn(&mut Self) -> R<Expr>) -> R<Expr> {
        let mut e = next(self)?;
        let mut links = 0;
        while let Some(op) = ops.iter().find(|(t, _)| self.at(t)).map(|(_, op)| *op) {
            links += 1;
            self.deep_enough(links)?;
            self.pos += 1;
            let r = next(self)?;
            e = bin(op, e, r);
        }
        Ok(e)
    }

    fn additive(&mut self) -> R<Expr> {
        self.left_assoc(
            &[(Tok::Plus, BinOp::Add), (Tok::Minus, BinOp::Sub)],
            Self::multiplicative,
        )
    }

    fn multiplicative(&mut self) -> R<Expr> {
        self.left_assoc(
            &[
                (Tok::Star, BinOp::Mul),
                (Tok::Slash, BinOp::Div),
                (Tok::Percent, BinOp::Mod),
            ],
            Self::power,
        )
    }

    fn power(&mut self) -> R<Expr> {
        self.left_assoc(&[(Tok::Caret, BinOp::Pow)], Self::unary)
    }

    fn unary(&mut self) -> R<Expr> {
        let start = self.here().start;
        let op = match self.peek_tok(0) {
            Some(Tok::Minus) => UnOp::Neg,
            Some(Tok::Plus) => UnOp::Plus,
            _ => return self.postfix_expr(),
        };
        self.pos += 1;
        // -9223372036854775808 (and its hex and octal forms) is the smallest
        // integer literal, not a negated overflow.
        if op == UnOp::Neg {
            let magnitude = match self.peek_tok(0) {
                Some(Tok::Int(s)) => s.parse::<u64>().ok(),
                Some(Tok::HexInt(s)) => u64::from_str_radix(&s[2..], 16).ok(),
                Some(Tok::OctInt(s)) => u64::from_str_radix(&s[2..], 8).ok(),
                _ => None,
            };
            if magnitude == Some(1 << 63) {
                self.pos += 1;
                return Ok(Expr {
                    kind: ExprKind::Int(i64::MIN),
                    span: self.span_from(start),
                });
            }
        }
        let e = self.nested(Self::unary)?;
        Ok(Expr {
            kind: ExprKind::Unary(op, Box::new(e)),
            span: self.span_from(start),
        })
    }

    fn postfix_expr(&mut self) -> R<Expr> {
        let mut e = self.atom()?;
        let mut links = 0;
        loop {
            links += 1;
            self.deep_enough(links)?;
            let start = e.span.start;
            if self.at(&Tok::Dot) {
                self.pos += 1;
                let key = self.name()?;
                e = Expr {
                    kind: ExprKind::Property(Box::new(e), key),
                    span: self.span_from(start),
                };
            } else if self.at(&Tok::LBracket) {
                self.pos += 1;
                let from = if self.at(&Tok::DotDot) {
                    None
                } else {
                    Some(Box::new(self.expr()?))
                };
                if self.eat(&Tok::DotDot) {
                    let to = if self.at(&Tok::RBracket) {
                        None
                    } else {
                        Some(Box::new(self.expr()?))
                    };
                    self.expect(&Tok::RBracket)?;
                    e = Expr {
                        kind: ExprKind::Slice(Box::new(e), from, to),
                        span: self.span_from(start),
                    };
                } else {
                    self.expect(&Tok::RBracket)?;
                    let idx = from.expect("index present without ..");
                    e = Expr {
                        kind: ExprKind::Index(Box::new(e), idx),
                        span: self.span_from(start),
                    };
                }
            } else if self.at(&Tok::Colon)
                && matches!(
                    e.kind,
                    ExprKind::Var(_) | ExprKind::Property(..) | ExprKind::Index(..)
                )
            {
                let labels = self.label_expr()?;
                e = Expr {
                    kind: ExprKind::HasLabels(Box::new(e), labels),
                    span: self.span_from(start),
                };
            } else if self.at(&Tok::LBrace) && matches!(e.kind, ExprKind::Var(_)) {
                let items = self.map_projection()?;
                e = Expr {
                    kind: ExprKind::MapProjection(Box::new(e), items),
                    span: self.span_from(start),
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn map_projection(&mut self) -> R<Vec<MapProjectionItem>> {
        self.expect(&Tok::LBrace)?;
        let mut items = Vec::new();
        if !self.at(&Tok::RBrace) {
            loop {
                if self.eat(&Tok::Dot) {
                    if self.eat(&Tok::Star) {
                        items.push(MapProjectionItem::AllProperties);
                    } else {
                        items.push(MapProjectionItem::Property(self.name()?));
                    }
                } else {
                    let key = self.name()?;
                    if self.eat(&Tok::Colon) {
                        items.push(MapProjectionItem::Literal(key, self.expr()?));
                    } else {
                        items.push(MapProjectionItem::Variable(key));
                    }
                }
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(&Tok::RBrace)?;
        Ok(items)
    }

    fn map_literal(&mut self) -> R<Expr> {
        let start = self.expect(&Tok::LBrace)?.start;
        let mut entries = Vec::new();
        if !self.at(&Tok::RBrace) {
            loop {
                let key = self.name()?;
                self.expect(&Tok::Colon)?;
                entries.push((key, self.expr()?));
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        if !self.at(&Tok::RBrace) {
            return Err(self.unexpected("',' or '}' in the map"));
        }
        self.pos += 1;
        Ok(Expr {
            kind: ExprKind::Map(entries),
            span: self.span_from(start),
        })
    }

    /// Runs `f` and rewinds when it fails or returns `None`.
    fn attempt<T>(&mut self, f: impl FnOnce(&mut Self) -> R<Option<T>>) -> Option<T> {
        let save = self.pos;
        match f(self) {
            Ok(Some(v)) => Some(v),
            _ => {
                self.pos = save;
                None
            }
        }
    }

    /// Refuses a number with a name right where it ends (`0x`, `0x1Z`,
    /// `12abc`): one malformed number, not a number and a name.
    fn no_letters_after_number(&self) -> R<()> {
        let (Some(n), Some(next)) = (self.peek(), self.toks.get(self.pos + 1)) else {
            return Ok(());
        };
        let number = matches!(
            n.tok,
            Tok::Int(_) | Tok::HexInt(_) | Tok::OctInt(_) | Tok::Float(_)
        );
        if number && matches!(next.tok, Tok::Ident(_)) && n.span.end == next.span.start {
            let whole = Span {
                start: n.span.start,
                end: next.span.end,
            };
            return Err(self.error_at(
                whole,
                "InvalidNumberLiteral",
                "a number with letters in it",
                "hexadecimal numbers are written 0x1F, octal ones 0o17; separate a name from a number",
            ));
        }
        Ok(())
    }

    fn atom(&mut self) -> R<Expr> {
        let start = self.here().start;
        let Some(t) = self.peek().cloned() else {
            return Err(self.unexpected("an expression"));
        };
        let lit = |p: &mut Self, kind| {
            p.pos += 1;
            Ok(Expr { kind, span: t.span })
        };
        self.no_letters_after_number()?;
        match &t.tok {
            Tok::Int(s) => match s.parse::<i64>() {
                Ok(i) => lit(self, ExprKind::Int(i)),
                Err(_) => Err(self.error_at(
                    t.span,
                    "IntegerOverflow",
                    format!("integer {s} is too large"),
                    "integers are 64-bit",
                )),
            },
            Tok::HexInt(s) | Tok::OctInt(s) => {
                let radix = if matches!(t.tok, Tok::HexInt(_)) {
                    16
                } else {
                    8
                };
                match i64::from_str_radix(&s[2..], radix) {
                    Ok(i) => lit(self, ExprKind::Int(i)),
                    Err(_) => Err(self.error_at(
                        t.span,
                        "IntegerOverflow",
                        format!("integer {s} is too large"),
                        "integers are 64-bit",
                    )),
                }
            }
            Tok::Float(s) => match s.parse::<f64>() {
                Ok(f) if f.is_finite() => lit(self, ExprKind::Float(f)),
                _ => Err(self.error_at(
                    t.span,
                    "FloatingPointOverflow",
                    format!("float {s} is too large"),
                    "",
                )),
            },
            Tok::Str(s) => {
                let v = unescape(&s[1..s.len() - 1])
                    .map_err(|m| self.error_at(t.span, "InvalidUnicodeLiteral", m, ""))?;
                lit(self, ExprKind::String(v))
            }
            Tok::Param(p) => lit(self, ExprKind::Param(p.clone())),
            Tok::LBrace => self.map_literal(),
            Tok::LBracket => self.list_like(),
            Tok::LParen => {
                if !self.not_patterns.contains(&self.pos) {
                    let at = self.pos;
                    if let Some(pattern) = self.attempt(|p| {
                        let e = p.pattern_element()?;
                        Ok((!e.chain.is_empty()).then_some(e))
                    }) {
                        let span = pattern.span;
                        return Ok(Expr {
                            kind: ExprKind::Pattern(pattern),
                            span,
                        });
                    }
                    self.not_patterns.insert(at);
                }
                self.pos += 1;
                let e = self.expr()?;
                self.expect(&Tok::RParen)?;
                Ok(Expr {
                    kind: e.kind,
                    span: self.span_from(start),
                })
            }
            Tok::Ident(word) => self.word(word.clone(), start),
            Tok::Quoted(name) => lit(self, ExprKind::Var(name.clone())),
            _ => Err(self.unexpected("an expression")),
        }
    }

    fn word(&mut self, word: String, start: usize) -> R<Expr> {
        let upper = word.to_ascii_uppercase();
        let next_paren = self.peek_tok(1) == Some(&Tok::LParen);
        let next_brace = self.peek_tok(1) == Some(&Tok::LBrace);
        match upper.as_str() {
            "TRUE" | "FALSE" | "NULL" => {
                self.pos += 1;
                let kind = match upper.as_str() {
                    "TRUE" => ExprKind::Bool(true),
                    "FALSE" => ExprKind::Bool(false),
                    _ => ExprKind::Null,
                };
                return Ok(Expr {
                    kind,
                    span: self.span_from(start),
                });
            }
            "CASE" => return self.case_expr(start),
            "COUNT"
                if next_paren
                    && self.peek_tok(2) == Some(&Tok::Star)
                    && self.peek_tok(3) == Some(&Tok::RParen) =>
            {
                self.pos += 4;
                return Ok(Expr {
                    kind: ExprKind::CountStar,
                    span: self.span_from(start),
                });
            }
            "COUNT" | "EXISTS" if next_brace => {
                self.pos += 2;
                let q = self.subquery_body()?;
                self.expect(&Tok::RBrace)?;
                let kind = if upper == "COUNT" {
                    ExprKind::CountSubquery(Box::new(q))
                } else {
                    ExprKind::Exists(Box::new(q))
                };
                return Ok(Expr {
                    kind,
                    span: self.span_from(start),
                });
            }
            "ALL" | "ANY" | "NONE" | "SINGLE" if next_paren && self.is_kw_at(3, "IN") => {
                self.pos += 2;
                let var = self.variable()?;
                self.expect_kw("IN")?;
                let list = self.expr()?;
                let filter = if self.eat_kw("WHERE") {
                    Some(Box::new(self.expr()?))
                } else {
                    None
                };
                self.expect(&Tok::RParen)?;
                let q = match upper.as_str() {
                    "ALL" => Quantifier::All,
                    "ANY" => Quantifier::Any,
                    "NONE" => Quantifier::None,
                    _ => Quantifier::Single,
                };
                return Ok(Expr {
                    kind: ExprKind::Quantified {
                        q,
                        var,
                        list: Box::new(list),
                        filter,
                    },
                    span: self.span_from(start),
                });
            }
            "REDUCE" if next_paren => {
                self.pos += 2;
                let acc = self.variable()?;
                self.expect(&Tok::Eq)?;
                let init = self.expr()?;
                self.expect(&Tok::Comma)?;
                let var = self.variable()?;
                self.expect_kw("IN")?;
                let list = self.expr()?;
                self.expect(&Tok::Pipe)?;
                let expr = self.expr()?;
                self.expect(&Tok::RParen)?;
                return Ok(Expr {
                    kind: ExprKind::Reduce {
                        acc,
                        init: Box::new(init),
                        var,
                        list: Box::new(list),
                        expr: Box::new(expr),
                    },
                    span: self.span_from(start),
                });
            }
            _ => {}
        }
        // A function call, possibly namespaced: a.b.c(…)
        let mut k = 1;
        while self.peek_tok(k) == Some(&Tok::Dot)
            && matches!(
                self.peek_tok(k + 1),
                Some(Tok::Ident(_)) | Some(Tok::Quoted(_))
            )
        {
            k += 2;
        }
        if self.peek_tok(k) == Some(&Tok::LParen) {
            let mut name = self.name()?;
            while self.eat(&Tok::Dot) {
                name.push('.');
                name.push_str(&self.name()?);
            }
            self.expect(&Tok::LParen)?;
            let distinct = self.eat_kw("DISTINCT");
            let mut args = Vec::new();
            if !self.at(&Tok::RParen) {
                args.push(self.expr()?);
                while self.eat(&Tok::Comma) {
                    args.push(self.expr()?);
                }
            }
            self.expect(&Tok::RParen)?;
            return Ok(Expr {
                kind: ExprKind::Call {
                    name,
                    distinct,
                    args,
                },
                span: self.span_from(start),
            });
        }
        let var = self.variable()?;
        Ok(Expr {
            kind: ExprKind::Var(var),
            span: self.span_from(start),
        })
    }

    /// The inside of `EXISTS { … }` / `COUNT { … }`: a full query, or a
    /// pattern with an optional WHERE.
    fn subquery_body(&mut self) -> R<Query> {
        let start = self.here().start;
        if self.at(&Tok::LParen) || (self.is_variable_start() && self.peek_tok(1) == Some(&Tok::Eq))
        {
            let patterns = self.patterns()?;
            let where_ = if self.eat_kw("WHERE") {
                Some(self.expr()?)
            } else {
                None
            };
            let span = self.span_from(start);
            let clause = Clause::Match {
                optional: false,
                patterns,
                where_,
                span,
            };
            return Ok(Query {
                first: SingleQuery {
                    clauses: vec![clause],
                    span,
                },
                unions: vec![],
                as_of: vec![],
                span,
            });
        }
        self.query()
    }

    fn case_expr(&mut self, start: usize) -> R<Expr> {
        self.pos += 1; // CASE
        let operand = if self.is_kw("WHEN") {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        let mut whens = Vec::new();
        while self.eat_kw("WHEN") {
            let w = self.expr()?;
            self.expect_kw("THEN")?;
            whens.push((w, self.expr()?));
        }
        if whens.is_empty() {
            return Err(self.unexpected("WHEN"));
        }
        let else_ = if self.eat_kw("ELSE") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        self.expect_kw("END")?;
        Ok(Expr {
            kind: ExprKind::Case {
                operand,
                whens,
                else_,
            },
            span: self.span_from(start),
        })
    }

    /// `[…]`: a list comprehension, a pattern comprehension, or a list.
    fn list_like(&mut self) -> R<Expr> {
        let start = self.expect(&Tok::LBracket)?.start;
        if self.is_variable_start() && self.is_kw_at(1, "IN") {
            let var = self.variable()?;
            self.pos += 1;
            let list = self.expr()?;
            let filter = if self.eat_kw("WHERE") {
                Some(Box::new(self.expr()?))
            } else {
                None
            };
            let map = if self.eat(&Tok::Pipe) {
                Some(Box::new(self.expr()?))
            } else {
                None
            };
            self.expect(&Tok::RBracket)?;
            return Ok(Expr {
                kind: ExprKind::ListComprehension {
                    var,
                    list: Box::new(list),
                    filter,
                    map,
                },
                span: self.span_from(start),
            });
        }
        if let Some((var, pattern)) = self.attempt(|p| {
            let var = if p.is_variable_start() && p.peek_tok(1) == Some(&Tok::Eq) {
                let v = p.variable()?;
                p.pos += 1;
                Some(v)
            } else {
                None
            };
            let e = p.pattern_element()?;
            Ok((!e.chain.is_empty() && (p.is_kw("WHERE") || p.at(&Tok::Pipe))).then_some((var, e)))
        }) {
            let filter = if self.eat_kw("WHERE") {
                Some(Box::new(self.expr()?))
            } else {
                None
            };
            self.expect(&Tok::Pipe)?;
            let map = Box::new(self.expr()?);
            self.expect(&Tok::RBracket)?;
            return Ok(Expr {
                kind: ExprKind::PatternComprehension {
                    var,
                    pattern,
                    filter,
                    map,
                },
                span: self.span_from(start),
            });
        }
        let mut items = Vec::new();
        if !self.at(&Tok::RBracket) {
            items.push(self.expr()?);
            while self.eat(&Tok::Comma) {
                items.push(self.expr()?);
            }
        }
        if !self.at(&Tok::RBracket) {
            return Err(self.unexpected("',' or ']' in the list"));
        }
        self.pos += 1;
        Ok(Expr {
            kind: ExprKind::List(items),
            span: self.span_from(start),
        })
    }
}

fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    let span = l.span.to(r.span);
    Expr {
        kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
        span,
    }
}

/// The names of a plain `:A:B` label expression (None for |, !, %).
fn label_names(e: &LabelExpr) -> Option<Vec<String>> {
    match e {
        LabelExpr::Name(n) => Some(vec![n.clone()]),
        LabelExpr::And(items) => items
            .iter()
            .map(|i| label_names(i).and_then(|v| (v.len() == 1).then(|| v[0].clone())))
            .collect(),
        _ => None,
    }
}

/// Resolves backslash escapes of a string literal's body.
fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some(u @ ('u' | 'U')) => {
                let n = if u == 'u' { 4 } else { 8 };
                let hex: String = chars.by_ref().take(n).collect();
                let ch = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                out.push(ch.ok_or_else(|| format!("invalid unicode escape \\{u}{hex}"))?);
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Ok(out)
}
