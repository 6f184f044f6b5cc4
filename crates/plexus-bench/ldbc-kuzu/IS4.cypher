// IS4: a message is a Post or a Comment.
MATCH (m:Post:Comment {id: $messageId})
RETURN
    m.creationDate AS messageCreationDate,
    coalesce(m.content, m.imageFile) AS messageContent
