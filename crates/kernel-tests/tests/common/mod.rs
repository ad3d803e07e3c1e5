//! Executor-facing helpers shared by the kernel tests.
//!
//! All use of the `softgpu-exec` API goes through here, so an API change is a
//! one-file fix.
#![allow(dead_code)]

use softgpu_exec::{
    Arg, Buffer, ConfigError, Device, DeviceConfig, DispatchCounters, DispatchDesc, DispatchError,
    Launch, Program, Settings,
};
pub use softgpu_kernel_tests::*;

/// A device for one target plus convenience wrappers that panic with the
/// executor's error text.
pub struct Gpu {
    pub dev: Device,
    pub target: String,
}

impl Gpu {
    pub fn new(target: &str) -> Gpu {
        Gpu::with_config(&env_device(target))
    }

    /// A device for `target` with the tests' base settings as `set`
    /// changes them (e.g. `|s| s.threads(1)`).
    pub fn with(
        target: &str,
        set: impl FnOnce(&mut Settings) -> Result<&mut Settings, ConfigError>,
    ) -> Gpu {
        let mut config = env_device(target);
        set(config.settings_mut()).unwrap_or_else(|e| panic!("{target}: {e}"));
        Gpu::with_config(&config)
    }

    pub fn with_config(cfg: &DeviceConfig) -> Gpu {
        let target = cfg.get_target().to_string();
        let dev = Device::new(cfg).unwrap_or_else(|e| panic!("Device::new({target}): {e}"));
        Gpu { dev, target }
    }

    /// Compiles `kernels/FILE` for this device's target and loads it.
    pub fn program(&self, file: &str, flags: &[&str]) -> Program {
        let code = compile_kernel(file, &self.target, flags);
        self.dev
            .load(&code)
            .unwrap_or_else(|e| panic!("loading {file} for {}: {e}", self.target))
    }

    pub fn buf<T>(&self, data: &[T]) -> Buffer
    where
        [T]: ToBytes,
    {
        let bytes = data.to_bytes();
        self.dev
            .alloc_from(&bytes)
            .unwrap_or_else(|e| panic!("alloc_from({} bytes): {e}", bytes.len()))
    }

    pub fn zeros(&self, bytes: usize) -> Buffer {
        self.dev
            .alloc_zeroed(bytes as u64)
            .unwrap_or_else(|e| panic!("alloc_zeroed({bytes}): {e}"))
    }

    pub fn read<T: FromBytes>(&self, b: &Buffer) -> Vec<T> {
        from_bytes(&self.dev.read(b).unwrap_or_else(|e| panic!("read: {e}")))
    }

    /// Dispatches; `grid` is in workgroups.
    pub fn try_run(
        &self,
        prog: &Program,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
        args: &[Arg],
    ) -> Result<DispatchCounters, DispatchError> {
        let launch = Launch {
            grid,
            block,
            dynamic_lds,
        };
        let kernel = prog.kernel(kernel)?;
        let desc = DispatchDesc::launch(prog, kernel, &launch, args);
        Ok(self.dev.dispatch(&desc)?.counters)
    }

    /// Dispatches and panics with the error's Display (fault report) on failure.
    pub fn run(
        &self,
        prog: &Program,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[Arg],
    ) -> DispatchCounters {
        self.run_lds(prog, kernel, grid, block, 0, args)
    }

    pub fn run_lds(
        &self,
        prog: &Program,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
        args: &[Arg],
    ) -> DispatchCounters {
        self.try_run(prog, kernel, grid, block, dynamic_lds, args)
            .unwrap_or_else(|e| panic!("{kernel} on {}: {e}", self.target))
    }

    /// 1D dispatch of `n` work-items in blocks of `block` (partial last block).
    pub fn run1d(
        &self,
        prog: &Program,
        kernel: &str,
        n: usize,
        block: u32,
        args: &[Arg],
    ) -> DispatchCounters {
        self.run(prog, kernel, [blocks(n, block), 1, 1], [block, 1, 1], args)
    }
}

/// Number of blocks of size `b` covering `n`.
pub fn blocks(n: usize, b: u32) -> u32 {
    n.div_ceil(b as usize) as u32
}

/// A buffer argument.
pub fn buf(b: &Buffer) -> Arg {
    Arg::Buffer(*b)
}
