//! What a supervisor writes to the log when a restart fails: the error's class,
//! kind and message (not `<value>`), at most [`LINES_PER_SECOND`] lines a second per
//! supervisor, with a count of the lines left out.
//!
//! Pure apart from the clock value the caller passes in, so the limiter is tested without
//! sleeping.

use crate::value::Value;

/// Log lines a supervisor writes per second at most; the rest are counted.
pub const LINES_PER_SECOND: u32 = 10;

/// `Class (kind): message` for an exception instance, the text of a String, else a short
/// description of the value.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Object(o) => {
            let field = |name: &str| {
                o.class
                    .field_names
                    .iter()
                    .position(|f| f.as_str() == name)
                    .and_then(|i| o.fields.get(i))
            };
            let class = o.class.name.as_str();
            let kind = match field("kind") {
                Some(Value::Symbol(s)) => Some(s.as_str().to_string()),
                Some(Value::Str(s)) => Some(s.to_string()),
                _ => None,
            };
            let message = match field("message") {
                Some(Value::Str(s)) => Some(s.to_string()),
                _ => None,
            };
            match (kind, message) {
                (Some(k), Some(m)) => format!("{class} ({k}): {m}"),
                (Some(k), None) => format!("{class} ({k})"),
                (None, Some(m)) => format!("{class}: {m}"),
                (None, None) => format!("a {class}"),
            }
        }
        other => format!("{other:?}"),
    }
}

/// A per-second budget of log lines.
#[derive(Default)]
pub struct LogRate {
    second: u64,
    used: u32,
    suppressed: u64,
}

impl LogRate {
    /// The lines to write for `line` at `now_ms`: none while over budget; the line, preceded
    /// by a count of what was left out, once a new second starts.
    pub fn admit(&mut self, now_ms: u64, line: String) -> Vec<String> {
        let second = now_ms / 1000;
        let mut out = Vec::new();
        if second != self.second {
            self.second = second;
            self.used = 0;
            if self.suppressed > 0 {
                out.push(format!("({} similar lines suppressed)", self.suppressed));
                self.suppressed = 0;
            }
        }
        if self.used < LINES_PER_SECOND {
            self.used += 1;
            out.push(line);
        } else {
            self.suppressed += 1;
        }
        out
    }

    /// Lines left out and not yet reported.
    pub fn pending(&self) -> u64 {
        self.suppressed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_the_budget_per_second_then_a_count() {
        let mut r = LogRate::default();
        let mut written = 0;
        for i in 0..1000 {
            written += r.admit(5_000 + i % 1000, format!("l{i}")).len();
        }
        assert_eq!(written, LINES_PER_SECOND as usize);
        assert_eq!(r.pending(), 990);
        let next = r.admit(6_000, "again".into());
        assert_eq!(
            next,
            vec!["(990 similar lines suppressed)".to_string(), "again".into()]
        );
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn strings_describe_themselves() {
        assert_eq!(describe(&Value::str("no")), "no");
    }
}
