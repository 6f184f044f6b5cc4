//! Claims, rules and modal entailment from Cypher (`kg.*`), GestaltDB's
//! documented example restated as queries.

use plexus::{Database, Params, Value};

fn q(db: &Database, text: &str) -> Vec<Vec<Value>> {
    match db.query("default", text, &Params::new()) {
        Ok(r) => r.rows,
        Err(e) => panic!("{text}: {e}"),
    }
}

fn err(db: &Database, text: &str) -> String {
    db.query("default", text, &Params::new())
        .unwrap_err()
        .to_string()
}

fn s(v: &Value) -> &str {
    match v {
        Value::String(s) => s,
        other => panic!("{other:?}"),
    }
}

#[test]
fn claims_rules_and_explanations_from_cypher() {
    let db = Database::in_memory().unwrap();
    db.keep_history("default").unwrap();
    let rows = q(
        &db,
        "CALL kg.assertClaim('alice', 'WORKS_FOR', 'acme', {agent: 'source:hr', source: 'hr.csv', \
         confidence: 0.97, world: 'reported', validFrom: '2024-01-01T00:00:00Z'}) \
         YIELD versionId, claimId RETURN versionId, claimId",
    );
    let positive = s(&rows[0][0]).to_string();
    q(
        &db,
        "CALL kg.assertClaim('alice', 'WORKS_FOR', 'acme', {agent: 'source:audit', \
         polarity: 'negative', confidence: 0.7, world: 'reported', \
         validFrom: datetime('2024-01-01T00:00:00Z')}) YIELD versionId RETURN versionId",
    );
    let status = "CALL kg.claimStatus('alice', 'WORKS_FOR', 'acme', \
         {validTime: '2024-06-01T00:00:00Z', world: 'reported'}) YIELD status, confidence \
         RETURN status, confidence";
    assert_eq!(
        q(&db, status),
        [[Value::String("both".into()), Value::Float(0.7)]]
    );
    let before_correction = db.system_time().unwrap();
    q(
        &db,
        &format!(
            "CALL kg.correctClaim('{positive}', {{confidence: 0.99, provenance: {{reviewed: true}}}}) \
             YIELD versionId RETURN versionId"
        ),
    );
    let confidences = |horizon: &str| {
        q(
            &db,
            &format!(
                "CALL kg.claims({{subject: 'alice', predicate: 'WORKS_FOR', world: 'reported', \
                 polarity: 'positive', validTime: '2024-06-01T00:00:00Z'}}) {horizon} \
                 YIELD confidence RETURN confidence"
            ),
        )
    };
    assert_eq!(confidences(""), [[Value::Float(0.99)]]);
    // As known before the correction: the original confidence.
    let then = confidences(&format!("FOR SYSTEM_TIME AS OF {before_correction}"));
    assert_eq!(then, [[Value::Float(0.97)]]);

    q(
        &db,
        "CALL kg.assertClaim('acme', 'MEMBER_OF', 'industry', {agent: 'source:registry', \
         world: 'reported', validFrom: '2024-03-01T00:00:00Z'}) YIELD versionId RETURN versionId",
    );
    q(
        &db,
        "CALL kg.createRule('employment-implies-affiliation', \
         [['?p', 'WORKS_FOR', '?c'], ['?c', 'MEMBER_OF', '?g']], ['?p', 'AFFILIATED_WITH', '?g']) \
         YIELD ruleId RETURN ruleId",
    );
    let run = q(
        &db,
        "CALL kg.runRules({validTime: '2024-06-01T00:00:00Z'}) YIELD asserted, corrected \
         RETURN asserted, corrected",
    );
    assert_eq!(run, [[Value::Int(1), Value::Int(0)]]);
    let derived = q(
        &db,
        "CALL kg.claims({predicate: 'AFFILIATED_WITH', world: 'reported', \
         validTime: '2024-06-01T00:00:00Z'}) YIELD claimId, agent, validFrom RETURN claimId, agent, validFrom",
    );
    assert_eq!(derived.len(), 1);
    assert_eq!(s(&derived[0][1]), "plexus:rules");
    let claim = s(&derived[0][0]).to_string();
    let ex = q(
        &db,
        &format!(
            "CALL kg.explain('{claim}', {{validTime: '2024-06-01T00:00:00Z'}}) \
             YIELD nodes, edges, truncated RETURN size(nodes), size(edges), truncated"
        ),
    );
    // The conclusion, its rule, two premises; one DERIVED_BY and two PREMISE edges.
    assert_eq!(ex, [[Value::Int(4), Value::Int(3), Value::Bool(false)]]);

    // A limit reached writes nothing, and says which.
    q(
        &db,
        "CALL kg.createRule('t', [['?x', 'ANC', '?y'], ['?y', 'ANC', '?z']], ['?x', 'ANC', '?z']) \
         YIELD ruleId RETURN ruleId",
    );
    q(
        &db,
        "UNWIND range(0, 9) AS i CALL kg.assertClaim('n' + i, 'ANC', 'n' + (i + 1), \
         {agent: 'a', validFrom: 0}) YIELD versionId RETURN count(*)",
    );
    let e = err(
        &db,
        "CALL kg.runRules({validTime: 5, maxDerivations: 3}) YIELD asserted RETURN asserted",
    );
    assert!(e.contains("maxDerivations = 3"), "{e}");
    let count = "CALL kg.claims({predicate: 'ANC', agent: 'plexus:rules', validTime: 5}) \
         YIELD claimId RETURN count(claimId)";
    assert_eq!(q(&db, count), [[Value::Int(0)]]);
    q(
        &db,
        "CALL kg.runRules({validTime: 5}) YIELD asserted RETURN asserted",
    );
    assert_eq!(q(&db, count), [[Value::Int(11 * 10 / 2 - 10)]]);
    // Maintenance after a premise goes: fewer conclusions.
    let n5 = q(
        &db,
        "CALL kg.claims({subject: 'n5', predicate: 'ANC', agent: 'a', validTime: 5}) \
         YIELD claimId RETURN claimId",
    );
    let id = s(&n5[0][0]).to_string();
    // A first pass reads every claim; it changes nothing after a run.
    let first =
        "CALL kg.maintainTruth() YIELD retracted, incremental RETURN retracted, incremental";
    assert_eq!(q(&db, first), [[Value::Int(0), Value::Bool(false)]]);
    q(
        &db,
        &format!("CALL kg.retractClaim('{id}', 0, null, 'wrong') YIELD versionId RETURN versionId"),
    );
    // The next starts from the retracted claim. Chains n0..n5 and n6..n10
    // are left: 15 + 10 pairs less their 9 links, so 16 of the 45
    // conclusions stay.
    assert_eq!(q(&db, first), [[Value::Int(29), Value::Bool(true)]]);
    assert_eq!(q(&db, count), [[Value::Int(16)]]);
}

#[test]
fn modal_entailment_from_cypher() {
    let db = Database::in_memory().unwrap();
    for w in ["w1", "w2"] {
        q(
            &db,
            &format!(
                "CALL kg.assertAccessibility('ann', 'real', '{w}', 'belief', {{validFrom: 0}}) \
                 YIELD versionId RETURN versionId"
            ),
        );
        q(
            &db,
            &format!(
                "CALL kg.assertClaim('sky', 'IS', 'rain', {{agent: 'obs', world: '{w}', validFrom: 0}}) \
                 YIELD versionId RETURN versionId"
            ),
        );
    }
    let ask = |formula: &str, modality: &str| {
        let rows = q(
            &db,
            &format!(
                "CALL kg.entails('ann', {formula}, '{modality}', {{world: 'real', validTime: 1}}) \
                 YIELD status RETURN status"
            ),
        );
        s(&rows[0][0]).to_string()
    };
    let rain = "{subject: 'sky', predicate: 'IS', object: 'rain'}";
    assert_eq!(ask(rain, "BELIEVES"), "supported");
    assert_eq!(
        ask(&format!("{{operator: 'NOT', formula: {rain}}}"), "BELIEVES"),
        "refuted"
    );
    assert_eq!(ask(rain, "KNOWS"), "unknown");
    let e = err(
        &db,
        "CALL kg.entails('ann', {operator: 'AND', operands: []}, 'BELIEVES', {world: 'real', validTime: 1}) \
         YIELD status RETURN status",
    );
    assert!(e.contains("two operands"), "{e}");
    let e = err(
        &db,
        "CALL kg.entails('ann', {subject: 'a', predicate: 'b', object: 'c'}, 'MAYBE', {world: 'real', validTime: 1}) \
         YIELD status RETURN status",
    );
    assert!(e.contains("MAYBE"), "{e}");
    let e = err(
        &db,
        "CALL kg.claimStatus('a', 'b', 'c', {validTime: 1, colour: 'red'}) YIELD status RETURN status",
    );
    assert!(e.contains("unknown option `colour`"), "{e}");
    let e = err(
        &db,
        "CALL kg.assertClaim('a', 'b', 'c', {validFrom: 0}) YIELD versionId RETURN versionId",
    );
    assert!(e.contains("`agent` is required"), "{e}");
}
