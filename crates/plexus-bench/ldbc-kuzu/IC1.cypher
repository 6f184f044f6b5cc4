// IC1: `shortestPath(… *1..3 …)` is Kuzu's `* SHORTEST 1..3`; a Kuzu list
// holds one type, so the class and work years are text in the
// university and company lists (the comparison reads values as text);
// toInteger() is not needed on integer ids.
MATCH (p:Person {id: $personId}), (friend:Person {firstName: $firstName})
WHERE p.id <> friend.id
MATCH path = (p)-[:KNOWS* SHORTEST 1..3]-(friend)
WITH min(length(path)) AS distance, friend
ORDER BY
    distance ASC,
    friend.lastName ASC,
    friend.id ASC
LIMIT 20
MATCH (friend)-[:IS_LOCATED_IN]->(friendCity:City)
OPTIONAL MATCH (friend)-[studyAt:STUDY_AT]->(uni:University)-[:IS_LOCATED_IN]->(uniCity:City)
WITH friend, collect(
    CASE WHEN uni.name IS NULL THEN NULL
        ELSE [uni.name, cast(studyAt.classYear AS STRING), uniCity.name]
    END) AS unis, friendCity, distance
OPTIONAL MATCH (friend)-[workAt:WORK_AT]->(company:Company)-[:IS_LOCATED_IN]->(companyCountry:Country)
WITH friend, collect(
    CASE WHEN company.name IS NULL THEN NULL
        ELSE [company.name, cast(workAt.workFrom AS STRING), companyCountry.name]
    END) AS companies, unis, friendCity, distance
RETURN
    friend.id AS friendId,
    friend.lastName AS friendLastName,
    distance AS distanceFromPerson,
    friend.birthday AS friendBirthday,
    friend.creationDate AS friendCreationDate,
    friend.gender AS friendGender,
    friend.browserUsed AS friendBrowserUsed,
    friend.locationIP AS friendLocationIp,
    friend.email AS friendEmails,
    friend.speaks AS friendLanguages,
    friendCity.name AS friendCityName,
    coalesce(unis, []) AS friendUniversities,
    coalesce(companies, []) AS friendCompanies
ORDER BY
    distanceFromPerson ASC,
    friendLastName ASC,
    friendId ASC
LIMIT 20
