//! The runtime services a dispatch's hidden arguments point at: a printf
//! buffer for kernels with `hidden_printf_buffer` (drained and printed by
//! a host operation after the dispatch), the device's hostcall buffer for
//! kernels with `hidden_hostcall_buffer` (its listener kept polling while
//! the dispatch may run), and the device's malloc heap for kernels with
//! `hidden_heap_v1` (made zeroed on the first such dispatch; its memory
//! comes through the hostcall buffer, which such a kernel also has).
//! Addresses the caller set in [`Args::services`] win: then softgpu
//! provides nothing for that service.
//!
//! [`Args::services`]: crate::Args::services

use std::sync::Arc;

use softgpu_codeobj::ValueKind;
use softgpu_runtime::exec::Services;
use softgpu_runtime::hostcall::HostcallUse;
use softgpu_runtime::printf::PrintfBuffer;

use crate::device::DeviceInner;
use crate::error::{Error, Result};
use crate::kernel::Kernel;

/// What softgpu provided for one dispatch; held until it has run.
#[derive(Default)]
pub(crate) struct Provided {
    pub services: Services,
    pub printf: Option<Arc<PrintfBuffer>>,
    pub hostcall: Option<HostcallUse>,
}

/// Fills the services `kernel` needs that `given` leaves at 0.
pub(crate) fn provide(device: &DeviceInner, kernel: &Kernel, given: &Services) -> Result<Provided> {
    let k = kernel.kref.kernel();
    let mut p = Provided {
        services: *given,
        ..Provided::default()
    };
    let err = Error::from;
    if given.printf_buffer == 0 && k.meta.has_arg(&ValueKind::HiddenPrintfBuffer) {
        let code = &kernel.kref.program.code_object;
        let buffer = PrintfBuffer::for_code_object(&device.rt().arena, code).map_err(err)?;
        p.services.printf_buffer = buffer.addr();
        p.printf = Some(Arc::new(buffer));
    }
    if given.hostcall_buffer == 0 && k.meta.has_arg(&ValueKind::HiddenHostcallBuffer) {
        let using = device.rt().hostcall(device.index).map_err(err)?;
        p.services.hostcall_buffer = using.addr();
        p.hostcall = Some(using);
    }
    if given.heap == 0 && k.meta.has_arg(&ValueKind::HiddenHeapV1) {
        let heap = device.rt().device_heap(device.index);
        p.services.heap = heap.state_addr().map_err(err)?;
    }
    Ok(p)
}
