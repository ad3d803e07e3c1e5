//! Dispatch capture (`SOFTGPU_CAPTURE=DIR`) and replay.
//!
//! Each dispatch a queue runs is written to `DIR/N/` (N counts up from 0,
//! the first free number): `dispatch.json` (kernel, shape, addresses),
//! `code.hsaco` (the code object), `kernarg.bin`, and for every device
//! allocation a pointer argument points into, its contents before
//! (`before/K.bin`) and after (`after/K.bin`) the dispatch. [`Capture::replay`]
//! re-runs the dispatch alone on a fresh device, with the buffers at the
//! addresses they had, and compares the results with `after/`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use softgpu_codeobj::ValueKind;
use softgpu_exec::arena::Arena;
use softgpu_exec::{
    Device, DeviceConfig, DispatchCounters, DispatchDesc, Grid, Kernarg, RawDispatch,
};

use crate::error::{invalid, DataError, Error, Result};
use crate::executable::KernelRef;
use crate::profile::{Fidelity, Profile};
use crate::runtime::Runtime;

/// Format version of `dispatch.json` (2 added the profile and fidelity;
/// version 1 is still read).
pub const CAPTURE_VERSION: u32 = 2;

/// `dispatch.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Capture {
    pub version: u32,
    pub target: String,
    pub kernel: String,
    /// Work-items per dimension and per workgroup.
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub group_segment_bytes: u32,
    pub private_segment_bytes: u32,
    /// Device addresses the kernarg pointers name.
    pub buffers: Vec<CapturedBuffer>,
    /// The device profile the dispatch ran on, its revision, and the
    /// fidelity of the captured results (absent in version 1).
    #[serde(default)]
    pub profile: String,
    #[serde(default)]
    pub profile_revision: u32,
    #[serde(default)]
    pub fidelity: Fidelity,
}

/// One device allocation the dispatch could reach through its arguments.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CapturedBuffer {
    pub address: u64,
    pub size: u64,
}

/// A dispatch being captured: its folder and buffers.
pub struct CaptureToken {
    dir: PathBuf,
    buffers: Vec<CapturedBuffer>,
}

/// How a replay compared with its capture.
#[derive(Clone, Debug)]
pub struct ReplayReport {
    pub kernel: String,
    pub counters: DispatchCounters,
    /// Buffers whose contents after the replay equal the captured ones.
    pub identical: usize,
    /// Buffers that differ: address and the first differing byte offset.
    pub different: Vec<(u64, u64)>,
}

impl Runtime {
    /// Writes the state before a dispatch, when captures are on
    /// ([`crate::Config::capture`]).
    /// A capture that cannot be written is reported and skipped: it must
    /// never change what the program computes.
    pub(crate) fn tracer_capture_begin(
        &self,
        k: &KernelRef,
        raw: &RawDispatch,
        profile: &Profile,
    ) -> Option<CaptureToken> {
        let root = self.capture.as_deref()?;
        match self.capture_before(root, k, raw, profile) {
            Ok(token) => Some(token),
            Err(e) => {
                eprintln!("softgpu: capture of {} failed: {e}", k.kernel().name);
                None
            }
        }
    }

    /// Writes the buffers after the dispatch.
    pub(crate) fn tracer_capture_end(
        &self,
        token: CaptureToken,
        _k: &KernelRef,
        _raw: &RawDispatch,
    ) {
        if let Err(e) = self.write_buffers(&token.dir.join("after"), &token.buffers) {
            eprintln!("softgpu: capture {}: {e}", token.dir.display());
        }
    }

    fn capture_before(
        &self,
        root: &Path,
        k: &KernelRef,
        raw: &RawDispatch,
        profile: &Profile,
    ) -> Result<CaptureToken> {
        let kernel = k.kernel();
        let folder = |source| Error::Output {
            what: "capture folder",
            path: root.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(root).map_err(folder)?;
        let dir = next_free_dir(root).map_err(folder)?;
        let kernarg_len = kernel
            .meta
            .kernarg_segment_size
            .max(kernel.descriptor.kernarg_size) as usize;
        let mut kernarg = vec![0u8; kernarg_len];
        self.arena.read(raw.kernarg, &mut kernarg)?;
        let buffers = self.reachable_buffers(k, &kernarg);
        let capture = Capture {
            version: CAPTURE_VERSION,
            target: k.program.code_object.target.clone(),
            kernel: kernel.name.clone(),
            grid: raw.grid,
            block: raw.block,
            group_segment_bytes: raw.group_segment_bytes,
            private_segment_bytes: raw.private_segment_bytes,
            buffers: buffers.clone(),
            profile: profile.profile_id.clone(),
            profile_revision: profile.revision,
            fidelity: profile.fidelity_of(false),
        };
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(|e| Error::Capture {
                path,
                source: e.into(),
            })
        };
        let json = serde_json::to_vec_pretty(&capture).map_err(|e| Error::Capture {
            path: dir.join("dispatch.json"),
            source: e.into(),
        })?;
        write("dispatch.json", &json)?;
        write("code.hsaco", k.reader.bytes.as_slice())?;
        write("kernarg.bin", &kernarg)?;
        self.write_buffers(&dir.join("before"), &buffers)?;
        Ok(CaptureToken { dir, buffers })
    }

    /// Allocations the kernel's pointer arguments point into.
    fn reachable_buffers(&self, k: &KernelRef, kernarg: &[u8]) -> Vec<CapturedBuffer> {
        let mut out: Vec<CapturedBuffer> = Vec::new();
        for arg in &k.kernel().meta.args {
            if arg.value_kind != ValueKind::GlobalBuffer || arg.size != 8 {
                continue;
            }
            let at = arg.offset as usize;
            let Some(bytes) = kernarg.get(at..at + 8) else {
                continue;
            };
            let ptr = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
            if let Some((address, size)) = self.arena.allocation_of(ptr) {
                if !out.iter().any(|b| b.address == address) {
                    out.push(CapturedBuffer { address, size });
                }
            }
        }
        out
    }

    fn write_buffers(&self, dir: &Path, buffers: &[CapturedBuffer]) -> Result<()> {
        let at = |path: PathBuf| {
            move |e: std::io::Error| Error::Capture {
                path,
                source: e.into(),
            }
        };
        std::fs::create_dir_all(dir).map_err(at(dir.to_path_buf()))?;
        for (k, b) in buffers.iter().enumerate() {
            let mut bytes = vec![0u8; b.size as usize];
            self.arena.read(b.address, &mut bytes)?;
            let path = dir.join(format!("{k}.bin"));
            std::fs::write(&path, bytes).map_err(at(path))?;
        }
        Ok(())
    }
}

/// Creates and returns `root/N` for the first N not yet taken.
fn next_free_dir(root: &Path) -> std::io::Result<PathBuf> {
    for n in 0u64.. {
        let dir = root.join(n.to_string());
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("u64 range exhausted")
}

impl Capture {
    /// Reads `DIR/dispatch.json`.
    pub fn load(dir: &Path) -> Result<Capture> {
        let path = dir.join("dispatch.json");
        let at = |source: DataError| Error::Capture {
            path: path.clone(),
            source,
        };
        let text = softgpu_codeobj::read_file(&path, softgpu_codeobj::MAX_FILE_SIZE)
            .map_err(|e| at(e.into()))?;
        let text = String::from_utf8(text).map_err(|e| at(e.into()))?;
        let capture: Capture = serde_json::from_str(&text).map_err(|e| at(e.into()))?;
        if !(1..=CAPTURE_VERSION).contains(&capture.version) {
            return Err(invalid(format!(
                "{}: capture format {} (this softgpu reads {CAPTURE_VERSION})",
                path.display(),
                capture.version
            )));
        }
        Ok(capture)
    }

    /// Re-runs the captured dispatch alone on a fresh device and compares
    /// the buffers with the captured results.
    pub fn replay(&self, dir: &Path) -> Result<ReplayReport> {
        let read = |name: &str| {
            let path = dir.join(name);
            softgpu_codeobj::read_file(&path, softgpu_codeobj::MAX_FILE_SIZE).map_err(|e| {
                Error::Capture {
                    path,
                    source: e.into(),
                }
            })
        };
        let extent = self
            .buffers
            .iter()
            .map(|b| b.address + b.size)
            .max()
            .unwrap_or(0);
        let arena_bytes =
            (extent.saturating_sub(softgpu_exec::arena::PREFERRED_BASE)).max(1 << 30) + (1 << 30);
        let arena = Arc::new(Arena::new(arena_bytes)?);
        let device = Device::with_arena(&DeviceConfig::new(&self.target)?, arena.clone())?;
        for (k, b) in self.buffers.iter().enumerate() {
            arena
                .alloc_at(b.address, b.size)
                .map_err(|source| Error::CaptureAddress {
                    buffer: k,
                    address: b.address,
                    arena: arena.base(),
                    source,
                })?;
            arena.write(b.address, &read(&format!("before/{k}.bin"))?)?;
        }
        let program = device.load(&read("code.hsaco")?)?;
        let kernel = program
            .code_object
            .kernels
            .iter()
            .find(|k| k.name == self.kernel)
            .ok_or_else(|| {
                invalid(format!(
                    "the captured code object has no kernel {}",
                    self.kernel
                ))
            })?;
        let kernarg = read("kernarg.bin")?;
        let desc = DispatchDesc {
            grid: Grid::WorkItems(self.grid),
            block: self.block,
            kernarg: Kernarg::Bytes(&kernarg),
            group_segment_bytes: Some(self.group_segment_bytes),
            ..DispatchDesc::new(&program, kernel)
        };
        let counters = device.dispatch(&desc).map_err(Error::Device)?.counters;
        let mut report = ReplayReport {
            kernel: self.kernel.clone(),
            counters,
            identical: 0,
            different: Vec::new(),
        };
        for (k, b) in self.buffers.iter().enumerate() {
            let want = read(&format!("after/{k}.bin"))?;
            let mut got = vec![0u8; b.size as usize];
            arena.read(b.address, &mut got)?;
            match got.iter().zip(&want).position(|(a, b)| a != b) {
                None if got.len() == want.len() => report.identical += 1,
                first => report
                    .different
                    .push((b.address, first.unwrap_or(got.len().min(want.len())) as u64)),
            }
        }
        Ok(report)
    }
}
