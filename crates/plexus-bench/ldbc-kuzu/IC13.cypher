// IC13: `shortestPath(… *…)` is Kuzu's `* SHORTEST 1..30` (its longest);
// no path gives -1 through coalesce().
MATCH (person1:Person {id: $person1Id}), (person2:Person {id: $person2Id})
OPTIONAL MATCH path = (person1)-[:KNOWS* SHORTEST 1..30]-(person2)
RETURN coalesce(length(path), -1) AS shortestPathLength
