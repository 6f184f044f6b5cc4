//! The function registry: every function the binder accepts, by the name
//! Neo4j spells it with (names match whatever their case), with its
//! category, how many arguments it takes, its signature and what it does.
//! The binder (names and argument counts), the evaluator (which of them
//! aggregate) and `SHOW FUNCTIONS` read this one list, so a function the
//! binder accepts is one the evaluator runs (`eval.rs`) with any number of
//! arguments the list allows, and one the list shows
//! (`functions_are_listed_and_run`).

use plexus_common::Value;

/// One function of the registry.
pub(crate) struct Function {
    pub name: &'static str,
    /// Neo4j's category (`Aggregating` for the aggregates).
    pub category: &'static str,
    /// The fewest and the most arguments (`usize::MAX`: no most).
    pub args: (usize, usize),
    pub signature: &'static str,
    pub description: &'static str,
}

const ANY: usize = usize::MAX;

const fn f(
    name: &'static str,
    category: &'static str,
    args: (usize, usize),
    signature: &'static str,
    description: &'static str,
) -> Function {
    Function {
        name,
        category,
        args,
        signature,
        description,
    }
}

/// The functions of openCypher, Neo4j's and Plexus's own.
#[rustfmt::skip] // One function a line reads as the table it is.
const FUNCTIONS: &[Function] = &[
    f("abs", "Numeric", (1, 1), "abs(input :: INTEGER | FLOAT) :: INTEGER | FLOAT", "Returns the absolute value of a number."),
    f("acos", "Trigonometric", (1, 1), "acos(input :: FLOAT) :: FLOAT", "Returns the arccosine of a number, in radians."),
    f("asin", "Trigonometric", (1, 1), "asin(input :: FLOAT) :: FLOAT", "Returns the arcsine of a number, in radians."),
    f("atan", "Trigonometric", (1, 1), "atan(input :: FLOAT) :: FLOAT", "Returns the arctangent of a number, in radians."),
    f("atan2", "Trigonometric", (2, 2), "atan2(y :: FLOAT, x :: FLOAT) :: FLOAT", "Returns the arctangent2 of a set of coordinates, in radians."),
    f("avg", "Aggregating", (1, 1), "avg(input :: INTEGER | FLOAT | DURATION) :: INTEGER | FLOAT | DURATION", "Returns the average of a set of numbers or durations."),
    f("ceil", "Numeric", (1, 1), "ceil(input :: FLOAT) :: FLOAT", "Returns the smallest integral number greater than or equal to the input."),
    f("char_length", "Scalar", (1, 1), "char_length(input :: STRING) :: INTEGER", "Returns the number of Unicode characters in a string."),
    f("character_length", "Scalar", (1, 1), "character_length(input :: STRING) :: INTEGER", "Returns the number of Unicode characters in a string."),
    f("coalesce", "Scalar", (1, ANY), "coalesce(input :: ANY, ...) :: ANY", "Returns the first non-null value among its arguments."),
    f("collect", "Aggregating", (1, 1), "collect(input :: ANY) :: LIST<ANY>", "Returns a list of the non-null values of a group."),
    f("cos", "Trigonometric", (1, 1), "cos(input :: FLOAT) :: FLOAT", "Returns the cosine of a number in radians."),
    f("cot", "Trigonometric", (1, 1), "cot(input :: FLOAT) :: FLOAT", "Returns the cotangent of a number in radians."),
    f("count", "Aggregating", (1, 1), "count(input :: ANY) :: INTEGER", "Returns the number of non-null values of a group; count(*) counts its rows."),
    f("date", "Temporal", (0, 1), "date(input = DEFAULT_TEMPORAL_ARGUMENT :: ANY) :: DATE", "Creates a date from a string or a map, or returns today's."),
    f("datetime", "Temporal", (0, 1), "datetime(input = DEFAULT_TEMPORAL_ARGUMENT :: ANY) :: ZONED DATETIME", "Creates a zoned datetime from a string or a map, or returns now."),
    f("degrees", "Trigonometric", (1, 1), "degrees(input :: FLOAT) :: FLOAT", "Converts radians to degrees."),
    f("duration", "Temporal", (1, 1), "duration(input :: ANY) :: DURATION", "Creates a duration from a string or a map of its components."),
    f("e", "Logarithmic", (0, 0), "e() :: FLOAT", "Returns the base of the natural logarithm, e."),
    f("elementId", "Scalar", (1, 1), "elementId(input :: NODE | RELATIONSHIP) :: STRING", "Returns the id the user gave a node or relationship (at `plexus node put` or an import's :ID), as a string."),
    f("endNode", "Scalar", (1, 1), "endNode(input :: RELATIONSHIP) :: NODE", "Returns the end node of a relationship."),
    f("exists", "Predicate", (1, 1), "exists(input :: ANY) :: BOOLEAN", "Returns whether a property is present, or a pattern has a match."),
    f("exp", "Logarithmic", (1, 1), "exp(input :: FLOAT) :: FLOAT", "Returns e raised to the power of a number."),
    f("floor", "Numeric", (1, 1), "floor(input :: FLOAT) :: FLOAT", "Returns the largest integral number less than or equal to the input."),
    f("haversin", "Trigonometric", (1, 1), "haversin(input :: FLOAT) :: FLOAT", "Returns half the versine of a number."),
    f("head", "Scalar", (1, 1), "head(list :: LIST<ANY>) :: ANY", "Returns the first element of a list."),
    f("id", "Scalar", (1, 1), "id(input :: NODE | RELATIONSHIP) :: INTEGER", "Returns the internal integer id of a node or relationship."),
    f("isEmpty", "Predicate", (1, 1), "isEmpty(input :: LIST<ANY> | MAP | STRING) :: BOOLEAN", "Returns whether a list, map or string is empty."),
    f("keys", "List", (1, 1), "keys(input :: NODE | RELATIONSHIP | MAP) :: LIST<STRING>", "Returns the property keys of a node, relationship or map."),
    f("labels", "List", (1, 1), "labels(input :: NODE) :: LIST<STRING>", "Returns the labels of a node."),
    f("last", "Scalar", (1, 1), "last(list :: LIST<ANY>) :: ANY", "Returns the last element of a list."),
    f("left", "String", (2, 2), "left(original :: STRING, length :: INTEGER) :: STRING", "Returns a string of the leftmost characters of the original."),
    f("length", "Scalar", (1, 1), "length(input :: PATH) :: INTEGER", "Returns the number of relationships of a path."),
    f("localdatetime", "Temporal", (0, 1), "localdatetime(input = DEFAULT_TEMPORAL_ARGUMENT :: ANY) :: LOCAL DATETIME", "Creates a local datetime from a string or a map, or returns now."),
    f("localtime", "Temporal", (0, 1), "localtime(input = DEFAULT_TEMPORAL_ARGUMENT :: ANY) :: LOCAL TIME", "Creates a local time from a string or a map, or returns now."),
    f("log", "Logarithmic", (1, 1), "log(input :: FLOAT) :: FLOAT", "Returns the natural logarithm of a number."),
    f("log10", "Logarithmic", (1, 1), "log10(input :: FLOAT) :: FLOAT", "Returns the common logarithm (base 10) of a number."),
    f("lTrim", "String", (1, 1), "lTrim(input :: STRING) :: STRING", "Returns the string without its leading whitespace."),
    f("max", "Aggregating", (1, 1), "max(input :: ANY) :: ANY", "Returns the largest value of a group."),
    f("min", "Aggregating", (1, 1), "min(input :: ANY) :: ANY", "Returns the smallest value of a group."),
    f("nodes", "List", (1, 1), "nodes(input :: PATH) :: LIST<NODE>", "Returns the nodes of a path."),
    f("percentileCont", "Aggregating", (2, 2), "percentileCont(input :: FLOAT, percentile :: FLOAT) :: FLOAT", "Returns the percentile of a group, interpolated between its values."),
    f("percentileDisc", "Aggregating", (2, 2), "percentileDisc(input :: INTEGER | FLOAT, percentile :: FLOAT) :: INTEGER | FLOAT", "Returns the value of a group nearest the percentile."),
    f("pi", "Trigonometric", (0, 0), "pi() :: FLOAT", "Returns the mathematical constant pi."),
    f("properties", "Scalar", (1, 1), "properties(input :: MAP | NODE | RELATIONSHIP) :: MAP", "Returns the properties of a node or relationship as a map."),
    f("radians", "Trigonometric", (1, 1), "radians(input :: FLOAT) :: FLOAT", "Converts degrees to radians."),
    f("rand", "Numeric", (0, 0), "rand() :: FLOAT", "Returns a random number in [0, 1)."),
    f("randomUUID", "Scalar", (0, 0), "randomUUID() :: STRING", "Returns a new version-4 UUID."),
    f("range", "List", (2, 3), "range(start :: INTEGER, end :: INTEGER [, step :: INTEGER]) :: LIST<INTEGER>", "Returns the integers from start to end, both included, a step apart."),
    f("relationships", "List", (1, 1), "relationships(input :: PATH) :: LIST<RELATIONSHIP>", "Returns the relationships of a path."),
    f("replace", "String", (3, 3), "replace(original :: STRING, search :: STRING, replace :: STRING) :: STRING", "Returns the string with every occurrence of search replaced."),
    f("reverse", "List", (1, 1), "reverse(input :: STRING | LIST<ANY>) :: STRING | LIST<ANY>", "Returns a string or list in reverse order."),
    f("right", "String", (2, 2), "right(original :: STRING, length :: INTEGER) :: STRING", "Returns a string of the rightmost characters of the original."),
    f("round", "Numeric", (1, 1), "round(input :: FLOAT) :: FLOAT", "Returns a number rounded to the nearest integral value, halves up."),
    f("rTrim", "String", (1, 1), "rTrim(input :: STRING) :: STRING", "Returns the string without its trailing whitespace."),
    f("sign", "Numeric", (1, 1), "sign(input :: INTEGER | FLOAT) :: INTEGER", "Returns the signum of a number: 0, -1 or 1."),
    f("sin", "Trigonometric", (1, 1), "sin(input :: FLOAT) :: FLOAT", "Returns the sine of a number in radians."),
    f("size", "Scalar", (1, 1), "size(input :: STRING | LIST<ANY>) :: INTEGER", "Returns the number of elements of a list, or characters of a string."),
    f("split", "String", (2, 2), "split(original :: STRING, splitDelimiter :: STRING) :: LIST<STRING>", "Returns the parts of a string between the delimiters."),
    f("sqrt", "Logarithmic", (1, 1), "sqrt(input :: FLOAT) :: FLOAT", "Returns the square root of a number."),
    f("startNode", "Scalar", (1, 1), "startNode(input :: RELATIONSHIP) :: NODE", "Returns the start node of a relationship."),
    f("stDev", "Aggregating", (1, 1), "stDev(input :: FLOAT) :: FLOAT", "Returns the standard deviation of a group as a sample."),
    f("stDevP", "Aggregating", (1, 1), "stDevP(input :: FLOAT) :: FLOAT", "Returns the standard deviation of a group as a whole population."),
    f("substring", "String", (2, 3), "substring(original :: STRING, start :: INTEGER [, length :: INTEGER]) :: STRING", "Returns a substring of the original, from a 0-based start."),
    f("sum", "Aggregating", (1, 1), "sum(input :: INTEGER | FLOAT | DURATION) :: INTEGER | FLOAT | DURATION", "Returns the sum of a group of numbers or durations."),
    f("systemFrom", "Temporal", (1, 1), "systemFrom(input :: NODE | RELATIONSHIP) :: ZONED DATETIME", "Returns when the version of an entity a query read as of a valid time was committed (system time); null outside such a read."),
    f("tail", "List", (1, 1), "tail(input :: LIST<ANY>) :: LIST<ANY>", "Returns all but the first element of a list."),
    f("tan", "Trigonometric", (1, 1), "tan(input :: FLOAT) :: FLOAT", "Returns the tangent of a number in radians."),
    f("time", "Temporal", (0, 1), "time(input = DEFAULT_TEMPORAL_ARGUMENT :: ANY) :: ZONED TIME", "Creates a zoned time from a string or a map, or returns now."),
    f("timestamp", "Scalar", (0, 0), "timestamp() :: INTEGER", "Returns the milliseconds since midnight, January 1, 1970 UTC."),
    f("toBoolean", "Scalar", (1, 1), "toBoolean(input :: STRING | INTEGER | BOOLEAN) :: BOOLEAN", "Converts a string, integer or boolean to a boolean."),
    f("toBooleanList", "List", (1, 1), "toBooleanList(input :: LIST<ANY>) :: LIST<BOOLEAN>", "Converts each element of a list to a boolean, null where it cannot."),
    f("toBooleanOrNull", "Scalar", (1, 1), "toBooleanOrNull(input :: ANY) :: BOOLEAN", "Converts a value to a boolean, or returns null."),
    f("toFloat", "Scalar", (1, 1), "toFloat(input :: STRING | INTEGER | FLOAT) :: FLOAT", "Converts a string or number to a float."),
    f("toFloatList", "List", (1, 1), "toFloatList(input :: LIST<ANY>) :: LIST<FLOAT>", "Converts each element of a list to a float, null where it cannot."),
    f("toFloatOrNull", "Scalar", (1, 1), "toFloatOrNull(input :: ANY) :: FLOAT", "Converts a value to a float, or returns null."),
    f("toInteger", "Scalar", (1, 1), "toInteger(input :: STRING | INTEGER | FLOAT | BOOLEAN) :: INTEGER", "Converts a string, number or boolean to an integer."),
    f("toIntegerList", "List", (1, 1), "toIntegerList(input :: LIST<ANY>) :: LIST<INTEGER>", "Converts each element of a list to an integer, null where it cannot."),
    f("toIntegerOrNull", "Scalar", (1, 1), "toIntegerOrNull(input :: ANY) :: INTEGER", "Converts a value to an integer, or returns null."),
    f("toLower", "String", (1, 1), "toLower(input :: STRING) :: STRING", "Returns the string in lowercase."),
    f("toString", "String", (1, 1), "toString(input :: ANY) :: STRING", "Converts a number, boolean, string or temporal value to a string."),
    f("toStringList", "List", (1, 1), "toStringList(input :: LIST<ANY>) :: LIST<STRING>", "Converts each element of a list to a string, null where it cannot."),
    f("toStringOrNull", "String", (1, 1), "toStringOrNull(input :: ANY) :: STRING", "Converts a value to a string, or returns null."),
    f("toUpper", "String", (1, 1), "toUpper(input :: STRING) :: STRING", "Returns the string in uppercase."),
    f("trim", "String", (1, 1), "trim(input :: STRING) :: STRING", "Returns the string without its leading and trailing whitespace."),
    f("type", "Scalar", (1, 1), "type(input :: RELATIONSHIP) :: STRING", "Returns the type of a relationship."),
    f("validFrom", "Temporal", (1, 1), "validFrom(input :: NODE | RELATIONSHIP) :: ZONED DATETIME", "Returns where the valid time of the version of an entity a query read as of a valid time starts; null outside such a read."),
    f("validTo", "Temporal", (1, 1), "validTo(input :: NODE | RELATIONSHIP) :: ZONED DATETIME", "Returns where the valid time of the version of an entity a query read as of a valid time ends; null when open, or outside such a read."),
    f("valueType", "Predicate", (1, 1), "valueType(input :: ANY) :: STRING", "Returns the type of a value, as Cypher names it."),
    f("versionId", "Temporal", (1, 1), "versionId(input :: NODE | RELATIONSHIP) :: STRING", "Returns the id of the version of an entity a query read as of a valid time; null outside such a read."),
];

/// The columns of `SHOW FUNCTIONS`: those it lists without a YIELD
/// first, as Neo4j does, then those a `YIELD *` adds (Neo4j's names, but
/// `arguments`, Plexus's: how many a function takes, in words).
pub(crate) const COLUMNS: &[&str] = &[
    "name",
    "category",
    "description",
    "signature",
    "isBuiltIn",
    "arguments",
    "aggregating",
];
/// How many of [`COLUMNS`] `SHOW FUNCTIONS` lists without a YIELD.
pub(crate) const SHOWN: usize = 3;

/// The function called `name` (a namespaced name, `ns.f`, is a
/// procedure's or a namespaced function's, checked elsewhere).
pub(crate) fn get(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

/// Whether `name` is a function.
pub(crate) fn known(name: &str) -> bool {
    get(name).is_some()
}

/// Whether `name` is an aggregating function.
pub(crate) fn aggregating(name: &str) -> bool {
    get(name).is_some_and(|f| f.category == "Aggregating")
}

impl Function {
    /// Whether `n` arguments are ones the function takes.
    pub fn takes(&self, n: usize) -> bool {
        (self.args.0..=self.args.1).contains(&n)
    }

    /// How many arguments it takes, in words, for an error.
    pub fn arity(&self) -> String {
        match self.args {
            (a, b) if a == b => format!("{a} argument{}", if a == 1 { "" } else { "s" }),
            (a, ANY) => format!("at least {a} argument{}", if a == 1 { "" } else { "s" }),
            (a, b) => format!("{a} to {b} arguments"),
        }
    }
}

/// `SHOW FUNCTIONS`: one row per function, in [`COLUMNS`]' order.
pub(crate) fn rows() -> Vec<Vec<Value>> {
    FUNCTIONS
        .iter()
        .map(|f| {
            vec![
                Value::from(f.name),
                Value::from(f.category),
                Value::from(f.description),
                Value::from(f.signature),
                Value::Bool(true),
                Value::from(f.arity()),
                Value::Bool(f.category == "Aggregating"),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_whatever_their_case() {
        assert!(known("toUpper") && known("TOUPPER") && known("toupper"));
        assert!(!known("toUpperCase"));
        assert!(aggregating("COUNT") && aggregating("percentileDisc"));
        assert!(!aggregating("size"));
    }

    #[test]
    fn each_entry_is_well_formed() {
        let mut names: Vec<String> = FUNCTIONS.iter().map(|f| f.name.to_lowercase()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a name listed twice");
        for f in FUNCTIONS {
            assert!(f.args.0 <= f.args.1, "{}", f.name);
            // The signature starts with the name as listed.
            assert!(
                f.signature.starts_with(&format!("{}(", f.name)),
                "{}",
                f.name
            );
            assert!(f.description.ends_with('.'), "{}", f.name);
        }
        let coalesce = get("COALESCE").unwrap();
        assert!(coalesce.takes(1) && coalesce.takes(9) && !coalesce.takes(0));
        assert_eq!(coalesce.arity(), "at least 1 argument");
        assert_eq!(get("range").unwrap().arity(), "2 to 3 arguments");
        assert_eq!(get("pi").unwrap().arity(), "0 arguments");
        assert_eq!(rows()[0].len(), COLUMNS.len());
    }
}
