//! Typed CSV headers, neo4j-admin style: `id:ID`, `name`, `age:INT`,
//! `score:FLOAT`, `tags:STRING[]`, `born:DATE`, `:LABEL`, `:START_ID`,
//! `:END_ID`, `:TYPE`, `:IGNORE`.

use plexus_common::{Date, DateTime, LocalDateTime, LocalTime, Time, Value};

/// The type of a property column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropType {
    String,
    Int,
    Float,
    Bool,
    Date,
    LocalTime,
    Time,
    LocalDateTime,
    DateTime,
}

impl PropType {
    fn parse(s: &str) -> Option<PropType> {
        Some(match s.to_ascii_uppercase().as_str() {
            "STRING" => PropType::String,
            "INT" | "INTEGER" | "LONG" | "SHORT" | "BYTE" => PropType::Int,
            "FLOAT" | "DOUBLE" => PropType::Float,
            "BOOLEAN" | "BOOL" => PropType::Bool,
            "DATE" => PropType::Date,
            "LOCALTIME" => PropType::LocalTime,
            "TIME" => PropType::Time,
            "LOCALDATETIME" => PropType::LocalDateTime,
            "DATETIME" => PropType::DateTime,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            PropType::String => "STRING",
            PropType::Int => "INT",
            PropType::Float => "FLOAT",
            PropType::Bool => "BOOLEAN",
            PropType::Date => "DATE",
            PropType::LocalTime => "LOCALTIME",
            PropType::Time => "TIME",
            PropType::LocalDateTime => "LOCALDATETIME",
            PropType::DateTime => "DATETIME",
        }
    }

    /// Reads one field; the error says what was expected.
    pub fn value(self, s: &str) -> Result<Value, String> {
        let bad = || format!("'{s}' is not a valid {}", self.name());
        Ok(match self {
            PropType::String => Value::String(s.to_string()),
            PropType::Int => Value::Int(s.trim().parse().map_err(|_| bad())?),
            PropType::Float => Value::Float(s.trim().parse().map_err(|_| bad())?),
            PropType::Bool => match s.trim().to_ascii_lowercase().as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err(bad()),
            },
            PropType::Date => Value::Date(Date::parse(s.trim()).ok_or_else(bad)?),
            PropType::LocalTime => Value::LocalTime(LocalTime::parse(s.trim()).ok_or_else(bad)?),
            PropType::Time => Value::Time(Time::parse(s.trim()).ok_or_else(bad)?),
            PropType::LocalDateTime => {
                Value::LocalDateTime(LocalDateTime::parse(s.trim()).ok_or_else(bad)?)
            }
            PropType::DateTime => Value::DateTime(DateTime::parse(s.trim()).ok_or_else(bad)?),
        })
    }
}

/// What a column holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnKind {
    /// The node's id (`:ID`, or `name:ID`, which also stores it as a property).
    Id,
    Label,
    StartId,
    EndId,
    Type,
    Ignore,
    Property {
        ty: PropType,
        list: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The property name (empty for `:ID`, `:LABEL`, …).
    pub name: String,
    pub kind: ColumnKind,
}

/// Parses one header field; the error names what is wrong.
pub fn column(field: &str) -> Result<Column, String> {
    let (name, ty) = match field.rsplit_once(':') {
        Some((n, t)) => (n.trim(), Some(t.trim())),
        None => (field.trim(), None),
    };
    let kind = match ty.map(|t| t.to_ascii_uppercase()) {
        None => ColumnKind::Property {
            ty: PropType::String,
            list: false,
        },
        Some(t) => match t.as_str() {
            "ID" => ColumnKind::Id,
            "LABEL" => ColumnKind::Label,
            "START_ID" => ColumnKind::StartId,
            "END_ID" => ColumnKind::EndId,
            "TYPE" => ColumnKind::Type,
            "IGNORE" => ColumnKind::Ignore,
            _ => {
                let (base, list) = match t.strip_suffix("[]") {
                    Some(b) => (b, true),
                    None => (t.as_str(), false),
                };
                let ty = PropType::parse(base).ok_or_else(|| format!("unknown column type '{}' in header field '{field}' (use INT, FLOAT, STRING, BOOLEAN, DATE, LOCALTIME, TIME, LOCALDATETIME, DATETIME, with [] for lists, or ID, LABEL, START_ID, END_ID, TYPE, IGNORE)", ty.unwrap_or("")))?;
                ColumnKind::Property { ty, list }
            }
        },
    };
    if name.is_empty() && matches!(kind, ColumnKind::Property { .. }) {
        return Err(format!("header field '{field}' has no property name"));
    }
    Ok(Column {
        name: name.to_string(),
        kind,
    })
}

/// Checks a header's columns together: at most one column of each of
/// `:ID`, `:START_ID`, `:END_ID` and `:TYPE`, and no property named twice
/// (a named `:ID` column is stored as a property too). Otherwise the 1-based
/// field that repeats one, and what is wrong: a second id column was read
/// as a property of the first's node, and a repeated name kept one value.
pub fn check(cols: &[Column]) -> Result<(), (usize, String)> {
    for (i, c) in cols.iter().enumerate() {
        let earlier = &cols[..i];
        // The kinds a header may hold once, as it writes them.
        let once = match c.kind {
            ColumnKind::Id => Some(":ID"),
            ColumnKind::StartId => Some(":START_ID"),
            ColumnKind::EndId => Some(":END_ID"),
            ColumnKind::Type => Some(":TYPE"),
            _ => None,
        };
        if let Some(name) = once {
            if let Some(j) = earlier.iter().position(|e| e.kind == c.kind) {
                return Err((
                    i + 1,
                    format!("a second {name} column (field {} is one already)", j + 1),
                ));
            }
        }
        let stored = |c: &Column| {
            !c.name.is_empty() && matches!(c.kind, ColumnKind::Id | ColumnKind::Property { .. })
        };
        if let Some(j) = earlier
            .iter()
            .position(|e| stored(c) && stored(e) && e.name == c.name)
        {
            return Err((
                i + 1,
                format!(
                    "property '{}' is named twice (field {} names it too)",
                    c.name,
                    j + 1
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(fields: &[&str]) -> Result<(), (usize, String)> {
        let cols: Vec<Column> = fields
            .iter()
            .map(|f| column(f))
            .collect::<Result<_, _>>()
            .map_err(|m| (0, m))?;
        check(&cols)
    }

    #[test]
    fn a_header_repeats_no_id_and_no_property() {
        assert_eq!(
            header(&["id:ID", "name", ":LABEL", ":LABEL", "x:IGNORE", "x:IGNORE"]),
            Ok(())
        );
        assert_eq!(
            header(&[":START_ID", ":END_ID", ":TYPE", "w:FLOAT"]),
            Ok(())
        );
        let (field, m) = header(&["id:ID", "name", "id:ID"]).unwrap_err();
        assert_eq!(
            (field, m.as_str()),
            (3, "a second :ID column (field 1 is one already)")
        );
        let (field, m) = header(&[":START_ID", ":END_ID", ":END_ID"]).unwrap_err();
        assert_eq!(
            (field, m.as_str()),
            (3, "a second :END_ID column (field 2 is one already)")
        );
        let (field, m) = header(&[":ID", "name", "age:INT", "name:STRING"]).unwrap_err();
        assert_eq!(
            (field, m.as_str()),
            (4, "property 'name' is named twice (field 2 names it too)")
        );
        let (field, _) = header(&["name:ID", "name"]).unwrap_err();
        assert_eq!(field, 2);
    }
}
