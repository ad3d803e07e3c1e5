//! The parameters of kernel, memcpy and memset nodes: checked when set,
//! kept as HIP gave them (so they read back equal), turned into [`Work`]
//! when the graph is instantiated.

use std::ffi::c_void;
use std::sync::Arc;

use crate::abi::*;
use crate::error::{HipError, HipResult};
use crate::launch::{read_args, registered_kernel, ArgSource, Launch};
use crate::state::hip;
use crate::stream::Work;

/// A kernel node: what `hipKernelNodeParams` said, the node's own copy of
/// the argument values, and the launch made from them.
pub struct KernelNode {
    func: usize,
    grid: dim3,
    block: dim3,
    shared: u32,
    /// Per argument, a copy of its bytes, and one pointer to each: what
    /// `kernelParams` reads back as (CLR also hands out its own copies).
    /// C may write through the pointers it was given; Rust reads neither
    /// after building `launch`, only frees them with the node.
    _values: Vec<Vec<u8>>,
    pointers: Vec<usize>,
    /// The address of `pointers`' buffer (null without arguments or when
    /// the arguments came through `extra`).
    kernel_params: usize,
    /// The caller's `extra` array, read back as given (its packed buffer
    /// is the caller's, as in HIP 5.2).
    extra: usize,
    pub launch: Launch,
}

impl KernelNode {
    /// Checks and copies `p`, for a kernel on `device`.
    ///
    /// # Safety
    /// `p`'s argument array follows the crate's "Inputs" contract.
    pub unsafe fn new(p: &hipKernelNodeParams, device: usize) -> HipResult<KernelNode> {
        if p.func.is_null() {
            return Err(HipError::invalid("the kernel node's function is null"));
        }
        let kernel = registered_kernel(p.func, device)?;
        let (grid, block) = (p.gridDim.array(), p.blockDim.array());
        if grid.contains(&0) || block.contains(&0) {
            return Err(HipError::new(
                HIP_ERROR_INVALID_CONFIGURATION,
                format!("kernel node: grid {grid:?} and block {block:?} must be non-zero"),
            ));
        }
        let by_extra = p.kernelParams.is_null() && !p.extra.is_null();
        let mut values = Vec::new();
        if !by_extra {
            // SAFETY: one valid pointer per argument (this function's
            // contract); `read_args` below refuses what it cannot read.
            unsafe { read_args(&kernel, ArgSource::Pointers(p.kernelParams))? };
            for (i, arg) in kernel.info().args.iter().enumerate() {
                // SAFETY: checked by `read_args`: a non-null pointer to the
                // argument's `size` bytes.
                let bytes = unsafe {
                    std::slice::from_raw_parts(
                        *p.kernelParams.add(i) as *const u8,
                        arg.size as usize,
                    )
                };
                values.push(bytes.to_vec());
            }
        }
        let mut pointers: Vec<usize> = values.iter_mut().map(|v| v.as_mut_ptr() as usize).collect();
        let source = if by_extra {
            ArgSource::Extra(p.extra)
        } else {
            ArgSource::Pointers(pointers.as_mut_ptr() as *mut *mut c_void)
        };
        // SAFETY: either the caller's `extra` (this function's contract)
        // or our own copies, one pointer per argument of its size.
        let args = unsafe { read_args(&kernel, source)? }.dynamic_lds(p.sharedMemBytes);
        let kernel_params = match (by_extra, pointers.is_empty()) {
            (false, false) => pointers.as_mut_ptr() as usize,
            _ => 0,
        };
        Ok(KernelNode {
            func: p.func as usize,
            grid: p.gridDim,
            block: p.blockDim,
            shared: p.sharedMemBytes,
            _values: values,
            pointers,
            kernel_params,
            extra: if by_extra { p.extra as usize } else { 0 },
            launch: Launch {
                kernel,
                grid,
                block,
                args,
            },
        })
    }

    /// The parameters as they read back.
    pub fn params(&self) -> hipKernelNodeParams {
        debug_assert!(
            self.kernel_params == 0 || self.kernel_params == self.pointers.as_ptr() as usize
        );
        hipKernelNodeParams {
            blockDim: self.block,
            extra: self.extra as *mut *mut c_void,
            func: self.func as *mut c_void,
            gridDim: self.grid,
            kernelParams: self.kernel_params as *mut *mut c_void,
            sharedMemBytes: self.shared,
        }
    }

    /// The host stub of the kernel (`func`).
    pub fn func(&self) -> usize {
        self.func
    }
}

/// A `hipMemcpyKind`: `hipMemcpyHostToHost` (0) to `hipMemcpyDefault` (4).
pub fn check_kind(kind: i32) -> HipResult {
    if (0..=4).contains(&kind) {
        Ok(())
    } else {
        Err(HipError::new(
            HIP_ERROR_INVALID_MEMCPY_DIRECTION,
            format!("memcpy kind {kind}"),
        ))
    }
}

/// `hipMemcpy3DParms` as kept by a node: only its addresses, which Rust
/// never dereferences (copies go through the runtime's checked copy).
#[derive(Clone, Copy)]
pub struct Params3D(pub hipMemcpy3DParms);

// SAFETY: the pointers inside are addresses, never dereferenced through
// this value (copies go through `Runtime::copy`), so sending it to another
// thread shares nothing.
unsafe impl Send for Params3D {}
// SAFETY: as for `Send`: a shared `Params3D` gives access to no memory.
unsafe impl Sync for Params3D {}

/// A memcpy node's copy, in the form it was set in.
#[derive(Clone, Copy)]
pub enum Transfer {
    /// `hipGraphAddMemcpyNode`, `hipGraphMemcpyNodeSetParams`.
    ThreeD(Params3D),
    /// `hipGraphAddMemcpyNode1D`, `hipGraphMemcpyNodeSetParams1D`.
    OneD {
        dst: u64,
        src: u64,
        count: usize,
        kind: i32,
    },
    /// `...FromSymbol`: `symbol` is the variable's host shadow.
    FromSymbol {
        dst: u64,
        symbol: usize,
        count: usize,
        offset: usize,
        kind: i32,
    },
    /// `...ToSymbol`.
    ToSymbol {
        symbol: usize,
        src: u64,
        count: usize,
        offset: usize,
        kind: i32,
    },
}

impl Transfer {
    /// A 3D copy, checked.
    pub fn three_d(p: hipMemcpy3DParms) -> HipResult<Transfer> {
        crate::memory::rows_3d(&p)?;
        Ok(Transfer::ThreeD(Params3D(p)))
    }

    /// A 1D copy, checked as CLR checks `hipGraphMemcpyNodeSetParams1D`.
    pub fn one_d(
        dst: *mut c_void,
        src: *const c_void,
        count: usize,
        kind: i32,
    ) -> HipResult<Transfer> {
        check_kind(kind)?;
        if dst.is_null() || src.is_null() {
            return Err(HipError::invalid("memcpy node to or from a null pointer"));
        }
        Ok(Transfer::OneD {
            dst: dst as u64,
            src: src as u64,
            count,
            kind,
        })
    }

    /// A 1-D copy that replaces a node's (`hipGraphMemcpyNodeSetParams1D`,
    /// `hipGraphExecMemcpyNodeSetParams1D`): where CLR also refuses a copy
    /// of 0 bytes or onto itself, which it lets a new node have.
    pub fn one_d_replacing(
        dst: *mut c_void,
        src: *const c_void,
        count: usize,
        kind: i32,
    ) -> HipResult<Transfer> {
        if count == 0 || std::ptr::eq(dst, src) {
            return Err(HipError::invalid("a 1D copy of 0 bytes or onto itself"));
        }
        Transfer::one_d(dst, src, count, kind)
    }

    /// A copy out of a device variable, checked now (CLR validates the
    /// symbol and range when the node is made or set).
    pub fn from_symbol(
        dst: *mut c_void,
        symbol: *const c_void,
        count: usize,
        offset: usize,
        kind: i32,
    ) -> HipResult<Transfer> {
        check_symbol_copy(symbol, dst as *const c_void, count, offset, kind)?;
        Ok(Transfer::FromSymbol {
            dst: dst as u64,
            symbol: symbol as usize,
            count,
            offset,
            kind,
        })
    }

    /// A copy into a device variable, checked now.
    pub fn to_symbol(
        symbol: *const c_void,
        src: *const c_void,
        count: usize,
        offset: usize,
        kind: i32,
    ) -> HipResult<Transfer> {
        check_symbol_copy(symbol, src, count, offset, kind)?;
        Ok(Transfer::ToSymbol {
            symbol: symbol as usize,
            src: src as u64,
            count,
            offset,
            kind,
        })
    }

    /// The `hipMemcpyKind` it was set with.
    pub fn kind(&self) -> i32 {
        match self {
            Transfer::ThreeD(p) => p.0.kind,
            Transfer::OneD { kind, .. }
            | Transfer::FromSymbol { kind, .. }
            | Transfer::ToSymbol { kind, .. } => *kind,
        }
    }

    /// The rows `(dst, src, len)` it copies; a symbol is resolved on the
    /// current device.
    pub fn rows(&self) -> HipResult<Vec<(u64, u64, u64)>> {
        Ok(match *self {
            Transfer::ThreeD(p) => crate::memory::rows_3d(&p.0)?,
            Transfer::OneD {
                dst, src, count, ..
            } => vec![(dst, src, count as u64)],
            Transfer::FromSymbol {
                dst,
                symbol,
                count,
                offset,
                ..
            } => vec![(dst, symbol_range(symbol, count, offset)?, count as u64)],
            Transfer::ToSymbol {
                symbol,
                src,
                count,
                offset,
                ..
            } => vec![(symbol_range(symbol, count, offset)?, src, count as u64)],
        })
    }

    /// The copy as `hipMemcpy3DParms` (`hipGraphMemcpyNodeGetParams`): a
    /// 1D or symbol copy is one row of `count` bytes, the symbol at its
    /// device address plus the offset.
    pub fn params(&self) -> HipResult<hipMemcpy3DParms> {
        let (dst, src, count) = match *self {
            Transfer::ThreeD(p) => return Ok(p.0),
            _ => self.rows()?[0],
        };
        let row = |ptr: u64| hipPitchedPtr {
            ptr: ptr as *mut c_void,
            pitch: count as usize,
            xsize: count as usize,
            ysize: 1,
        };
        Ok(hipMemcpy3DParms {
            srcArray: std::ptr::null_mut(),
            srcPos: hipPos::default(),
            srcPtr: row(src),
            dstArray: std::ptr::null_mut(),
            dstPos: hipPos::default(),
            dstPtr: row(dst),
            extent: hipExtent {
                width: count as usize,
                height: 1,
                depth: 1,
            },
            kind: self.kind(),
        })
    }
}

/// Checks a symbol copy as CLR does: a null symbol is
/// `hipErrorInvalidSymbol`, a null other side or zero count
/// `hipErrorInvalidValue`, and the range must lie in the variable.
fn check_symbol_copy(
    symbol: *const c_void,
    other: *const c_void,
    count: usize,
    offset: usize,
    kind: i32,
) -> HipResult {
    if symbol.is_null() {
        return Err(HipError::new(
            HIP_ERROR_INVALID_SYMBOL,
            "the symbol is null",
        ));
    }
    if other.is_null() || count == 0 || other == symbol {
        return Err(HipError::invalid(
            "a symbol copy needs a distinct non-null pointer and a non-zero size",
        ));
    }
    check_kind(kind)?;
    symbol_range(symbol as usize, count, offset).map(drop)
}

/// The device address of `count` bytes at `offset` in the variable whose
/// host shadow is `symbol`, on the current device.
fn symbol_range(symbol: usize, count: usize, offset: usize) -> HipResult<u64> {
    let (addr, len) = crate::memory::symbol(hip()?, symbol as *const c_void)?;
    if (offset as u64)
        .checked_add(count as u64)
        .is_none_or(|end| end > len)
    {
        return Err(HipError::invalid(format!(
            "{count} bytes at offset {offset} exceed the {len}-byte variable"
        )));
    }
    Ok(addr + offset as u64)
}

/// A memset node's parameters (`hipMemsetParams` with the destination as
/// an address).
#[derive(Clone, Copy)]
pub struct Memset {
    dst: u64,
    element_size: u32,
    height: usize,
    pitch: usize,
    value: u32,
    width: usize,
}

impl Memset {
    /// Checks `p` as CLR does: a non-null destination, an element size of
    /// 1, 2 or 4, a non-zero width, rows no wider than the pitch, all in
    /// device memory.
    pub fn new(p: &hipMemsetParams) -> HipResult<Memset> {
        if p.dst.is_null() {
            return Err(HipError::invalid("memset node of a null pointer"));
        }
        if ![1, 2, 4].contains(&p.elementSize) {
            return Err(HipError::invalid(format!(
                "memset element size {}",
                p.elementSize
            )));
        }
        if p.width == 0 || p.height == 0 {
            return Err(HipError::invalid("memset node of zero width or height"));
        }
        let row = p
            .width
            .checked_mul(p.elementSize as usize)
            .ok_or_else(|| HipError::invalid("memset row size overflows"))?;
        if p.height > 1 && row > p.pitch {
            return Err(HipError::new(
                HIP_ERROR_INVALID_PITCH_VALUE,
                "memset rows wider than the pitch",
            ));
        }
        // The rows must lie in one allocation of device memory, as CLR's
        // memset validation requires; this also bounds the rows kept.
        let span = p
            .pitch
            .checked_mul(p.height - 1)
            .and_then(|s| s.checked_add(row))
            .ok_or_else(|| HipError::invalid("memset size overflows"))?;
        softgpu_runtime::Runtime::get()?.check_device(
            p.dst as u64,
            span as u64,
            "memset node destination",
        )?;
        Ok(Memset {
            dst: p.dst as u64,
            element_size: p.elementSize,
            height: p.height,
            pitch: p.pitch,
            value: p.value,
            width: p.width,
        })
    }

    /// Bytes per row and rows.
    pub fn shape(&self) -> (usize, usize) {
        (self.width * self.element_size as usize, self.height)
    }

    /// The parameters as they read back.
    pub fn params(&self) -> hipMemsetParams {
        hipMemsetParams {
            dst: self.dst as *mut c_void,
            elementSize: self.element_size,
            height: self.height,
            pitch: self.pitch,
            value: self.value,
            width: self.width,
        }
    }

    /// The fill: `height` rows of `width` elements of the value's low
    /// `element_size` bytes.
    pub fn work(&self) -> Work {
        let pattern = self.value.to_le_bytes()[..self.element_size as usize].to_vec();
        let row = (self.width * pattern.len()) as u64;
        let pitch = if self.height > 1 {
            self.pitch as u64
        } else {
            row
        };
        let rows = (0..self.height as u64)
            .map(|r| (self.dst + r * pitch, row))
            .collect();
        Work::Fill {
            rows: Arc::new(rows),
            pattern: Arc::new(pattern),
        }
    }
}
