// IC12: `*0..` starts at 1 (a path of none from a Tag never ends at a
// TagClass, so nothing is lost) and is bounded at 30; the tag ids are
// tested with list_contains().
MATCH (tag:Tag)-[:HAS_TYPE|:IS_SUBCLASS_OF*1..30]->(baseTagClass:TagClass)
WHERE tag.name = $tagClassName OR baseTagClass.name = $tagClassName
WITH collect(tag.id) AS tags
MATCH (:Person {id: $personId})-[:KNOWS]-(friend:Person)<-[:HAS_CREATOR]-(comment:Comment)-[:REPLY_OF]->(:Post)-[:HAS_TAG]->(tag:Tag)
WHERE list_contains(tags, tag.id)
RETURN
    friend.id AS personId,
    friend.firstName AS personFirstName,
    friend.lastName AS personLastName,
    collect(DISTINCT tag.name) AS tagNames,
    count(DISTINCT comment.id) AS replyCount
ORDER BY
    replyCount DESC,
    personId ASC
LIMIT 20
