// IC6: `collect(DISTINCT friend)` then UNWIND becomes `WITH DISTINCT`
// (Kuzu cannot match from an unwound node); the tag id is compared in
// WHERE, not in a property map.
MATCH (knownTag:Tag {name: $tagName})
WITH knownTag.id AS knownTagId
MATCH (person:Person {id: $personId})-[:KNOWS*1..2]-(friend:Person)
WHERE person.id <> friend.id
WITH DISTINCT knownTagId, friend
MATCH (friend)<-[:HAS_CREATOR]-(post:Post),
      (post)-[:HAS_TAG]->(t:Tag),
      (post)-[:HAS_TAG]->(tag:Tag)
WHERE t.id = knownTagId AND t.id <> tag.id
WITH tag.name AS tagName, count(post) AS postCount
RETURN tagName, postCount
ORDER BY postCount DESC, tagName ASC
LIMIT 10
