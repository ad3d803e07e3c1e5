//! Shared fixture: a runtime with test kernels loaded, and a client's way
//! of writing AQL packets.

#![allow(dead_code)]

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use softgpu_exec::{build_kernarg, Arg};
use softgpu_runtime::agent::PoolKind;
use softgpu_runtime::queue::{packet_type, Queue, QueueSpec};
use softgpu_runtime::signal::{Condition, Order, Signal, WaitHint};
use softgpu_runtime::Runtime;
use softgpu_test_support::bytes::{bytes_of, from_bytes};

const SOURCE: &str = r#"
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, uint n) {
    uint i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
__kernel void wild(__global int* p) {
    *(__global int*)(0x40ul + get_global_id(0) * 4) = 1;
}
"#;

pub fn code_object() -> Vec<u8> {
    softgpu_compiler::Compiler::new("gfx1151")
        .and_then(|c| c.compile(SOURCE, softgpu_compiler::Language::OpenCl))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A runtime with the test kernels loaded and frozen.
pub struct Fixture {
    pub rt: Arc<Runtime>,
    pub gpu: u64,
    pub executable: u64,
}

impl Fixture {
    pub fn new() -> Fixture {
        // The environment over the tests' defaults (SOFTGPU_JIT=verify).
        let rt =
            Runtime::init(|| softgpu_env::config_from(softgpu_test_support::env::var)).unwrap();
        let gpu = rt.agent_handles[1];
        let reader = rt.reader_from_memory(&code_object(), "test").unwrap();
        let executable = rt.create_executable();
        rt.load_code_object(executable, gpu, reader).unwrap();
        rt.freeze(executable).unwrap();
        Fixture {
            rt,
            gpu,
            executable,
        }
    }

    pub fn kernel(&self, name: &str) -> softgpu_runtime::executable::KernelRef {
        let sym = self
            .rt
            .symbol_by_name(self.executable, &format!("{name}.kd"), Some(self.gpu))
            .unwrap();
        match &self.rt.symbols.get(sym).unwrap().kind {
            softgpu_runtime::executable::SymbolKind::Kernel(k) => k.clone(),
            _ => panic!("{name} is not a kernel"),
        }
    }

    pub fn pool(&self, agent: usize, kind: PoolKind) -> u64 {
        *self.rt.agents[agent]
            .pools
            .iter()
            .find(|p| self.rt.pool(**p).unwrap().kind == kind)
            .unwrap()
    }

    pub fn queue(&self, on_error: Option<softgpu_runtime::queue::ErrorCallback>) -> Arc<Queue> {
        self.rt
            .create_queue(
                self.gpu,
                QueueSpec {
                    size: 64,
                    single: true,
                    on_error,
                },
            )
            .unwrap()
    }

    /// Kernargs for `kernel` in the kernarg pool.
    pub fn kernargs(&self, name: &str, grid: u32, block: u32, args: &[Arg]) -> u64 {
        let k = self.kernel(name);
        let bytes = build_kernarg(k.kernel(), [grid, 1, 1], [block, 1, 1], 0, args).unwrap();
        let addr = self
            .rt
            .allocate(self.pool(0, PoolKind::Kernarg), bytes.len() as u64)
            .unwrap();
        self.rt.arena.write(addr, &bytes).unwrap();
        addr
    }

    pub fn dispatch_packet(
        &self,
        name: &str,
        grid: u32,
        block: u32,
        kernarg: u64,
        signal: u64,
    ) -> [u8; 64] {
        let k = self.kernel(name);
        let mut p = [0u8; 64];
        let header = packet_type::KERNEL_DISPATCH as u16 | 1 << 8 | 2 << 9 | 2 << 11;
        p[0..2].copy_from_slice(&header.to_le_bytes());
        p[2..4].copy_from_slice(&1u16.to_le_bytes());
        p[4..6].copy_from_slice(&(block as u16).to_le_bytes());
        p[6..8].copy_from_slice(&1u16.to_le_bytes());
        p[8..10].copy_from_slice(&1u16.to_le_bytes());
        p[12..16].copy_from_slice(&grid.to_le_bytes());
        p[16..20].copy_from_slice(&1u32.to_le_bytes());
        p[20..24].copy_from_slice(&1u32.to_le_bytes());
        p[32..40].copy_from_slice(&k.object().to_le_bytes());
        p[40..48].copy_from_slice(&kernarg.to_le_bytes());
        p[56..64].copy_from_slice(&signal.to_le_bytes());
        p
    }

    pub fn barrier_packet(&self, and: bool, deps: &[u64], signal: u64) -> [u8; 64] {
        let mut p = [0u8; 64];
        let kind = if and {
            packet_type::BARRIER_AND
        } else {
            packet_type::BARRIER_OR
        };
        p[0..2].copy_from_slice(&(kind as u16 | 1 << 8).to_le_bytes());
        for (k, d) in deps.iter().enumerate() {
            p[8 + 8 * k..16 + 8 * k].copy_from_slice(&d.to_le_bytes());
        }
        p[56..64].copy_from_slice(&signal.to_le_bytes());
        p
    }

    /// Publishes a packet as a client does: body first, then the header
    /// word atomically, then the doorbell.
    pub fn submit(&self, queue: &Queue, packet: [u8; 64]) {
        let index = queue.write_index.fetch_add(1, Ordering::AcqRel);
        let slot = queue.ring + (index % queue.size as u64) * 64;
        self.rt.arena.write(slot + 4, &packet[4..]).unwrap();
        let word = u32::from_le_bytes(packet[0..4].try_into().unwrap());
        self.rt.arena.store_u32(slot, word).unwrap();
        queue.doorbell.store(index as i64, Order::Release);
    }

    pub fn signal(&self, value: i64) -> (u64, Arc<Signal>) {
        let s = Arc::new(Signal::new(value));
        (self.rt.signals.insert(s.clone()), s)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.rt.destroy_executable(self.executable);
        let _ = Runtime::shut_down();
    }
}

pub fn wait_zero(s: &Signal) -> i64 {
    s.wait(
        Condition::Eq,
        0,
        Some(Duration::from_secs(60)),
        WaitHint::Blocked,
        Order::Acquire,
    )
}

pub fn floats(bytes: &[u8]) -> Vec<f32> {
    from_bytes(bytes)
}

pub fn upload(f: &Fixture, data: &[f32]) -> u64 {
    let bytes = bytes_of(data);
    let addr =
        f.rt.allocate(f.pool(1, PoolKind::CoarseDevice), bytes.len() as u64)
            .unwrap();
    f.rt.arena.write(addr, &bytes).unwrap();
    addr
}
