//! A graph's nodes and edges: listing them, adding and removing
//! dependencies.
//!
//! Listings follow HIP's two-call style: with a null array only the count
//! is written; otherwise up to `*count` entries are, the rest of a longer
//! array is nulled, and `*count` becomes the number written (CLR's
//! behaviour, which `hipGraphGetNodes` also had here before).

use super::nodes::node_array;
use super::{graph_of, owner_of, Graph, Node};
use crate::abi::*;
use crate::error::{get, guard, put, HipError, HipResult};
use crate::state::{hip, lock};

/// Writes `handles` to `out` (room for `*count`), nulling what is left.
///
/// # Safety
/// `out` is null or holds `*count` handles; `count` is an in/out size_t
/// (crate docs, "Outputs").
unsafe fn write_nodes(handles: &[usize], out: *mut hipGraphNode_t, count: *mut usize) -> HipResult {
    if out.is_null() {
        // SAFETY: output of a size (this function's contract).
        return unsafe { put(count, handles.len()) };
    }
    // SAFETY: `count` is an in/out size (this function's contract).
    let room = unsafe { get(count, "count")? };
    // SAFETY: `out` holds `room` handles (this function's contract).
    unsafe { fill(handles, out, room) };
    // SAFETY: as above.
    unsafe { put(count, handles.len().min(room)) }
}

/// Writes the first `room` of `handles` to `out`, nulls past their end.
///
/// # Safety
/// `out` holds `room` handles.
unsafe fn fill(handles: &[usize], out: *mut hipGraphNode_t, room: usize) {
    for i in 0..room {
        let h = handles.get(i).copied().unwrap_or(0);
        // SAFETY: `i < room` (this function's contract).
        unsafe { out.add(i).write_unaligned(h as hipGraphNode_t) };
    }
}

/// The handles of `graph`'s nodes that pass `keep`, in insertion order.
fn graph_nodes(graph: hipGraph_t, keep: impl Fn(&Node) -> bool) -> HipResult<Vec<usize>> {
    let g = graph_of(hip()?, graph)?;
    let g = lock(&g);
    Ok(g.nodes
        .iter()
        .filter(|n| keep(n))
        .map(|n| n.handle)
        .collect())
}

/// Runs `f` on the graph holding `node` and the node's index in it.
fn in_graph<T>(node: hipGraphNode_t, f: impl FnOnce(&Graph, usize) -> T) -> HipResult<T> {
    let hip = hip()?;
    let owner = owner_of(hip, node)?;
    let g = graph_of(hip, owner as hipGraph_t)?;
    let g = lock(&g);
    let index = g
        .nodes
        .iter()
        .position(|n| n.handle == node as usize)
        .ok_or_else(|| HipError::invalid("the node is no longer in its graph"))?;
    Ok(f(&g, index))
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetNodes(
    graph: hipGraph_t,
    nodes: *mut hipGraphNode_t,
    count: *mut usize,
) -> hipError_t {
    guard("hipGraphGetNodes", || {
        let handles = graph_nodes(graph, |_| true)?;
        // SAFETY: output arrays per the crate docs.
        unsafe { write_nodes(&handles, nodes, count) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetRootNodes(
    graph: hipGraph_t,
    nodes: *mut hipGraphNode_t,
    count: *mut usize,
) -> hipError_t {
    guard("hipGraphGetRootNodes", || {
        let handles = graph_nodes(graph, |n| n.deps.is_empty())?;
        // SAFETY: output arrays per the crate docs.
        unsafe { write_nodes(&handles, nodes, count) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeGetDependencies(
    node: hipGraphNode_t,
    deps: *mut hipGraphNode_t,
    count: *mut usize,
) -> hipError_t {
    guard("hipGraphNodeGetDependencies", || {
        let handles = in_graph(node, |g, i| g.nodes[i].deps.clone())?;
        // SAFETY: output arrays per the crate docs.
        unsafe { write_nodes(&handles, deps, count) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphNodeGetDependentNodes(
    node: hipGraphNode_t,
    dependents: *mut hipGraphNode_t,
    count: *mut usize,
) -> hipError_t {
    guard("hipGraphNodeGetDependentNodes", || {
        let handles = in_graph(node, |g, i| {
            g.dependents()[i]
                .iter()
                .map(|&j| g.nodes[j].handle)
                .collect::<Vec<_>>()
        })?;
        // SAFETY: output arrays per the crate docs.
        unsafe { write_nodes(&handles, dependents, count) }
    })
}

/// Every edge `(from, to)` of `graph`: for each node in insertion order,
/// its dependencies in the order they were added.
fn edges(graph: hipGraph_t) -> HipResult<Vec<(usize, usize)>> {
    let g = graph_of(hip()?, graph)?;
    let g = lock(&g);
    Ok(g.nodes
        .iter()
        .flat_map(|n| n.deps.iter().map(move |&d| (d, n.handle)))
        .collect())
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphGetEdges(
    graph: hipGraph_t,
    from: *mut hipGraphNode_t,
    to: *mut hipGraphNode_t,
    count: *mut usize,
) -> hipError_t {
    guard("hipGraphGetEdges", || {
        let all = edges(graph)?;
        if count.is_null() || from.is_null() != to.is_null() {
            return Err(HipError::invalid(
                "the count is null, or only one of the two edge arrays is",
            ));
        }
        let (sources, targets): (Vec<usize>, Vec<usize>) = all.into_iter().unzip();
        if from.is_null() {
            // SAFETY: output of a size (crate docs), checked non-null.
            return unsafe { put(count, sources.len()) };
        }
        // SAFETY: `count` is an in/out size and `from` and `to` each hold
        // `*count` handles (crate docs).
        unsafe {
            let room = get(count, "count")?;
            fill(&sources, from, room);
            fill(&targets, to, room);
            put(count, sources.len().min(room))?;
        }
        Ok(())
    })
}

/// Checks the pairs `from[i] -> to[i]`: two distinct live nodes of
/// `graph`.
///
/// # Safety
/// `from` and `to` are null or hold `count` handles (crate docs).
unsafe fn node_pairs(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    count: usize,
) -> HipResult<Vec<(usize, usize)>> {
    let hip = hip()?;
    graph_of(hip, graph)?;
    // SAFETY: both hold `count` handles (this function's contract).
    let (a, b) = unsafe { (node_array(from, count)?, node_array(to, count)?) };
    let pairs: Vec<(usize, usize)> = a.into_iter().zip(b).collect();
    for &(x, y) in &pairs {
        let ours = owner_of(hip, x as hipGraphNode_t)? == graph as usize
            && owner_of(hip, y as hipGraphNode_t)? == graph as usize;
        if !ours || x == y {
            return Err(HipError::invalid(
                "an edge joins a node to itself or to a node of another graph",
            ));
        }
    }
    Ok(pairs)
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphAddDependencies(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    count: usize,
) -> hipError_t {
    guard("hipGraphAddDependencies", || {
        // SAFETY: both arrays hold `count` handles (crate docs).
        let pairs = unsafe { node_pairs(graph, from, to, count)? };
        let g = graph_of(hip()?, graph)?;
        let mut g = lock(&g);
        // CLR adds the edges one by one, refusing one that exists.
        for (x, y) in pairs {
            let node = g
                .find_mut(y)
                .ok_or_else(|| HipError::invalid("a node is no longer in its graph"))?;
            if node.deps.contains(&x) {
                return Err(HipError::invalid("the edge exists already"));
            }
            node.deps.push(x);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphRemoveDependencies(
    graph: hipGraph_t,
    from: *const hipGraphNode_t,
    to: *const hipGraphNode_t,
    count: usize,
) -> hipError_t {
    guard("hipGraphRemoveDependencies", || {
        // SAFETY: both arrays hold `count` handles (crate docs).
        let pairs = unsafe { node_pairs(graph, from, to, count)? };
        let g = graph_of(hip()?, graph)?;
        let mut g = lock(&g);
        for (x, y) in pairs {
            let node = g
                .find_mut(y)
                .ok_or_else(|| HipError::invalid("a node is no longer in its graph"))?;
            let before = node.deps.len();
            node.deps.retain(|&d| d != x);
            if node.deps.len() == before {
                return Err(HipError::invalid("no such edge to remove"));
            }
        }
        Ok(())
    })
}

symver!("graph_edges");
