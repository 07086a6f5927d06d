//! Tests of the serde bridge: a config struct from a bt Dictionary, Rust → Value → Rust
//! round trips, key kinds, enums, range checks and error paths.

use std::collections::{BTreeMap, HashMap};

use ::serde::{Deserialize, Serialize};

use super::error::kind;
use super::{from_rust, to_rust};
use crate::interp::{Interpreter, InterpreterOptions};
use crate::value::Value;

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Db {
    host: String,
    pool: u8,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum Mode {
    Fast,
    Careful,
    Limited(u32),
    Window { from: i64, to: i64 },
    Pair(String, bool),
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Config {
    name: String,
    port: u16,
    ratio: f64,
    tags: Vec<String>,
    db: Db,
    replica: Option<Db>,
    mode: Mode,
    limits: HashMap<String, u32>,
    initial: char,
    pair: (i32, String),
}

fn eval(src: &str) -> Value {
    let vm = Interpreter::new(InterpreterOptions::default());
    vm.set_output(Box::new(|_| {}));
    match vm.eval("test", src) {
        Ok(v) => v,
        Err(e) => panic!("{src}: {}", e.message()),
    }
}

const CONFIG: &str = "#{#name => \"svc\", #port => 8080, #ratio => 2, \
    #tags => #(\"a\", \"b\"), #db => #{#host => \"h\", #pool => 4}, #replica => nil, \
    #mode => #Fast, \"limits\" => #{\"cpu\" => 2, \"mem\" => 512}, #initial => $q, \
    #pair => (Tuple withAll: #(1, #one))}";

fn sample() -> Config {
    Config {
        name: "svc".into(),
        port: 8080,
        ratio: 2.0,
        tags: vec!["a".into(), "b".into()],
        db: Db {
            host: "h".into(),
            pool: 4,
        },
        replica: None,
        mode: Mode::Fast,
        limits: HashMap::from([("cpu".into(), 2), ("mem".into(), 512)]),
        initial: 'q',
        pair: (1, "one".into()),
    }
}

#[test]
fn a_script_dictionary_becomes_a_config_struct() {
    let c: Config = to_rust(&eval(CONFIG)).expect("config");
    assert_eq!(c, sample());
}

#[test]
fn rust_values_round_trip_through_values() {
    let mut c = sample();
    for mode in [
        Mode::Careful,
        Mode::Limited(7),
        Mode::Window { from: -3, to: 9 },
        Mode::Pair("p".into(), true),
    ] {
        c.mode = mode;
        c.replica = Some(Db {
            host: "r".into(),
            pool: 1,
        });
        let v = from_rust(&c).expect("from_rust");
        let back: Config = to_rust(&v).expect("to_rust");
        assert_eq!(back, c);
    }
    let nested: Vec<Option<BTreeMap<i64, Vec<u8>>>> =
        vec![None, Some(BTreeMap::from([(1, vec![1, 2]), (-5, vec![])]))];
    let back: Vec<Option<BTreeMap<i64, Vec<u8>>>> =
        to_rust(&from_rust(&nested).expect("ser")).expect("de");
    assert_eq!(back, nested);
    let bin = Value::Binary(std::sync::Arc::new(vec![1, 2, 255]));
    assert_eq!(to_rust::<Vec<u8>>(&bin).expect("bytes"), vec![1, 2, 255]);
    let big: (u64, i128, u128) = (u64::MAX, i128::MIN, u128::MAX);
    let back: (u64, i128, u128) = to_rust(&from_rust(&big).expect("ser")).expect("de");
    assert_eq!(back, big);
}

#[test]
fn structs_become_symbol_keyed_dictionaries() {
    let v = from_rust(&sample()).expect("from_rust");
    let Value::Dict(d) = &v else {
        panic!("not a Dictionary");
    };
    assert!(
        d.get(&Value::sym("port")).is_some(),
        "struct fields are Symbols"
    );
    let Some(Value::Dict(limits)) = d.get(&Value::sym("limits")) else {
        panic!("limits");
    };
    assert!(
        limits.get(&Value::str("cpu")).is_some(),
        "map keys stay Strings"
    );
    assert_eq!(
        d.get(&Value::sym("mode"))
            .and_then(|m| m.as_sym())
            .map(|s| s.as_str()),
        Some("Fast")
    );
    assert!(matches!(d.get(&Value::sym("replica")), Some(Value::Nil)));
    assert!(matches!(d.get(&Value::sym("pair")), Some(Value::Tuple(_))));
    assert!(matches!(d.get(&Value::sym("tags")), Some(Value::List(_))));
}

#[test]
fn value_instances_read_as_structs() {
    let vm =
        super::tests::vm_with("Value subclass: Db\n  field: host = \"x\"\n  field: pool = 2\n");
    let v = vm.eval("t", "#(Db new, Db new withPool: 9)").expect("eval");
    let dbs: Vec<Db> = to_rust(&v).expect("to_rust");
    assert_eq!(
        dbs,
        vec![
            Db {
                host: "x".into(),
                pool: 2
            },
            Db {
                host: "x".into(),
                pool: 9
            }
        ]
    );
}

#[test]
fn mismatches_are_type_errors_with_paths() {
    let e =
        to_rust::<Config>(&eval(&CONFIG.replace("#pool => 4", "#pool => 300"))).expect_err("u8");
    assert_eq!(e.kind, kind::TYPE_ERROR);
    assert_eq!(e.path, "{#db}{#pool}");
    assert!(e.message.contains("300"), "{}", e.message);
    let e = to_rust::<Vec<u16>>(&eval("#(1, 2, \"three\")")).expect_err("str");
    assert_eq!(e.path, "[3]");
    let e = to_rust::<Config>(&eval("#{#name => \"x\"}")).expect_err("missing");
    assert!(e.message.contains("missing field"), "{}", e.message);
    let e = to_rust::<Mode>(&eval("#Slow")).expect_err("variant");
    assert!(e.message.contains("Slow"), "{}", e.message);
    let e = to_rust::<Vec<i64>>(&eval("#(1, [:x | x])")).expect_err("block");
    assert_eq!(e.path, "[2]");
    let e = to_rust::<i64>(&eval("2 raisedTo: 200")).expect_err("huge");
    assert_eq!(e.kind, kind::TYPE_ERROR);
}
