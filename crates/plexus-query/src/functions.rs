//! The function registry: every function the binder accepts, by the name
//! Neo4j spells it with (names match whatever their case), which of them
//! aggregate, and `SHOW FUNCTIONS`, which lists them. The binder, the
//! evaluator and `SHOW FUNCTIONS` read this one list, so a function the
//! binder accepts is one the evaluator runs (`eval.rs`) and one the list
//! shows (`functions_are_listed_and_run`).

use crate::exec::Table;
use plexus_common::Value;

/// The functions of openCypher, Neo4j's and Plexus's own.
const FUNCTIONS: &[&str] = &[
    "abs",
    "acos",
    "asin",
    "atan",
    "atan2",
    "avg",
    "ceil",
    "coalesce",
    "collect",
    "cos",
    "cot",
    "count",
    "date",
    "datetime",
    "degrees",
    "duration",
    "e",
    "endNode",
    "exists",
    "exp",
    "floor",
    "haversin",
    "head",
    "id",
    "isEmpty",
    "keys",
    "labels",
    "last",
    "left",
    "length",
    "localdatetime",
    "localtime",
    "log",
    "log10",
    "lTrim",
    "max",
    "min",
    "nodes",
    "percentileCont",
    "percentileDisc",
    "pi",
    "properties",
    "radians",
    "rand",
    "randomUUID",
    "range",
    "relationships",
    "replace",
    "reverse",
    "right",
    "round",
    "rTrim",
    "sign",
    "sin",
    "size",
    "split",
    "sqrt",
    "startNode",
    "stDev",
    "stDevP",
    "substring",
    "sum",
    "tail",
    "tan",
    "time",
    "timestamp",
    "toBoolean",
    "toFloat",
    "toInteger",
    "toLower",
    "toString",
    "toUpper",
    "trim",
    "type",
    "toBooleanList",
    "toFloatList",
    "toIntegerList",
    "toStringList",
    "toBooleanOrNull",
    "toFloatOrNull",
    "toIntegerOrNull",
    "toStringOrNull",
    "elementId",
    "versionId",
    "validFrom",
    "validTo",
    "systemFrom",
    "valueType",
    "char_length",
    "character_length",
];

/// The functions that aggregate.
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "collect",
    "stDev",
    "stDevP",
    "percentileCont",
    "percentileDisc",
];

/// Whether `name` is a function (a namespaced name, `ns.f`, is a
/// procedure's and is checked elsewhere).
pub(crate) fn known(name: &str) -> bool {
    FUNCTIONS.iter().any(|f| f.eq_ignore_ascii_case(name))
}

/// Whether `name` is an aggregating function.
pub(crate) fn aggregating(name: &str) -> bool {
    AGGREGATES.iter().any(|f| f.eq_ignore_ascii_case(name))
}

/// `SHOW FUNCTIONS`: each function's name and whether it aggregates, by
/// name.
pub(crate) fn show() -> Table {
    let mut names: Vec<&str> = FUNCTIONS.to_vec();
    names.sort_by_key(|n| n.to_ascii_lowercase());
    Table {
        columns: vec!["name".into(), "aggregating".into()],
        rows: names
            .into_iter()
            .map(|n| vec![Value::from(n), Value::Bool(aggregating(n))])
            .collect(),
    }
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
        assert!(AGGREGATES.iter().all(|a| known(a)));
    }
}
