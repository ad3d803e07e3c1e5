//! Graphs: stream capture and explicit graphs, instantiated and replayed.
//!
//! A graph is a list of nodes, each with the parameters HIP gave it
//! ([`Params`]) and the nodes it depends on. Capture turns every item a
//! capturing stream receives into a node depending on the stream's last
//! ones ([`capture`]); the explicit API builds nodes with given
//! dependencies ([`nodes`], [`edges`]); kernel arguments and memset values
//! are copied when the node is made, as HIP does.
//!
//! A node handle is checked like every HIP handle: it names an entry of
//! the node table, which says which graph holds the node, and the graph
//! finds it by handle. A forged, destroyed or other-kind handle is
//! `hipErrorInvalidValue`, as in CLR (whose `isNodeValid` check fails).
//!
//! Instantiation ([`exec`]) copies the graph, so later changes to the
//! graph do not reach the instance; updates of the instance change its
//! copy and only its next launch. The copy is flattened (child graphs
//! embedded), ordered topologically (rejecting cycles) and recorded as a
//! softgpu graph ([`softgpu::Graph`]: kernels as dispatch nodes, copies,
//! fills and host functions as host-function nodes), whose replay runs
//! independent branches on separate device queues and is one step of the
//! stream's order. A graph with event nodes or captured graph launches,
//! which a softgpu graph cannot hold, is replayed node by node in that
//! order.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::abi::*;
use crate::error::{guard, put, HipError, HipResult};
use crate::state::{hip, lock, Hip};
use crate::stream::{HipEvent, HostCall, Work};

pub mod capture;
pub mod edges;
pub mod exec;
pub mod nodes;
pub mod params;

pub use capture::Capture;
pub use exec::GraphExec;
use params::{KernelNode, Memset, Transfer};

/// `hipErrorGraphExecUpdateFailure` (HIP 5.2.3's `hipError_t`).
pub const HIP_ERROR_GRAPH_EXEC_UPDATE_FAILURE: hipError_t = 910;

/// `hipGraphNodeType` values (HIP 5.2.3). CLR reports every memcpy node,
/// 1D and symbol ones included, as `hipGraphNodeTypeMemcpy`.
pub mod kind {
    pub const KERNEL: i32 = 1;
    pub const MEMCPY: i32 = 2;
    pub const MEMSET: i32 = 3;
    pub const HOST: i32 = 4;
    pub const GRAPH: i32 = 5;
    pub const EMPTY: i32 = 6;
    pub const WAIT_EVENT: i32 = 7;
    pub const EVENT_RECORD: i32 = 8;
}

/// Node identities, kept by a clone so `hipGraphNodeFindInClone` can pair
/// a node with its copy.
static NODE_IDS: AtomicU64 = AtomicU64::new(1);

/// An event a node records or waits for, with the handle it was given by
/// (for reading back).
#[derive(Clone)]
pub struct EventRef {
    pub handle: usize,
    pub event: Arc<HipEvent>,
}

/// A child graph: owned by its node (CLR clones the graph given to
/// `hipGraphAddChildGraphNode`). `handle` names it in the graph table, so
/// `hipGraphChildGraphNodeGetGraph` can return it; 0 in an instance's
/// private copy.
#[derive(Clone)]
pub struct Child {
    pub handle: usize,
    pub graph: Arc<Mutex<Graph>>,
}

/// What a node does, with the parameters HIP set.
#[derive(Clone)]
pub enum Params {
    Kernel(Arc<KernelNode>),
    Memcpy(Transfer),
    Memset(Memset),
    Host(HostCall),
    Child(Child),
    Empty,
    Wait(EventRef),
    Record(EventRef),
    /// Work a stream capture recorded that has no HIP parameters to read
    /// back (captured launches, copies and fills, callbacks, graph
    /// launches), with the node type it reports.
    Captured {
        kind: i32,
        work: Work,
    },
}

impl Params {
    /// The node's `hipGraphNodeType`.
    pub fn kind(&self) -> i32 {
        match self {
            Params::Kernel(_) => kind::KERNEL,
            Params::Memcpy(_) => kind::MEMCPY,
            Params::Memset(_) => kind::MEMSET,
            Params::Host(_) => kind::HOST,
            Params::Child(_) => kind::GRAPH,
            Params::Empty => kind::EMPTY,
            Params::Wait(_) => kind::WAIT_EVENT,
            Params::Record(_) => kind::EVENT_RECORD,
            Params::Captured { kind, .. } => *kind,
        }
    }

    /// The work one replay of the node does (a child graph is flattened
    /// by [`Graph::flatten`] instead).
    fn work(&self) -> HipResult<Work> {
        Ok(match self {
            Params::Kernel(k) => Work::Launch(k.launch.clone()),
            Params::Memcpy(c) => Work::Copy(Arc::new(c.rows()?)),
            Params::Memset(m) => m.work(),
            Params::Host(h) => Work::Host(*h),
            Params::Child(_) | Params::Empty => Work::Nothing,
            Params::Wait(e) => Work::Wait(e.event.clone()),
            Params::Record(e) => Work::Record(e.event.clone()),
            Params::Captured { work, .. } => work.clone(),
        })
    }
}

/// One node: its handle, identity, dependencies (node handles of the same
/// graph) and parameters.
#[derive(Clone)]
pub struct Node {
    pub handle: usize,
    pub id: u64,
    pub deps: Vec<usize>,
    pub params: Params,
}

impl Node {
    /// A new node with a fresh handle and identity, registered as a node
    /// of `graph`.
    pub fn register(hip: &Hip, graph: usize, deps: Vec<usize>, params: Params) -> Node {
        Node {
            handle: hip.nodes.insert(NodeRef { graph }),
            id: NODE_IDS.fetch_add(1, Ordering::Relaxed),
            deps,
            params,
        }
    }
}

/// A graph: nodes in the order they were added.
#[derive(Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    /// The graph this one is a `hipGraphClone` of.
    pub original: Option<usize>,
}

/// What the node table holds for a node handle: the graph holding it.
#[derive(Clone, Copy)]
pub struct NodeRef {
    pub graph: usize,
}

/// The graph behind a handle; null, forged and destroyed handles are
/// `hipErrorInvalidValue`, as CLR's `isGraphValid` check returns.
pub fn graph_of(hip: &Hip, graph: hipGraph_t) -> HipResult<Arc<Mutex<Graph>>> {
    if graph.is_null() {
        return Err(HipError::invalid("the graph is null"));
    }
    hip.graphs
        .get(graph as usize)
        .map_err(|e| HipError::invalid(e.message))
}

/// The graph handle holding node `node`; null, forged and destroyed
/// handles are `hipErrorInvalidValue` (CLR's `isNodeValid`).
pub fn owner_of(hip: &Hip, node: hipGraphNode_t) -> HipResult<usize> {
    if node.is_null() {
        return Err(HipError::invalid("the graph node is null"));
    }
    hip.nodes
        .get(node as usize)
        .map(|r| r.graph)
        .map_err(|e| HipError::invalid(e.message))
}

/// Runs `f` on node `node` in its graph, under the graph's lock.
pub fn with_node<T>(
    node: hipGraphNode_t,
    f: impl FnOnce(&mut Node) -> HipResult<T>,
) -> HipResult<T> {
    let hip = hip()?;
    let owner = owner_of(hip, node)?;
    let graph = graph_of(hip, owner as hipGraph_t)?;
    let mut g = lock(&graph);
    let n = g
        .find_mut(node as usize)
        .ok_or_else(|| HipError::invalid(format!("{node:p} is no longer in its graph")))?;
    f(n)
}

/// The error for a node of the wrong kind.
pub fn wrong_kind(node: &Node, want: &str) -> HipError {
    HipError::invalid(format!(
        "node {:#x} (type {}) is not a node of kind {want}",
        node.handle,
        node.params.kind()
    ))
}

impl Graph {
    pub fn find(&self, handle: usize) -> Option<&Node> {
        self.nodes.iter().find(|n| n.handle == handle)
    }

    pub fn find_mut(&mut self, handle: usize) -> Option<&mut Node> {
        self.nodes.iter_mut().find(|n| n.handle == handle)
    }

    fn index_of(&self, handle: usize) -> Option<usize> {
        self.nodes.iter().position(|n| n.handle == handle)
    }

    /// Per node, the indices of the nodes depending on it.
    pub fn dependents(&self) -> Vec<Vec<usize>> {
        let mut dependents = vec![Vec::new(); self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            for d in node.deps.iter().filter_map(|&h| self.index_of(h)) {
                dependents[d].push(i);
            }
        }
        dependents
    }

    /// Node indices in a dependency order (Kahn's algorithm, ties in
    /// insertion order); a cycle is an error.
    pub fn order(&self) -> HipResult<Vec<usize>> {
        let n = self.nodes.len();
        let mut pending: Vec<usize> = self.nodes.iter().map(|node| node.deps.len()).collect();
        let dependents = self.dependents();
        let mut ready: Vec<usize> = (0..n).filter(|&i| pending[i] == 0).rev().collect();
        let mut order = Vec::with_capacity(n);
        while let Some(i) = ready.pop() {
            order.push(i);
            for &j in dependents[i].iter().rev() {
                pending[j] -= 1;
                if pending[j] == 0 {
                    ready.push(j);
                }
            }
        }
        if order.len() != n {
            return Err(HipError::invalid("the graph's dependencies form a cycle"));
        }
        Ok(order)
    }

    /// An unregistered copy with the same handles and identities, child
    /// graphs copied too (an instance's private graph).
    pub fn snapshot(&self) -> Graph {
        let nodes = self
            .nodes
            .iter()
            .map(|n| Node {
                params: match &n.params {
                    Params::Child(c) => Params::Child(Child {
                        handle: 0,
                        graph: Arc::new(Mutex::new(lock(&c.graph).snapshot())),
                    }),
                    p => p.clone(),
                },
                ..n.clone()
            })
            .collect();
        Graph {
            nodes,
            original: self.original,
        }
    }

    /// A copy registered as graph `handle`: new node handles, the same
    /// identities, child graphs registered copies too (`hipGraphClone`).
    pub fn clone_into(&self, hip: &Hip, handle: usize) -> Graph {
        let mut renamed = std::collections::HashMap::new();
        let mut nodes: Vec<Node> = self
            .nodes
            .iter()
            .map(|n| {
                let params = match &n.params {
                    Params::Child(c) => Params::Child(register_copy(hip, &lock(&c.graph))),
                    p => p.clone(),
                };
                let copy = Node {
                    handle: hip.nodes.insert(NodeRef { graph: handle }),
                    id: n.id,
                    deps: n.deps.clone(),
                    params,
                };
                renamed.insert(n.handle, copy.handle);
                copy
            })
            .collect();
        for n in &mut nodes {
            // Every dependency is a node of the graph (adding and
            // destroying nodes keep it so), hence renamed.
            n.deps = n
                .deps
                .iter()
                .filter_map(|d| renamed.get(d).copied())
                .collect();
        }
        Graph {
            nodes,
            original: None,
        }
    }

    /// Appends the graph's work to `steps` after the steps `after`, child
    /// graphs inlined; returns the steps that end it (those of its leaf
    /// nodes). Steps only depend on earlier steps.
    fn flatten(&self, steps: &mut Vec<Step>, after: &[usize]) -> HipResult<Vec<usize>> {
        let mut ends: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for i in self.order()? {
            let node = &self.nodes[i];
            let mut before: Vec<usize> = if node.deps.is_empty() {
                after.to_vec()
            } else {
                let deps = node.deps.iter().filter_map(|&h| self.index_of(h));
                deps.flat_map(|d| ends[d].clone()).collect()
            };
            before.dedup();
            ends[i] = match &node.params {
                Params::Child(c) => lock(&c.graph).flatten(steps, &before)?,
                _ => Vec::new(),
            };
            if ends[i].is_empty() {
                steps.push(Step {
                    work: node.params.work()?,
                    deps: before,
                });
                ends[i] = vec![steps.len() - 1];
            }
        }
        let dependents = self.dependents();
        Ok((0..self.nodes.len())
            .filter(|&i| dependents[i].is_empty())
            .flat_map(|i| ends[i].clone())
            .collect())
    }
}

/// A registered copy of `graph` (a child graph's own graph).
fn register_copy(hip: &Hip, graph: &Graph) -> Child {
    let shared = Arc::new(Mutex::new(Graph::default()));
    let handle = hip.graphs.insert(shared.clone());
    let copy = graph.clone_into(hip, handle);
    *lock(&shared) = copy;
    Child {
        handle,
        graph: shared,
    }
}

/// One item of a flattened graph and the earlier items it waits for.
pub struct Step {
    pub work: Work,
    pub deps: Vec<usize>,
}

/// Removes the handles of `graph`'s nodes, and its child graphs with
/// theirs, from the tables (the graph is gone).
pub fn unregister(hip: &Hip, graph: &Graph) {
    for node in &graph.nodes {
        unregister_node(hip, node);
    }
}

/// Removes a node's handle, and its child graph's, from the tables.
pub fn unregister_node(hip: &Hip, node: &Node) {
    let _ = hip.nodes.remove(node.handle);
    if let Params::Child(c) = &node.params {
        let _ = hip.graphs.remove(c.handle);
        unregister(hip, &lock(&c.graph));
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphCreate(graph: *mut hipGraph_t, flags: u32) -> hipError_t {
    guard("hipGraphCreate", || {
        if flags != 0 {
            return Err(HipError::invalid("flags must be 0"));
        }
        let handle = hip()?.graphs.insert(Arc::new(Mutex::new(Graph::default())));
        // SAFETY: output of a graph handle (crate docs).
        unsafe { put(graph, handle as hipGraph_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphDestroy(graph: hipGraph_t) -> hipError_t {
    guard("hipGraphDestroy", || {
        let hip = hip()?;
        let g = graph_of(hip, graph)?;
        hip.graphs.remove(graph as usize)?;
        unregister(hip, &lock(&g));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeGetType(node: hipGraphNode_t, kind: *mut i32) -> hipError_t {
    guard("hipGraphNodeGetType", || {
        let k = with_node(node, |n| Ok(n.params.kind()))?;
        // SAFETY: output of an enum (crate docs).
        unsafe { put(kind, k) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphDestroyNode(node: hipGraphNode_t) -> hipError_t {
    guard("hipGraphDestroyNode", || {
        let hip = hip()?;
        let owner = owner_of(hip, node)?;
        let graph = graph_of(hip, owner as hipGraph_t)?;
        let mut g = lock(&graph);
        let index = g
            .index_of(node as usize)
            .ok_or_else(|| HipError::invalid("the node is no longer in its graph"))?;
        // Its edges go with it (CLR's node destructor unlinks both sides).
        let removed = g.nodes.remove(index);
        for n in &mut g.nodes {
            n.deps.retain(|&d| d != removed.handle);
        }
        unregister_node(hip, &removed);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphClone(clone: *mut hipGraph_t, original: hipGraph_t) -> hipError_t {
    guard("hipGraphClone", || {
        let hip = hip()?;
        let g = graph_of(hip, original)?;
        if clone.is_null() {
            return Err(HipError::invalid("the output graph pointer is null"));
        }
        let shared = Arc::new(Mutex::new(Graph::default()));
        let handle = hip.graphs.insert(shared.clone());
        let mut copy = lock(&g).clone_into(hip, handle);
        copy.original = Some(original as usize);
        *lock(&shared) = copy;
        // SAFETY: output of a graph handle (crate docs), checked non-null.
        unsafe { put(clone, handle as hipGraph_t) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeFindInClone(
    found: *mut hipGraphNode_t,
    original: hipGraphNode_t,
    clone: hipGraph_t,
) -> hipError_t {
    guard("hipGraphNodeFindInClone", || {
        let hip = hip()?;
        let g = graph_of(hip, clone)?;
        let owner = owner_of(hip, original)?;
        let id = {
            let source = graph_of(hip, owner as hipGraph_t)?;
            let source = lock(&source);
            source.find(original as usize).map(|n| n.id)
        };
        let g = lock(&g);
        if g.original != Some(owner) {
            return Err(HipError::invalid(
                "the graph is not a clone of the node's graph",
            ));
        }
        let copy = id
            .and_then(|id| g.nodes.iter().find(|n| n.id == id))
            .ok_or_else(|| HipError::invalid("the node has no copy in the clone"))?;
        // SAFETY: output of a node handle (crate docs).
        unsafe { put(found, copy.handle as hipGraphNode_t) }
    })
}

symver!("graph");
