//! The process-wide runtime: reference-counted init and shutdown, and the
//! tables every handle is looked up in.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};

use softgpu_exec::arena::Arena;
use softgpu_exec::Device;

use crate::agent::{Agent, AgentKind, Isa, Pool, PoolKind};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::executable::{CodeObjectReader, Executable, KernelRef, Symbol};
use crate::handle::Handles;
use crate::memory::Allocation;
use crate::profile::Profile;
use crate::queue::Queue;
use crate::signal::{AsyncHandlers, Signal};
use crate::trace::Tracer;

/// The runtime while at least one client has it initialised.
static GLOBAL: RwLock<Option<(Arc<Runtime>, usize)>> = RwLock::new(None);

/// All runtime state.
pub struct Runtime {
    /// Device memory shared by every agent; device addresses are host
    /// addresses.
    pub arena: Arc<Arena>,
    /// Agents in reporting order: the CPU agent, then the GPUs.
    pub agents: Vec<Arc<Agent>>,
    /// The handle of each agent, by index.
    pub agent_handles: Vec<u64>,
    agent_table: Handles<Agent>,
    pub pools: Handles<Pool>,
    pub isas: Handles<Isa>,
    pub signals: Handles<Signal>,
    pub readers: Handles<CodeObjectReader>,
    pub executables: Handles<Executable>,
    pub symbols: Handles<Symbol>,
    /// Live queues by the address of their `hsa_queue_t`.
    pub queues: Mutex<HashMap<u64, Arc<Queue>>>,
    /// Kernels of frozen executables by kernel object (descriptor address).
    pub kernels: RwLock<HashMap<u64, KernelRef>>,
    /// Live allocations and registered host ranges by start address.
    pub(crate) allocations: Mutex<BTreeMap<u64, Allocation>>,
    pub async_handlers: AsyncHandlers,
    /// `SOFTGPU_TRACE` / `SOFTGPU_CAPTURE` output, when asked for.
    pub tracer: Tracer,
    /// The latest dispatches' statistics, when kept.
    pub statistics: crate::statistics::Statistics,
    /// Where every error and leak goes in a checked run.
    pub reporter: crate::report::Reporter,
    /// Each GPU's hostcall buffer and listener, started on first use.
    pub hostcalls: crate::hostcall::Hostcalls,
    /// Each GPU's device malloc heap, made on first use.
    pub device_heaps: crate::devmem::DeviceHeaps,
    /// The interprocess signals this process made.
    pub(crate) ipc_signals: crate::ipc_signal::IpcSignals,
    /// The process-wide CU masks of `HSA_CU_MASK`, by GPU index.
    pub cu_masks: BTreeMap<u32, crate::cu_mask::Mask>,
    /// `HSA_CU_MASK_SKIP_INIT=1`: new queues start with every unit on,
    /// whatever `HSA_CU_MASK` says (until a mask is set on them).
    pub cu_mask_skip_init: bool,
    /// The folder dispatch captures go to, if any.
    pub capture: Option<std::path::PathBuf>,
    /// Whether this is the process-wide runtime of [`Runtime::init`]
    /// (whose shutdown also ends the waits of the HSA C API).
    global: bool,
}

impl Runtime {
    /// Initialises the process-wide runtime, the one the HSA C API
    /// serves, from the configuration `config` makes (called only when
    /// no client has it initialised), or counts one more client of it.
    pub fn init(config: impl FnOnce() -> Result<Config>) -> Result<Arc<Runtime>> {
        let mut global = GLOBAL.write().unwrap_or_else(|e| e.into_inner());
        if let Some((rt, count)) = global.as_mut() {
            if *count >= crate::error::MAX_CLIENTS {
                return Err(Error::RefcountOverflow);
            }
            *count += 1;
            return Ok(rt.clone());
        }
        let mut rt = Runtime::build(&config()?)?;
        rt.global = true;
        if rt.reporter.checks_leaks() {
            leaks_at_exit();
        }
        let rt = Arc::new(rt);
        *global = Some((rt.clone(), 1));
        Ok(rt)
    }

    /// A runtime of its own, independent of the process-wide one and of
    /// any other: its own GPUs, memory, queues and handles. Call
    /// [`Runtime::stop`] when done with it, before dropping it.
    pub fn new(config: &Config) -> Result<Arc<Runtime>> {
        Ok(Arc::new(Runtime::build(config)?))
    }

    /// Drops one client; the last one stops queues and frees everything.
    pub fn shut_down() -> Result<()> {
        let mut global = GLOBAL.write().unwrap_or_else(|e| e.into_inner());
        let (rt, count) = global.as_mut().ok_or(Error::NotInitialized)?;
        *count -= 1;
        if *count > 0 {
            return Ok(());
        }
        let rt = rt.clone();
        *global = None;
        drop(global);
        rt.stop();
        Ok(())
    }

    /// Agent `agent`'s hostcall buffer (its listener started on first
    /// use), marked in use until the returned guard is dropped.
    pub fn hostcall(&self, agent: usize) -> Result<crate::hostcall::HostcallUse> {
        let heap = || self.device_heap(agent);
        Ok(self.hostcalls.get(&self.arena, agent, heap)?.take_use())
    }

    /// Agent `agent`'s device malloc heap (made on first use; its state
    /// buffer only when a kernel needs it).
    pub fn device_heap(&self, agent: usize) -> Arc<crate::devmem::DeviceHeap> {
        self.device_heaps.get(&self.arena, agent)
    }

    /// The initialised runtime.
    pub fn get() -> Result<Arc<Runtime>> {
        let global = GLOBAL.read().unwrap_or_else(|e| e.into_inner());
        global
            .as_ref()
            .map(|(rt, _)| rt.clone())
            .ok_or(Error::NotInitialized)
    }

    fn build(config: &Config) -> Result<Runtime> {
        let profiles: Vec<Arc<Profile>> = config.devices.iter().cloned().map(Arc::new).collect();
        // The CPU agent, system and kernarg memory follow the first GPU.
        let profile = profiles[0].clone();
        let m = &profile.memory;
        let device_bytes: u64 = profiles.iter().map(|p| p.memory.device_bytes).sum();
        let arena_bytes = device_bytes + m.system_bytes + m.kernarg_bytes;
        let arena = Arc::new(Arena::with_options(arena_bytes, config.arena)?);
        let mut rt = Runtime {
            arena,
            agents: Vec::new(),
            agent_handles: Vec::new(),
            agent_table: Handles::new("agent", 1),
            pools: Handles::new("memory pool", 2),
            isas: Handles::new("ISA", 3),
            signals: Handles::new("signal", 4),
            readers: Handles::new("code object reader", 5),
            executables: Handles::new("executable", 6),
            symbols: Handles::new("executable symbol", 7),
            queues: Mutex::new(HashMap::new()),
            kernels: RwLock::new(HashMap::new()),
            allocations: Mutex::new(BTreeMap::new()),
            async_handlers: AsyncHandlers::new(),
            tracer: Tracer::new(config.trace.as_deref(), config.trace_ring)?,
            statistics: crate::statistics::Statistics::new(config.dispatch_statistics),
            reporter: crate::report::Reporter::new(config.report.as_ref())?,
            hostcalls: Default::default(),
            device_heaps: Default::default(),
            ipc_signals: Default::default(),
            cu_masks: global_cu_masks(config.cu_mask.as_deref(), &profiles),
            cu_mask_skip_init: config.cu_mask_skip_init,
            capture: config.capture.clone(),
            global: false,
        };
        // The CPU agent's pools in ROCr's order (`CpuAgent::InitRegionList`,
        // amd_cpu_agent.cpp): fine-grained, extended-scope fine-grained,
        // kernarg, coarse-grained, the first, second and last over one
        // heap. ROCr leaves the coarse-grained pool out only when the CPU
        // node itself has GPU cores (pre-2016 APUs); Strix Halo's KFD
        // topology, like a discrete GPU's, has a CPU node without them, so
        // every profile exposes it.
        let system = Pool::new(PoolKind::FineSystem, 0, m.system_bytes);
        let ext_fine = Pool::sharing(PoolKind::ExtFineSystem, &system);
        let coarse = Pool::sharing(PoolKind::CoarseSystem, &system);
        let kernarg = Pool::new(PoolKind::Kernarg, 0, m.kernarg_bytes);
        let cpu_pools = [system, ext_fine, kernarg, coarse]
            .into_iter()
            .map(|p| rt.pools.insert(Arc::new(p)))
            .collect();
        rt.add_agent(Agent {
            index: 0,
            kind: AgentKind::Cpu,
            profile: profile.clone(),
            device: None,
            pools: cpu_pools,
            isa: None,
        });
        for (index, profile) in (1..).zip(&profiles) {
            let m = &profile.memory;
            let device = Device::with_arena(&config.device_config(profile)?, rt.arena.clone())?;
            let pools = vec![
                rt.pools.insert(Arc::new(Pool::new(
                    PoolKind::CoarseDevice,
                    index,
                    m.device_bytes,
                ))),
                rt.pools.insert(Arc::new(Pool::new(
                    PoolKind::Group,
                    index,
                    profile.lds_bytes as u64,
                ))),
            ];
            let isa = rt.isas.insert(Arc::new(Isa {
                name: profile.isa_name(),
                profile: profile.clone(),
            }));
            rt.add_agent(Agent {
                index,
                kind: AgentKind::Gpu,
                profile: profile.clone(),
                device: Some(Arc::new(device)),
                pools,
                isa: Some(isa),
            });
        }
        Ok(rt)
    }

    fn add_agent(&mut self, agent: Agent) {
        let agent = Arc::new(agent);
        self.agent_handles
            .push(self.agent_table.insert(agent.clone()));
        self.agents.push(agent);
    }

    /// The agent behind a handle.
    pub fn agent(&self, handle: u64) -> Result<Arc<Agent>> {
        self.agent_table.get(handle)
    }

    /// The GPU agents.
    pub fn gpus(&self) -> impl Iterator<Item = &Arc<Agent>> {
        self.agents.iter().filter(|a| a.kind == AgentKind::Gpu)
    }

    /// A signal by handle.
    pub fn signal(&self, handle: u64) -> Result<Arc<Signal>> {
        self.signals.get(handle)
    }

    /// Stops every queue's processor and async handlers (the last
    /// shutdown of the process-wide runtime; the owner of one made by
    /// [`Runtime::new`] calls it when done).
    pub fn stop(&self) {
        self.reporter.leaks_at_end(&self.arena);
        let queues: Vec<_> = {
            let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
            q.drain().map(|(_, q)| q).collect()
        };
        for q in queues {
            q.stop();
        }
        self.async_handlers.shutdown();
        self.hostcalls.stop_all();
        self.device_heaps.release_all();
        if self.global {
            // Waits of the HSA C API on signals nothing will set any more.
            crate::signal::end_waits();
        }
        self.tracer.flush();
    }
}

/// Has the process report the leaks of the process-wide runtime at exit,
/// if it is still initialised then (C programs seldom shut HSA down, and a
/// HIP program never does).
fn leaks_at_exit() {
    extern "C" fn report() {
        if let Ok(rt) = Runtime::get() {
            rt.reporter.leaks_at_end(&rt.arena);
        }
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: registers a plain `extern "C"` function with no arguments,
    // as `atexit` requires; it only reads the runtime's tables.
    ONCE.call_once(|| unsafe {
        libc::atexit(report);
    });
}

/// ROCr's process-wide CU masks (`HSA_CU_MASK`'s syntax); a malformed
/// part is named on stderr, and it and what follows are ignored, as ROCr
/// ignores them (silently).
fn global_cu_masks(
    text: Option<&str>,
    gpus: &[Arc<Profile>],
) -> BTreeMap<u32, crate::cu_mask::Mask> {
    let Some(text) = text else {
        return BTreeMap::new();
    };
    let units = gpus.iter().map(|p| p.compute_units).max().unwrap_or(0);
    let (masks, error) = crate::cu_mask::parse_global(text, gpus.len() as u32, units);
    if let Some(error) = error {
        eprintln!("softgpu: {error}");
    }
    masks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_counts_clients_up_to_rocrs_limit() {
        let config = || Ok(Config::default());
        Runtime::init(config).unwrap();
        let set = |n| GLOBAL.write().unwrap().as_mut().unwrap().1 = n;
        set(crate::error::MAX_CLIENTS - 1);
        Runtime::init(config).unwrap();
        assert!(matches!(
            Runtime::init(config),
            Err(Error::RefcountOverflow)
        ));
        set(1);
        Runtime::shut_down().unwrap();
        assert!(matches!(Runtime::shut_down(), Err(Error::NotInitialized)));
    }
}
