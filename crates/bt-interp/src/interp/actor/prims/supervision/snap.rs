//! The value behind `ProcessNavigation`, `SupervisionTree` and `SupervisionNode`
//!: one native type, [`SnapVal`], over a shared immutable [`Snapshot`].
//!
//! Each is a Value class whose declared fields (7, "Fields and snapshot data") are
//! `nodes`, `flatNodes` and `pid registeredName kind behaviourClass childCount`; everything
//! else a snapshot records is data outside the fields. A node cut from a snapshot is the
//! snapshot plus the path of child indexes from its root (so `parent`/`children` navigate
//! without copying) and reads its fields from the snapshot; a hand-built node (`new`, the
//! keyword constructor) or a `with…:` copy carries its five field values itself, keeping the
//! snapshot data (and links) of the node it was copied from. Trees and navigations cut from
//! a snapshot list its nodes lazily; hand-built ones hold their field List.
//!
//! Equality (`=:=`, `=`) is structural: the fields, then the snapshot data (a node's
//! children recursively, never its parent; a tree's node and capture time). The term-order
//! key is a structural 64-bit hash, so distinct values practically never tie.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::interp::actor::handle::{downcast, native, PidVal};
use crate::interp::print;
use crate::runtime::snapshot::{NodeKind, NodeState, SnapNode, Snapshot, SupInfo};
use crate::value::order;
use crate::value::{ClassRef, NativeObj, Sym, Value};

/// The declared fields of a SupervisionNode, in declaration order (declared with the class,
/// in the class table).
pub use crate::interp::program::SUPERVISION_NODE_FIELDS as NODE_FIELDS;

/// The classes the values of one snapshot belong to (looked up once, at wrap time).
#[derive(Clone)]
pub struct Classes {
    pub nav: ClassRef,
    pub tree: ClassRef,
    pub node: ClassRef,
    pub pid: ClassRef,
}

/// What every value cut from one snapshot shares.
pub struct Shared {
    pub snap: Snapshot,
    /// The Node the snapshot was taken on (nil for hand-built values).
    pub node: Value,
    pub classes: Classes,
}

/// Which of the three values, and how its fields are held.
#[derive(Clone)]
pub enum Repr {
    /// A ProcessNavigation; `nodes` None: the snapshot's roots.
    Nav { nodes: Option<Value> },
    /// A SupervisionTree; `flat` None: every node of the snapshot in pre-order.
    Tree { flat: Option<Value> },
    /// A SupervisionNode at `path` (empty: hand-built, no snapshot data); `fields` overrides
    /// the five field values read from the snapshot.
    Node {
        path: Vec<usize>,
        fields: Option<Arc<[Value; 5]>>,
    },
}

/// A snapshot seen as a ProcessNavigation, a SupervisionTree or one SupervisionNode.
#[derive(Clone)]
pub struct SnapVal {
    pub sh: Arc<Shared>,
    pub repr: Repr,
}

impl SnapVal {
    pub fn value(self) -> Value {
        native(self)
    }

    /// The same snapshot, another view.
    pub fn with_repr(&self, repr: Repr) -> SnapVal {
        SnapVal {
            sh: self.sh.clone(),
            repr,
        }
    }

    /// A node of this snapshot at `path`.
    pub fn node_at(&self, path: Vec<usize>) -> Value {
        self.with_repr(Repr::Node { path, fields: None }).value()
    }

    pub fn is_node(&self) -> bool {
        matches!(self.repr, Repr::Node { .. })
    }

    pub fn path(&self) -> &[usize] {
        match &self.repr {
            Repr::Node { path, .. } => path,
            _ => &[],
        }
    }

    /// The snapshot record of this node (None: hand-built, or not a node).
    pub fn data(&self) -> Option<&SnapNode> {
        let (first, rest) = self.path().split_first()?;
        let mut n = self.sh.snap.roots.get(*first)?;
        for i in rest {
            n = n.children.get(*i)?;
        }
        Some(n)
    }

    /// The five field values of a node.
    pub fn fields(&self) -> [Value; 5] {
        if let Repr::Node {
            fields: Some(f), ..
        } = &self.repr
        {
            return (**f).clone();
        }
        match self.data() {
            Some(n) => {
                let mut f = record_fields(n, &self.sh.classes.pid);
                // A process of another node (a snapshot taken there).
                if let (Value::Nil, Some(pid)) = (&f[0], n.pid) {
                    if pid.node != 0 && !self.sh.snap.node.is_empty() {
                        f[0] = native(crate::interp::actor::prims::node_query::RemotePid {
                            node: Sym::new(&self.sh.snap.node),
                            index: pid.node,
                            number: pid.number,
                            creation: 0,
                            class: self.sh.classes.pid.clone(),
                        });
                    }
                }
                f
            }
            None => default_fields(),
        }
    }

    pub fn field(&self, i: usize) -> Value {
        if let Repr::Node {
            fields: Some(f), ..
        } = &self.repr
        {
            return f[i].clone();
        }
        self.fields()[i].clone()
    }

    /// `state`: the snapshot's, else `#restarting` for kind `#restarting`, else `#running`.
    pub fn state(&self) -> NodeState {
        match self.data() {
            Some(n) => n.state,
            None if is_sym(&self.field(2), "restarting") => NodeState::Restarting,
            None => NodeState::Running,
        }
    }

    pub fn kind_is(&self, names: &[&str]) -> bool {
        names.iter().any(|k| is_sym(&self.field(2), k))
    }

    /// The field value of a tree (`flatNodes`) or a navigation (`nodes`), as stored.
    pub fn list_field(&self) -> Value {
        match &self.repr {
            Repr::Nav { nodes: Some(l) } | Repr::Tree { flat: Some(l) } => l.clone(),
            _ => Value::list(self.list()),
        }
    }

    /// The nodes of a tree (its field), or the root nodes of a navigation (its field); a
    /// hand-built field that is not a List or Array has none.
    pub fn list(&self) -> Vec<Value> {
        match &self.repr {
            Repr::Nav { nodes: Some(l) } | Repr::Tree { flat: Some(l) } => elements(l),
            Repr::Nav { nodes: None } => (0..self.sh.snap.roots.len())
                .map(|i| self.node_at(vec![i]))
                .collect(),
            Repr::Tree { flat: None } => {
                let mut out = Vec::new();
                for (i, r) in self.sh.snap.roots.iter().enumerate() {
                    self.flatten(r, &mut vec![i], &mut out);
                }
                out
            }
            Repr::Node { .. } => Vec::new(),
        }
    }

    fn flatten(&self, n: &SnapNode, path: &mut Vec<usize>, out: &mut Vec<Value>) {
        out.push(self.node_at(path.clone()));
        for (i, c) in n.children.iter().enumerate() {
            path.push(i);
            self.flatten(c, path, out);
            path.pop();
        }
    }

    /// The children of a node (snapshot links), as node values.
    pub fn children(&self) -> Vec<Value> {
        let Some(n) = self.data() else {
            return Vec::new();
        };
        let path = self.path().to_vec();
        (0..n.children.len())
            .map(|i| {
                let mut p = path.clone();
                p.push(i);
                self.node_at(p)
            })
            .collect()
    }

    /// The parent node, if this node has one in its snapshot.
    pub fn parent(&self) -> Option<SnapVal> {
        let p = self.path();
        (p.len() > 1).then(|| {
            self.with_repr(Repr::Node {
                path: p[..p.len() - 1].to_vec(),
                fields: None,
            })
        })
    }

    /// Depth of a node (roots and hand-built nodes are 1).
    pub fn depth(&self) -> usize {
        self.path().len().max(1)
    }

    /// The node as an owned record (fields applied) for JSON and totals of hand-built trees.
    pub fn to_record(&self) -> SnapNode {
        let mut n = match self.data() {
            Some(d) => d.clone(),
            None => SnapNode::new(None, NodeKind::OtpProcess, Value::Nil, self.state()),
        };
        let [pid, name, kind, class, count] = self.fields();
        n.proc = downcast::<PidVal>(&pid).map(|p| p.proc.clone());
        n.pid = n.proc.as_ref().map(|p| p.pid());
        n.registered_name = match name {
            Value::Symbol(s) => Some(s),
            _ => None,
        };
        if let Some(k) = kind_from(&kind) {
            n.kind = k;
        }
        n.class = class;
        n.child_count = match count {
            Value::Int(i) if i >= 0 => i as usize,
            _ => 0,
        };
        n
    }
}

fn is_sym(v: &Value, name: &str) -> bool {
    matches!(v, Value::Symbol(s) if s.as_str() == name)
}

/// The NodeKind a kind Symbol names.
pub fn kind_from(v: &Value) -> Option<NodeKind> {
    let Value::Symbol(s) = v else { return None };
    Some(match s.as_str() {
        "beamtalkSupervisor" => NodeKind::BeamtalkSupervisor,
        "beamtalkActor" => NodeKind::BeamtalkActor,
        "otpSupervisor" => NodeKind::OtpSupervisor,
        "otpProcess" => NodeKind::OtpProcess,
        "restarting" => NodeKind::Restarting,
        _ => return None,
    })
}

/// The elements of a List/Array field value (anything else: none).
pub fn elements(v: &Value) -> Vec<Value> {
    match v {
        Value::List(l) => l.iter().cloned().collect(),
        Value::Array(a) => a.iter().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The hand-built defaults of 7.3.
pub fn default_fields() -> [Value; 5] {
    [
        Value::Nil,
        Value::Nil,
        Value::sym("otpProcess"),
        Value::Nil,
        Value::Int(0),
    ]
}

fn record_fields(n: &SnapNode, pid_class: &ClassRef) -> [Value; 5] {
    [
        n.proc.as_ref().map_or(Value::Nil, |p| {
            native(PidVal {
                proc: p.clone(),
                class: pid_class.clone(),
            })
        }),
        n.registered_name.map_or(Value::Nil, Value::Symbol),
        Value::sym(n.kind.as_str()),
        match &n.class {
            Value::Class(c) => Value::Class(c.clone()),
            _ => Value::Nil,
        },
        Value::Int(n.child_count as i64),
    ]
}

/// printString of a field value without a Ctx (the built-in forms; natives print themselves).
pub fn plain_print(v: &Value) -> String {
    if let Some(s) = print::simple_print(v) {
        return s;
    }
    match v {
        Value::Native(n) => n.0.print_string(),
        Value::Class(c) => c.name.as_str().to_string(),
        Value::List(l) => {
            let items: Vec<String> = l.iter().map(plain_print).collect();
            format!("#({})", items.join(", "))
        }
        _ => "...".to_string(),
    }
}

fn label_of(class: &Value, name: &Value) -> Option<String> {
    match (class, name) {
        (Value::Class(c), _) => Some(c.name.as_str().to_string()),
        (Value::Symbol(s), _) => Some(s.as_str().to_string()),
        (_, Value::Symbol(s)) => Some(s.as_str().to_string()),
        (_, Value::Str(s)) => Some(s.to_string()),
        _ => None,
    }
}

impl SnapVal {
    /// The printString of 7.4.
    pub fn print(&self) -> String {
        match &self.repr {
            Repr::Nav { .. } => {
                let items: Vec<String> = self.list().iter().map(plain_print).collect();
                format!("ProcessNavigation(nodes: #({}))", items.join(", "))
            }
            Repr::Tree { .. } => {
                let nodes = self.list();
                if nodes.is_empty() {
                    return "#SupervisionTree<empty>".to_string();
                }
                let root = nodes
                    .iter()
                    .filter_map(downcast::<SnapVal>)
                    .find(|n| n.is_node() && n.parent().is_none());
                let label = match root {
                    None => "nil".to_string(),
                    Some(r) => {
                        let [_, name, kind, class, _] = r.fields();
                        match (&class, &name) {
                            (Value::Class(c), _) => format!("#{}", c.name.as_str()),
                            (_, Value::Symbol(_)) => plain_print(&name),
                            _ => plain_print(&kind),
                        }
                    }
                };
                format!("#SupervisionTree<{} nodes, root: {label}>", nodes.len())
            }
            Repr::Node { .. } => {
                let [pid, name, kind, class, count] = self.fields();
                let mut s = format!("#SupervisionNode<{} ", plain_print(&kind));
                if let Some(l) = label_of(&class, &name) {
                    s.push_str(&l);
                    s.push(' ');
                }
                if matches!(pid, Value::Nil) {
                    s.push_str("restarting");
                } else {
                    s.push_str(&plain_print(&pid));
                }
                if self.state() == NodeState::Exited {
                    s.push_str(" exited");
                }
                if self.kind_is(&["beamtalkSupervisor", "otpSupervisor"]) {
                    s.push_str(" children: ");
                    s.push_str(&plain_print(&count));
                }
                s.push('>');
                s
            }
        }
    }

    fn eq(&self, o: &SnapVal) -> bool {
        match (&self.repr, &o.repr) {
            (Repr::Nav { nodes: None }, Repr::Nav { nodes: None })
            | (Repr::Tree { flat: None }, Repr::Tree { flat: None })
                if Arc::ptr_eq(&self.sh, &o.sh) =>
            {
                true
            }
            (Repr::Nav { .. }, Repr::Nav { .. }) | (Repr::Tree { .. }, Repr::Tree { .. }) => {
                let (a, b) = (self.list(), o.list());
                self.sh.snap.captured_at == o.sh.snap.captured_at
                    && order::strict_eq(&self.sh.node, &o.sh.node)
                    && a.len() == b.len()
                    && a.iter().zip(&b).all(|(x, y)| order::strict_eq(x, y))
            }
            (Repr::Node { .. }, Repr::Node { .. }) => {
                if Arc::ptr_eq(&self.sh, &o.sh)
                    && self.path() == o.path()
                    && matches!(
                        (&self.repr, &o.repr),
                        (
                            Repr::Node { fields: None, .. },
                            Repr::Node { fields: None, .. }
                        )
                    )
                {
                    return true;
                }
                let (fa, fb) = (self.fields(), o.fields());
                if !fa.iter().zip(&fb).all(|(x, y)| order::strict_eq(x, y)) {
                    return false;
                }
                let node = |v: &SnapVal| {
                    if v.data().is_some() {
                        v.sh.node.clone()
                    } else {
                        Value::Nil
                    }
                };
                if !order::strict_eq(&node(self), &node(o)) {
                    return false;
                }
                match (self.data(), o.data()) {
                    (Some(a), Some(b)) => same_data(a, b),
                    (None, None) => true,
                    (Some(d), None) | (None, Some(d)) => {
                        let h = if self.data().is_none() { self } else { o };
                        let dflt = SnapNode::new(None, NodeKind::OtpProcess, Value::Nil, h.state());
                        same_data(d, &dflt)
                    }
                }
            }
            _ => false,
        }
    }

    fn structural_hash(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        match &self.repr {
            Repr::Nav { .. } | Repr::Tree { .. } => {
                matches!(self.repr, Repr::Nav { .. }).hash(&mut h);
                self.sh.snap.captured_at.hash(&mut h);
                order::hash_value(&self.sh.node).hash(&mut h);
                for v in self.list() {
                    order::hash_value(&v).hash(&mut h);
                }
            }
            Repr::Node { .. } => {
                2u8.hash(&mut h);
                for f in self.fields() {
                    order::hash_value(&f).hash(&mut h);
                }
                match self.data() {
                    Some(d) => data_hash(d, &mut h),
                    None => self.state().as_str().hash(&mut h),
                }
            }
        }
        h.finish()
    }
}

/// Snapshot data of two records equal (not the five fields; children compared in full).
fn same_data(a: &SnapNode, b: &SnapNode) -> bool {
    a.state == b.state
        && a.restart_count == b.restart_count
        && a.started_at == b.started_at
        && a.exited_at == b.exited_at
        && a.uptime_ms == b.uptime_ms
        && a.truncated == b.truncated
        && a.declared_supervisor == b.declared_supervisor
        && sup_eq(a.supervision.as_deref(), b.supervision.as_deref())
        && a.children.len() == b.children.len()
        && a.children
            .iter()
            .zip(&b.children)
            .all(|(x, y)| same_node(x, y))
}

fn sup_eq(a: Option<&SupInfo>, b: Option<&SupInfo>) -> bool {
    a == b
}

/// Two records equal in full (fields and data).
fn same_node(a: &SnapNode, b: &SnapNode) -> bool {
    a.pid == b.pid
        && a.registered_name == b.registered_name
        && a.kind == b.kind
        && a.child_count == b.child_count
        && order::strict_eq(&a.class, &b.class)
        && same_data(a, b)
}

fn data_hash(n: &SnapNode, h: &mut impl Hasher) {
    n.state.as_str().hash(h);
    n.restart_count.hash(h);
    n.started_at.hash(h);
    n.exited_at.hash(h);
    n.uptime_ms.hash(h);
    n.truncated.hash(h);
    n.children.len().hash(h);
    for c in &n.children {
        c.pid.hash(h);
        c.registered_name.map(Sym::as_str).hash(h);
        c.kind.as_str().hash(h);
        c.child_count.hash(h);
        data_hash(c, h);
    }
}

impl NativeObj for SnapVal {
    fn class(&self) -> ClassRef {
        let c = &self.sh.classes;
        match self.repr {
            Repr::Nav { .. } => c.nav.clone(),
            Repr::Tree { .. } => c.tree.clone(),
            Repr::Node { .. } => c.node.clone(),
        }
    }
    fn print_string(&self) -> String {
        self.print()
    }
    fn equals(&self, other: &dyn NativeObj) -> bool {
        other
            .as_any()
            .downcast_ref::<SnapVal>()
            .is_some_and(|o| self.eq(o))
    }
    fn hash_code(&self) -> u64 {
        self.structural_hash()
    }
    fn order_key(&self) -> (u8, Vec<u64>) {
        let tag = match self.repr {
            Repr::Nav { .. } => 0,
            Repr::Tree { .. } => 1,
            Repr::Node { .. } => 2,
        };
        (9, vec![tag, self.structural_hash()])
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
