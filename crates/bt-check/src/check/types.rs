//! The checker's type language: what a static type is, how it prints, and
//! the one question argument checks ask — "can a value of this type be an instance of that?".
//!
//! Types are small trees over class *names* (the class table answers ancestry questions).
//! `Dynamic` is the silent type: anything involving it is never reported.

use std::fmt;

/// A static type.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// Unknown or opted out: never reported.
    Dynamic,
    /// No value (a method that always raises).
    Never,
    /// `nil` / `Nil` / UndefinedObject.
    Nil,
    /// An instance of a class, with generic arguments (`List(Integer)`).
    Inst(String, Vec<Ty>),
    /// A class object: `Foo class`.
    Meta(String),
    /// The singleton type of one Symbol.
    Sym(String),
    /// `A | B`, flattened, at least two members, no `Dynamic` inside.
    Union(Vec<Ty>),
    /// A protocol (structural): treated like `Dynamic` by most checks.
    Protocol(String),
    /// `Self` inside a signature; replaced by the receiver type at a send.
    SelfTy,
}

impl Ty {
    pub fn inst(name: &str) -> Ty {
        Ty::Inst(name.to_string(), Vec::new())
    }

    pub fn is_dynamic(&self) -> bool {
        matches!(self, Ty::Dynamic | Ty::Protocol(_))
    }

    /// Builds a union, flattening, deduplicating and absorbing into `Dynamic`.
    pub fn union(members: Vec<Ty>) -> Ty {
        let mut out: Vec<Ty> = Vec::new();
        for m in members {
            match m {
                Ty::Dynamic | Ty::Protocol(_) => return Ty::Dynamic,
                Ty::Never => {}
                Ty::Union(inner) => {
                    for i in inner {
                        if !out.contains(&i) {
                            out.push(i);
                        }
                    }
                }
                other => {
                    if !out.contains(&other) {
                        out.push(other);
                    }
                }
            }
        }
        match out.len() {
            0 => Ty::Never,
            1 => out.pop().unwrap_or(Ty::Never),
            _ => Ty::Union(out),
        }
    }

    /// The members of a union (or the type itself).
    pub fn members(&self) -> Vec<&Ty> {
        match self {
            Ty::Union(ms) => ms.iter().collect(),
            other => vec![other],
        }
    }

    /// The type without `Nil` members (narrowing after a nil test).
    pub(crate) fn without_nil(&self) -> Ty {
        match self {
            Ty::Nil => Ty::Never,
            Ty::Union(ms) => Ty::union(ms.iter().filter(|m| **m != Ty::Nil).cloned().collect()),
            other => other.clone(),
        }
    }

    /// Whether `Nil` is one of the members.
    pub fn admits_nil(&self) -> bool {
        self.members().iter().any(|m| matches!(m, Ty::Nil))
    }

    /// Replaces `Self` with the receiver type.
    pub(crate) fn subst_self(&self, recv: &Ty) -> Ty {
        match self {
            Ty::SelfTy => recv.clone(),
            Ty::Inst(n, args) => {
                Ty::Inst(n.clone(), args.iter().map(|a| a.subst_self(recv)).collect())
            }
            Ty::Union(ms) => Ty::union(ms.iter().map(|m| m.subst_self(recv)).collect()),
            other => other.clone(),
        }
    }

    /// The class name an instance type denotes (`Nil` is UndefinedObject, singletons are Symbols).
    pub fn class_name(&self) -> Option<&str> {
        match self {
            Ty::Inst(n, _) => Some(n),
            Ty::Nil => Some("UndefinedObject"),
            Ty::Sym(_) => Some("Symbol"),
            _ => None,
        }
    }

    /// The name used when a literal's type is shown ("got Integer (literal 42)").
    pub fn widened(&self) -> Ty {
        match self {
            Ty::Sym(_) => Ty::inst("Symbol"),
            Ty::Inst(n, _) if n == "True" || n == "False" => Ty::inst("Boolean"),
            Ty::Inst(n, _) if n == "List" || n == "Array" || n == "Dictionary" => Ty::inst(n),
            other => other.clone(),
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Dynamic => write!(f, "Dynamic"),
            Ty::Never => write!(f, "Never"),
            Ty::Nil => write!(f, "Nil"),
            Ty::Inst(n, args) => {
                write!(f, "{n}")?;
                if !args.is_empty() {
                    write!(f, "(")?;
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{a}")?;
                    }
                    write!(f, ")")?;
                }
                Ok(())
            }
            Ty::Meta(n) => write!(f, "{n} class"),
            Ty::Sym(s) => write!(f, "#{s}"),
            Ty::Union(ms) => {
                for (i, m) in ms.iter().enumerate() {
                    if i > 0 {
                        write!(f, " | ")?;
                    }
                    write!(f, "{m}")?;
                }
                Ok(())
            }
            Ty::Protocol(p) => write!(f, "{p}"),
            Ty::SelfTy => write!(f, "Self"),
        }
    }
}

/// Ancestry questions the conformance test needs; implemented by the class table.
pub trait Hierarchy {
    /// `Some(true)` when `sub` is `sup` or inherits from it, `Some(false)` when it provably does
    /// not, `None` when the chain runs into an unknown class.
    fn inherits(&self, sub: &str, sup: &str) -> Option<bool>;
}

/// True when some value of type `actual` may be an instance of `expected` — the negation of a
/// definite conflict. Unknowns answer true. A union argument conforms only when every member
/// (other than `Nil`, which narrowing the checker cannot see often removes) may conform.
pub(crate) fn may_conform(actual: &Ty, expected: &Ty, h: &dyn Hierarchy) -> bool {
    match (actual, expected) {
        (Ty::Dynamic | Ty::Never | Ty::Protocol(_) | Ty::SelfTy, _) => true,
        (_, Ty::Dynamic | Ty::Never | Ty::Protocol(_) | Ty::SelfTy) => true,
        (Ty::Union(ms), _) => {
            let non_nil: Vec<&Ty> = ms.iter().filter(|m| **m != Ty::Nil).collect();
            if non_nil.is_empty() {
                return may_conform(&Ty::Nil, expected, h);
            }
            non_nil.iter().all(|m| may_conform(m, expected, h))
        }
        (_, Ty::Union(es)) => es.iter().any(|e| may_conform(actual, e, h)),
        (_, Ty::Inst(e, _)) if e == "Object" || e == "ProtoObject" => true,
        (Ty::Nil, Ty::Nil) => true,
        (Ty::Nil, Ty::Inst(e, _)) => e == "UndefinedObject",
        (Ty::Nil, _) => false,
        (Ty::Sym(a), Ty::Sym(b)) => a == b,
        (Ty::Sym(_), Ty::Inst(e, _)) => class_may_conform("Symbol", e, h),
        (Ty::Sym(_), _) => false,
        (Ty::Inst(a, _), Ty::Sym(_)) => class_may_conform(a, "Symbol", h),
        (Ty::Inst(a, _), Ty::Nil) => class_may_conform(a, "UndefinedObject", h),
        (Ty::Inst(a, _), Ty::Inst(e, _)) => class_may_conform(a, e, h),
        (Ty::Meta(a), Ty::Meta(e)) => {
            h.inherits(a, e) != Some(false) || h.inherits(e, a) != Some(false)
        }
        (Ty::Meta(_), Ty::Inst(e, _)) => {
            matches!(e.as_str(), "Class" | "Behaviour" | "Behavior" | "Metaclass")
        }
        (Ty::Inst(a, _), Ty::Meta(_)) => {
            matches!(a.as_str(), "Class" | "Behaviour" | "Behavior" | "Metaclass")
        }
        (Ty::Meta(_), _) => false,
    }
}

/// Class-against-class: either may be the other's ancestor (a variable of a superclass type may
/// hold a subclass instance). A DynamicSupervisor is accepted where a Supervisor is expected
/// (both are supervisor handles).
fn class_may_conform(a: &str, e: &str, h: &dyn Hierarchy) -> bool {
    if a == e {
        return true;
    }
    if e == "Supervisor" && h.inherits(a, "DynamicSupervisor") == Some(true) {
        return true;
    }
    h.inherits(a, e) != Some(false) || h.inherits(e, a) != Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Flat;
    impl Hierarchy for Flat {
        fn inherits(&self, sub: &str, sup: &str) -> Option<bool> {
            let chain: &[&str] = match sub {
                "Integer" => &["Integer", "Number", "Object"],
                "Pid" => &["Pid", "Object"],
                "Supervisor" => &["Supervisor", "Object"],
                "App" => &["App", "Supervisor", "Object"],
                "Symbol" => &["Symbol", "Object"],
                "String" => &["String", "Object"],
                "UndefinedObject" => &["UndefinedObject", "Object"],
                "Object" => &["Object"],
                _ => return None,
            };
            Some(chain.contains(&sup))
        }
    }

    #[test]
    fn supervisor_or_pid() {
        let exp = Ty::union(vec![Ty::inst("Supervisor"), Ty::inst("Pid")]);
        assert!(!may_conform(&Ty::inst("Integer"), &exp, &Flat));
        assert!(!may_conform(&Ty::Sym("a".into()), &exp, &Flat));
        assert!(!may_conform(&Ty::Nil, &exp, &Flat));
        assert!(may_conform(&Ty::inst("App"), &exp, &Flat));
        assert!(may_conform(&Ty::inst("Pid"), &exp, &Flat));
        assert!(may_conform(&Ty::inst("Object"), &exp, &Flat));
        assert!(may_conform(&Ty::Dynamic, &exp, &Flat));
        assert!(may_conform(&Ty::inst("Unknown"), &exp, &Flat));
        let u = Ty::union(vec![Ty::inst("Pid"), Ty::inst("Integer")]);
        assert!(!may_conform(&u, &exp, &Flat));
        let n = Ty::union(vec![Ty::inst("Pid"), Ty::Nil]);
        assert!(may_conform(&n, &exp, &Flat));
    }

    #[test]
    fn union_normalises() {
        assert_eq!(Ty::union(vec![Ty::Nil, Ty::Nil]), Ty::Nil);
        assert_eq!(Ty::union(vec![Ty::Nil, Ty::Dynamic]), Ty::Dynamic);
        let u = Ty::union(vec![
            Ty::inst("A"),
            Ty::union(vec![Ty::inst("B"), Ty::inst("A")]),
        ]);
        assert_eq!(u.to_string(), "A | B");
        assert_eq!(u.without_nil(), u);
        assert_eq!(
            Ty::union(vec![Ty::inst("A"), Ty::Nil]).without_nil(),
            Ty::inst("A")
        );
    }
}
