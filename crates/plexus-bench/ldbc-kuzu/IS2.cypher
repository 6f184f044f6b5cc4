// IS2: messages are Post or Comment tables; `*0..` needs an upper bound
// (30, Kuzu's limit).
MATCH (:Person {id: $personId})<-[:HAS_CREATOR]-(message:Post:Comment)
WITH
 message,
 message.id AS messageId,
 message.creationDate AS messageCreationDate
ORDER BY messageCreationDate DESC, messageId ASC
LIMIT 10
MATCH (message)-[:REPLY_OF*0..30]->(post:Post),
      (post)-[:HAS_CREATOR]->(person:Person)
RETURN
 messageId,
 coalesce(message.imageFile, message.content) AS messageContent,
 messageCreationDate,
 post.id AS postId,
 person.id AS personId,
 person.firstName AS personFirstName,
 person.lastName AS personLastName
ORDER BY messageCreationDate DESC, messageId ASC
