//! Graphs: record once, replay many times; misuse is an error.

mod common;

use softgpu::{Args, Error};

#[test]
fn a_graph_replays_fill_dispatch_and_copy_in_dependency_order() {
    let (_device, stream, module) = common::setup();
    let scale = module.kernel("scale").unwrap();
    let (a, b, acc) = (
        stream.allocate(4 * 64).unwrap(),
        stream.allocate(4 * 64).unwrap(),
        stream.allocate(4 * 64).unwrap(),
    );
    stream.fill_pattern(&acc, 1.0f32).unwrap();
    let mut graph = stream.graph().unwrap();
    let fill = graph.fill_pattern(&[], &a, 3.0f32).unwrap();
    let triple = Args::new().view(&a).value(3.0f32);
    let scaled = graph
        .dispatch_args(&[fill, fill], &scale, 1, 64, &triple)
        .unwrap();
    let twice = Args::new().view(&acc).value(2.0f32);
    let doubled = graph.dispatch_args(&[], &scale, 1, 64, &twice).unwrap();
    let both = graph.join(&[scaled, doubled, scaled]).unwrap();
    graph.copy(&[both], &b, &a).unwrap();
    let mut exec = graph.finish().unwrap();
    assert_eq!(exec.len(), 5);
    for _ in 0..3 {
        stream.launch(&mut exec).unwrap();
    }
    assert_eq!(stream.read_vec::<f32>(&b).unwrap(), vec![9.0; 64]);
    assert_eq!(stream.read_vec::<f32>(&acc).unwrap(), vec![8.0; 64]);
}

/// A host-function node runs on every replay, after its dependencies and
/// before its dependents; an error it returns fails the replay.
#[test]
fn host_function_nodes_run_in_order_on_every_replay() {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    let (_device, stream, module) = common::setup();
    let scale = module.kernel("scale").unwrap();
    let x = stream.allocate(4 * 64).unwrap();
    stream.fill_pattern(&x, 1.0f32).unwrap();
    let runs = Arc::new(AtomicU32::new(0));
    let seen = runs.clone();
    let mut graph = stream.graph().unwrap();
    let doubled = graph
        .dispatch_args(&[], &scale, 1, 64, &Args::new().view(&x).value(2.0f32))
        .unwrap();
    let counted = graph
        .host_fn(
            &[doubled],
            Arc::new(move || {
                seen.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }),
        )
        .unwrap();
    graph
        .dispatch_args(
            &[counted],
            &scale,
            1,
            64,
            &Args::new().view(&x).value(3.0f32),
        )
        .unwrap();
    let mut exec = graph.finish().unwrap();
    for _ in 0..2 {
        stream.launch(&mut exec).unwrap();
    }
    assert_eq!(stream.read_vec::<f32>(&x).unwrap(), vec![36.0; 64]);
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    let mut failing = stream.graph().unwrap();
    failing
        .host_fn(&[], Arc::new(|| Err("refused".to_string())))
        .unwrap();
    let mut exec = failing.finish().unwrap();
    stream.launch(&mut exec).unwrap();
    let err = stream.synchronize().unwrap_err();
    assert!(err.to_string().contains("refused"), "{err}");
}

#[test]
fn foreign_nodes_and_bad_recordings_are_errors() {
    let (_device, stream, module) = common::setup();
    let scale = module.kernel("scale").unwrap();
    let x = stream.allocate(64).unwrap();
    let mut one = stream.graph().unwrap();
    let mut two = stream.graph().unwrap();
    let theirs = two.fill_pattern(&[], &x, 0u32).unwrap();
    let err = one.fill_pattern(&[theirs], &x, 0u32).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    assert!(one.fill_pattern(&[], x.slice(0, 6), 0u32).is_err());
    assert!(one.copy(&[], x.slice(0, 4), x.slice(0, 8)).is_err());
    let wrong = Args::new().view(&x);
    assert!(matches!(
        one.dispatch_args(&[], &scale, 1, 16, &wrong),
        Err(Error::ArgumentCount { .. })
    ));
    let exec = one.finish().unwrap();
    assert!(exec.is_empty());
}

/// Independent branches run at the same time: the first branch waits for
/// a flag only the second branch sets, which a serial replay could never
/// see (its bounded wait would run out first).
#[test]
fn independent_branches_run_concurrently() {
    let (_device, stream, module) = common::setup();
    let (wait_flag, set_flag) = (
        module.kernel("wait_flag").unwrap(),
        module.kernel("set_flag").unwrap(),
    );
    let (flag, seen, out) = (
        stream.allocate(4).unwrap(),
        stream.allocate(4).unwrap(),
        stream.allocate(4).unwrap(),
    );
    let mut graph = stream.graph().unwrap();
    let reset = graph.fill_pattern(&[], &flag, 0u32).unwrap();
    let clear = graph.fill_pattern(&[reset], &seen, 0u32).unwrap();
    let waits = Args::new().view(&flag).view(&seen).value(20_000_000u32);
    let waiter = graph
        .dispatch_args(&[clear], &wait_flag, 1, 1, &waits)
        .unwrap();
    let setter = graph
        .dispatch_args(&[clear], &set_flag, 1, 1, &Args::new().view(&flag))
        .unwrap();
    let both = graph.join(&[waiter, setter]).unwrap();
    graph.copy(&[both], &out, &seen).unwrap();
    let mut exec = graph.finish().unwrap();
    assert_eq!(exec.concurrency(), 2);
    for replay in 0..3 {
        stream.fill_pattern(&out, 7u32).unwrap();
        stream.launch(&mut exec).unwrap();
        let got: Vec<u32> = stream.read_vec(&out).unwrap();
        assert_eq!(
            got,
            [1],
            "replay {replay}: the waiting branch never saw the flag"
        );
    }
}

/// A fault on one branch fails the replay as a whole: the wait reports the
/// kernel fault itself, the stream then works again, and dropping the graph
/// does not hang on the branch that could not finish.
#[test]
fn a_fault_on_a_branch_is_reported_and_the_stream_recovers() {
    let (_device, stream, module) = common::setup();
    let (wild, scale) = (
        module.kernel("wild").unwrap(),
        module.kernel("scale").unwrap(),
    );
    let x = stream.allocate(4 * 64).unwrap();
    stream.fill_pattern(&x, 1.0f32).unwrap();
    let mut graph = stream.graph().unwrap();
    let fine = graph
        .dispatch_args(&[], &scale, 1, 64, &Args::new().view(&x).value(2.0f32))
        .unwrap();
    let bad = graph
        .dispatch_args(&[], &wild, 1, 64, &Args::new().view(&x))
        .unwrap();
    graph.join(&[fine, bad]).unwrap();
    let mut exec = graph.finish().unwrap();
    assert_eq!(exec.concurrency(), 2);
    stream.launch(&mut exec).unwrap();
    match stream.synchronize() {
        Err(Error::Fault(f)) => assert_eq!(f.kernel(), "wild"),
        other => panic!("expected the wild kernel's fault, got {other:?}"),
    }
    drop(exec);
    stream
        .dispatch_args(&scale, 1, 64, &Args::new().view(&x).value(3.0f32))
        .unwrap();
    assert_eq!(stream.read_vec::<f32>(&x).unwrap(), vec![6.0; 64]);
}

/// A replay longer than a queue's ring (1024 packets) still runs in full:
/// dispatches are published without ringing, so a full ring must wake the
/// processor rather than wait for it.
#[test]
fn a_graph_longer_than_the_ring_replays_in_full() {
    let (_device, stream, module) = common::setup();
    let scale = module.kernel("scale").unwrap();
    let x = stream.allocate(4 * 64).unwrap();
    let flip = Args::new().view(&x).value(-1.0f32);
    let mut graph = stream.graph().unwrap();
    let mut last = graph.fill_pattern(&[], &x, 1.5f32).unwrap();
    for _ in 0..1501 {
        last = graph.dispatch_args(&[last], &scale, 1, 64, &flip).unwrap();
    }
    let mut exec = graph.finish().unwrap();
    assert_eq!(exec.concurrency(), 1);
    stream.launch(&mut exec).unwrap();
    assert_eq!(stream.read_vec::<f32>(&x).unwrap(), vec![-1.5; 64]);
}
