//! Many small workgroups over more worker threads than the host has cores
//! (this test is meant for the 2-core CI host, where 4 and 8 workers
//! oversubscribe it): every work-item's output is right, and no workgroup
//! is lost or run twice. And the default worker count is the host's
//! available parallelism.

mod common;

use common::*;
use softgpu_exec::Arg;
use softgpu_runtime::agent::PoolKind;
use softgpu_runtime::Runtime;
use softgpu_test_support::bytes::from_bytes;

const SOURCE: &str = r#"
__kernel void ids(__global uint* out, __global uint* runs, __global uint* count) {
    uint g = get_global_id(0);
    out[g] = g * 3u + 1u;
    if (get_local_id(0) == 0) atomic_inc(&runs[get_group_id(0)]);
    atomic_inc(count);
}
"#;

const GROUPS: u32 = 4096;
const BLOCK: u32 = 64;

/// A runtime of its own with `threads` workers (`None`: the default), the
/// test kernel loaded.
fn fixture(threads: Option<usize>) -> Fixture {
    let mut config = softgpu_env::config_from(softgpu_test_support::env::var).unwrap();
    if let Some(n) = threads {
        config.settings_mut().threads(n).unwrap();
    }
    let rt = Runtime::new(&config).unwrap();
    let gpu = rt.agent_handles[1];
    let code = softgpu_compiler::Compiler::new("gfx1151")
        .and_then(|c| c.compile(SOURCE, softgpu_compiler::Language::OpenCl))
        .unwrap_or_else(|e| panic!("{e}"));
    let reader = rt.reader_from_memory(&code, "threads").unwrap();
    let executable = rt.create_executable();
    rt.load_code_object(executable, gpu, reader).unwrap();
    rt.freeze(executable).unwrap();
    Fixture {
        rt,
        gpu,
        executable,
    }
}

fn zeroed(f: &Fixture, bytes: u64) -> u64 {
    let addr =
        f.rt.allocate(f.pool(1, PoolKind::CoarseDevice), bytes)
            .unwrap();
    f.rt.arena.write(addr, &vec![0u8; bytes as usize]).unwrap();
    addr
}

fn run_with(threads: usize) {
    let f = fixture(Some(threads));
    assert_eq!(f.rt.agents[1].device().unwrap().threads(), threads);
    let items = GROUPS * BLOCK;
    let out = zeroed(&f, 4 * items as u64);
    let runs = zeroed(&f, 4 * GROUPS as u64);
    let count = zeroed(&f, 4);
    let args = [Arg::Pointer(out), Arg::Pointer(runs), Arg::Pointer(count)];
    let kernarg = f.kernargs("ids", items, BLOCK, &args);
    let queue = f.queue(None);
    let (h, s) = f.signal(1);
    f.submit(&queue, f.dispatch_packet("ids", items, BLOCK, kernarg, h));
    assert_eq!(wait_zero(&s), 0, "the dispatch did not complete");
    let read = |addr: u64, n: u32| -> Vec<u32> {
        let mut bytes = vec![0u8; 4 * n as usize];
        f.rt.arena.read(addr, &mut bytes).unwrap();
        from_bytes(&bytes)
    };
    let got = read(out, items);
    for (g, &v) in got.iter().enumerate() {
        assert_eq!(v, g as u32 * 3 + 1, "{threads} workers: work-item {g}");
    }
    let ran = read(runs, GROUPS);
    for (g, &n) in ran.iter().enumerate() {
        assert_eq!(n, 1, "{threads} workers: workgroup {g} ran {n} times");
    }
    assert_eq!(
        read(count, 1)[0],
        items,
        "{threads} workers: work-items run"
    );
    assert!(queue.failed.lock().unwrap().is_none());
    f.rt.destroy_queue(queue.address).unwrap();
    f.rt.stop();
}

#[test]
fn four_workers_run_every_workgroup_once() {
    run_with(4);
}

#[test]
fn eight_workers_run_every_workgroup_once() {
    run_with(8);
}

#[test]
fn the_default_worker_count_is_the_host_parallelism() {
    let mut config = softgpu_runtime::Config::new();
    assert_eq!(config.settings_mut().get_threads(), None);
    let rt = Runtime::new(&config).unwrap();
    let host = std::thread::available_parallelism().unwrap().get();
    assert_eq!(rt.agents[1].device().unwrap().threads(), host);
    rt.stop();
}
