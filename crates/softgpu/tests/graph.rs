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
    stream.fill(&acc, 1.0f32).unwrap();
    let mut graph = stream.graph();
    let fill = graph.fill(&a, 3.0f32, &[]).unwrap();
    let triple = Args::new().view(&a).value(3.0f32);
    let scaled = graph
        .dispatch(&scale, 1, 64, &triple, &[fill, fill])
        .unwrap();
    let twice = Args::new().view(&acc).value(2.0f32);
    let doubled = graph.dispatch(&scale, 1, 64, &twice, &[]).unwrap();
    let both = graph.join(&[scaled, doubled, scaled]).unwrap();
    graph.copy(&a, &b, &[both]).unwrap();
    let mut exec = graph.finish();
    assert_eq!(exec.len(), 5);
    for _ in 0..3 {
        stream.launch(&mut exec).unwrap();
    }
    assert_eq!(stream.read_blocking::<f32>(&b).unwrap(), vec![9.0; 64]);
    assert_eq!(stream.read_blocking::<f32>(&acc).unwrap(), vec![8.0; 64]);
}

#[test]
fn foreign_nodes_and_bad_recordings_are_errors() {
    let (_device, stream, module) = common::setup();
    let scale = module.kernel("scale").unwrap();
    let x = stream.allocate(64).unwrap();
    let mut one = stream.graph();
    let mut two = stream.graph();
    let theirs = two.fill(&x, 0u32, &[]).unwrap();
    let err = one.fill(&x, 0u32, &[theirs]).unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    assert!(one.fill(x.slice(0..6), 0u32, &[]).is_err());
    assert!(one.copy(x.slice(0..8), x.slice(0..4), &[]).is_err());
    let wrong = Args::new().view(&x);
    assert!(matches!(
        one.dispatch(&scale, 1, 16, &wrong, &[]),
        Err(Error::ArgumentCount { .. })
    ));
    let exec = one.finish();
    assert!(exec.is_empty());
}
