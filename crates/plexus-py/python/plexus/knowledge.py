"""Claims, Horn rules and modal entailment from Python: ``db.knowledge``.

Each method runs one ``kg.*`` procedure (docs/knowledge.md) through the
handle it was made from: a :class:`plexus.Database` (one auto-commit query
per call) or a :class:`plexus.Transaction` (in that transaction). Options
are Python keywords in snake case (``valid_from``); ``None`` leaves one out.
Instants are ``datetime`` values, ISO strings or microseconds since 1970.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["Knowledge"]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _options(**given: Any) -> Dict[str, Any]:
    """The procedure's options map: camel-case keys, ``None`` left out."""
    return {_camel(k): v for k, v in given.items() if v is not None}


class Knowledge:
    """The knowledge layer of one graph handle (see the module's text)."""

    def __init__(self, handle: Any):
        self._h = handle

    def _one(self, text: str, **params: Any) -> Dict[str, Any]:
        row = self._h.query(text, **params).fetchone()
        return row if row is not None else {}

    def assert_claim(
        self,
        subject: str,
        predicate: str,
        object: Any,
        *,
        agent: str,
        valid_from: Any,
        valid_to: Any = None,
        polarity: Optional[str] = None,
        source: Optional[str] = None,
        confidence: Optional[float] = None,
        world: Optional[str] = None,
        provenance: Optional[Dict[str, Any]] = None,
        object_kind: Optional[str] = None,
        version_id: Optional[str] = None,
    ) -> Tuple[str, str]:
        """Asserts (``polarity="negative"``: denies) a claim over
        ``[valid_from, valid_to)``; ``(claim_id, version_id)``. The claim id
        is the same for the same statement and context on every machine."""
        options = _options(
            agent=agent, valid_from=valid_from, valid_to=valid_to, polarity=polarity,
            source=source, confidence=confidence, world=world, provenance=provenance,
            object_kind=object_kind, version_id=version_id,
        )
        row = self._one(
            "CALL kg.assertClaim($s, $p, $o, $options) YIELD claimId, versionId "
            "RETURN claimId, versionId",
            s=subject, p=predicate, o=object, options=options,
        )
        return row["claimId"], row["versionId"]

    def correct_claim(
        self,
        version_id: str,
        *,
        confidence: Optional[float] = None,
        provenance: Optional[Dict[str, Any]] = None,
        valid_from: Any = None,
        valid_to: Any = None,
    ) -> str:
        """A new version of the claim ``version_id`` is of, with the given
        parts changed; the new version's id."""
        options = _options(confidence=confidence, provenance=provenance, valid_from=valid_from, valid_to=valid_to)
        row = self._one(
            "CALL kg.correctClaim($v, $options) YIELD versionId RETURN versionId", v=version_id, options=options
        )
        return row["versionId"]

    def retract_claim(self, claim_id: str, valid_from: Any, valid_to: Any = None, reason: Optional[str] = None) -> str:
        """The claim does not hold over ``[valid_from, valid_to)``; the
        retraction's version id."""
        row = self._one(
            "CALL kg.retractClaim($c, $f, $t, $r) YIELD versionId RETURN versionId",
            c=claim_id, f=valid_from, t=valid_to, r=reason,
        )
        return row["versionId"]

    def claims(
        self,
        valid_time: Any,
        *,
        subject: Optional[str] = None,
        predicate: Optional[str] = None,
        object: Any = None,
        world: Optional[str] = None,
        agent: Optional[str] = None,
        polarity: Optional[str] = None,
        object_kind: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """The claims holding at ``valid_time`` that match the filters, as
        dicts (``claimId``, ``subject``, ``confidence``, ``validFrom``, …)."""
        options = _options(
            valid_time=valid_time, subject=subject, predicate=predicate, object=object, world=world,
            agent=agent, polarity=polarity, object_kind=object_kind,
        )
        return self._h.query(
            "CALL kg.claims($options) YIELD claimId, versionId, statementId, subject, predicate, object, "
            "polarity, agent, source, confidence, world, provenance, validFrom, validTo "
            "RETURN claimId, versionId, statementId, subject, predicate, object, polarity, agent, source, "
            "confidence, world, provenance, validFrom, validTo",
            options=options,
        ).fetchall()

    def status(
        self,
        subject: str,
        predicate: str,
        object: Any,
        valid_time: Any,
        *,
        world: Optional[str] = None,
        agent: Optional[str] = None,
        object_kind: Optional[str] = None,
    ) -> Tuple[str, float]:
        """The statement's four-valued status at ``valid_time`` —
        ``"supported"``, ``"refuted"``, ``"both"`` or ``"unknown"`` — and
        its confidence."""
        options = _options(valid_time=valid_time, world=world, agent=agent, object_kind=object_kind)
        row = self._one(
            "CALL kg.claimStatus($s, $p, $o, $options) YIELD status, confidence RETURN status, confidence",
            s=subject, p=predicate, o=object, options=options,
        )
        return row["status"], row["confidence"]

    def create_rule(self, rule_id: str, body: Sequence[Sequence[str]], head: Sequence[str]) -> str:
        """A safe positive Horn rule: ``body`` atoms ``[s, p, o]`` (``?x``
        variables) imply ``head``; creating it again makes a new version.
        The version's id."""
        row = self._one(
            "CALL kg.createRule($id, $body, $head) YIELD versionId RETURN versionId",
            id=rule_id, body=[list(a) for a in body], head=list(head),
        )
        return row["versionId"]

    def run_rules(
        self,
        valid_time: Any,
        *,
        world: Optional[str] = None,
        max_iterations: Optional[int] = None,
        max_derivations: Optional[int] = None,
        max_justifications: Optional[int] = None,
    ) -> Dict[str, Any]:
        """Runs the rules to their fixpoint at ``valid_time``; what it wrote
        (``iterations``, ``asserted``, ``corrected``, ``retracted``,
        ``justifications``). A run past a limit raises and writes nothing."""
        options = _options(
            valid_time=valid_time, world=world, max_iterations=max_iterations,
            max_derivations=max_derivations, max_justifications=max_justifications,
        )
        return self._one(
            "CALL kg.runRules($options) YIELD iterations, asserted, corrected, retracted, justifications "
            "RETURN iterations, asserted, corrected, retracted, justifications",
            options=options,
        )

    def maintain_truth(self, valid_time: Any = None, *, world: Optional[str] = None) -> Dict[str, Any]:
        """Reconciles the rules' conclusions with their premises (at the last
        run's instant unless given); what it wrote, and whether the pass
        started from the claims changed since the last one (``incremental``)."""
        options = _options(valid_time=valid_time, world=world)
        return self._one(
            "CALL kg.maintainTruth($options) "
            "YIELD iterations, asserted, corrected, retracted, justifications, incremental "
            "RETURN iterations, asserted, corrected, retracted, justifications, incremental",
            options=options,
        )

    def explain(
        self, claim_id: str, valid_time: Any, *, max_depth: Optional[int] = None, max_nodes: Optional[int] = None
    ) -> Dict[str, Any]:
        """The derivation graph of a conclusion: ``root``, ``nodes``,
        ``edges``, ``truncated``."""
        options = _options(valid_time=valid_time, max_depth=max_depth, max_nodes=max_nodes)
        return self._one(
            "CALL kg.explain($c, $options) YIELD root, nodes, edges, truncated RETURN root, nodes, edges, truncated",
            c=claim_id, options=options,
        )

    def assert_accessibility(
        self, agent: str, world: str, accessible: str, frame: str, *, valid_from: Any, valid_to: Any = None
    ) -> str:
        """From ``world``, ``agent`` considers ``accessible`` (frame
        ``"belief"``, ``"knowledge"`` or ``"modal"``); the version's id."""
        options = _options(valid_from=valid_from, valid_to=valid_to)
        row = self._one(
            "CALL kg.assertAccessibility($a, $w, $x, $f, $options) YIELD versionId RETURN versionId",
            a=agent, w=world, x=accessible, f=frame, options=options,
        )
        return row["versionId"]

    def entails(
        self,
        agent: str,
        formula: Dict[str, Any],
        modality: str,
        *,
        world: str,
        valid_time: Any,
        max_depth: Optional[int] = None,
        max_states: Optional[int] = None,
    ) -> Tuple[str, float]:
        """Whether ``agent`` ``modality`` (``"BELIEVES"``, ``"KNOWS"``,
        ``"POSSIBLE"``, ``"NECESSARY"``) ``formula`` from ``world``: the
        four-valued status and its confidence."""
        options = _options(world=world, valid_time=valid_time, max_depth=max_depth, max_states=max_states)
        row = self._one(
            "CALL kg.entails($a, $f, $m, $options) YIELD status, confidence RETURN status, confidence",
            a=agent, f=formula, m=modality, options=options,
        )
        return row["status"], row["confidence"]
