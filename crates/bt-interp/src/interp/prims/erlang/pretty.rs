//! `~p`'s layout, as `io_lib_pretty` lays a term out: a term that fits in the rest of the
//! line is written flat; otherwise a list or tuple breaks after its elements, aligned one
//! column right of the bracket, packing leaves (numbers, atoms, strings, printable
//! binaries) onto a line while they fit and giving each compound element a line of its own
//! (a binary written as bytes counts as compound, and is broken between its bytes, the next
//! lines two columns in: `pp_binary`); an improper
//! list's tail follows `|` when it fits, else gets a line of its own; a tuple whose first
//! element is an atom keeps that tag on the bracket's line and aligns the rest after it,
//! unless that would take the layout past half the line (the `cind` pass, [`Cind`]), when
//! the rest goes 4 columns in; a map's pairs are aligned after `#{`, and a pair that does
//! not fit puts its value on the next line, four columns in. Columns are 1-based; a line
//! holds up to `line - 1` characters before a break is needed, and at most the term's whole
//! length (Erlang's `M`), as in Erlang.

use super::format::{write_term, Split};
use super::terms::list_arg;
use crate::value::Value;
use std::convert::Infallible;

/// A term measured: its flat text and, for compound terms, its parts.
struct Node {
    flat: String,
    len: usize,
    kind: Kind,
}

enum Kind {
    Leaf,
    /// A list's elements and, for an improper list, its tail.
    List(Vec<Node>, Option<Box<Node>>),
    Tuple {
        tagged: bool,
        items: Vec<Node>,
    },
    Map(Vec<(Node, Node)>),
    /// A binary written as bytes (`<<1,2,200>>`, not printable as a string): not a leaf, and
    /// broken between its bytes when it does not fit, as `io_lib_pretty:pp_binary` does.
    Bin,
}

fn measure(v: &Value, unicode: bool, split: Split) -> Node {
    let mut flat = String::new();
    write_term(v, true, unicode, split, &mut flat);
    let len = flat.chars().count();
    let kind = match v {
        Value::List(_) | Value::Array(_) if flat.starts_with('[') => {
            let items = list_arg(v).unwrap_or_default();
            Kind::List(
                items.iter().map(|x| measure(x, unicode, split)).collect(),
                None,
            )
        }
        Value::Tuple(t) if !t.is_empty() => Kind::Tuple {
            tagged: t.len() > 1
                && matches!(
                    t[0],
                    Value::Symbol(_) | Value::Nil | Value::True | Value::False
                ),
            items: t.iter().map(|x| measure(x, unicode, split)).collect(),
        },
        Value::Dict(d) if !d.is_empty() => {
            let pairs = split.map_pairs(v);
            Kind::Map(
                pairs
                    .iter()
                    .map(|(k, x)| (measure(k, unicode, split), measure(x, unicode, split)))
                    .collect(),
            )
        }
        Value::Str(_) | Value::Binary(_) if flat.starts_with("<<") && !flat.starts_with("<<\"") => {
            Kind::Bin
        }
        Value::Native(_) => match split.improper(v) {
            Some((items, tail)) => Kind::List(
                items.iter().map(|x| measure(x, unicode, split)).collect(),
                Some(Box::new(measure(&tail, unicode, split))),
            ),
            None => Kind::Leaf,
        },
        _ => Kind::Leaf,
    };
    Node { flat, len, kind }
}

/// Writes `v` as `~p` does, starting at column `col` of lines `line` long.
pub(super) fn pretty(
    v: &Value,
    unicode: bool,
    col: usize,
    line: usize,
    split: Split,
    out: &mut String,
) {
    let n = measure(v, unicode, split);
    let (col, ll) = (col.max(1) as i64, line as i64);
    // A line holds up to `M` characters of the term: its whole length (no `line_max_chars`).
    let m = n.len as i64;
    if n.len as i64 >= ll - col {
        // The indentation of tagged tuples: after the tag when the layout then keeps within
        // half the line, else 4, else 1.
        let tind = [-1, 4]
            .into_iter()
            .find(|&i| Cind { ll, m }.cind(&n, col, i, 0, 0).is_ok())
            .unwrap_or(1);
        let p = Pp { ll, m, tind };
        p.pp(&n, col, col - 1, 0, 0, out);
    } else {
        out.push_str(&n.flat);
    }
}

/// `io_lib_pretty`'s layout; `ld` is the number of closing characters after the term
/// (Erlang's "last depth"), `w` the characters already on the line before it.
struct Pp {
    ll: i64,
    m: i64,
    tind: i64,
}

/// The line's length `ll` and the characters `m` a term may take on it, which both layouts
/// (`Pp`, `Cind`) test a term against.
trait Line {
    fn ll(&self) -> i64;
    fn m(&self) -> i64;

    /// Whether a term of `len` characters stays on the line at `col`.
    fn fits(&self, len: i64, col: i64, ld: i64, w: i64) -> bool {
        len < self.ll() - col - ld && len + w + ld <= self.m()
    }

    /// Whether a leaf of `elen` characters (its comma included) goes on the line after the
    /// previous element.
    fn fits_after(&self, elen: i64, col: i64, ld1: i64, w: i64) -> bool {
        if ld1 == 0 {
            elen + 1 < self.ll() - col && w + elen < self.m()
        } else {
            elen < self.ll() - col - ld1 && w + elen + ld1 <= self.m()
        }
    }

    /// Whether an improper list's tail of `len` characters goes on the line after its `|`.
    fn tail_fits(&self, len: i64, col: i64, ld: i64, w: i64) -> bool {
        len + 1 < self.ll() - col - (ld + 1) && len + 1 + w + ld < self.m()
    }

    /// Walks the elements after a first one, from column `col` with `w` characters on the
    /// line: an element that is a leaf (`leaf`) of `len` characters and fits after a comma
    /// stays on the line (`place(e, ld, true)`); any other goes on a line of its own at
    /// `col0` (`place(e, ld, false)` answers its width). Answers the column and the line's
    /// characters after the last.
    #[allow(clippy::too_many_arguments)]
    fn walk<T, E>(
        &self,
        items: &[T],
        len: impl Fn(&T) -> i64,
        leaf: impl Fn(&T) -> bool,
        col0: i64,
        mut col: i64,
        ld: i64,
        mut w: i64,
        mut place: impl FnMut(&T, i64, bool) -> Result<i64, E>,
    ) -> Result<(i64, i64), E> {
        for (i, e) in items.iter().enumerate() {
            let ld1 = last_depth(i + 1 < items.len(), ld);
            let elen = 1 + len(e);
            if leaf(e) && self.fits_after(elen, col, ld1, w) {
                place(e, ld1, true)?;
                col += elen;
                w += elen;
            } else {
                let we = place(e, ld1, false)?;
                col = col0 + we;
                w = we;
            }
        }
        Ok((col, w))
    }
}

impl Line for Pp {
    fn ll(&self) -> i64 {
        self.ll
    }
    fn m(&self) -> i64 {
        self.m
    }
}

impl Line for Cind {
    fn ll(&self) -> i64 {
        self.ll
    }
    fn m(&self) -> i64 {
        self.m
    }
}

fn is_leaf(n: &Node) -> bool {
    matches!(n.kind, Kind::Leaf)
}

fn node_len(n: &Node) -> i64 {
    n.len as i64
}

/// Whether both sides of a map pair are leaves.
fn leaf_pair(p: &(Node, Node)) -> bool {
    is_leaf(&p.0) && is_leaf(&p.1)
}

fn spaces(n: i64, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', n.max(0) as usize));
}

/// The closing depth of an element: none while others follow it, one more than the
/// enclosing term's after the last (a tail follows with `|`).
fn last_depth(more: bool, ld: i64) -> i64 {
    if more {
        0
    } else {
        ld + 1
    }
}

impl Pp {
    fn pp(&self, n: &Node, col: i64, ind: i64, ld: i64, w: i64, out: &mut String) {
        if self.fits(n.len as i64, col, ld, w) {
            out.push_str(&n.flat);
            return;
        }
        match &n.kind {
            Kind::Leaf => out.push_str(&n.flat),
            Kind::List(items, tail) => {
                out.push('[');
                self.pp_list(items, tail.as_deref(), col + 1, ind + 1, ld, w + 1, out);
                out.push(']');
            }
            Kind::Tuple {
                tagged: true,
                items,
            } => {
                out.push('{');
                let tag = &items[0];
                let tlen = tag.len as i64;
                let tagind = tlen + 2;
                let tcol = col + tagind;
                out.push_str(&tag.flat);
                if self.tind > 0 && tagind > self.tind {
                    let col1 = col + self.tind;
                    let w = w + 1 + tlen;
                    self.pp_tail(&items[1..], None, col1, tcol, ind + self.tind, ld, w, out);
                } else {
                    out.push(',');
                    let w = w + 1 + tlen + 1;
                    self.pp_list(&items[1..], None, tcol, ind + tagind, ld, w, out);
                }
                out.push('}');
            }
            Kind::Tuple { items, .. } => {
                out.push('{');
                self.pp_list(items, None, col + 1, ind + 1, ld, w + 1, out);
                out.push('}');
            }
            Kind::Map(pairs) => {
                out.push_str("#{");
                self.pp_map(pairs, col + 2, ind + 2, ld, w + 1, out);
                out.push('}');
            }
            Kind::Bin => pp_binary(&n.flat, (self.ll - col - 2 - ld).max(8), ind + 2, out),
        }
    }

    /// The elements of a list or tuple (and an improper list's tail) from column `col0`.
    #[allow(clippy::too_many_arguments)]
    fn pp_list(
        &self,
        items: &[Node],
        tail: Option<&Node>,
        col0: i64,
        ind: i64,
        ld: i64,
        w: i64,
        out: &mut String,
    ) {
        let Some((first, rest)) = items.split_first() else {
            return;
        };
        let ld1 = last_depth(!rest.is_empty(), ld);
        let we = self.pp_element(first, col0, ind, ld1, w, out);
        self.pp_tail(rest, tail, col0, col0 + we, ind, ld, w + we, out);
    }

    /// The elements after the first: a leaf that fits on the line after a comma, anything
    /// else on a line of its own at `col0`; then `|` and the tail, if any.
    #[allow(clippy::too_many_arguments)]
    fn pp_tail(
        &self,
        items: &[Node],
        tail: Option<&Node>,
        col0: i64,
        col: i64,
        ind: i64,
        ld: i64,
        w: i64,
        out: &mut String,
    ) {
        let place = |e: &Node, ld1, inline| {
            if inline {
                out.push(',');
                out.push_str(&e.flat);
                return Ok::<_, Infallible>(0);
            }
            out.push_str(",\n");
            spaces(ind, out);
            Ok(self.pp_element(e, col0, ind, ld1, 0, out))
        };
        let Ok((col, w)) = self.walk(items, node_len, is_leaf, col0, col, ld, w, place);
        if let Some(t) = tail {
            out.push('|');
            if is_leaf(t) && self.tail_fits(node_len(t), col, ld, w) {
                out.push_str(&t.flat);
            } else {
                out.push('\n');
                spaces(ind, out);
                self.pp(t, col0, ind, ld + 1, 0, out);
            }
        }
    }

    /// One element: a leaf that fits is written flat (answering its length); any other
    /// element is laid out and the line counts as full.
    fn pp_element(&self, e: &Node, col: i64, ind: i64, ld: i64, w: i64, out: &mut String) -> i64 {
        if is_leaf(e) && self.fits(e.len as i64, col, ld, w) {
            out.push_str(&e.flat);
            return e.len as i64;
        }
        self.pp(e, col, ind, ld, w, out);
        self.ll
    }

    fn pp_map(
        &self,
        pairs: &[(Node, Node)],
        col0: i64,
        ind: i64,
        ld: i64,
        w: i64,
        out: &mut String,
    ) {
        let Some((first, rest)) = pairs.split_first() else {
            return;
        };
        let pw = self.pp_pair(first, col0, ind, last_depth(!rest.is_empty(), ld), w, out);
        let place = |p: &(Node, Node), ld1, inline| {
            if inline {
                out.push(',');
                write_pair(p, out);
                return Ok::<_, Infallible>(0);
            }
            out.push_str(",\n");
            spaces(ind, out);
            Ok(self.pp_pair(p, col0, ind, ld1, 0, out))
        };
        let Ok(_) = self.walk(rest, pair_len, leaf_pair, col0, col0 + pw, ld, pw, place);
    }

    fn pp_pair(
        &self,
        p: &(Node, Node),
        col: i64,
        ind: i64,
        ld: i64,
        w: i64,
        out: &mut String,
    ) -> i64 {
        let len = pair_len(p);
        if self.fits(len, col, ld, w) {
            write_pair(p, out);
            return if leaf_pair(p) { len } else { self.ll };
        }
        let i = if self.tind > 0 { self.tind } else { 4 };
        self.pp(&p.0, col, ind, ld, w, out);
        out.push_str(" =>\n");
        spaces(ind + i, out);
        self.pp(&p.1, col + i, ind + i, ld, 0, out);
        self.ll
    }
}

/// `io_lib_pretty`'s `cind`: whether a layout with tagged tuples indented by `ind` (-1:
/// after the tag) keeps every indentation within half the line, unless the line has room
/// for `m` more characters there.
struct Cind {
    ll: i64,
    m: i64,
}

struct NoGood;

impl Cind {
    fn cind(&self, n: &Node, col: i64, ind: i64, ld: i64, w: i64) -> Result<(), NoGood> {
        if self.fits(n.len as i64, col, ld, w) {
            return Ok(());
        }
        match &n.kind {
            Kind::Leaf => Ok(()),
            Kind::List(items, tail) => {
                self.cind_list(items, tail.as_deref(), col + 1, ind, ld, w + 1)
            }
            Kind::Tuple {
                tagged: true,
                items,
            } => {
                let tlen = items[0].len as i64;
                let tagind = tlen + 2;
                let tcol = col + tagind;
                let l = &items[1..];
                let w = w + 1;
                if ind > 0 && tagind > ind {
                    let col1 = col + ind;
                    if self.m + col1 <= self.ll || col1 <= self.ll / 2 {
                        self.cind_tail(l, None, col1, tcol, ind, ld, w + tlen)
                    } else {
                        Err(NoGood)
                    }
                } else if self.m + tcol < self.ll || tcol < self.ll / 2 {
                    self.cind_list(l, None, tcol, ind, ld, w + tlen + 1)
                } else {
                    Err(NoGood)
                }
            }
            Kind::Tuple { items, .. } => self.cind_list(items, None, col + 1, ind, ld, w + 1),
            Kind::Map(pairs) => self.cind_map(pairs, col + 2, ind, ld, w + 2),
            Kind::Bin => Ok(()),
        }
    }

    fn cind_list(
        &self,
        items: &[Node],
        tail: Option<&Node>,
        col0: i64,
        ind: i64,
        ld: i64,
        w: i64,
    ) -> Result<(), NoGood> {
        let Some((first, rest)) = items.split_first() else {
            return Ok(());
        };
        let we = self.cind_element(first, col0, ind, last_depth(!rest.is_empty(), ld), w)?;
        self.cind_tail(rest, tail, col0, col0 + we, ind, ld, w + we)
    }

    #[allow(clippy::too_many_arguments)]
    fn cind_tail(
        &self,
        items: &[Node],
        tail: Option<&Node>,
        col0: i64,
        col: i64,
        ind: i64,
        ld: i64,
        w: i64,
    ) -> Result<(), NoGood> {
        let place = |e: &Node, ld1, inline| match inline {
            true => Ok(0),
            false => self.cind_element(e, col0, ind, ld1, 0),
        };
        let (col, w) = self.walk(items, node_len, is_leaf, col0, col, ld, w, place)?;
        match tail {
            Some(t) => {
                if is_leaf(t) && self.tail_fits(node_len(t), col, ld, w) {
                    Ok(())
                } else {
                    self.cind(t, col, ind, ld + 1, 0)
                }
            }
            None => Ok(()),
        }
    }

    fn cind_element(&self, e: &Node, col: i64, ind: i64, ld: i64, w: i64) -> Result<i64, NoGood> {
        if is_leaf(e) && self.fits(e.len as i64, col, ld, w) {
            return Ok(e.len as i64);
        }
        self.cind(e, col, ind, ld, w)?;
        Ok(self.ll)
    }

    fn cind_map(
        &self,
        pairs: &[(Node, Node)],
        col0: i64,
        ind: i64,
        ld: i64,
        w: i64,
    ) -> Result<(), NoGood> {
        let Some((first, rest)) = pairs.split_first() else {
            return Ok(());
        };
        let pw = self.cind_pair(first, col0, ind, last_depth(!rest.is_empty(), ld), w)?;
        let place = |p: &(Node, Node), ld1, inline| match inline {
            true => Ok(0),
            false => self.cind_pair(p, col0, ind, ld1, 0),
        };
        self.walk(
            rest,
            pair_len,
            leaf_pair,
            col0,
            col0 + pw,
            ld,
            w + pw,
            place,
        )?;
        Ok(())
    }

    fn cind_pair(
        &self,
        p: &(Node, Node),
        col: i64,
        ind: i64,
        ld: i64,
        w: i64,
    ) -> Result<i64, NoGood> {
        let len = pair_len(p);
        if self.fits(len, col, ld, w) {
            return Ok(if leaf_pair(p) { len } else { self.ll });
        }
        self.cind(&p.0, col, ind, ld, w)?;
        let i = if ind > 0 { ind } else { 4 };
        self.cind(&p.1, col + i, ind, ld, 0)?;
        Ok(self.ll)
    }
}

fn pair_len(p: &(Node, Node)) -> i64 {
    (p.0.len + 4 + p.1.len) as i64
}

fn write_pair(p: &(Node, Node), out: &mut String) {
    out.push_str(&p.0.flat);
    out.push_str(" => ");
    out.push_str(&p.1.flat);
}

/// A binary's bytes (`flat` is `<<1,2,…>>`) packed onto lines of `n` characters after the
/// `<<`, the next lines indented `ind` columns.
fn pp_binary(flat: &str, n0: i64, ind: i64, out: &mut String) {
    let inner = &flat[2..flat.len() - 2];
    out.push_str("<<");
    let bytes: Vec<&str> = inner.split(',').collect();
    let mut n = n0;
    for (i, b) in bytes.iter().enumerate() {
        let len = b.len() as i64;
        if i + 1 < bytes.len() {
            if n - (len + 1) < 0 {
                out.push('\n');
                spaces(ind, out);
                n = n0 - (len + 1);
            } else {
                n -= len + 1;
            }
            out.push_str(b);
            out.push(',');
        } else {
            if len > n {
                out.push('\n');
                spaces(ind, out);
            }
            out.push_str(b);
        }
    }
    out.push_str(">>");
}
