//! Accessors on [`Value`] for hosts: the Rust view of script results without going through
//! the evaluator (`as_i64`, `as_f64`, `as_bool`, sequence and dictionary iteration, fields of
//! Value-class instances). `as_str`, `as_sym` and `is_nil` live with `Value` itself.

use crate::value::Value;

impl Value {
    /// An Integer that fits in i64.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// A Float, or an Integer converted to f64.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(x) => Some(x.get()),
            Value::Int(i) => Some(*i as f64),
            Value::BigInt(b) => num_traits::ToPrimitive::to_f64(&**b),
            _ => None,
        }
    }

    /// `true` or `false`.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::True => Some(true),
            Value::False => Some(false),
            _ => None,
        }
    }

    /// The text of a String or Symbol.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s.as_str()),
            Value::Symbol(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// The elements of a List, Array, Tuple or Queue, in order (None for other values).
    pub fn elements(&self) -> Option<Box<dyn Iterator<Item = Value> + '_>> {
        match self {
            Value::List(l) | Value::Queue(l) => Some(Box::new(l.iter().cloned())),
            Value::Array(a) => Some(Box::new(a.iter().cloned())),
            Value::Tuple(t) => Some(Box::new(t.iter().cloned())),
            _ => None,
        }
    }

    /// The entries of a Dictionary in standard term order (None for other values). A key
    /// dereferences to its `Value` (`k.clone()` or `k.to_value()` for an owned one).
    pub fn entries(
        &self,
    ) -> Option<impl Iterator<Item = (crate::value::dict::KeyRef<'_>, &Value)> + '_> {
        match self {
            Value::Dict(d) => Some(d.iter()),
            _ => None,
        }
    }

    /// A Dictionary entry whose key is the Symbol or String `key`.
    pub fn dict_get(&self, key: &str) -> Option<&Value> {
        let Value::Dict(d) = self else {
            return None;
        };
        d.get(&Value::sym(key))
            .or_else(|| d.get(&Value::str(key.to_string())))
    }

    /// A field of a Value-class (or Object-class) instance by name.
    pub fn field(&self, name: &str) -> Option<&Value> {
        let Value::Object(i) = self else {
            return None;
        };
        let pos = i
            .class
            .field_names
            .iter()
            .position(|f| f.as_str() == name)?;
        i.fields.get(pos)
    }

    /// The class name of an instance of a user or library class (`Point`), else None.
    pub fn instance_class_name(&self) -> Option<&'static str> {
        match self {
            Value::Object(i) => Some(i.class.name.as_str()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_accessors() {
        assert_eq!(Value::Int(3).as_i64(), Some(3));
        assert_eq!(Value::float(1.5).as_i64(), None);
        assert_eq!(Value::Int(3).as_f64(), Some(3.0));
        assert_eq!(Value::True.as_bool(), Some(true));
        assert_eq!(Value::Nil.as_bool(), None);
        assert_eq!(Value::sym("a").as_text(), Some("a"));
        assert_eq!(Value::str("b").as_text(), Some("b"));
    }

    #[test]
    fn sequences_and_dictionaries() {
        let l = Value::list(vec![Value::Int(1), Value::Int(2)]);
        let v: Vec<i64> = l.elements().unwrap().filter_map(|v| v.as_i64()).collect();
        assert_eq!(v, vec![1, 2]);
        assert!(Value::Int(1).elements().is_none());
        let d: crate::value::dict::Dict = vec![
            (Value::sym("port"), Value::Int(80)),
            (Value::str("host"), Value::str("x")),
        ]
        .into_iter()
        .collect();
        let d = Value::Dict(crate::value::Ref::new(d));
        assert_eq!(d.dict_get("port").and_then(Value::as_i64), Some(80));
        assert_eq!(d.dict_get("host").and_then(Value::as_text), Some("x"));
        assert_eq!(d.entries().unwrap().count(), 2);
    }
}
