// IC10: the pattern predicate is NOT EXISTS { … }; the birthday's month
// and day come from epoch_ms(); the pattern comprehension over the posts
// becomes a second optional match, counted.
MATCH (person:Person {id: $personId})-[:KNOWS*2..2]-(friend:Person),
      (friend)-[:IS_LOCATED_IN]->(city:City)
WHERE friend.id <> person.id AND NOT EXISTS { MATCH (friend)-[:KNOWS]-(person) }
WITH person, city, friend,
     date_part('month', epoch_ms(friend.birthday)) AS birthMonth,
     date_part('day', epoch_ms(friend.birthday)) AS birthDay
WHERE (birthMonth = $month AND birthDay >= 21) OR
      (birthMonth = ($month % 12) + 1 AND birthDay < 22)
WITH DISTINCT friend, city, person
OPTIONAL MATCH (friend)<-[:HAS_CREATOR]-(post:Post)
WITH friend, city, person, count(post) AS postCount
OPTIONAL MATCH (friend)<-[:HAS_CREATOR]-(post:Post)
WHERE EXISTS { MATCH (post)-[:HAS_TAG]->(:Tag)<-[:HAS_INTEREST]-(person) }
WITH friend, city, postCount, count(post) AS commonPostCount
RETURN friend.id AS personId,
       friend.firstName AS personFirstName,
       friend.lastName AS personLastName,
       commonPostCount - (postCount - commonPostCount) AS commonInterestScore,
       friend.gender AS personGender,
       city.name AS personCityName
ORDER BY commonInterestScore DESC, personId ASC
LIMIT 10
