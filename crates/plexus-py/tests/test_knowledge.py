"""Claims, rules and modal entailment from Python, through the kg.* procedures."""

import pytest

import plexus


def claim(db, s, p, o, **options):
    options.setdefault("validFrom", 0)
    return db.query(
        "CALL kg.assertClaim($s, $p, $o, $options) YIELD claimId RETURN claimId",
        s=s, p=p, o=o, options=options,
    ).scalar()


def test_status_rules_and_maintenance(db):
    claim(db, "alice", "WORKS_FOR", "acme", agent="hr", confidence=0.9)
    claim(db, "alice", "WORKS_FOR", "acme", agent="audit", polarity="negative")
    status = "CALL kg.claimStatus('alice', 'WORKS_FOR', 'acme', {validTime: 1}) YIELD status RETURN status"
    assert db.query(status).scalar() == "both"
    member = claim(db, "acme", "MEMBER_OF", "industry", agent="registry")
    db.query(
        "CALL kg.createRule('aff', [['?p', 'WORKS_FOR', '?c'], ['?c', 'MEMBER_OF', '?g']], "
        "['?p', 'AFFILIATED_WITH', '?g']) YIELD ruleId RETURN ruleId"
    )
    run = db.query("CALL kg.runRules({validTime: 1}) YIELD asserted RETURN asserted")
    assert run.scalar() == 1
    derived = "CALL kg.claimStatus('alice', 'AFFILIATED_WITH', 'industry', {validTime: 1}) YIELD status RETURN status"
    assert db.query(derived).scalar() == "supported"
    db.query("CALL kg.retractClaim($id, 0) YIELD versionId RETURN versionId", id=member)
    assert db.query("CALL kg.maintainTruth() YIELD retracted RETURN retracted").scalar() == 1
    assert db.query(derived).scalar() == "unknown"


def test_entailment_and_its_limits(db):
    db.query("CALL kg.assertAccessibility('ann', 'real', 'w1', 'belief', {validFrom: 0}) YIELD versionId RETURN versionId")
    claim(db, "sky", "IS", "rain", agent="obs", world="w1")
    rain = {"subject": "sky", "predicate": "IS", "object": "rain"}
    q = "CALL kg.entails('ann', $f, $m, {world: 'real', validTime: 1, maxDepth: $d}) YIELD status RETURN status"
    assert db.query(q, f=rain, m="BELIEVES", d=4).scalar() == "supported"
    nested = {"operator": "BELIEVES", "agent": "ann", "formula": rain}
    with pytest.raises(plexus.PlexusError, match="maxDepth"):
        db.query(q, f=nested, m="BELIEVES", d=1).rows()


def test_the_python_api_restates_the_procedures(db):
    kg = db.knowledge
    hr, _ = kg.assert_claim("alice", "WORKS_FOR", "acme", agent="hr", valid_from=0, confidence=0.9)
    again, _ = kg.assert_claim("alice", "WORKS_FOR", "acme", agent="hr", valid_from=5, confidence=0.9)
    assert again == hr, "the same statement and context: the same claim"
    kg.assert_claim("alice", "WORKS_FOR", "acme", agent="audit", valid_from=0, polarity="negative")
    assert kg.status("alice", "WORKS_FOR", "acme", 1)[0] == "both"
    assert kg.status("alice", "WORKS_FOR", "acme", 1, agent="hr") == ("supported", pytest.approx(0.9))
    member, member_version = kg.assert_claim("acme", "MEMBER_OF", "industry", agent="registry", valid_from=0)
    found = kg.claims(1, predicate="MEMBER_OF")
    assert [(c["claimId"], c["subject"], c["object"]) for c in found] == [(member, "acme", "industry")]
    corrected = kg.correct_claim(member_version, confidence=0.5)
    assert kg.claims(1, predicate="MEMBER_OF")[0]["versionId"] == corrected
    kg.create_rule("aff", [["?p", "WORKS_FOR", "?c"], ["?c", "MEMBER_OF", "?g"]], ["?p", "AFFILIATED_WITH", "?g"])
    with pytest.raises(plexus.PlexusError, match="maxDerivations"):
        kg.run_rules(1, max_derivations=0)
    assert kg.run_rules(1)["asserted"] == 1
    (derived,) = kg.claims(1, predicate="AFFILIATED_WITH")
    assert derived["agent"] == "plexus:rules"
    why = kg.explain(derived["claimId"], 1)
    assert not why["truncated"] and len(why["edges"]) >= 3
    assert kg.maintain_truth()["incremental"] is False  # the first pass reads every claim
    kg.retract_claim(member, 0, reason="left the registry")
    report = kg.maintain_truth()
    assert report["retracted"] == 1 and report["incremental"] is True
    assert kg.status("alice", "AFFILIATED_WITH", "industry", 1)[0] == "unknown"
    kg.assert_accessibility("ann", "real", "w1", "belief", valid_from=0)
    kg.assert_claim("sky", "IS", "rain", agent="obs", world="w1", valid_from=0)
    rain = {"subject": "sky", "predicate": "IS", "object": "rain"}
    assert kg.entails("ann", rain, "BELIEVES", world="real", valid_time=1)[0] == "supported"
    assert kg.entails("ann", rain, "KNOWS", world="real", valid_time=1)[0] == "unknown"
    # In a transaction: nothing seen outside before the commit.
    with db.transaction() as tx:
        tx.knowledge.assert_claim("bob", "LIKES", "tea", agent="bob", valid_from=0)
        assert tx.knowledge.status("bob", "LIKES", "tea", 1)[0] == "supported"
        assert kg.status("bob", "LIKES", "tea", 1)[0] == "unknown"
    assert kg.status("bob", "LIKES", "tea", 1)[0] == "supported"
