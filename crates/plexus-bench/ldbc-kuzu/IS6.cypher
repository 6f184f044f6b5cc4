// IS6: a message is a Post or a Comment; `*0..` bounded at 30.
MATCH (m:Post:Comment {id: $messageId})-[:REPLY_OF*0..30]->(p:Post)<-[:CONTAINER_OF]-(f:Forum)-[:HAS_MODERATOR]->(mod:Person)
RETURN
    f.id AS forumId,
    f.title AS forumTitle,
    mod.id AS moderatorId,
    mod.firstName AS moderatorFirstName,
    mod.lastName AS moderatorLastName
