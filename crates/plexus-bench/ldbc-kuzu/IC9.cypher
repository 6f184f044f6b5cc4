// IC9: `collect(DISTINCT friend)` then UNWIND becomes `WITH DISTINCT`;
// messages are Post or Comment.
MATCH (root:Person {id: $personId})-[:KNOWS*1..2]-(friend:Person)
WHERE friend.id <> root.id
WITH DISTINCT friend
MATCH (friend)<-[:HAS_CREATOR]-(message:Post:Comment)
WHERE message.creationDate < $maxDate
RETURN
    friend.id AS personId,
    friend.firstName AS personFirstName,
    friend.lastName AS personLastName,
    message.id AS commentOrPostId,
    coalesce(message.content, message.imageFile) AS commentOrPostContent,
    message.creationDate AS commentOrPostCreationDate
ORDER BY
    commentOrPostCreationDate DESC,
    commentOrPostId ASC
LIMIT 20
