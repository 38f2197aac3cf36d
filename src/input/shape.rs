//! What a JSON document is, learnt without building it: the keys of the top object (of the
//! first element of a top array), its `schema_version` and `kind`, and the same of a nested
//! `profile` or `detect`. Every other value is skipped as it is parsed, so recognising a
//! 200 MB document costs a few keys, not a `serde_json::Value` tree several times its size;
//! the typed parse that follows reads the same bytes again.

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The outline of one JSON value.
#[derive(Debug, Default)]
pub struct Shape {
    /// It is an object.
    pub object: bool,
    /// The object's keys, in order.
    pub keys: Vec<String>,
    /// Its first element, when it is an array.
    pub first: Option<Box<Shape>>,
    /// `schema_version`, whatever its type.
    pub schema_version: Option<Value>,
    /// `kind`, when it is a string.
    pub kind: Option<String>,
    /// The nested `profile` and `detect` objects.
    pub profile: Option<Box<Shape>>,
    pub detect: Option<Box<Shape>>,
    /// `verdicts`, whatever its type (a few entries in any file tscope writes).
    pub verdicts: Option<Value>,
}

impl Shape {
    /// Parses the outline of `bytes`; a syntax error is the only error.
    pub fn of(bytes: &[u8]) -> serde_json::Result<Shape> {
        serde_json::from_slice(bytes)
    }

    /// The outline of a value already parsed (`fleet add` holds whole documents).
    pub fn of_value(v: &Value) -> Shape {
        // Every JSON value has an outline: the visitor accepts any value.
        Shape::deserialize(v).unwrap_or_default()
    }

    /// Whether the object has key `k`.
    pub fn has(&self, k: &str) -> bool {
        self.keys.iter().any(|x| x == k)
    }

    /// The first element of an array, else this value.
    pub fn first_or_self(&self) -> &Shape {
        self.first.as_deref().unwrap_or(self)
    }
}

/// A string kept, anything else skipped.
struct MaybeStr(Option<String>);

impl<'de> Deserialize<'de> for MaybeStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(MaybeStr(match Value::deserialize(d)? {
            Value::String(s) => Some(s),
            _ => None,
        }))
    }
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::default())
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::default())
    }
    fn visit_none<E>(self) -> Result<Shape, E> {
        Ok(Shape::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let first = seq.next_element::<Shape>()?.map(Box::new);
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Shape {
            first,
            ..Shape::default()
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut s = Shape {
            object: true,
            ..Shape::default()
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schema_version" => s.schema_version = Some(map.next_value()?),
                "kind" => s.kind = map.next_value::<MaybeStr>()?.0,
                "profile" => s.profile = Some(Box::new(map.next_value()?)),
                "detect" => s.detect = Some(Box::new(map.next_value()?)),
                "verdicts" => s.verdicts = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            s.keys.push(key);
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlines_objects_arrays_and_nested_profiles() {
        let s = Shape::of(
            br#"{"schema_version":1,"kind":"k","profile":{"schema_version":2,"sources":[1,2]},
               "detect":{"verdicts":{"a":{"holds":true}}},"big":[[1],[2]]}"#,
        )
        .unwrap();
        assert!(s.object && s.has("big") && !s.has("sources"));
        assert_eq!(s.schema_version, Some(Value::from(1)));
        assert_eq!(s.kind.as_deref(), Some("k"));
        let p = s.profile.as_deref().unwrap();
        assert!(p.has("sources"));
        assert_eq!(p.schema_version, Some(Value::from(2)));
        assert!(s.detect.unwrap().verdicts.is_some());
        let a = Shape::of(br#"[{"estimates":[]},{"x":1}]"#).unwrap();
        assert!(!a.object && a.first_or_self().has("estimates"));
        assert!(!Shape::of(b"3").unwrap().object);
        assert!(Shape::of(br#"{"kind":[1]}"#).unwrap().kind.is_none());
        assert!(Shape::of(b"{").is_err());
        let v: Value = serde_json::from_str(r#"{"kind":"k","profile":{"sources":[]}}"#).unwrap();
        let s = Shape::of_value(&v);
        assert_eq!(s.keys, ["kind", "profile"]);
        assert!(s.kind.as_deref() == Some("k") && s.profile.unwrap().has("sources"));
    }
}
