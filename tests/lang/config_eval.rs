//! The front end's compact forms on the config-eval path: names, selectors,
//! symbols and string literals stored inline up to 24 bytes and on the heap beyond; collection
//! literals sized by a look-ahead guess; `#{…}` literals presizing their Dictionary by the
//! first key. Each case is checked against what a user sees (the printed value), across both
//! sides of every size limit.

use bt::Engine;

fn printed(e: &Engine, src: &str) -> String {
    let v = e
        .eval(&format!("({src}) printString"))
        .unwrap_or_else(|err| panic!("{src}: {err}"));
    v.as_str()
        .expect("printString answers a String")
        .to_string()
}

fn engine() -> Engine {
    Engine::builder().check(false).build()
}

#[test]
fn names_and_selectors_either_side_of_the_inline_limit_work() {
    let e = engine();
    // 23, 24 and 25 bytes: inline, inline at the limit, on the heap.
    let n23 = "a".repeat(23);
    let n24 = "b".repeat(24);
    let n25 = "c".repeat(25);
    let n60 = format!("long{}", "x".repeat(56));
    for (i, n) in [&n23, &n24, &n25, &n60].into_iter().enumerate() {
        let v = e.eval(&format!("{n} := {i}. {n} + 1")).unwrap();
        assert_eq!(v.as_i64(), Some(i as i64 + 1), "{n}");
    }
    // Bindings keep their long names across evals.
    assert_eq!(e.eval(&format!("{n60} * 10")).unwrap().as_i64(), Some(30));
    // Long unary and keyword selectors on a user class.
    e.eval(&format!(
        "Object subclass: Probe\n  {n25} => 25\n  {n24}: a {n60}: b => a + b\n"
    ))
    .unwrap();
    assert_eq!(
        e.eval(&format!("Probe new {n25}")).unwrap().as_i64(),
        Some(25)
    );
    assert_eq!(
        e.eval(&format!("Probe new {n24}: 1 {n60}: 2"))
            .unwrap()
            .as_i64(),
        Some(3)
    );
}

#[test]
fn symbols_and_strings_either_side_of_the_inline_limit_keep_their_text() {
    let e = engine();
    for len in [0usize, 1, 23, 24, 25, 100] {
        let text = "s".repeat(len);
        let v = e.eval(&format!("\"{text}\" size")).unwrap();
        assert_eq!(v.as_i64(), Some(len as i64));
        if len > 0 {
            let v = e.eval(&format!("#{text} asString size")).unwrap();
            assert_eq!(v.as_i64(), Some(len as i64));
        }
    }
    // Escapes and interpolation around the limit.
    assert_eq!(printed(&e, r#""say ""hi"" \{ok}" size"#), "13");
    assert_eq!(printed(&e, r#""say ""hi"" \{ok}""#), r#""say ""hi"" {ok}""#);
    let long = "y".repeat(30);
    assert_eq!(
        e.eval(&format!("n := 7. \"{long}{{n}}{long}\" size"))
            .unwrap()
            .as_i64(),
        Some(61)
    );
    assert_eq!(printed(&e, "#'two words' size"), "9");
    assert_eq!(printed(&e, "#at:put: numArgs"), "2");
}

#[test]
fn collection_literals_of_any_size_and_nesting_keep_every_element() {
    let e = engine();
    assert_eq!(printed(&e, "#()"), "#()");
    assert_eq!(printed(&e, "#[]"), "#[]");
    assert_eq!(
        printed(&e, "#(1, #(2, 3), #[4, 5], #{#a => 6})"),
        "#(1, #(2, 3), #[4, 5], #{#a => 6})"
    );
    // More elements than the look-ahead scans (its guess is wrong: the vector grows).
    let many: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    let v = e.eval(&format!("#({}) size", many.join(", "))).unwrap();
    assert_eq!(v.as_i64(), Some(300));
    let v = e
        .eval(&format!(
            "(#[{}] inject: 0 into: [:a :b | a + b])",
            many.join(", ")
        ))
        .unwrap();
    assert_eq!(v.as_i64(), Some((0..300).sum::<i64>()));
}

#[test]
fn dictionary_literals_presized_by_their_first_key_behave_as_built_by_inserts() {
    let e = engine();
    assert_eq!(printed(&e, "#{}"), "#{}");
    // Integer first key, then other kinds (the table widens after being sized for Integers).
    assert_eq!(
        printed(&e, "#{3 => #c, 1 => #a, #k => 0, \"s\" => 2}"),
        "#{1 => #a, 3 => #c, #k => 0, \"s\" => 2}"
    );
    // Symbol first key, then an Integer key.
    assert_eq!(
        printed(&e, "#{#b => 2, 1 => 1, #a => 3}"),
        "#{1 => 1, #a => 3, #b => 2}"
    );
    // A repeated key keeps the last value and counts once.
    assert_eq!(printed(&e, "#{#a => 1, #a => 2} size"), "1");
    assert_eq!(printed(&e, "#{#a => 1, #b => 5, #a => 2} at: #a"), "2");
    // Many entries: more than the presized index was sized for is not possible from a
    // literal, but later inserts grow it as usual.
    let entries: Vec<String> = (0..200).map(|i| format!("#k{i} => {i}")).collect();
    let v = e
        .eval(&format!(
            "d := #{{{}}}. d := d at: #extra put: 1. (d at: #k199) + (d size)",
            entries.join(", ")
        ))
        .unwrap();
    assert_eq!(v.as_i64(), Some(199 + 201));
    // The benchmark's config, evaluated repeatedly with its bindings persisting.
    let cfg = "base := 8000\nname := \"billing\"\n#{\n  #name => name,\n  #port => base + 80,\n  #workers => 2 * 4,\n  #tags => #(\"eu\", \"prod\"),\n  #db => #{#url => \"postgres://localhost/\" ++ name, #pool => 16},\n  #verbose => false\n}";
    for _ in 0..3 {
        let v = e.eval(cfg).unwrap();
        assert_eq!(v.dict_get("port").and_then(bt::Value::as_i64), Some(8080));
        assert_eq!(v.dict_get("workers").and_then(bt::Value::as_i64), Some(8));
        assert_eq!(
            v.dict_get("name").and_then(bt::Value::as_text),
            Some("billing")
        );
        let db = v.dict_get("db").unwrap();
        assert_eq!(
            db.dict_get("url").and_then(bt::Value::as_text),
            Some("postgres://localhost/billing")
        );
        assert_eq!(db.dict_get("pool").and_then(bt::Value::as_i64), Some(16));
        assert_eq!(v.entries().unwrap().count(), 6);
    }
}
