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
