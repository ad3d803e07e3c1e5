//! Instances: a runtime of GPUs configured in code.

use std::sync::{Arc, Mutex, Weak};

use softgpu_runtime::agent::{Agent, PoolKind};
use softgpu_runtime::{Config, Runtime};

use crate::device::{Device, DeviceInner, Target};
use crate::error::{Error, Result};
use crate::DispatchStatistics;

/// A set of GPUs with their own memory, queues and settings, built from a
/// [`Config`]. Instances are independent: a program may hold several (a
/// gfx1100 and a gfx1151 side by side, two thread counts), and nothing
/// of one is visible to another. Cheap to clone; devices, streams and
/// buffers keep their instance alive, and it stops once the last of them
/// is dropped.
///
/// ```
/// use softgpu::{Config, Instance, Profile};
///
/// let mut config = Config::new();
/// config
///     .devices(vec![Profile::built_in("gfx1100")?, Profile::built_in("gfx1151")?])?
///     .settings_mut()
///     .threads(2)?;
/// let instance = Instance::new(&config)?;
/// let (rdna3, strix) = (instance.device(0)?, instance.device(1)?);
/// assert_eq!((rdna3.target().as_str(), strix.target().as_str()), ("gfx1100", "gfx1151"));
/// # Ok::<(), softgpu::Error>(())
/// ```
#[derive(Clone)]
pub struct Instance {
    pub(crate) inner: Arc<InstanceInner>,
}

pub(crate) struct InstanceInner {
    pub rt: Arc<Runtime>,
    /// Whether this is the process-wide runtime the HSA C API shares.
    global: bool,
}

impl Drop for InstanceInner {
    fn drop(&mut self) {
        if self.global {
            // Balances the `Runtime::init` of `Instance::global`.
            let _ = Runtime::shut_down();
        } else {
            self.rt.stop();
        }
    }
}

/// The instance [`Device::open`] uses while any of its devices lives.
static DEFAULT: Mutex<Weak<InstanceInner>> = Mutex::new(Weak::new());

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let targets: Vec<&str> = self
            .inner
            .rt
            .gpus()
            .map(|a| a.profile.name.as_str())
            .collect();
        write!(f, "Instance({})", targets.join(", "))
    }
}

impl Instance {
    /// A new instance as `config` describes it.
    pub fn new(config: &Config) -> Result<Instance> {
        let rt = Runtime::new(config)?;
        Ok(Instance {
            inner: Arc::new(InstanceInner { rt, global: false }),
        })
    }

    /// The process-wide runtime the HSA C API serves (what the C
    /// libraries built on this crate use, so HIP and HSA calls of one
    /// process see the same GPUs and memory). `config` builds it if no one
    /// has it initialised yet; otherwise it is shared as it is.
    pub fn global(config: impl FnOnce() -> softgpu_runtime::Result<Config>) -> Result<Instance> {
        let rt = Runtime::init(config)?;
        Ok(Instance {
            inner: Arc::new(InstanceInner { rt, global: true }),
        })
    }

    /// The instance of [`Device::open`]: one gfx1151 with the default
    /// settings, made on first use and kept while any of its devices
    /// lives.
    pub fn shared_default() -> Result<Instance> {
        let mut slot = DEFAULT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(inner) = slot.upgrade() {
            return Ok(Instance { inner });
        }
        let instance = Instance::new(&Config::default())?;
        *slot = Arc::downgrade(&instance.inner);
        Ok(instance)
    }

    /// The trace events the instance's ring holds ([`Config::trace_ring`]),
    /// oldest first, each the JSON object a line of the trace file holds
    /// (`kind`: `dispatch`, `packet`, `api`, `transfer`; `ts`; the kind's
    /// fields, see `softgpu_runtime::trace`). Empty when the ring is off.
    pub fn trace_snapshot(&self) -> Vec<serde_json::Value> {
        self.inner.rt.tracer.snapshot()
    }

    /// The statistics of the latest dispatches on the instance's GPUs,
    /// oldest first ([`Config::dispatch_statistics`] says how many are
    /// kept; empty when off): each dispatch's counts, its occupancy on the
    /// real part and its estimated time there, labelled with the profile
    /// and the fidelity of the figures.
    pub fn dispatch_statistics(&self) -> Vec<DispatchStatistics> {
        self.inner.rt.statistics.snapshot()
    }

    /// How many GPUs the instance has.
    pub fn device_count(&self) -> usize {
        self.inner.rt.gpus().count()
    }

    /// GPU `index` (0 is the first).
    pub fn device(&self, index: usize) -> Result<Device> {
        let rt = &self.inner.rt;
        let agent = rt.gpus().nth(index).cloned().ok_or(Error::NoDevice {
            index: index as i64,
            count: self.device_count(),
        })?;
        let pool = |a: &Agent, kind: PoolKind| {
            a.pools
                .iter()
                .copied()
                .find(|p| rt.pool(*p).is_ok_and(|p| p.kind == kind))
                .unwrap_or(0)
        };
        let cpu = rt.agents[0].clone();
        let inner = DeviceInner {
            agent_handle: rt.agent_handles[agent.index],
            index,
            target: Target(agent.profile.name.clone()),
            device_pool: pool(&agent, PoolKind::CoarseDevice),
            system_pool: pool(&cpu, PoolKind::FineSystem),
            kernarg_pool: pool(&cpu, PoolKind::Kernarg),
            spare_kernargs: Mutex::new(Vec::new()),
            agent,
            instance: self.inner.clone(),
        };
        Ok(Device {
            inner: Arc::new(inner),
        })
    }
}
