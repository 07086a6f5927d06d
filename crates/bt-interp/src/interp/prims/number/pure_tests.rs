//! Unit tests of the numeric core (`num.rs`).
use super::*;

fn big(s: &str) -> Value {
    Value::from_bigint(BigInt::parse_bytes(s.as_bytes(), 10).unwrap())
}
fn show(r: Res) -> String {
    match r {
        Ok(v) => int_string(&v),
        Err(Fault::Arith) => "ARITH".into(),
        Err(f) => format!("{f:?}"),
    }
}

#[test]
fn overflow_goes_big_and_comes_back() {
    let max = Value::Int(i64::MAX);
    let r = arith(Op::Add, &max, &Value::Int(1)).unwrap();
    assert!(matches!(r, Value::BigInt(_)));
    assert_eq!(int_string(&r), "9223372036854775808");
    let back = arith(Op::Sub, &r, &Value::Int(1)).unwrap();
    assert!(matches!(back, Value::Int(i64::MAX)));
    let min = Value::Int(i64::MIN);
    assert!(matches!(negate(&min).unwrap(), Value::BigInt(_)));
    assert!(matches!(
        negate(&negate(&min).unwrap()).unwrap(),
        Value::Int(i64::MIN)
    ));
    assert_eq!(show(quo(&min, &Value::Int(-1))), "9223372036854775808");
    assert_eq!(show(rem(&min, &Value::Int(-1))), "0");
    assert_eq!(show(abs(&min)), "9223372036854775808");
    let sq = arith(Op::Mul, &max, &max).unwrap();
    assert_eq!(int_string(&sq), "85070591730234615847396907784232501249");
}

#[test]
fn division_rules() {
    assert_eq!(show(divide(&Value::Int(6), &Value::Int(3))), "2.0");
    assert_eq!(
        show(divide(&Value::Int(1), &Value::Int(3))),
        "0.3333333333333333"
    );
    assert_eq!(show(divide(&Value::Int(1), &Value::Int(0))), "ARITH");
    assert_eq!(show(divide(&Value::float(1.0), &Value::Int(0))), "ARITH");
    assert_eq!(show(divide(&Value::Int(1), &Value::str("x"))), "ARITH");
    assert_eq!(show(quo(&Value::Int(-7), &Value::Int(2))), "-3");
    assert_eq!(show(rem(&Value::Int(-7), &Value::Int(2))), "-1");
    assert_eq!(show(rem(&Value::Int(7), &Value::Int(-2))), "1");
    assert_eq!(show(modulo(&Value::Int(-7), &Value::Int(2))), "1");
    assert_eq!(show(modulo(&Value::Int(7), &Value::Int(-2))), "-1");
    assert_eq!(show(rem(&Value::Int(7), &Value::Int(0))), "ARITH");
    // Exact ratio beyond the double range.
    let a = big(&format!("1{}", "0".repeat(400)));
    let b = big(&format!("1{}", "0".repeat(399)));
    assert_eq!(show(divide(&a, &b)), "10.0");
}

#[test]
fn powers() {
    assert_eq!(
        show(power(&Value::Int(3), &Value::Int(40))),
        "12157665459056928801"
    );
    assert_eq!(show(power(&Value::Int(2), &Value::Int(-1))), "0.5");
    assert_eq!(show(power(&Value::Int(-2), &Value::Int(2))), "4");
    assert_eq!(
        show(power(&Value::Int(2), &Value::float(0.5))),
        "1.4142135623730951"
    );
    assert_eq!(show(power(&Value::float(2.0), &Value::Int(3))), "8.0");
    assert_eq!(show(power(&Value::Int(0), &Value::Int(0))), "1");
    assert_eq!(show(power(&Value::Int(0), &Value::Int(-1))), "ARITH");
    assert_eq!(
        show(power(&Value::Int(-1), &big("100000000000000000001"))),
        "-1"
    );
    assert!(matches!(
        power(&Value::Int(2), &big("100000000000000000001")),
        Err(Fault::Kind(ErrorKind::RuntimeError, _))
    ));
    assert_eq!(show(power(&Value::float(10.0), &Value::Int(400))), "ARITH");
}

#[test]
fn exact_mixed_comparison() {
    let two53 = Value::Int(1 << 53);
    let two53p1 = Value::Int((1 << 53) + 1);
    let f = Value::float(9007199254740992.0);
    assert_eq!(cmp(num(&two53).unwrap(), num(&f).unwrap()), Ordering::Equal);
    assert_eq!(
        cmp(num(&two53p1).unwrap(), num(&f).unwrap()),
        Ordering::Greater
    );
    assert_eq!(
        cmp(num(&Value::Int(2)).unwrap(), Num::F(2.5)),
        Ordering::Less
    );
    assert_eq!(
        cmp(num(&Value::Int(3)).unwrap(), Num::F(2.5)),
        Ordering::Greater
    );
    assert_eq!(cmp(Num::I(-3), Num::F(-2.5)), Ordering::Less);
    assert_eq!(
        cmp(
            Num::F(1e300),
            num(&big(&format!("1{}", "0".repeat(301)))).unwrap()
        ),
        Ordering::Less
    );
}

#[test]
fn float_faults() {
    assert_eq!(
        show(arith(Op::Mul, &Value::float(1e308), &Value::Int(10))),
        "ARITH"
    );
    assert_eq!(show(sqrt(&Value::Int(-1))), "ARITH");
    assert_eq!(show(ln(&Value::Int(0))), "ARITH");
    assert_eq!(show(sqrt(&Value::Int(16))), "4.0");
    assert_eq!(show(log10(&Value::Int(1000))), "3.0");
    assert_eq!(show(log2(&Value::Int(1024))), "10.0");
    let huge = big(&format!("1{}", "0".repeat(500)));
    assert_eq!(show(log10(&huge)), "500.0");
    assert_eq!(show(sqrt(&huge)), "1.0e250");
    assert_eq!(show(sqrt(&big("18446744073709551617"))), "4294967296.0");
    assert_eq!(show(sqrt(&big("-18446744073709551617"))), "ARITH");
    assert_eq!(show(to_float(&huge)), "ARITH");
}

#[test]
fn rounding() {
    assert_eq!(show(round(&Value::float(2.5), Round::Nearest)), "3");
    assert_eq!(show(round(&Value::float(-2.5), Round::Nearest)), "-3");
    assert_eq!(show(round(&Value::float(-2.5), Round::Floor)), "-3");
    assert_eq!(show(round(&Value::float(-2.5), Round::Ceiling)), "-2");
    assert_eq!(show(round(&Value::float(-2.5), Round::Truncate)), "-2");
    assert_eq!(
        show(round(&Value::float(1e20), Round::Truncate)),
        "100000000000000000000"
    );
    assert_eq!(
        show(round_to(&Value::Int(17), &Value::Int(5), Round::Nearest)),
        "15"
    );
    assert_eq!(
        show(round_to(&Value::Int(18), &Value::Int(5), Round::Nearest)),
        "20"
    );
    assert_eq!(
        show(round_to(&Value::Int(15), &Value::Int(10), Round::Nearest)),
        "20"
    );
    assert_eq!(
        show(round_to(&Value::Int(-15), &Value::Int(10), Round::Nearest)),
        "-20"
    );
    assert_eq!(
        show(round_to(&Value::Int(17), &Value::Int(5), Round::Truncate)),
        "15"
    );
    assert_eq!(
        show(round_to(&Value::Int(-17), &Value::Int(5), Round::Truncate)),
        "-15"
    );
    assert_eq!(
        show(round_to(
            &Value::float(2.34567),
            &Value::float(0.5),
            Round::Nearest
        )),
        "2.5"
    );
    assert_eq!(
        show(round_to(&Value::Int(3), &Value::Int(0), Round::Nearest)),
        "ARITH"
    );
}

#[test]
fn parsing() {
    assert_eq!(int_string(&parse_integer("42").unwrap()), "42");
    assert_eq!(int_string(&parse_integer("-42").unwrap()), "-42");
    assert_eq!(int_string(&parse_integer("+7").unwrap()), "7");
    assert_eq!(
        int_string(&parse_integer("123456789012345678901234567890").unwrap()),
        "123456789012345678901234567890"
    );
    assert!(parse_integer("").is_none());
    assert!(parse_integer("-").is_none());
    assert!(parse_integer("4x").is_none());
    assert!(parse_integer(" 4").is_none());
    assert_eq!(parse_float("2.5"), Some(2.5));
    assert_eq!(parse_float("-1e3"), Some(-1000.0));
    assert_eq!(parse_float("42"), Some(42.0));
    assert_eq!(parse_float("1.5E-2"), Some(0.015));
    assert_eq!(parse_float("inf"), None);
    assert_eq!(parse_float("NaN"), None);
    assert_eq!(parse_float("1e999"), None);
    assert_eq!(parse_float("3."), None);
    assert_eq!(parse_float(".5"), None);
    assert_eq!(parse_float("abc"), None);
}

#[test]
fn radix() {
    assert_eq!(to_radix(&Value::Int(255), 16).unwrap(), "FF");
    assert_eq!(to_radix(&Value::Int(-10), 2).unwrap(), "-1010");
    assert_eq!(to_radix(&Value::Int(35), 36).unwrap(), "Z");
    assert!(to_radix(&Value::Int(1), 37).is_err());
}
