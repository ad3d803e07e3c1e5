//! Device printf under `softgpu run` and `profile`: the printf buffer
//! (OpenCL's buffered printf) and the hostcall buffer with its listener
//! (HIP's default printf and assert) that a kernel's hidden arguments point
//! at, made for one dispatch from the runtime's own implementations, and
//! the printf output printed when the dispatch ends. A kernel that calls
//! device `malloc` (`hidden_heap_v1`) gets the hostcall listener's own
//! heap, whose memory the listener serves and frees when it stops.

use softgpu_codeobj::{Kernel, ValueKind};
use softgpu_exec::{Device, Program, Services};
use softgpu_runtime::hostcall::Hostcall;
use softgpu_runtime::printf::PrintfBuffer;

/// The services of one dispatch; [`Provided::finish`] after it has run.
#[derive(Default)]
pub struct Provided {
    pub services: Services,
    printf: Option<PrintfBuffer>,
    hostcall: Option<Hostcall>,
}

impl Provided {
    /// The services `kernel` of `program` needs on `device`.
    pub fn for_kernel(
        device: &Device,
        program: &Program,
        kernel: &Kernel,
    ) -> Result<Provided, String> {
        let mut provided = Provided::default();
        let arena = device.arena();
        if kernel.meta.has_arg(&ValueKind::HiddenPrintfBuffer) {
            let buffer = PrintfBuffer::for_code_object(arena, &program.code_object)
                .map_err(|e| format!("the printf buffer: {e}"))?;
            provided.services.printf_buffer = buffer.addr();
            provided.printf = Some(buffer);
        }
        if kernel.meta.has_arg(&ValueKind::HiddenHostcallBuffer) {
            let hostcall = Hostcall::start(arena, "run").map_err(|e| e.to_string())?;
            provided.services.hostcall_buffer = hostcall.addr();
            if kernel.meta.has_arg(&ValueKind::HiddenHeapV1) {
                provided.services.heap = hostcall
                    .heap()
                    .state_addr()
                    .map_err(|e| format!("the device malloc heap: {e}"))?;
            }
            provided.hostcall = Some(hostcall);
        }
        Ok(provided)
    }

    /// Prints what the kernel printed and stops the listener.
    pub fn finish(self) {
        if let Some(buffer) = &self.printf {
            buffer.drain();
        }
        if let Some(hostcall) = &self.hostcall {
            hostcall.stop();
        }
    }
}
