// IS5: a message is a Post or a Comment.
MATCH (m:Post:Comment {id: $messageId})-[:HAS_CREATOR]->(p:Person)
RETURN
    p.id AS personId,
    p.firstName AS firstName,
    p.lastName AS lastName
