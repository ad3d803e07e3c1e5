//! Modules (loaded code objects), kernels, their metadata and arguments.

use std::sync::Arc;

use softgpu_codeobj::ValueKind;
use softgpu_runtime::executable::{KernelRef, SymbolKind};

use crate::buffer::{BufferInner, View};
use crate::device::{Device, DeviceInner};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// A loaded, frozen executable. Kernels keep it alive, so a queued
/// dispatch never names an unloaded kernel.
pub(crate) struct ModuleInner {
    device: Arc<DeviceInner>,
    executable: u64,
    reader: u64,
}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        let rt = &self.device.rt();
        let _ = rt.destroy_executable(self.executable);
        let _ = rt.readers.remove(self.reader);
    }
}

/// A code object loaded on a device.
pub struct Module {
    inner: Arc<ModuleInner>,
}

impl Module {
    /// Loads a code object from bytes for `device`.
    pub fn load_bytes(device: &Device, bytes: &[u8]) -> Result<Module> {
        let d = &device.inner;
        let reader = d.rt().reader_from_memory(bytes, "softgpu::Module")?;
        let executable = d.rt().create_executable();
        // Built before loading so that a failure below cleans up.
        let inner = Arc::new(ModuleInner {
            device: d.clone(),
            executable,
            reader,
        });
        d.rt()
            .load_code_object(executable, d.agent_handle, reader)?;
        d.rt().freeze(executable)?;
        Ok(Module { inner })
    }

    /// Loads a code object file for `device`.
    pub fn load(device: &Device, path: impl AsRef<std::path::Path>) -> Result<Module> {
        let path = path.as_ref();
        let bytes = softgpu_codeobj::read_file(path, softgpu_codeobj::MAX_FILE_SIZE)?;
        Module::load_bytes(device, &bytes)
    }

    /// The kernels' names.
    pub fn kernel_names(&self) -> Vec<String> {
        let rt = &self.inner.device.rt();
        let symbols = rt
            .executable_symbols(self.inner.executable, None)
            .unwrap_or_default();
        symbols
            .iter()
            .filter_map(|h| rt.symbols.get(*h).ok())
            .filter_map(|s| match &s.kind {
                SymbolKind::Kernel(k) => Some(k.kernel().name.clone()),
                _ => None,
            })
            .collect()
    }

    /// The device address and size of the global variable `name` (a
    /// `__device__` or `__constant__` variable, OpenCL program-scope
    /// data), if the code object defines one.
    pub fn global(&self, name: &str) -> Option<(u64, u64)> {
        let m = &self.inner;
        let rt = &m.device.rt();
        let handle = rt
            .symbol_by_name(m.executable, name, Some(m.device.agent_handle))
            .ok()?;
        match rt.symbols.get(handle).ok()?.kind {
            SymbolKind::Variable { address, size, .. } => Some((address, size)),
            SymbolKind::Kernel(_) => None,
        }
    }

    /// The kernel named `name` (its source name; a trailing `.kd` is
    /// accepted too).
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let name = name.strip_suffix(".kd").unwrap_or(name);
        let m = &self.inner;
        let rt = &m.device.rt();
        let found = rt
            .symbol_by_name(
                m.executable,
                &format!("{name}.kd"),
                Some(m.device.agent_handle),
            )
            .ok()
            .and_then(|h| rt.symbols.get(h).ok());
        match found.map(|s| s.kind.clone()) {
            Some(SymbolKind::Kernel(kref)) => Ok(Kernel {
                info: Arc::new(ExportInfo::of(&kref)),
                kref,
                module: m.clone(),
            }),
            _ => Err(Error::NoSuchKernel {
                name: name.into(),
                available: softgpu_codeobj::nearest_names(
                    self.kernel_names().iter().map(String::as_str),
                    name,
                ),
            }),
        }
    }
}

/// A compiled code object and the kernel to load from it: what a compiler
/// hands [`crate::Stream::load_artifact`] without going through a file.
#[derive(Clone, Debug)]
pub struct Artifact {
    code: Vec<u8>,
    symbol: String,
}

impl Artifact {
    /// The code object `code` (an ELF or offload bundle) and the name of
    /// its kernel `symbol`.
    pub fn new(code: Vec<u8>, symbol: impl Into<String>) -> Artifact {
        Artifact {
            code,
            symbol: symbol.into(),
        }
    }

    /// The code object's bytes.
    pub fn code(&self) -> &[u8] {
        &self.code
    }

    /// The kernel's name.
    pub fn symbol(&self) -> &str {
        &self.symbol
    }
}

/// What kind of value a kernel argument takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgKind {
    /// A global-memory pointer: pass a [`View`].
    Pointer,
    /// A value: pass a [`Scalar`].
    Value,
    /// A kind this API cannot pass (local-memory pointers, images,
    /// samplers, pipes, queues).
    Unsupported,
}

/// One explicit kernel argument, from the code object's metadata.
#[derive(Clone, Debug)]
pub struct ArgInfo {
    /// Source name, when the compiler recorded one.
    pub name: Option<String>,
    /// Source type, when recorded.
    pub type_name: Option<String>,
    /// How it is passed.
    pub kind: ArgKind,
    /// Bytes in the kernarg segment.
    pub size: u32,
    /// Offset in the kernarg segment.
    pub offset: u32,
}

impl ArgInfo {
    /// How errors name the argument.
    pub fn label(&self) -> String {
        match (&self.type_name, &self.name) {
            (Some(t), Some(n)) => format!("{t} {n}"),
            (None, Some(n)) => n.clone(),
            (Some(t), None) => t.clone(),
            (None, None) => format!("{} bytes at offset {}", self.size, self.offset),
        }
    }
}

/// A kernel's metadata (hrx's name for it: what a code object exports).
#[derive(Clone, Debug)]
pub struct ExportInfo {
    /// The kernel's source name (its symbol without `.kd`).
    pub name: String,
    /// Pointer arguments: the bindings [`crate::Stream::dispatch`] takes.
    pub binding_count: usize,
    /// Bytes of the by-value arguments packed in argument order, each at
    /// its own size with no padding: what a [`crate::Constants`] for
    /// [`crate::Stream::dispatch`] must hold.
    pub constant_byte_length: usize,
    /// The workgroup size the kernel was compiled for
    /// (`reqd_work_group_size`, `__attribute__((reqd_work_group_size))`);
    /// 0 in a dimension means any.
    pub workgroup_size: [u32; 3],
    /// Explicit arguments in order (hidden ones are filled by the API).
    pub args: Vec<ArgInfo>,
    /// Static LDS bytes per workgroup.
    pub lds_bytes: u32,
    /// Scratch bytes per work-item.
    pub scratch_bytes: u32,
    /// Largest workgroup the kernel was compiled for.
    pub max_workgroup_size: u32,
    /// `reqd_work_group_size`, when the source fixed it.
    pub required_workgroup_size: Option<[u32; 3]>,
    /// `work_group_size_hint`, when the source gave one.
    pub workgroup_size_hint: Option<[u32; 3]>,
    /// Lanes per wave (32 or 64).
    pub wave_size: u32,
    /// Vector registers per work-item.
    pub vgprs: u32,
    /// Scalar registers per wave.
    pub sgprs: u32,
    /// Whether metadata describes the arguments. A kernel found by its
    /// descriptor symbol alone (no metadata note names it) takes its
    /// kernarg segment as one by-value argument of the descriptor's size.
    pub described: bool,
}

impl ExportInfo {
    /// Same as the field: hrx reads these through methods.
    pub fn binding_count(&self) -> usize {
        self.binding_count
    }

    /// Same as the field.
    pub fn constant_byte_length(&self) -> usize {
        self.constant_byte_length
    }

    /// Same as the field.
    pub fn workgroup_size(&self) -> [u32; 3] {
        self.workgroup_size
    }

    fn of(k: &KernelRef) -> ExportInfo {
        let kernel = k.kernel();
        let meta = &kernel.meta;
        let args = meta
            .args
            .iter()
            .filter(|a| !a.value_kind.is_hidden())
            .map(|a| ArgInfo {
                name: a.name.clone(),
                type_name: a.type_name.clone(),
                kind: match a.value_kind {
                    ValueKind::GlobalBuffer => ArgKind::Pointer,
                    ValueKind::ByValue => ArgKind::Value,
                    _ => ArgKind::Unsupported,
                },
                size: a.size,
                offset: a.offset,
            })
            .collect();
        let args: Vec<ArgInfo> = args;
        let of_kind = |kind| args.iter().filter(move |a| a.kind == kind);
        ExportInfo {
            name: kernel.name.clone(),
            binding_count: of_kind(ArgKind::Pointer).count(),
            constant_byte_length: of_kind(ArgKind::Value).map(|a| a.size as usize).sum(),
            workgroup_size: meta.reqd_workgroup_size.unwrap_or([0; 3]),
            args,
            lds_bytes: meta
                .group_segment_fixed_size
                .max(kernel.descriptor.group_segment_fixed_size),
            scratch_bytes: meta
                .private_segment_fixed_size
                .max(kernel.descriptor.private_segment_fixed_size),
            max_workgroup_size: meta.max_flat_workgroup_size,
            required_workgroup_size: meta.reqd_workgroup_size,
            workgroup_size_hint: meta.workgroup_size_hint,
            wave_size: meta.wavefront_size,
            vgprs: meta.vgpr_count,
            sgprs: meta.sgpr_count,
            described: meta.described,
        }
    }
}

/// A kernel of a loaded module. Cheap to clone; keeps its module loaded.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) kref: KernelRef,
    pub(crate) info: Arc<ExportInfo>,
    pub(crate) module: Arc<ModuleInner>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kernel({})", self.info.name)
    }
}

impl Kernel {
    /// The kernel's metadata.
    pub fn info(&self) -> &ExportInfo {
        &self.info
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The kernel's symbol as [`crate::Stream::load`] finds it: its
    /// source name (the descriptor symbol is this plus `.kd`).
    pub fn symbol(&self) -> &str {
        &self.info.name
    }

    pub(crate) fn device(&self) -> &Arc<DeviceInner> {
        &self.module.device
    }
}

/// One argument as given.
#[derive(Clone)]
pub(crate) enum ArgValue {
    View {
        buffer: Arc<BufferInner>,
        addr: u64,
    },
    Value {
        type_name: &'static str,
        numeric: softgpu_codeobj::Numeric,
        bytes: Vec<u8>,
    },
    /// Kernarg bytes as a C caller gave them (a pointer is its address):
    /// checked only for size.
    Raw(Vec<u8>),
}

/// Kernel arguments, in order, checked against the kernel's metadata when
/// dispatched. Views keep their buffers alive while the dispatch is queued.
#[derive(Clone, Default)]
pub struct Args {
    pub(crate) values: Vec<ArgValue>,
    pub(crate) dynamic_lds: u32,
    pub(crate) services: softgpu_runtime::exec::Services,
}

impl Args {
    /// No arguments yet.
    pub fn new() -> Args {
        Args::default()
    }

    /// A pointer argument bound to a view (or a whole buffer).
    pub fn view<'a>(mut self, view: impl Into<View<'a>>) -> Args {
        let view = view.into();
        self.values.push(ArgValue::View {
            buffer: view.inner(),
            addr: view.address(),
        });
        self
    }

    /// A value argument.
    pub fn value<T: Scalar>(mut self, value: T) -> Args {
        let mut bytes = Vec::with_capacity(T::SIZE);
        value.put(&mut bytes);
        self.values.push(ArgValue::Value {
            type_name: T::NAME,
            numeric: T::NUMERIC,
            bytes,
        });
        self
    }

    /// An argument given as its kernarg bytes, for C-ABI layers (HIP's
    /// `void** args`): a pointer argument is its 8-byte address, which no
    /// buffer keeps alive, so the caller answers for the memory as on a
    /// GPU. Only the size is checked.
    pub fn raw(mut self, bytes: Vec<u8>) -> Args {
        self.values.push(ArgValue::Raw(bytes));
        self
    }

    /// The runtime services (printf buffer, hostcall buffer, heap) the
    /// kernel's hidden arguments point at; absent ones stay null.
    pub fn services(mut self, services: softgpu_runtime::exec::Services) -> Args {
        self.services = services;
        self
    }

    /// Dynamic LDS bytes per workgroup, on top of the kernel's static LDS.
    pub fn dynamic_lds(mut self, bytes: u32) -> Args {
        self.dynamic_lds = bytes;
        self
    }

    /// Checks the arguments against `info`; each error names the argument.
    pub(crate) fn check(&self, info: &ExportInfo) -> Result<()> {
        if self.values.len() != info.args.len() {
            let names: Vec<String> = info.args.iter().map(ArgInfo::label).collect();
            return Err(Error::ArgumentCount {
                kernel: info.name.clone(),
                expected: info.args.len(),
                given: self.values.len(),
                names: names.join(", "),
            });
        }
        for (index, (arg, given)) in info.args.iter().zip(&self.values).enumerate() {
            check_one(info, index, arg, given)?;
        }
        Ok(())
    }

    /// The arguments as the executor's kernarg builder takes them (a raw
    /// pointer argument becomes the pointer its bytes hold).
    pub(crate) fn exec_args(&self, info: &ExportInfo) -> Vec<softgpu_runtime::exec::Arg> {
        self.values
            .iter()
            .zip(&info.args)
            .map(|(v, arg)| match v {
                ArgValue::View { addr, .. } => softgpu_runtime::exec::Arg::Pointer(*addr),
                ArgValue::Raw(bytes) if arg.kind == ArgKind::Pointer && bytes.len() == 8 => {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(bytes);
                    softgpu_runtime::exec::Arg::Pointer(u64::from_le_bytes(word))
                }
                ArgValue::Value { bytes, .. } | ArgValue::Raw(bytes) => {
                    softgpu_runtime::exec::Arg::Bytes(bytes.clone())
                }
            })
            .collect()
    }

    /// Checks that every buffer argument is memory of `device`'s instance:
    /// another instance's addresses mean nothing to this one's kernels.
    pub(crate) fn check_runtime(&self, device: &DeviceInner) -> Result<()> {
        let foreign = self.values.iter().position(|v| match v {
            ArgValue::View { buffer, .. } => !Arc::ptr_eq(buffer.device.rt(), device.rt()),
            _ => false,
        });
        match foreign {
            Some(index) => Err(Error::Invalid(format!(
                "argument {index} is a buffer of another softgpu instance"
            ))),
            None => Ok(()),
        }
    }

    /// The buffers the arguments use, to keep alive.
    pub(crate) fn buffers(&self) -> Vec<Arc<BufferInner>> {
        self.values
            .iter()
            .filter_map(|v| match v {
                ArgValue::View { buffer, .. } => Some(buffer.clone()),
                ArgValue::Value { .. } | ArgValue::Raw(_) => None,
            })
            .collect()
    }
}

fn check_one(info: &ExportInfo, index: usize, arg: &ArgInfo, given: &ArgValue) -> Result<()> {
    use softgpu_codeobj::Numeric;
    let err = |why: String| Error::Argument {
        kernel: info.name.clone(),
        index,
        name: arg.label(),
        why,
    };
    match (arg.kind, given) {
        (_, ArgValue::Raw(bytes)) if bytes.len() == arg.size as usize => Ok(()),
        (_, ArgValue::Raw(bytes)) => Err(err(format!(
            "takes {} bytes, got {}",
            arg.size,
            bytes.len()
        ))),
        (ArgKind::Pointer, ArgValue::View { .. }) => Ok(()),
        (ArgKind::Pointer, ArgValue::Value { type_name, .. }) => {
            Err(err(format!("is a pointer; pass a view, not a {type_name}")))
        }
        (ArgKind::Value, ArgValue::View { .. }) => {
            Err(err(format!("is a {}-byte value, not a pointer", arg.size)))
        }
        (
            ArgKind::Value,
            ArgValue::Value {
                type_name,
                numeric,
                bytes,
            },
        ) => {
            let declared = arg.type_name.as_deref().and_then(Numeric::of_type);
            if let Some(declared) = declared.filter(|d| d != numeric) {
                Err(err(format!(
                    "is declared {}, but a {type_name} was given",
                    declared.described()
                )))
            } else if bytes.len() == arg.size as usize {
                Ok(())
            } else {
                Err(err(format!(
                    "takes {} bytes, got a {type_name} of {}",
                    arg.size,
                    bytes.len()
                )))
            }
        }
        _ => Err(err(
            "this argument kind cannot be passed by the safe API".into()
        )),
    }
}
