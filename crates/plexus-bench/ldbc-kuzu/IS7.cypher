// IS7: a message is a Post or a Comment. The reference's simple CASE
// compares r = null, which is never true in Cypher (null, not true, when r
// is null), so its last column is always true; the translation keeps
// that comparison so that the rows agree.
MATCH (m:Post:Comment {id: $messageId})<-[:REPLY_OF]-(c:Comment)-[:HAS_CREATOR]->(p:Person)
OPTIONAL MATCH (m)-[:HAS_CREATOR]->(a:Person)-[r:KNOWS]-(p)
RETURN c.id AS commentId,
    c.content AS commentContent,
    c.creationDate AS commentCreationDate,
    p.id AS replyAuthorId,
    p.firstName AS replyAuthorFirstName,
    p.lastName AS replyAuthorLastName,
    CASE WHEN a.id = NULL THEN false ELSE true END AS replyAuthorKnowsOriginalMessageAuthor
ORDER BY commentCreationDate DESC, replyAuthorId
