// IC2: a message is a Post or a Comment; no toInteger() on integer ids.
MATCH (:Person {id: $personId})-[:KNOWS]-(friend:Person)<-[:HAS_CREATOR]-(message:Post:Comment)
WHERE message.creationDate <= $maxDate
RETURN
    friend.id AS personId,
    friend.firstName AS personFirstName,
    friend.lastName AS personLastName,
    message.id AS postOrCommentId,
    coalesce(message.content, message.imageFile) AS postOrCommentContent,
    message.creationDate AS postOrCommentCreationDate
ORDER BY
    postOrCommentCreationDate DESC,
    postOrCommentId ASC
LIMIT 20
