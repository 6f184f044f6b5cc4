// IC14: allShortestPaths is Kuzu's `* ALL SHORTEST 1..30`. The reference
// weighs each relationship of a path with pattern comprehensions inside
// reduce(), which Kuzu's Cypher does not have: here each consecutive pair
// of persons on a path (matched again by id: a node taken from a list
// cannot start a pattern) counts its replies with COUNT subqueries in both
// directions, as the reference's OR does, and a path's weight is their
// sum, grouped by the path's person ids.
MATCH (person1:Person {id: $person1Id}), (person2:Person {id: $person2Id})
MATCH path = (person1)-[:KNOWS* ALL SHORTEST 1..30]-(person2)
WITH properties(nodes(path), 'id') AS ids
UNWIND range(1, size(ids) - 1) AS i
MATCH (a:Person), (b:Person)
WHERE a.id = ids[i] AND b.id = ids[i + 1]
WITH ids, a, b,
     COUNT { MATCH (a)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(:Post)-[:HAS_CREATOR]->(b) }
     + COUNT { MATCH (b)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(:Post)-[:HAS_CREATOR]->(a) } AS toPosts,
     COUNT { MATCH (a)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(:Comment)-[:HAS_CREATOR]->(b) }
     + COUNT { MATCH (b)<-[:HAS_CREATOR]-(:Comment)-[:REPLY_OF]->(:Comment)-[:HAS_CREATOR]->(a) } AS toComments
RETURN ids AS personIdsInPath,
       sum(toPosts * 1.0 + toComments * 0.5) AS pathWeight
ORDER BY pathWeight DESC
