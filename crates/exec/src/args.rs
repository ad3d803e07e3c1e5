//! A kernel's arguments as a launch gives them (buffers and values, the
//! launch's shape) and the kernarg segment they are laid out into.

use softgpu_codeobj::{Kernel, ValueKind};

use softgpu_interp::wave::{PRIVATE_APERTURE, SHARED_APERTURE};

use crate::error::{DispatchError, LaunchRule};

/// A device buffer: an allocation in the device arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub(crate) addr: u64,
    pub(crate) len: u64,
}

impl Buffer {
    /// Device address of the first byte.
    pub fn addr(&self) -> u64 {
        self.addr
    }
    /// Its size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One explicit kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A pointer to a device buffer.
    Buffer(Buffer),
    /// A raw device pointer (may be null).
    Pointer(u64),
    /// A signed 32-bit value.
    I32(i32),
    /// An unsigned 32-bit value.
    U32(u32),
    /// A signed 64-bit value.
    I64(i64),
    /// An unsigned 64-bit value (also accepted for a pointer).
    U64(u64),
    /// A single-precision float.
    F32(f32),
    /// A double-precision float.
    F64(f64),
    /// A by-value aggregate, byte for byte.
    Bytes(Vec<u8>),
}

impl Arg {
    /// Whether the value is a float or an integer (`None`: a pointer or
    /// raw bytes).
    fn numeric(&self) -> Option<softgpu_codeobj::Numeric> {
        use softgpu_codeobj::Numeric;
        match self {
            Arg::I32(_) | Arg::U32(_) | Arg::I64(_) | Arg::U64(_) => Some(Numeric::Integer),
            Arg::F32(_) | Arg::F64(_) => Some(Numeric::Float),
            Arg::Buffer(_) | Arg::Pointer(_) | Arg::Bytes(_) => None,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        match self {
            Arg::Buffer(b) => b.addr.to_le_bytes().to_vec(),
            Arg::Pointer(p) | Arg::U64(p) => p.to_le_bytes().to_vec(),
            Arg::I32(v) => v.to_le_bytes().to_vec(),
            Arg::U32(v) => v.to_le_bytes().to_vec(),
            Arg::I64(v) => v.to_le_bytes().to_vec(),
            Arg::F32(v) => v.to_le_bytes().to_vec(),
            Arg::F64(v) => v.to_le_bytes().to_vec(),
            Arg::Bytes(b) => b.clone(),
        }
    }

    fn is_pointer(&self) -> bool {
        matches!(self, Arg::Buffer(_) | Arg::Pointer(_) | Arg::U64(_))
    }
}

/// The shape of a dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Workgroups in each dimension (HIP's gridDim).
    pub grid: [u32; 3],
    /// Work-items per workgroup in each dimension (HIP's blockDim).
    pub block: [u32; 3],
    /// Bytes of dynamic LDS after the kernel's static LDS.
    pub dynamic_lds: u32,
}

/// The kernarg segment: explicit arguments checked against the metadata,
/// then the hidden arguments of code object v5 (and v4's global offsets).
/// `grid` counts work-items.
pub fn build_kernarg(
    kernel: &Kernel,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_lds: u32,
    args: &[Arg],
) -> Result<Vec<u8>, DispatchError> {
    build_kernarg_with(kernel, grid, block, dynamic_lds, args, &Services::default())
}

/// Device addresses of the runtime services a kernel's hidden arguments
/// point at. A service left at 0 is a null pointer in the kernarg
/// segment, so a kernel that uses an absent service faults loudly at the
/// null address instead of misbehaving.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Services {
    /// `hidden_printf_buffer`: the buffered-printf ring.
    pub printf_buffer: u64,
    /// `hidden_hostcall_buffer`: the hostcall packet buffer.
    pub hostcall_buffer: u64,
    /// `hidden_heap_v1`: the device-side `malloc` heap.
    pub heap: u64,
}

/// [`build_kernarg`] with the service pointers the runtime provides.
pub fn build_kernarg_with(
    kernel: &Kernel,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_lds: u32,
    args: &[Arg],
    services: &Services,
) -> Result<Vec<u8>, DispatchError> {
    check_shape(kernel, grid, block)?;
    let meta = &kernel.meta;
    let size = meta
        .kernarg_segment_size
        .max(kernel.descriptor.kernarg_size) as usize;
    let mut seg = vec![0u8; size.max(8)];
    let bad = |why: String| DispatchError::BadArguments {
        kernel: kernel.name.clone(),
        why,
    };
    let explicit: Vec<_> = meta
        .args
        .iter()
        .filter(|a| !a.value_kind.is_hidden())
        .collect();
    if explicit.len() != args.len() {
        let names: Vec<String> = explicit.iter().map(|a| describe(a)).collect();
        return Err(bad(format!(
            "expects {} arguments ({}), got {}",
            explicit.len(),
            names.join(", "),
            args.len()
        )));
    }
    for (k, (meta_arg, arg)) in explicit.iter().zip(args).enumerate() {
        let bytes = arg.bytes();
        let pointer = matches!(
            meta_arg.value_kind,
            ValueKind::GlobalBuffer | ValueKind::DynamicSharedPointer
        );
        if pointer && !arg.is_pointer() {
            return Err(bad(format!(
                "argument {k} ({}) is a pointer; pass a buffer",
                describe(meta_arg)
            )));
        }
        if !pointer && arg.is_pointer() && matches!(arg, Arg::Buffer(_)) {
            return Err(bad(format!(
                "argument {k} ({}) is a value of {} bytes, not a buffer",
                describe(meta_arg),
                meta_arg.size
            )));
        }
        if let (Some(declared), Some(given)) = (meta_arg.numeric(), arg.numeric()) {
            if declared != given {
                return Err(bad(format!(
                    "argument {k} ({}) is declared {}, but {} was given",
                    describe(meta_arg),
                    declared.described(),
                    given.described()
                )));
            }
        }
        if bytes.len() != meta_arg.size as usize {
            return Err(bad(format!(
                "argument {k} ({}) takes {} bytes, got {}",
                describe(meta_arg),
                meta_arg.size,
                bytes.len()
            )));
        }
        put(&mut seg, meta_arg.offset as usize, &bytes).map_err(bad)?;
    }
    for a in meta.args.iter().filter(|a| a.value_kind.is_hidden()) {
        let value: Option<u64> = match a.value_kind {
            ValueKind::HiddenBlockCountX => Some((grid[0] / block[0]) as u64),
            ValueKind::HiddenBlockCountY => Some((grid[1] / block[1]) as u64),
            ValueKind::HiddenBlockCountZ => Some((grid[2] / block[2]) as u64),
            ValueKind::HiddenGroupSizeX => Some(block[0] as u64),
            ValueKind::HiddenGroupSizeY => Some(block[1] as u64),
            ValueKind::HiddenGroupSizeZ => Some(block[2] as u64),
            ValueKind::HiddenRemainderX => Some((grid[0] % block[0]) as u64),
            ValueKind::HiddenRemainderY => Some((grid[1] % block[1]) as u64),
            ValueKind::HiddenRemainderZ => Some((grid[2] % block[2]) as u64),
            ValueKind::HiddenGridDims => Some(crate::packet::dimensions(grid) as u64),
            ValueKind::HiddenDynamicLdsSize => Some(dynamic_lds as u64),
            ValueKind::HiddenPrivateBase => Some(PRIVATE_APERTURE >> 32),
            ValueKind::HiddenSharedBase => Some(SHARED_APERTURE >> 32),
            ValueKind::HiddenPrintfBuffer => Some(services.printf_buffer),
            ValueKind::HiddenHostcallBuffer => Some(services.hostcall_buffer),
            ValueKind::HiddenHeapV1 => Some(services.heap),
            // Offsets are zero; device queues, completion actions and the
            // multigrid sync argument are null pointers (see `Services`).
            _ => Some(0),
        };
        if let Some(v) = value {
            let n = (a.size as usize).min(8);
            put(&mut seg, a.offset as usize, &v.to_le_bytes()[..n]).map_err(bad)?;
        }
    }
    Ok(seg)
}

fn describe(a: &softgpu_codeobj::KernelArg) -> String {
    match (&a.name, &a.type_name) {
        (Some(n), Some(t)) => format!("{t} {n}"),
        (Some(n), None) => n.clone(),
        (None, Some(t)) => t.clone(),
        _ => format!("{} bytes at offset {}", a.size, a.offset),
    }
}

fn put(seg: &mut [u8], offset: usize, bytes: &[u8]) -> Result<(), String> {
    let len = seg.len();
    seg.get_mut(offset..offset + bytes.len())
        .ok_or_else(|| {
            format!("argument at offset {offset} lies outside the {len}-byte kernarg segment")
        })?
        .copy_from_slice(bytes);
    Ok(())
}

/// Grid and block must be non-zero in every dimension (the kernarg's hidden
/// arguments divide by the block size).
pub(crate) fn check_shape(
    kernel: &Kernel,
    grid: [u32; 3],
    block: [u32; 3],
) -> Result<(), DispatchError> {
    if block.contains(&0) || grid.contains(&0) {
        return Err(bad_launch(
            kernel,
            LaunchRule::Shape,
            format!("grid {grid:?} and block {block:?} must be non-zero in every dimension"),
        ));
    }
    Ok(())
}

pub(crate) fn bad_launch(kernel: &Kernel, rule: LaunchRule, why: String) -> DispatchError {
    DispatchError::BadLaunch {
        kernel: kernel.name.clone(),
        why,
        rule,
    }
}
