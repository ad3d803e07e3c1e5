//! Graphs: work recorded once with explicit dependencies and replayed many
//! times.
//!
//! Recording checks everything (views, patterns, kernel arguments, launch
//! shapes) up front, so a replay only enqueues. Dependencies can only name
//! nodes that already exist, so a graph is acyclic by construction.
//!
//! A recording borrows its stream, so it cannot outlive it:
//!
//! ```compile_fail
//! let device = softgpu::Device::open(0).unwrap();
//! let stream = device.stream().unwrap();
//! let graph = stream.graph();
//! drop(stream);
//! let _exec = graph.finish();
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use crate::buffer::View;
use crate::error::{Error, Result};
use crate::event::Submission;
use crate::kernel::{Args, Kernel};
use crate::stream::{Dim3, Op, Pattern, Stream};

static GRAPH_IDS: AtomicU64 = AtomicU64::new(1);

/// A recorded operation, branded with the graph that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    graph: u64,
    index: usize,
}

/// A graph being recorded on a stream.
pub struct Graph<'s> {
    stream: &'s Stream,
    id: u64,
    ops: Vec<Op>,
    deps: Vec<Vec<usize>>,
}

impl<'s> Graph<'s> {
    pub(crate) fn new(stream: &'s Stream) -> Graph<'s> {
        Graph {
            stream,
            id: GRAPH_IDS.fetch_add(1, Ordering::Relaxed),
            ops: Vec::new(),
            deps: Vec::new(),
        }
    }

    /// Records a fill after the nodes in `after`.
    pub fn fill<'a>(
        &mut self,
        dst: impl Into<View<'a>>,
        pattern: impl Into<Pattern>,
        after: &[Node],
    ) -> Result<Node> {
        let op = Op::fill(dst.into(), pattern.into())?;
        self.add(op, after)
    }

    /// Records a copy after the nodes in `after`.
    pub fn copy<'a, 'b>(
        &mut self,
        src: impl Into<View<'a>>,
        dst: impl Into<View<'b>>,
        after: &[Node],
    ) -> Result<Node> {
        let op = Op::copy(src.into(), dst.into())?;
        self.add(op, after)
    }

    /// Records a dispatch after the nodes in `after`; its arguments and
    /// shape are checked now.
    pub fn dispatch(
        &mut self,
        kernel: &Kernel,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &Args,
        after: &[Node],
    ) -> Result<Node> {
        let (grid, block) = (grid.into().0, block.into().0);
        self.stream.check_dispatch(kernel, grid, block, args)?;
        let op = Op::Dispatch {
            kernel: kernel.clone(),
            grid,
            block,
            args: args.clone(),
        };
        self.add(op, after)
    }

    /// A node that only joins `after`, for later nodes to depend on.
    pub fn join(&mut self, after: &[Node]) -> Result<Node> {
        self.add(Op::Join, after)
    }

    /// Ends the recording: an owned, replayable graph.
    pub fn finish(self) -> GraphExec {
        GraphExec {
            order: topological(&self.deps),
            ops: self.ops,
            last: None,
        }
    }

    fn add(&mut self, op: Op, after: &[Node]) -> Result<Node> {
        let mut deps = Vec::with_capacity(after.len());
        for node in after {
            if node.graph != self.id || node.index >= self.ops.len() {
                return Err(Error::Invalid(
                    "a dependency is a node of another graph".into(),
                ));
            }
            if !deps.contains(&node.index) {
                deps.push(node.index);
            }
        }
        self.ops.push(op);
        self.deps.push(deps);
        Ok(Node {
            graph: self.id,
            index: self.ops.len() - 1,
        })
    }
}

/// An order in which every node follows its dependencies. Recording order
/// is one already (dependencies are always earlier nodes); kept as a
/// separate step so a concurrent scheduler can replace it.
fn topological(deps: &[Vec<usize>]) -> Vec<usize> {
    debug_assert!(deps
        .iter()
        .enumerate()
        .all(|(i, d)| d.iter().all(|&j| j < i)));
    (0..deps.len()).collect()
}

/// A finished graph, replayed with [`Stream::launch`]. Dropping it waits
/// for its last replay, which may still use what the graph holds.
pub struct GraphExec {
    ops: Vec<Op>,
    order: Vec<usize>,
    last: Option<Submission>,
}

impl GraphExec {
    /// Nodes in the graph.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub(crate) fn launch_on(&mut self, stream: &Stream) -> Result<()> {
        for &i in &self.order {
            stream.run(&self.ops[i])?;
        }
        self.last = Some(stream.submit()?);
        Ok(())
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        if let Some(last) = &self.last {
            let _ = last.wait();
        }
    }
}
