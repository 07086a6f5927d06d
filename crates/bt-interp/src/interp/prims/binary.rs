//! Binary primitives: raw bytes, 1-based `at:`, 0-based `byteAt:`, the
//! hex/base64/base64url encoders, and decoders that answer `Result ok:` / `Result error:`
//! (with a `parse_error` exception) instead of raising. Primitives linear in their input are
//! registered with `.cost(Cost::InputBytes)`: its bytes are charged first (`registry::Cost`).

use std::cmp::Ordering;

use crate::interp::error::ErrorKind;
use crate::interp::eval::{Ctx, EvalResult, Prims};
use crate::interp::prims::codec;
use crate::interp::prims::fault::{
    fault_value, lift, result_error, result_ok, str_arg, Fault, Res,
};
use crate::interp::prims::number::{binary_prim, unary_prim};
use crate::interp::prims::string::pure::{check_index, iolist_bytes, too_long, MAX_STRING_BYTES};
use crate::interp::prims::string::{byte_at, byte_list, bytes_arg, part, seq_items};
use crate::interp::print::binary_string;
use crate::interp::registry::Cost;
use crate::value::order::term_cmp;
use crate::value::{Ref, Value};

/// The receiver's bytes (a Binary receiver is guaranteed by dispatch).
fn recv(v: &Value) -> Res<&[u8]> {
    match v {
        Value::Binary(b) => Ok(b),
        other => Err(Fault::expected(
            "Binary primitive",
            "a Binary receiver",
            other,
        )),
    }
}

fn bin(bytes: Vec<u8>) -> Value {
    Value::Binary(Ref::new(bytes))
}

/// Bytes from a List of Integers 0–255.
pub fn bytes_from_list(what: &str, v: &Value) -> Res<Vec<u8>> {
    seq_items(what, v)?
        .map(|b| match b {
            Value::Int(i) if (0..=255).contains(i) => Ok(*i as u8),
            // An Integer outside the byte range is named (it read "got an Integer").
            Value::Int(i) => Err(Fault::Type(format!(
                "{what} expects byte Integers (0-255), got {i}"
            ))),
            other => Err(Fault::expected(what, "byte Integers (0-255)", other)),
        })
        .collect()
}

fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Binary(x), Value::Binary(y)) => x.as_slice().cmp(y.as_slice()),
        _ => term_cmp(a, b),
    }
}

unary_prim! {
    size => |r| Ok(Value::Int(recv(r)?.len() as i64));
    is_empty => |r| Ok(Value::bool(recv(r)?.is_empty()));
    to_bytes => |r| Ok(byte_list(recv(r)?));
    as_string => |r| String::from_utf8(recv(r)?.to_vec())
        .map(Value::str)
        .map_err(|_| Fault::Type("Binary asString: the bytes are not valid UTF-8".into()));
    as_string_unchecked => |r| Ok(Value::str(String::from_utf8_lossy(recv(r)?).into_owned()));
    is_valid_utf8 => |r| Ok(Value::bool(std::str::from_utf8(recv(r)?).is_ok()));
    as_hex => |r| Ok(Value::str(codec::hex_encode(recv(r)?)));
    as_base64 => |r| Ok(Value::str(codec::base64_encode(recv(r)?)));
    as_base64url => |r| Ok(Value::str(codec::base64url_encode(recv(r)?)));
    print_string => |r| Ok(Value::str(binary_string(recv(r)?)));
}

binary_prim! {
    at => |r, i| {
        let b = recv(r)?;
        Ok(Value::Int(b[check_index(i, b.len(), None)?] as i64))
    };
    byte_at_p => |r, i| byte_at(recv(r)?, i);
    concat => |r, a| {
        let (s, t) = (recv(r)?, bytes_arg("concat:", a)?);
        if (s.len() + t.len()) as i64 > MAX_STRING_BYTES {
            return Err(too_long());
        }
        Ok(bin([s, t].concat()))
    };
    append => |r, a| match a {
        Value::Binary(b) => {
            let s = recv(r)?;
            if (s.len() + b.len()) as i64 > MAX_STRING_BYTES {
                return Err(too_long());
            }
            Ok(bin([s, b.as_slice()].concat()))
        }
        Value::Str(_) => Err(Fault::Type("++ cannot join a Binary and a String; use concat:".into())),
        other => Err(Fault::expected("++", "a Binary", other)),
    };
}

fn part_p(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let f = || Ok(bin(part(recv(r)?, &a[0], &a[1])?));
    lift(ctx, f())
}

fn do_each(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
    let bytes = recv(r).map_err(|f| f.raise(ctx))?;
    for b in bytes {
        ctx.tick()?;
        ctx.call_block(&a[0], &[Value::Int(*b as i64)])?;
    }
    Ok(Value::Nil)
}

ordering_prims!();

fn with_all(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    lift(ctx, bytes_from_list("Binary withAll:", &a[0]).map(bin))
}

fn from_iolist(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    crate::interp::prims::string::reserve_iolist(ctx, &a[0])?;
    lift(ctx, iolist_bytes(&a[0], "Binary fromIolist:").map(bin))
}

/// Runs a decoder: `Result ok: aBinary`, or `Result error:` with a `parse_error` exception.
fn decoded(
    ctx: &mut Ctx,
    input: &Value,
    what: &str,
    dec: fn(&str) -> Result<Vec<u8>, String>,
) -> EvalResult {
    let s = str_arg(what, input).map_err(|f| f.raise(ctx))?;
    match dec(s) {
        Ok(bytes) => result_ok(ctx, bin(bytes)),
        Err(msg) => {
            let e = fault_value(ctx, Fault::Kind(ErrorKind::ParseError, msg))?;
            result_error(ctx, e)
        }
    }
}

fn from_hex(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    decoded(ctx, &a[0], "Binary fromHex:", codec::hex_decode)
}

fn from_base64(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    decoded(ctx, &a[0], "Binary fromBase64:", codec::base64_decode)
}

fn from_base64url(ctx: &mut Ctx, _r: &Value, a: &[Value]) -> EvalResult {
    decoded(ctx, &a[0], "Binary fromBase64Url:", codec::base64url_decode)
}

pub fn register(p: &mut Prims) {
    let c = "Binary";
    p.add_class(c, "withAll:", with_all).cost(Cost::Copy);
    p.add_class(c, "fromBytes:", with_all).cost(Cost::Copy);
    p.add_class(c, "fromIolist:", from_iolist)
        .cost(Cost::InputBytes);
    p.add_class(c, "fromHex:", from_hex).cost(Cost::Copy);
    p.add_class(c, "fromBase64:", from_base64).cost(Cost::Copy);
    p.add_class(c, "fromBase64Url:", from_base64url)
        .cost(Cost::Copy);
    p.add(c, "size", size);
    p.add(c, "byteSize", size);
    p.add(c, "isEmpty", is_empty);
    p.add(c, "at:", at);
    p.add(c, "byteAt:", byte_at_p);
    p.add(c, "part:size:", part_p).cost(Cost::Copy);
    p.add(c, "concat:", concat).cost(Cost::Copy);
    p.add(c, "++", append).cost(Cost::Copy);
    p.add(c, "toBytes", to_bytes).cost(Cost::ByteValues);
    p.add(c, "asList", to_bytes).cost(Cost::ByteValues);
    p.add(c, "do:", do_each);
    p.add(c, "asString", as_string).cost(Cost::Copy);
    p.add(c, "asStringUnchecked", as_string_unchecked)
        .cost(Cost::Copy);
    p.add(c, "isValidUtf8", is_valid_utf8)
        .cost(Cost::InputBytes);
    p.add(c, "asHex", as_hex).cost(Cost::Grow(2));
    p.add(c, "asBase64", as_base64).cost(Cost::Grow(2));
    p.add(c, "asBase64Url", as_base64url).cost(Cost::Grow(2));
    p.add(c, "printString", print_string).cost(Cost::Grow(5));
    p.add(c, "<", lt).cost(Cost::InputBytes);
    p.add(c, ">", gt).cost(Cost::InputBytes);
    p.add(c, "<=", le).cost(Cost::InputBytes);
    p.add(c, ">=", ge).cost(Cost::InputBytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printing_and_lists() {
        assert_eq!(binary_string(&[0xff, 0xfe]), "<<FF FE>>");
        assert_eq!(binary_string(&[]), "<<>>");
        let l = Value::list([Value::Int(104), Value::Int(105)]);
        assert_eq!(bytes_from_list("withAll:", &l).unwrap(), b"hi");
        assert!(bytes_from_list("withAll:", &Value::list([Value::Int(256)])).is_err());
        assert!(bytes_from_list("withAll:", &Value::Int(1)).is_err());
    }

    #[test]
    fn indexing() {
        assert_eq!(
            check_index(&Value::Int(1), 0, None),
            Err(Fault::index(1, 0))
        );
        assert_eq!(check_index(&Value::Int(2), 2, None), Ok(1));
        assert_eq!(
            compare(
                &Value::Binary(Ref::new(vec![1, 2])),
                &Value::Binary(Ref::new(vec![1, 3]))
            ),
            Ordering::Less
        );
    }
}
