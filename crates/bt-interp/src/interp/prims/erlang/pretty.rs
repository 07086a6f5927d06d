//! `~p`'s layout, as `io_lib_pretty` lays a term out: a term that fits in the rest of the
//! line is written flat; otherwise a list or tuple breaks after its elements, aligned one
//! column right of the bracket, packing leaves (numbers, atoms, strings, binaries) onto a
//! line while they fit and giving each compound element a line of its own; a tuple whose
//! first element is an atom keeps that tag on the bracket's line and aligns the rest after
//! it; a map's pairs are aligned after `#{`, and a pair that does not fit puts its value
//! on the next line, four columns in. Columns are 1-based; a line holds up to `line - 1`
//! characters before a break is needed, as in Erlang.

use super::format::{write_term, Split};
use super::terms::list_arg;
use crate::value::Value;

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
    let p = Pp { ll: line as i64 };
    p.pp(&n, col as i64, col as i64 - 1, 0, 0, out);
}

struct Pp {
    ll: i64,
}

fn is_leaf(n: &Node) -> bool {
    matches!(n.kind, Kind::Leaf)
}

fn spaces(n: i64, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', n.max(0) as usize));
}

impl Pp {
    fn fits(&self, len: i64, col: i64, ld: i64, w: i64) -> bool {
        len < self.ll - col - ld && len + w + ld <= self.ll
    }

    /// Whether a leaf element of `elen` characters (its comma included) goes on the line
    /// after the previous element: room for a comma after it too unless it is the last
    /// (`ld` closing characters follow the last).
    fn fits_after(&self, elen: i64, col: i64, ld: i64, w: i64) -> bool {
        if ld == 0 {
            elen + 1 < self.ll - col && w + elen < self.ll
        } else {
            elen < self.ll - col - ld && w + elen + ld <= self.ll
        }
    }

    /// `pp/8`: the term at column `col`, continuation lines indented `ind`, `ld` closing
    /// characters after it, `w` characters already on this line before it.
    fn pp(&self, n: &Node, col: i64, ind: i64, ld: i64, w: i64, out: &mut String) {
        if self.fits(n.len as i64, col, ld, w) {
            out.push_str(&n.flat);
            return;
        }
        match &n.kind {
            Kind::Leaf => out.push_str(&n.flat),
            Kind::List(items, tail) => {
                out.push('[');
                let (col1, w1) = self.pp_list(items, col + 1, ind + 1, ld + 1, w + 1, out);
                if let Some(t) = tail {
                    self.pp_tail(t, col + 1, col1, ind + 1, ld + 1, w1, out);
                }
                out.push(']');
            }
            Kind::Tuple {
                tagged: true,
                items,
            } => {
                let tag = &items[0];
                let tlen = tag.len as i64;
                out.push('{');
                out.push_str(&tag.flat);
                out.push(',');
                let tcol = col + tlen + 2;
                self.pp_list(&items[1..], tcol, ind + tlen + 2, ld + 1, w + tlen + 2, out);
                out.push('}');
            }
            Kind::Tuple { items, .. } => {
                out.push('{');
                self.pp_list(items, col + 1, ind + 1, ld + 1, w + 1, out);
                out.push('}');
            }
            Kind::Map(pairs) => {
                out.push_str("#{");
                self.pp_map(pairs, col + 2, ind + 2, ld + 1, w + 2, out);
                out.push('}');
            }
        }
    }

    /// The elements of a list or tuple from column `col0`; answers the column and width
    /// reached.
    fn pp_list(
        &self,
        items: &[Node],
        col0: i64,
        ind: i64,
        ld: i64,
        w: i64,
        out: &mut String,
    ) -> (i64, i64) {
        let Some((first, rest)) = items.split_first() else {
            return (col0, w);
        };
        let ld1 = if rest.is_empty() { ld } else { 0 };
        let mut col = self.pp_element(first, col0, ind, ld1, w, out);
        let mut w = w + col - col0;
        for (i, e) in rest.iter().enumerate() {
            let ld1 = if i + 1 == rest.len() { ld } else { 0 };
            let elen = 1 + e.len as i64;
            let inline = is_leaf(e) && self.fits_after(elen, col, ld1, w);
            if inline {
                out.push(',');
                out.push_str(&e.flat);
                col += elen;
                w += elen;
            } else {
                out.push_str(",\n");
                spaces(ind, out);
                let c1 = self.pp_element(e, col0, ind, ld1, 0, out);
                w = c1 - col0;
                col = c1;
            }
        }
        (col, w)
    }

    /// The tail of an improper list after its last element (`|` and the tail there when it
    /// is a leaf that fits, else on a line of its own).
    #[allow(clippy::too_many_arguments)]
    fn pp_tail(&self, t: &Node, col0: i64, col: i64, ind: i64, ld: i64, w: i64, out: &mut String) {
        let len = t.len as i64;
        out.push('|');
        if is_leaf(t) && len + 1 < self.ll - col - ld && len + 1 + w + ld <= self.ll {
            out.push_str(&t.flat);
        } else {
            out.push('\n');
            spaces(ind, out);
            self.pp(t, col0, ind, ld, 0, out);
        }
    }

    /// One element: a leaf that fits is written flat (answering the column after it); any
    /// other element is laid out and the line counts as full.
    fn pp_element(&self, e: &Node, col: i64, ind: i64, ld: i64, w: i64, out: &mut String) -> i64 {
        if is_leaf(e) && self.fits(e.len as i64, col, ld, w) {
            out.push_str(&e.flat);
            return col + e.len as i64;
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
        let ld1 = if rest.is_empty() { ld } else { 0 };
        let mut col = self.pp_pair(first, col0, ind, ld1, w, out);
        let mut w = w + col - col0;
        for (i, p) in rest.iter().enumerate() {
            let ld1 = if i + 1 == rest.len() { ld } else { 0 };
            let elen = 1 + pair_len(p);
            let inline = is_leaf(&p.0) && is_leaf(&p.1) && self.fits_after(elen, col, ld1, w);
            if inline {
                out.push(',');
                write_pair(p, out);
                col += elen;
                w += elen;
            } else {
                out.push_str(",\n");
                spaces(ind, out);
                let c1 = self.pp_pair(p, col0, ind, ld1, 0, out);
                w = c1 - col0;
                col = c1;
            }
        }
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
        if is_leaf(&p.0) && is_leaf(&p.1) && self.fits(len, col, ld, w) {
            write_pair(p, out);
            return col + len;
        }
        if self.fits(len, col, ld, w) {
            write_pair(p, out);
            return self.ll;
        }
        self.pp(&p.0, col, ind, ld, w, out);
        out.push_str(" =>\n");
        spaces(ind + 4, out);
        self.pp(&p.1, col + 4, ind + 4, ld, 0, out);
        self.ll
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
