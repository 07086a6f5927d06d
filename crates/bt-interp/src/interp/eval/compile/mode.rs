//! Which executable form bodies run in, chosen by `BT_EVAL` in the environment (read once
//! per process): the compiled closures (the default), the tree walker alone (`walk`, the
//! reference semantics the goldens are also run through), or the compiled closures with the
//! walker forbidden (`strict`, the mode the golden harness uses by default, so a node kind
//! without a compiled form fails a golden instead of quietly running on the walker).

use crate::interp::eval::code::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EvalMode {
    /// Every body compiled to closures; the walker is never entered.
    Compiled,
    /// `BT_EVAL=walk`: every body runs on the tree walker alone.
    Walk,
    /// `BT_EVAL=strict`: compiled, and entering the walker raises an error.
    Strict,
}

pub(crate) fn eval_mode() -> EvalMode {
    static MODE: std::sync::OnceLock<EvalMode> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| match std::env::var_os("BT_EVAL") {
        Some(v) if v == "walk" => EvalMode::Walk,
        Some(v) if v == "strict" => EvalMode::Strict,
        _ => EvalMode::Compiled,
    })
}

/// The name of a node's kind, for the error of an entry into the walker in strict mode.
pub(crate) fn node_kind(n: &Node) -> &'static str {
    match n {
        Node::Nil => "Nil",
        Node::Const(_) => "Const",
        Node::SelfRef => "SelfRef",
        Node::Var(_) => "Var",
        Node::SetVar(..) => "SetVar",
        Node::Global(..) => "Global",
        Node::Field(_) => "Field",
        Node::Send(_) => "Send",
        Node::Super(_) => "Super",
        Node::Cast(_) => "Cast",
        Node::Bin(_) => "Bin",
        Node::Cascade(_) => "Cascade",
        Node::Block(_) => "Block",
        Node::List(_) => "List",
        Node::Array(_) => "Array",
        Node::Dict(_) => "Dict",
        Node::Cons(_) => "Cons",
        Node::Interp(_) => "Interp",
        Node::Seq(_) => "Seq",
        Node::If(_) => "If",
        Node::IfNil(_) => "IfNil",
        Node::While(_) => "While",
        Node::Repeat(_) => "Repeat",
        Node::ToDo(_) => "ToDo",
        Node::Times(_) => "Times",
        Node::Match(_) => "Match",
        Node::Destructure(_) => "Destructure",
        Node::InPlace(_) => "InPlace",
        Node::Return(_) => "Return",
        Node::NlReturn(_) => "NlReturn",
    }
}
