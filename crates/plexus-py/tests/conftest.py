import pytest

import plexus


@pytest.fixture
def db():
    return plexus.Database.in_memory()


@pytest.fixture
def people(db):
    db.query(
        """
        CREATE (a:Person {id: 'ann', name: 'Ann', age: 31}),
               (b:Person {id: 'bob', name: 'Bob', age: 42}),
               (c:Person {id: 'cid', name: 'Cid'}),
               (a)-[:KNOWS {since: 2010}]->(b),
               (b)-[:KNOWS {since: 2015}]->(c),
               (a)-[:LIKES]->(c)
        """
    ).consume()
    return db
