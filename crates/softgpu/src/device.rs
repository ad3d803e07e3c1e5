//! Devices: one GPU agent of the process-wide runtime.

use std::sync::{Arc, Mutex};

use softgpu_runtime::agent::Agent;
use softgpu_runtime::exec::Checks;
use softgpu_runtime::profile::Profile;
use softgpu_runtime::Runtime;

use crate::instance::Instance;

use crate::error::{Error, Result};
use crate::stream::Stream;

/// What a device handle shares with everything made from it. Buffers,
/// modules and streams hold it, so the runtime outlives all of them.
pub(crate) struct DeviceInner {
    pub agent: Arc<Agent>,
    pub agent_handle: u64,
    pub index: usize,
    pub target: Target,
    /// The instance, whose runtime this is: it keeps running while
    /// anything of the device lives.
    pub instance: Arc<crate::instance::InstanceInner>,
    pub device_pool: u64,
    pub system_pool: u64,
    pub kernarg_pool: u64,
    /// Kernarg blocks of [`KERNARG_BLOCK`] bytes whose dispatches have
    /// completed, kept for the next dispatches: allocating each one from
    /// the pool was a large part of a dispatch's host cost.
    pub spare_kernargs: Mutex<Vec<u64>>,
}

/// The kernarg block size that is reused (larger segments are allocated
/// and freed each time).
pub(crate) const KERNARG_BLOCK: u64 = 4096;
/// Spare kernarg blocks kept per device handle.
const SPARE_KERNARGS: usize = 1024;

impl DeviceInner {
    /// The runtime the device belongs to.
    pub fn rt(&self) -> &Arc<Runtime> {
        &self.instance.rt
    }

    /// A kernarg block of at least `bytes`: a spare one when it fits.
    pub fn take_kernarg(&self, bytes: u64) -> Result<u64> {
        if bytes <= KERNARG_BLOCK {
            if let Some(addr) = lock(&self.spare_kernargs).pop() {
                return Ok(addr);
            }
        }
        // Kernels may read their arguments, never write them.
        Ok(self.rt().allocate_with(
            self.kernarg_pool,
            bytes.max(KERNARG_BLOCK),
            softgpu_runtime::exec::Origin::internal("a kernarg segment"),
            softgpu_runtime::exec::Access::ReadOnly,
        )?)
    }

    /// Returns a kernarg block of `bytes` whose dispatch has completed.
    pub fn give_back_kernarg(&self, addr: u64, bytes: u64) {
        let mut spare = lock(&self.spare_kernargs);
        if bytes <= KERNARG_BLOCK && spare.len() < SPARE_KERNARGS {
            spare.push(addr);
        } else {
            drop(spare);
            let _ = self.rt().free(addr);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        for addr in lock(&self.spare_kernargs).drain(..) {
            let _ = self.rt().free(addr);
        }
    }
}

/// A GPU (an executor device behind the runtime). Cheap to clone.
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({} {})", self.inner.index, self.target())
    }
}

impl Device {
    /// Opens GPU `index` of the process's default instance
    /// ([`Instance::shared_default`]: one gfx1151, default settings). A
    /// program that wants other GPUs or settings builds an [`Instance`].
    pub fn open(index: i32) -> Result<Device> {
        let instance = Instance::shared_default()?;
        match usize::try_from(index) {
            Ok(i) => instance.device(i),
            Err(_) => Err(Error::NoDevice {
                index: index.into(),
                count: instance.device_count(),
            }),
        }
    }

    /// Opens GPU `index` only if it is the `expected` processor (e.g.
    /// `gfx1151`), so code objects built for one target are never run on
    /// another by accident.
    pub fn open_for(index: i32, expected: &str) -> Result<Device> {
        let device = Device::open(index)?;
        if device.target() != expected {
            return Err(Error::WrongTarget {
                index: device.index(),
                wanted: expected.into(),
                actual: device.target().to_string(),
            });
        }
        Ok(device)
    }

    /// The processor, e.g. `gfx1151`: the code-object target.
    pub fn target(&self) -> &Target {
        &self.inner.target
    }

    /// Whether buffers can be shared with an NPU (hrx's interop on Strix
    /// Halo). softgpu emulates no NPU, so never.
    pub fn supports_shared_interop(&self) -> Result<bool> {
        Ok(false)
    }

    /// The device profile: compute units, LDS, limits, memory sizes.
    pub fn properties(&self) -> &Profile {
        &self.inner.agent.profile
    }

    /// A new stream (an AQL queue with its own packet processor).
    pub fn stream(&self) -> Result<Stream> {
        Stream::new(self.clone())
    }

    /// Device memory as `(free, total)` bytes: the device pool's capacity
    /// and what is not allocated from it.
    pub fn memory_info(&self) -> Result<(u64, u64)> {
        let pool = self.inner.rt().pool(self.inner.device_pool)?;
        let used = pool.used.load(std::sync::atomic::Ordering::Relaxed);
        Ok((pool.capacity.saturating_sub(used), pool.capacity))
    }

    /// Limits what kernels may hold of device-side `malloc` memory
    /// together to `bytes` (CUDA's `cudaLimitMallocHeapSize`): a `malloc`
    /// that would pass it returns NULL in the kernel. Until it is set the
    /// heap grows as device memory allows, as on ROCm. Like CLR, refuses a
    /// limit of the device's whole memory or more.
    pub fn set_malloc_heap_limit(&self, bytes: u64) -> Result<()> {
        let (_, total) = self.memory_info()?;
        if bytes >= total {
            return Err(Error::Invalid(format!(
                "a device malloc heap limit of {bytes} bytes is not below the device's \
                 {total} bytes of memory"
            )));
        }
        self.inner
            .rt()
            .device_heap(self.inner.index)
            .set_limit(bytes);
        Ok(())
    }

    /// The device malloc heap limit: the one set, else CLR's initial heap
    /// size ([`softgpu_runtime::devmem::DEFAULT_HEAP_LIMIT`]).
    pub fn malloc_heap_limit(&self) -> u64 {
        self.inner.rt().device_heap(self.inner.index).limit()
    }

    /// Bytes of device malloc memory kernels hold now (slabs and blocks
    /// handed to the device allocator and not given back).
    pub fn malloc_heap_in_use(&self) -> u64 {
        self.inner.rt().device_heap(self.inner.index).in_use()
    }

    /// The instance the device belongs to.
    pub fn instance(&self) -> Instance {
        Instance {
            inner: self.inner.instance.clone(),
        }
    }

    /// The device's index among its instance's GPUs.
    pub fn index(&self) -> usize {
        self.inner.index
    }

    /// Turns the opt-in sanitizers (initcheck, racecheck, synccheck) on or
    /// off for this GPU's dispatches that start from now on; the default
    /// is the instance's [`crate::Settings::checks`]. Every handle to this GPU in the
    /// process shares the setting. A sanitizer's finding fails the
    /// dispatch with a [`crate::KernelFault`] whose reason starts with the
    /// check's name.
    pub fn set_checks(&self, checks: Checks) -> Result<()> {
        self.inner.agent.device()?.set_checks(checks);
        Ok(())
    }

    /// The sanitizers on for dispatches that start from now on.
    pub fn checks(&self) -> Result<Checks> {
        Ok(self.inner.agent.device()?.checks())
    }

    /// The kernel compiler for this device's target.
    #[cfg(feature = "compiler")]
    pub fn compiler(&self) -> Result<softgpu_compiler::Compiler> {
        Ok(softgpu_compiler::Compiler::new(self.target())?)
    }
}

/// A processor name such as `gfx1151`: what code objects are built for.
/// Displays as the name and compares equal to it as a string.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target(pub(crate) String);

impl Target {
    /// The name, e.g. `gfx1151`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::ops::Deref for Target {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Target {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Target {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Target {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<Target> for &str {
    fn eq(&self, other: &Target) -> bool {
        *self == other.0
    }
}
