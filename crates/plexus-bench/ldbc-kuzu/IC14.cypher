// not translated: the weight of each relationship on a path is a pattern
// comprehension inside reduce(), which Kuzu's Cypher does not have.
