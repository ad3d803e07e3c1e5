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
//! let graph = stream.graph().unwrap();
//! drop(stream);
//! let _exec = graph.finish();
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use softgpu_runtime::signal::{Condition, Order, Signal, WaitHint};

use crate::buffer::View;
use crate::constants::Constants;
use crate::error::{Error, Result};
use crate::kernel::{Args, Kernel};
use crate::lane::MAX_QUEUES;
use crate::stream::{run_host_side, Dim3, Op, Pattern, PreparedDispatch, Stream};

static GRAPH_IDS: AtomicU64 = AtomicU64::new(1);

/// A recorded operation, branded with the graph that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    graph: u64,
    index: usize,
}

/// What a node does when replayed.
enum Work {
    /// A fill, copy or join: a host operation made afresh each replay.
    Host(Op),
    /// A dispatch whose packet and kernarg segment were built at recording.
    /// The segment is never written again, so every replay (even two at
    /// once) reads the same one.
    Dispatch(PreparedDispatch),
}

/// A graph being recorded on a stream.
pub struct Graph<'s> {
    stream: &'s Stream,
    id: u64,
    work: Vec<Work>,
    deps: Vec<Vec<usize>>,
}

impl<'s> Graph<'s> {
    pub(crate) fn new(stream: &'s Stream) -> Graph<'s> {
        Graph {
            stream,
            id: GRAPH_IDS.fetch_add(1, Ordering::Relaxed),
            work: Vec::new(),
            deps: Vec::new(),
        }
    }

    /// Records a fill of `dst` with the byte `pattern` after the nodes in
    /// `after`.
    pub fn fill<'a>(
        &mut self,
        after: &[Node],
        dst: impl Into<View<'a>>,
        pattern: u8,
    ) -> Result<Node> {
        self.fill_pattern(after, dst, pattern)
    }

    /// Records a fill with a repeated pattern (see
    /// [`Stream::fill_pattern`]) after the nodes in `after`.
    pub fn fill_pattern<'a>(
        &mut self,
        after: &[Node],
        dst: impl Into<View<'a>>,
        pattern: impl Into<Pattern>,
    ) -> Result<Node> {
        let op = Op::fill(dst.into(), pattern.into())?;
        self.add(Work::Host(op), after)
    }

    /// Records a copy from `src` to `dst` (destination first) after the
    /// nodes in `after`.
    pub fn copy<'a, 'b>(
        &mut self,
        after: &[Node],
        dst: impl Into<View<'a>>,
        src: impl Into<View<'b>>,
    ) -> Result<Node> {
        let op = Op::copy(dst.into(), src.into())?;
        self.add(Work::Host(op), after)
    }

    /// Records a dispatch in hrx's form (see [`Stream::dispatch`]) after
    /// the nodes in `after`; bindings, constants and shape are checked now.
    pub fn dispatch(
        &mut self,
        after: &[Node],
        kernel: &Kernel,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        constants: &Constants,
        bindings: &[View<'_>],
    ) -> Result<Node> {
        let args = crate::constants::args_of(kernel.info(), constants, bindings)?;
        self.dispatch_args(after, kernel, grid, block, &args)
    }

    /// Records a dispatch with typed arguments after the nodes in `after`;
    /// its arguments and shape are checked now.
    pub fn dispatch_args(
        &mut self,
        after: &[Node],
        kernel: &Kernel,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
        args: &Args,
    ) -> Result<Node> {
        self.check_deps(after)?;
        let prepared = self
            .stream
            .prepare_dispatch(kernel, grid.into().0, block.into().0, args)?;
        self.add(Work::Dispatch(prepared), after)
    }

    /// Records a host function after the nodes in `after`: each replay
    /// runs it on the host in its turn; an error it returns fails the
    /// replay like a kernel fault.
    pub fn host_fn(&mut self, after: &[Node], f: crate::HostFn) -> Result<Node> {
        self.add(Work::Host(Op::Host(f)), after)
    }

    /// A node that only joins `after`, for later nodes to depend on.
    pub fn join(&mut self, after: &[Node]) -> Result<Node> {
        self.add(Work::Host(Op::Join), after)
    }

    /// Ends the recording: an owned, replayable graph.
    pub fn finish(self) -> Result<GraphExec> {
        Ok(GraphExec {
            plan: Plan::new(&self.deps, MAX_QUEUES),
            work: self.work,
            gpu: self.stream.device().inner.agent.clone(),
            replays: Vec::new(),
        })
    }

    /// `after` as node indices of this graph, without repeats.
    fn check_deps(&self, after: &[Node]) -> Result<Vec<usize>> {
        let mut deps = Vec::with_capacity(after.len());
        for node in after {
            if node.graph != self.id || node.index >= self.work.len() {
                return Err(Error::Invalid(
                    "a dependency is a node of another graph".into(),
                ));
            }
            if !deps.contains(&node.index) {
                deps.push(node.index);
            }
        }
        Ok(deps)
    }

    fn add(&mut self, work: Work, after: &[Node]) -> Result<Node> {
        let deps = self.check_deps(after)?;
        self.work.push(work);
        self.deps.push(deps);
        Ok(Node {
            graph: self.id,
            index: self.work.len() - 1,
        })
    }
}

/// Where each node runs, decided once when the recording finishes.
///
/// Nodes go to queues as chains: a node continues the queue of a
/// dependency that is that queue's latest node, and otherwise starts a new
/// queue while there are fewer than the limit. Queue order is recording
/// order, and dependencies are always earlier nodes, so a queue's own order
/// satisfies dependencies within it; a dependency on another queue becomes
/// a barrier on a signal that node completes. Waits already implied by an
/// earlier wait on the same queue are left out.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    /// Queues used; queue 0 is the stream's own.
    queues: usize,
    steps: Vec<Step>,
}

#[derive(Debug, PartialEq, Eq)]
struct Step {
    queue: usize,
    /// Nodes on other queues to wait for first.
    waits: Vec<usize>,
    /// Whether a later node on another queue waits for this one.
    signals: bool,
}

impl Plan {
    fn new(deps: &[Vec<usize>], max_queues: usize) -> Plan {
        let mut steps: Vec<Step> = Vec::with_capacity(deps.len());
        // Per queue: its latest node and length; per node: its position on
        // its queue.
        let mut latest: Vec<usize> = Vec::new();
        let mut length: Vec<usize> = Vec::new();
        let mut position: Vec<usize> = Vec::with_capacity(deps.len());
        // waited[q][r]: the furthest position on queue r that queue q has
        // already waited for, plus one.
        let mut waited = vec![vec![0usize; max_queues]; max_queues];
        for (i, d) in deps.iter().enumerate() {
            let queue = d
                .iter()
                .map(|&j| steps[j].queue)
                .find(|&q| d.contains(&latest[q]))
                .or_else(|| (latest.len() < max_queues).then_some(latest.len()))
                .unwrap_or_else(|| d.first().map_or(i % max_queues, |&j| steps[j].queue));
            if queue == latest.len() {
                latest.push(i);
                length.push(0);
            }
            // Latest first, so one wait covers the earlier nodes of its queue.
            let mut newest_first = d.clone();
            newest_first.sort_unstable_by(|a, b| b.cmp(a));
            let mut waits = Vec::new();
            for j in newest_first {
                let r = steps[j].queue;
                if r != queue && position[j] >= waited[queue][r] {
                    waited[queue][r] = position[j] + 1;
                    waits.push(j);
                }
            }
            for &j in &waits {
                steps[j].signals = true;
            }
            position.push(length[queue]);
            length[queue] += 1;
            latest[queue] = i;
            steps.push(Step {
                queue,
                waits,
                signals: false,
            });
        }
        Plan {
            queues: latest.len().max(1),
            steps,
        }
    }
}

/// A finished graph, replayed with [`Stream::launch`]. Dropping it waits
/// for its replays, which may still use what the graph holds.
pub struct GraphExec {
    work: Vec<Work>,
    plan: Plan,
    /// The GPU it was recorded for (of any handle or instance).
    gpu: Arc<softgpu_runtime::agent::Agent>,
    /// Per replay not known to be over: the signals its queues complete
    /// last (or set to -1 if they stopped first).
    replays: Vec<Vec<Arc<Signal>>>,
}

impl GraphExec {
    /// Nodes in the graph.
    pub fn len(&self) -> usize {
        self.work.len()
    }

    /// Whether the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.work.is_empty()
    }

    /// How many device queues a replay spreads the graph over (1 when
    /// every node depends on the one before).
    pub fn concurrency(&self) -> usize {
        self.plan.queues
    }

    pub(crate) fn launch_on(&mut self, stream: &Stream) -> Result<()> {
        if !Arc::ptr_eq(&stream.device().inner.agent, &self.gpu) {
            return Err(Error::Invalid(
                "the graph was recorded on another device".into(),
            ));
        }
        self.replays.retain(|ends| !ends.iter().all(|s| settled(s)));
        let lane = stream.lane()?;
        // Other queues start once the stream's earlier work is done.
        let start = match self.plan.queues {
            1 => None,
            _ => Some(lane.signal_point(0)?),
        };
        let mut started = vec![false; self.plan.queues];
        let mut done: Vec<Option<Arc<Signal>>> = vec![None; self.work.len()];
        for (i, (step, work)) in self.plan.steps.iter().zip(&self.work).enumerate() {
            let q = step.queue;
            let mut deps: Vec<Arc<Signal>> =
                step.waits.iter().filter_map(|&j| done[j].clone()).collect();
            if let (false, Some(start)) = (std::mem::replace(&mut started[q], true), &start) {
                deps.push(start.clone());
            }
            if !deps.is_empty() {
                lane.wait_for(q, &deps)?;
            }
            match work {
                Work::Dispatch(d) => {
                    lane.publish_quietly(q, d.packet)?;
                    d.drain_printf(&lane, q)?;
                }
                Work::Host(op) => run_host_side(&lane, q, op)?,
            }
            if step.signals {
                done[i] = Some(lane.signal_point(q)?);
            }
        }
        // Later work of the stream waits for every branch. These last
        // packets also ring each queue's doorbell for the dispatches
        // published quietly before them.
        let mut ends = Vec::with_capacity(self.plan.queues);
        for q in (1..self.plan.queues).filter(|&q| started[q]) {
            ends.push(lane.signal_point(q)?);
        }
        lane.wait_for(0, &ends)?;
        ends.push(lane.signal_point(0)?);
        self.replays.push(ends);
        Ok(())
    }
}

/// Whether a replay's end signal will not change again.
fn settled(signal: &Signal) -> bool {
    signal.load(Order::Acquire) < 1
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        for signal in self.replays.iter().flatten() {
            while !settled(signal) {
                signal.wait(Condition::Lt, 1, None, WaitHint::Blocked, Order::Acquire);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queues(plan: &Plan) -> Vec<usize> {
        plan.steps.iter().map(|s| s.queue).collect()
    }

    #[test]
    fn a_chain_stays_on_one_queue() {
        let plan = Plan::new(&[vec![], vec![0], vec![1], vec![2]], 4);
        assert_eq!(plan.queues, 1);
        assert_eq!(queues(&plan), [0, 0, 0, 0]);
        assert!(plan.steps.iter().all(|s| s.waits.is_empty() && !s.signals));
    }

    #[test]
    fn independent_branches_get_queues_and_the_join_waits_for_them() {
        // 0 and 1 independent, 2 after 0, 3 after 1, 4 joins 2 and 3.
        let plan = Plan::new(&[vec![], vec![], vec![0], vec![1], vec![2, 3]], 4);
        assert_eq!(queues(&plan), [0, 1, 0, 1, 0]);
        assert_eq!(plan.steps[4].waits, [3]);
        assert_eq!(plan.queues, 2);
        assert!(plan.steps[3].signals);
        assert!(!plan.steps[2].signals);
    }

    #[test]
    fn a_fork_continues_one_branch_and_starts_the_other() {
        let plan = Plan::new(&[vec![], vec![0], vec![0], vec![1, 2]], 4);
        assert_eq!(queues(&plan), [0, 0, 1, 0]);
        assert_eq!(plan.steps[2].waits, [0]);
        assert_eq!(plan.steps[3].waits, [2]);
    }

    #[test]
    fn queues_are_capped_and_redundant_waits_dropped() {
        let deps: Vec<Vec<usize>> = (0..6)
            .map(|_| vec![])
            .chain([vec![0, 1, 2, 3, 4, 5]])
            .collect();
        let plan = Plan::new(&deps, 2);
        assert_eq!(plan.queues, 2);
        assert_eq!(queues(&plan), [0, 1, 0, 1, 0, 1, 0]);
        // Node 6 follows node 4 on queue 0 and needs only the latest node
        // of queue 1.
        assert_eq!(plan.steps[6].waits, [5]);
    }
}
