//! The shape of parsed queries: precedence, patterns, clauses, and errors.

use plexus_cypher::*;

fn expr(s: &str) -> ExprKind {
    parse_expression(s).unwrap().kind
}

fn show(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Binary(op, l, r) => format!("({} {op:?} {})", show(l), show(r)),
        ExprKind::Unary(op, x) => format!("({op:?} {})", show(x)),
        ExprKind::Int(i) => i.to_string(),
        ExprKind::Var(v) => v.clone(),
        ExprKind::Property(b, k) => format!("{}.{k}", show(b)),
        ExprKind::IsNull(x, neg) => {
            format!("({} IS{} NULL)", show(x), if *neg { " NOT" } else { "" })
        }
        other => format!("{other:?}"),
    }
}

fn shape(s: &str) -> String {
    show(&parse_expression(s).unwrap())
}

#[test]
fn precedence_follows_opencypher() {
    assert_eq!(shape("1 + 2 * 3 ^ 2"), "(1 Add (2 Mul (3 Pow 2)))");
    assert_eq!(
        shape("a OR b XOR c AND NOT d"),
        "(a Or (b Xor (c And (Not d))))"
    );
    assert_eq!(
        shape("a = 1 AND b IS NOT NULL"),
        "((a Eq 1) And (b IS NOT NULL))"
    );
    assert_eq!(shape("-a.b ^ 2"), "((Neg a.b) Pow 2)");
    assert_eq!(shape("1 < a < 3"), "((1 Lt a) And (a Lt 3))");
    // IN binds tighter than `=`.
    assert!(
        matches!(expr("x IN [1] = true"), ExprKind::Binary(BinOp::Eq, ref l, _) if matches!(l.kind, ExprKind::Binary(BinOp::In, ..)))
    );
    assert_eq!(shape("2 - 1 - 1"), "((2 Sub 1) Sub 1)");
    assert_eq!(expr("-9223372036854775808"), ExprKind::Int(i64::MIN));
}

#[test]
fn atoms_of_every_kind() {
    assert!(matches!(
        expr("[x IN list WHERE x > 1 | x * 2]"),
        ExprKind::ListComprehension {
            filter: Some(_),
            map: Some(_),
            ..
        }
    ));
    assert!(matches!(
        expr("[(a)-->(b) WHERE b.x | b.name]"),
        ExprKind::PatternComprehension {
            filter: Some(_),
            ..
        }
    ));
    assert!(matches!(
        expr("all(x IN l WHERE x > 0)"),
        ExprKind::Quantified {
            q: Quantifier::All,
            ..
        }
    ));
    assert!(matches!(
        expr("reduce(s = 0, x IN l | s + x)"),
        ExprKind::Reduce { .. }
    ));
    assert!(matches!(
        expr("CASE WHEN a THEN 1 ELSE 2 END"),
        ExprKind::Case { operand: None, .. }
    ));
    assert!(matches!(expr("count(*)"), ExprKind::CountStar));
    assert!(matches!(
        expr("count(DISTINCT x)"),
        ExprKind::Call { distinct: true, .. }
    ));
    assert!(matches!(expr("a.b.c(1)"), ExprKind::Call { ref name, .. } if name == "a.b.c"));
    assert!(matches!(expr("(a)-[:R]->(b)"), ExprKind::Pattern(_)));
    assert!(matches!(expr("(1 + 2)"), ExprKind::Binary(BinOp::Add, ..)));
    assert!(
        matches!(expr("n {.name, .*, k: 1, v}"), ExprKind::MapProjection(_, ref items) if items.len() == 4)
    );
    assert!(matches!(
        expr("EXISTS { MATCH (n)-->() RETURN n }"),
        ExprKind::Exists(_)
    ));
    assert!(matches!(
        expr("COUNT { (n)-->() }"),
        ExprKind::CountSubquery(_)
    ));
    assert!(matches!(expr("n:A:B"), ExprKind::HasLabels(..)));
    assert!(matches!(expr("l[1..]"), ExprKind::Slice(_, Some(_), None)));
    assert_eq!(expr(r"'a\tb\u00e9'"), ExprKind::String("a\tbé".into()));
}

#[test]
fn patterns_and_clauses() {
    let q = parse("MATCH p = shortestPath((a:A|B {x: 1})<-[r:T|:U*2..]-(b)) WHERE a.x > 1 RETURN DISTINCT p, a.x AS x ORDER BY x DESC SKIP 1 LIMIT 2").unwrap();
    let Clause::Match {
        patterns,
        where_: Some(_),
        ..
    } = &q.first.clauses[0]
    else {
        panic!()
    };
    assert_eq!(patterns[0].kind, PathKind::Shortest);
    assert_eq!(patterns[0].var.as_deref(), Some("p"));
    let (rel, _) = &patterns[0].element.chain[0];
    assert_eq!(rel.direction, RelDirection::Left);
    assert_eq!(rel.length, Some((Some(2), None)));
    assert!(matches!(rel.types, Some(LabelExpr::Or(_))));
    let Clause::Return(p) = &q.first.clauses[1] else {
        panic!()
    };
    assert!(p.distinct);
    assert_eq!(p.items[0].text, "p");
    assert_eq!(p.items[1].alias.as_deref(), Some("x"));
    assert!(p.order_by[0].descending && p.skip.is_some() && p.limit.is_some());
    let q = parse("MERGE (n:N {k: 1}) ON CREATE SET n.c = 1 ON MATCH SET n += {m: 2}, n:L REMOVE n.x, n:L DETACH DELETE n").unwrap();
    assert_eq!(q.first.clauses.len(), 3);
    let q =
        parse("CALL db.labels() YIELD label AS l WHERE l <> 'x' RETURN l UNION ALL RETURN 1 AS l")
            .unwrap();
    assert_eq!(q.unions.len(), 1);
    assert!(parse(
        "UNWIND [1] AS x CALL { WITH x RETURN x * 2 AS y } FOREACH (i IN [1] | CREATE ()) RETURN y"
    )
    .is_ok());
}

#[test]
fn errors_name_place_and_kind() {
    let e = parse("MATCH (a)-[r]-(b RETURN a").unwrap_err();
    assert_eq!((e.line, e.column), (1, 18));
    assert!(e.message.contains("expected ')'"), "{e}");
    let e = parse("RETURN 9223372036854775808").unwrap_err();
    assert_eq!(e.code, "IntegerOverflow");
    let e = parse("MATCH (a)\nRETURN a,").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(parse("").is_err());
    assert!(parse("RETURN 1 RETURN 2;  x").is_err());
    assert!(parse("MATCH (a)-[r]-> RETURN a").is_err());
    for bad in [
        "(",
        "RETURN [1,",
        "RETURN {a:",
        "MATCH (n:) RETURN n",
        "RETURN CASE END",
        "WITH 1 AS",
        "RETURN 'x",
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn list_element_indexes() {
    match parse_statement("CREATE INDEX refs IF NOT EXISTS FOR (n:Node) ON EACH (n.keys)").unwrap()
    {
        Statement::CreateIndex {
            name,
            label,
            key,
            each,
            vector,
            ..
        } => {
            assert_eq!(name.as_deref(), Some("refs"));
            assert_eq!((label.as_deref(), key.as_str()), (Some("Node"), "keys"));
            assert!(each && !vector);
        }
        other => panic!("{other:?}"),
    }
    let e = parse_statement("CREATE VECTOR INDEX FOR (n:N) ON EACH (n.v)").unwrap_err();
    assert!(e.to_string().contains("ON EACH"), "{e}");
}

#[test]
fn relationship_vector_indexes() {
    for arrow in ["()-[r:CITES]-()", "()-[r:CITES]->()", "()<-[r:CITES]-()"] {
        let text = format!("CREATE VECTOR INDEX c FOR {arrow} ON (r.v) OPTIONS {{}}");
        match parse_statement(&text).unwrap() {
            Statement::CreateIndex {
                label,
                relationship,
                key,
                vector,
                ..
            } => {
                assert_eq!((label.as_deref(), key.as_str()), (Some("CITES"), "v"));
                assert!(relationship && vector);
            }
            other => panic!("{other:?}"),
        }
    }
    // Property and list-element indexes on relationships, of one type or all.
    for (text, want) in [
        ("CREATE INDEX FOR ()-[r:CITES]-() ON (r.v)", Some("CITES")),
        ("CREATE INDEX FOR ()-[r]-() ON EACH (r.v)", None),
    ] {
        match parse_statement(text).unwrap() {
            Statement::CreateIndex {
                label,
                relationship,
                vector,
                ..
            } => assert!(
                label.as_deref() == want && relationship && !vector,
                "{text}"
            ),
            other => panic!("{other:?}"),
        }
    }
    match parse_statement("CREATE INDEX FOR (n) ON EACH (n.keys)").unwrap() {
        Statement::CreateIndex {
            label,
            relationship,
            ..
        } => assert!(label.is_none() && !relationship),
        other => panic!("{other:?}"),
    }
    let e = parse_statement("CREATE CONSTRAINT FOR (n) REQUIRE n.v IS UNIQUE").unwrap_err();
    assert!(e.to_string().contains("needs a label"), "{e}");
    let e = parse_statement("CREATE CONSTRAINT FOR ()-[r:T]-() REQUIRE r.v IS UNIQUE").unwrap_err();
    assert!(e.to_string().contains("constraints are on nodes"), "{e}");
    let e = parse_statement("CREATE VECTOR INDEX FOR ()-[r:CITES]-() ON (x.v)").unwrap_err();
    assert!(e.to_string().contains("not the pattern's variable"), "{e}");
}

#[test]
fn show_functions_in_neo4j_forms() {
    for text in [
        "SHOW FUNCTIONS",
        "SHOW ALL FUNCTIONS",
        "show built in functions",
        "SHOW FUNCTION",
    ] {
        assert_eq!(
            parse_statement(text).unwrap(),
            Statement::Show {
                what: Shown::Functions,
                tail: None
            },
            "{text}"
        );
    }
    assert!(matches!(
        parse_statement("SHOW ALL INDEXES").unwrap(),
        Statement::Show {
            what: Shown::Indexes { only: None },
            tail: None
        }
    ));
    let e = parse_statement("SHOW BUILT FUNCTIONS").unwrap_err();
    assert!(e.to_string().contains("IN"), "{e}");
    assert_eq!(
        parse_statement("SHOW ALL PROCEDURES").unwrap(),
        Statement::Show {
            what: Shown::Procedures,
            tail: None
        }
    );
    let e = parse_statement("SHOW SETTINGS").unwrap_err();
    assert!(e.to_string().contains("PROCEDURES"), "{e}");
}

/// What follows a SHOW: YIELD with a WITH's ORDER BY, SKIP, LIMIT and
/// WHERE, or a bare WHERE, then a RETURN; anything else is an error.
#[test]
fn show_takes_yield_where_and_return() {
    let tail = |text: &str| match parse_statement(text).unwrap() {
        Statement::Show { tail, .. } => tail,
        other => panic!("{text}: {other:?}"),
    };
    let t = tail(
        "SHOW VECTOR INDEXES YIELD name, options AS o ORDER BY name SKIP 1 LIMIT 2 \
         WHERE name = $n RETURN o.indexConfig AS c",
    )
    .unwrap();
    assert!(t.explicit && !t.yielded.star);
    assert_eq!(t.yielded.items.len(), 2);
    assert_eq!(t.yielded.items[1].alias.as_deref(), Some("o"));
    assert_eq!(t.yielded.order_by.len(), 1);
    assert!(t.yielded.skip.is_some() && t.yielded.limit.is_some());
    assert!(t.yielded.where_.is_some());
    assert_eq!(t.ret.unwrap().items[0].alias.as_deref(), Some("c"));
    let t = tail("SHOW FUNCTIONS WHERE name STARTS WITH 'to'").unwrap();
    assert!(!t.explicit && t.yielded.star && t.yielded.where_.is_some() && t.ret.is_none());
    let t = tail("SHOW CONSTRAINTS YIELD *").unwrap();
    assert!(t.explicit && t.yielded.star && t.ret.is_none());
    assert!(tail("SHOW INDEXES").is_none());
    for bad in [
        "SHOW INDEXES YIELD",
        "SHOW INDEXES YIELD DISTINCT name",
        "SHOW INDEXES RETURN name",
        "SHOW FUNCTIONS YIELD name MATCH (n) RETURN n",
    ] {
        assert!(parse_statement(bad).is_err(), "{bad}");
    }
}

/// `SHOW <type> INDEXES` for Neo4j's index types; creating one of a type
/// Plexus does not have is refused by name.
#[test]
fn index_types_are_named() {
    for (text, only) in [
        ("SHOW VECTOR INDEXES", Some(IndexType::Vector)),
        ("SHOW FULLTEXT INDEXES", Some(IndexType::FullText)),
        ("show range index", Some(IndexType::Range)),
        ("SHOW ALL INDEXES", None),
    ] {
        assert_eq!(
            parse_statement(text).unwrap(),
            Statement::Show {
                what: Shown::Indexes { only },
                tail: None
            },
            "{text}"
        );
    }
    assert!(matches!(
        parse_statement("CREATE VECTOR INDEX v FOR (n:C) ON n.e").unwrap(),
        Statement::CreateIndex { vector: true, .. }
    ));
    assert!(matches!(
        parse_statement("CREATE RANGE INDEX r FOR (n:C) ON (n.e)").unwrap(),
        Statement::CreateIndex {
            vector: false,
            each: false,
            ..
        }
    ));
    let e = parse_statement("CREATE FULLTEXT INDEX f FOR (n:C) ON EACH [n.text]").unwrap_err();
    assert_eq!(e.code, "UnsupportedIndexType");
    assert_eq!((e.line, e.column), (1, 8));
    assert!(e.message.contains("no FULLTEXT indexes"), "{e}");
    // A label or variable named like a type is still one.
    assert!(parse_statement("SHOW TEXT CONSTRAINTS").is_err());
    assert!(parse("CREATE (text:Text) RETURN text").is_ok());
}

#[test]
fn parameters_are_listed_once_at_their_first_use() {
    let text = "MATCH (a {id: $id})\nWHERE a.x > $0 AND a.y = $id\nRETURN '$not', $last";
    let found = plexus_cypher::parameters(text);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["id", "0", "last"]);
    // Each offset is where the `$` of the first use stands.
    for (name, at) in &found {
        assert_eq!(&text[*at..*at + 1], "$", "{name}");
    }
    assert_eq!(found[0].1, text.find("$id").unwrap());
    assert!(plexus_cypher::parameters("RETURN 1").is_empty());
    // Inside a string or a comment, `$x` names no parameter.
    assert!(plexus_cypher::parameters("RETURN '$x', \"$y\" // $z\n/* $w */").is_empty());
    // Text that does not lex names none.
    assert!(plexus_cypher::parameters("RETURN $a, \u{0}").is_empty());
}
