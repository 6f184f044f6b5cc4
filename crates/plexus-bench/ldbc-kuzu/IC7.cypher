// IC7: Kuzu allows ORDER BY in a WITH only before SKIP or LIMIT, so the
// latest like per liker (ties to the smallest message id, as the
// reference's ordered collect() takes it) is found by max() and min();
// the pattern predicate is an optional match counted. The latency is
// computed in the WITH: Kuzu 0.11.3 fails to evaluate it in a RETURN
// that is ordered ("Cannot evaluate expression with type PROPERTY").
MATCH (person:Person {id: $personId})<-[:HAS_CREATOR]-(message:Post:Comment)<-[like:LIKES]-(liker:Person)
WITH liker, person, max(like.creationDate) AS likeTime
MATCH (person)<-[:HAS_CREATOR]-(message:Post:Comment)<-[like:LIKES]-(liker)
WHERE like.creationDate = likeTime
WITH liker, person, likeTime, min(message.id) AS messageId
MATCH (person)<-[:HAS_CREATOR]-(message:Post:Comment)
WHERE message.id = messageId
OPTIONAL MATCH (liker)-[k:KNOWS]-(person)
WITH liker, likeTime, message, count(k) AS friendships,
     cast(floor(floor(cast(likeTime - message.creationDate AS DOUBLE) / 1000.0) / 60.0) AS INT64) AS minutesLatency
RETURN
    liker.id AS personId,
    liker.firstName AS personFirstName,
    liker.lastName AS personLastName,
    likeTime AS likeCreationDate,
    message.id AS commentOrPostId,
    coalesce(message.content, message.imageFile) AS commentOrPostContent,
    minutesLatency,
    friendships = 0 AS isNew
ORDER BY
    likeCreationDate DESC,
    personId ASC
LIMIT 20
