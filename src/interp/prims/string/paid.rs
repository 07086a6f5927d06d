//! Charging wrappers of the String primitives (see `interp::eval::charge`): `paid_f` charges
//! the work of `f` up front — the bytes of its inputs for the linear ones (copies, scans, case
//! mapping, splitting, `join:` …), the size of the result for `repeat:` and the paddings —
//! then runs `f`.

use crate::interp::eval::charge::ELEM;
use crate::interp::eval::{Ctx, EvalResult};
use crate::interp::value::Value;

/// The bytes of work a String primitive's inputs stand for: the receiver's and each String
/// argument's bytes; a List/Array argument (`join:`, `withAll:` …) its elements and their
/// bytes.
pub(crate) fn input_units(r: &Value, a: &[Value]) -> usize {
    let one = |v: &Value| -> usize {
        match v {
            Value::Str(s) => s.len(),
            Value::Binary(b) => b.len(),
            Value::List(_) | Value::Array(_) => crate::interp::prims::collections::elems(v)
                .map(|it| {
                    it.map(|e| match &e {
                        Value::Str(s) => s.len() + ELEM,
                        _ => ELEM,
                    })
                    .fold(0usize, usize::saturating_add)
                })
                .unwrap_or(0),
            _ => 0,
        }
    };
    a.iter().map(one).fold(one(r), usize::saturating_add)
}

/// Defines `paid_f`: charges [`input_units`] up front, then runs `f` (work linear in the
/// inputs: copies, scans, case mapping, splitting …).
macro_rules! paid {
    ($($name:ident => $f:ident;)*) => {$(
        pub(super) fn $name(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            ctx.charge(input_units(r, a))?;
            super::$f(ctx, r, a)
        }
    )*};
}

paid! {
    paid_with_all => with_all;
    paid_from_code_points => from_code_points;
    paid_from_iolist => from_iolist;
    paid_all_but_first => all_but_first;
    paid_all_but_last => all_but_last;
    paid_as_array => as_array;
    paid_as_base64 => as_base64;
    paid_as_base64url => as_base64url;
    paid_as_binary => as_binary;
    paid_as_float => as_float;
    paid_as_hex => as_hex;
    paid_as_integer => as_integer;
    paid_as_list => as_list;
    paid_as_number => as_number;
    paid_as_symbol => as_symbol;
    paid_at => at;
    paid_byte_at_p => byte_at_p;
    paid_capitalize => capitalize;
    paid_concat => concat;
    paid_concat_bytes => concat_bytes;
    paid_contains => contains;
    paid_copy_from_to => copy_from_to;
    paid_drop => drop;
    paid_ends_with => ends_with;
    paid_from_to => from_to;
    paid_ge => ge;
    paid_gt => gt;
    paid_includes => includes;
    paid_includes_substring => includes_substring;
    paid_index_of => index_of;
    paid_is_alpha => is_alpha;
    paid_is_blank => is_blank;
    paid_is_digit => is_digit;
    paid_join => join;
    paid_last => last;
    paid_last_n => last_n;
    paid_le => le;
    paid_lines => lines;
    paid_lowercase => lowercase;
    paid_lt => lt;
    paid_occurrences_of => occurrences_of;
    paid_part_p => part_p;
    paid_print_string => print_string;
    paid_replace_all => replace_all;
    paid_replace_first => replace_first;
    paid_reverse => reverse;
    paid_size => size;
    paid_split => split;
    paid_starts_with => starts_with;
    paid_take => take;
    paid_to_bytes => to_bytes;
    paid_trim => trim;
    paid_trim_left => trim_left;
    paid_trim_right => trim_right;
    paid_uppercase => uppercase;
    paid_url_decoded => url_decoded;
    paid_url_encoded => url_encoded;
    paid_words => words;
}

/// The byte length of a result `n` times the receiver (`repeat:`) or `n` wide (`padLeft:`).
fn result_units(r: &Value, n: &Value, times_recv: bool) -> usize {
    let n = match n {
        Value::Int(i) => (*i).max(0) as usize,
        _ => 0,
    };
    let len = match r {
        Value::Str(s) if times_recv => s.len(),
        Value::Str(s) => return n.max(s.len()),
        _ => 1,
    };
    len.saturating_mul(n)
}

/// Like `paid!`, for primitives whose result size comes from an Integer argument.
macro_rules! paid_result {
    ($($name:ident => $f:ident, $times:expr;)*) => {$(
        pub(super) fn $name(ctx: &mut Ctx, r: &Value, a: &[Value]) -> EvalResult {
            let n = a.first().map_or(0, |n| result_units(r, n, $times));
            ctx.charge(n)?;
            super::$f(ctx, r, a)
        }
    )*};
}

paid_result! {
    paid_repeat => repeat, true;
    paid_pad_left => pad_left, false;
    paid_pad_right => pad_right, false;
    paid_pad_left_with => pad_left_with, false;
    paid_pad_right_with => pad_right_with, false;
}
