//! Loading a unit of many class declarations: 20,000 sibling classes (some with
//! `classState:` defaults, some subclassing classes declared later in the unit) load and
//! answer; re-declaring a class replaces it under its superclass.

use bt::Engine;

fn unit(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        // Every tenth class subclasses the next one (declared after it).
        let sup = if i % 10 == 0 && i + 1 < n {
            format!("C{}", i + 1)
        } else {
            "Value".into()
        };
        s.push_str(&format!(
            "{sup} subclass: C{i}\n  field: a = {i}\n  m{i} => self a + {i}\n"
        ));
        if i % 100 == 0 {
            s.push_str(&format!("  classState: k = {i} * 2\n  class k => self.k\n"));
        }
        s.push('\n');
    }
    s
}

#[test]
fn twenty_thousand_classes_load_and_answer() {
    let e = Engine::new();
    let n = 20_000;
    e.eval(&unit(n)).unwrap();
    let v = e.eval(&format!("(C{} new) m{}", n - 1, n - 1)).unwrap();
    assert_eq!(v.as_i64(), Some(2 * (n as i64 - 1)));
    assert_eq!(e.eval("C300 k").unwrap().as_i64(), Some(600));
    assert_eq!(e.eval("(C10 new) m11").unwrap().as_i64(), Some(21));
    assert_eq!(
        e.eval("C10 superclass == C11").unwrap().as_bool(),
        Some(true)
    );
    // Re-declared: the new definition answers and Value lists C5 once.
    e.eval("Value subclass: C5\n  field: a = 0\n  m5 => \"replaced\"\n")
        .unwrap();
    assert_eq!(e.eval("(C5 new) m5").unwrap().as_str(), Some("replaced"));
    let v = e
        .eval("(Value subclasses select: [:c | c name =:= #C5]) size")
        .unwrap();
    assert_eq!(v.as_i64(), Some(1));
}
