//! The body of the `aql` fuzz target: arbitrary 64-byte AQL packets written
//! into a real queue of softgpu's HSA library (`libhsa-runtime64.so.1`,
//! loaded with `dlopen`, as any HSA client would use it), then the doorbell
//! rung. The library must never crash or hang: every packet either
//! completes or stops the queue through its error callback with an error
//! status, within a bound.
//!
//! Shared by `fuzz/fuzz_targets/aql.rs` (cargo-fuzz, nightly) and the
//! stable test `crates/hsa/tests/fuzz.rs`, which includes this file.

use std::ffi::{c_void, CStr, CString};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

type Status = u32;
const SUCCESS: Status = 0;
/// `hsa_agent_info_t` HSA_AGENT_INFO_DEVICE, and `HSA_DEVICE_TYPE_GPU`.
const AGENT_INFO_DEVICE: u32 = 17;
const DEVICE_TYPE_GPU: u32 = 1;
/// `HSA_REGION_INFO_GLOBAL_FLAGS` and its KERNARG flag.
const REGION_INFO_GLOBAL_FLAGS: u32 = 1;
const REGION_GLOBAL_FLAG_KERNARG: u32 = 1;
/// `HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT`.
const SYMBOL_INFO_KERNEL_OBJECT: u32 = 22;
/// `HSA_PROFILE_FULL`, `HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT`.
const PROFILE_FULL: u32 = 1;
/// `HSA_QUEUE_TYPE_SINGLE`.
const QUEUE_TYPE_SINGLE: u32 = 1;
/// AQL packet types (header bits 0..8).
const PACKET_INVALID: u8 = 1;
const PACKET_KERNEL_DISPATCH: u8 = 2;
const PACKET_BARRIER_AND: u8 = 3;

/// How long one packet may take before the library counts as hung.
const PACKET_BOUND: Duration = Duration::from_secs(20);

type AgentCallback = unsafe extern "C" fn(u64, *mut c_void) -> Status;
type ErrorCallback = unsafe extern "C" fn(Status, *mut c_void, *mut c_void);

/// The HSA functions the target calls, looked up in the library.
struct Api {
    init: unsafe extern "C" fn() -> Status,
    shut_down: unsafe extern "C" fn() -> Status,
    iterate_agents: unsafe extern "C" fn(AgentCallback, *mut c_void) -> Status,
    agent_get_info: unsafe extern "C" fn(u64, u32, *mut c_void) -> Status,
    agent_iterate_regions: unsafe extern "C" fn(u64, AgentCallback, *mut c_void) -> Status,
    region_get_info: unsafe extern "C" fn(u64, u32, *mut c_void) -> Status,
    memory_allocate: unsafe extern "C" fn(u64, usize, *mut *mut c_void) -> Status,
    queue_create: unsafe extern "C" fn(
        u64,
        u32,
        u32,
        Option<ErrorCallback>,
        *mut c_void,
        u32,
        u32,
        *mut *mut Queue,
    ) -> Status,
    queue_destroy: unsafe extern "C" fn(*mut Queue) -> Status,
    queue_load_read_index: unsafe extern "C" fn(*const Queue) -> u64,
    queue_store_write_index: unsafe extern "C" fn(*const Queue, u64),
    signal_create: unsafe extern "C" fn(i64, u32, *const u64, *mut u64) -> Status,
    signal_destroy: unsafe extern "C" fn(u64) -> Status,
    signal_load: unsafe extern "C" fn(u64) -> i64,
    signal_store: unsafe extern "C" fn(u64, i64),
    reader_from_memory: unsafe extern "C" fn(*const c_void, usize, *mut u64) -> Status,
    executable_create: unsafe extern "C" fn(u32, u32, *const i8, *mut u64) -> Status,
    load_code_object: unsafe extern "C" fn(u64, u64, u64, *const i8, *mut u64) -> Status,
    freeze: unsafe extern "C" fn(u64, *const i8) -> Status,
    symbol_by_name: unsafe extern "C" fn(u64, *const i8, *const u64, *mut u64) -> Status,
    symbol_get_info: unsafe extern "C" fn(u64, u32, *mut c_void) -> Status,
}

/// The head of `hsa_queue_t`.
#[repr(C)]
pub struct Queue {
    kind: u32,
    features: u32,
    base_address: *mut u8,
    doorbell_signal: u64,
    size: u32,
}

/// A loaded library with a GPU agent, a kernel and memory to point at.
pub struct Harness {
    api: Api,
    agent: u64,
    /// The kernel object of `k`, which stores 7 through its one argument.
    kernel_object: u64,
    /// A kernarg segment holding a pointer to `output`.
    kernarg: u64,
    output: u64,
    /// What the queue's error callback saw (0: nothing yet).
    error: Box<AtomicU32>,
}

/// A wave32 kernel `k(uint* out)` storing 7 to `out[0]`, assembled with
/// clang-19 and ld.lld-19 for `target`.
pub fn assemble_kernel(dir: &Path, target: &str) -> Result<Vec<u8>, String> {
    let src = format!(
        r#"	.amdgcn_target "amdgcn-amd-amdhsa--{target}"
	.amdhsa_code_object_version 5
	.text
	.globl k
	.p2align 8
	.type k,@function
k:
	s_load_b64 s[2:3], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	v_mov_b32 v1, 0
	v_mov_b32 v2, 7
	global_store_b32 v1, v2, s[2:3]
	s_endpgm
.Lend:
	.size k, .Lend-k
	.rodata
	.p2align 6
	.amdhsa_kernel k
		.amdhsa_kernarg_size 8
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_next_free_vgpr 8
		.amdhsa_next_free_sgpr 8
	.end_amdhsa_kernel
	.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - {{ .address_space: global, .offset: 0, .size: 8, .value_kind: global_buffer }}
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 1024
    .name: k
    .private_segment_fixed_size: 0
    .sgpr_count: 8
    .symbol: k.kd
    .vgpr_count: 8
    .wavefront_size: 32
amdhsa.target: amdgcn-amd-amdhsa--{target}
amdhsa.version: [1, 2]
...
	.end_amdgpu_metadata
"#
    );
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let (s, o, h) = (dir.join("k.s"), dir.join("k.o"), dir.join("k.hsaco"));
    std::fs::write(&s, src).map_err(|e| e.to_string())?;
    let tool = |name: &str, args: Vec<&std::ffi::OsStr>| -> Result<(), String> {
        let out = std::process::Command::new(name)
            .args(args)
            .output()
            .map_err(|e| {
                format!("cannot run {name} ({e}): install the Debian packages clang-19 and lld-19")
            })?;
        if !out.status.success() {
            return Err(format!("{name}: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(())
    };
    let mcpu = format!("-mcpu={target}");
    tool(
        "clang-19",
        vec![
            "-x".as_ref(),
            "assembler".as_ref(),
            "-target".as_ref(),
            "amdgcn-amd-amdhsa".as_ref(),
            mcpu.as_ref(),
            "-c".as_ref(),
            s.as_os_str(),
            "-o".as_ref(),
            o.as_os_str(),
        ],
    )?;
    tool(
        "ld.lld-19",
        vec![
            "-shared".as_ref(),
            o.as_os_str(),
            "-o".as_ref(),
            h.as_os_str(),
        ],
    )?;
    std::fs::read(&h).map_err(|e| e.to_string())
}

/// `dlopen`s the library at `library` (the handle is never closed).
pub fn open_library(library: &Path) -> Result<*mut c_void, String> {
    let path = CString::new(library.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: `path` is NUL-terminated; loading the HSA library runs no
    // constructors with requirements of ours.
    let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        // SAFETY: dlerror returns a NUL-terminated message or NULL.
        let why = unsafe { libc::dlerror() };
        let why = if why.is_null() {
            String::new()
        } else {
            // SAFETY: non-null dlerror result, NUL-terminated.
            unsafe { CStr::from_ptr(why) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(format!("dlopen {}: {why}", library.display()));
    }
    Ok(lib)
}

/// Looks `name` up in the library.
///
/// # Safety
/// `lib` is a handle from [`open_library`], and `F` must be the function
/// pointer type of the symbol's C declaration in `hsa.h` /
/// `hsa_ext_amd.h`.
pub unsafe fn symbol<F: Copy>(lib: *mut c_void, name: &str) -> Result<F, String> {
    let c = CString::new(name).map_err(|e| e.to_string())?;
    // SAFETY: `lib` is a handle dlopen returned; `c` is NUL-terminated.
    let p = unsafe { libc::dlsym(lib, c.as_ptr()) };
    if p.is_null() {
        return Err(format!("the library has no {name}"));
    }
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: `p` is the address of the function `name`, whose type is `F`
    // (this function's contract); function pointers are pointer-sized.
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
}

fn check(what: &str, status: Status) -> Result<(), String> {
    if status == SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} returned status {status:#x}"))
    }
}

unsafe extern "C" fn find_gpu(agent: u64, data: *mut c_void) -> Status {
    // SAFETY: `data` is the `(Api pointer, Option<u64>)` pair `Harness::new`
    // passes, alive for the iteration.
    let (api, found) = unsafe { &mut *(data as *mut (*const Api, Option<u64>)) };
    let mut device = 0u32;
    // SAFETY: `api` points at the harness's Api; DEVICE is a u32 output.
    let status = unsafe {
        ((**api).agent_get_info)(
            agent,
            AGENT_INFO_DEVICE,
            &mut device as *mut u32 as *mut c_void,
        )
    };
    if status == SUCCESS && device == DEVICE_TYPE_GPU && found.is_none() {
        *found = Some(agent);
    }
    SUCCESS
}

unsafe extern "C" fn find_kernarg_region(region: u64, data: *mut c_void) -> Status {
    // SAFETY: as for `find_gpu`.
    let (api, found) = unsafe { &mut *(data as *mut (*const Api, Option<u64>)) };
    let mut flags = 0u32;
    // SAFETY: `api` points at the harness's Api; GLOBAL_FLAGS is a u32.
    let status = unsafe {
        ((**api).region_get_info)(
            region,
            REGION_INFO_GLOBAL_FLAGS,
            &mut flags as *mut u32 as *mut c_void,
        )
    };
    if status == SUCCESS && flags & REGION_GLOBAL_FLAG_KERNARG != 0 && found.is_none() {
        *found = Some(region);
    }
    SUCCESS
}

unsafe extern "C" fn on_error(status: Status, _queue: *mut c_void, data: *mut c_void) {
    // SAFETY: `data` is the harness's boxed AtomicU32, which outlives every
    // queue the harness creates.
    let slot = unsafe { &*(data as *const AtomicU32) };
    // An error callback with SUCCESS would be a bug; record it as such.
    slot.store(
        if status == SUCCESS { u32::MAX } else { status },
        Ordering::SeqCst,
    );
}

impl Harness {
    /// Loads the library at `library`, initialises HSA and loads `code`
    /// (from [`assemble_kernel`]) on the first GPU agent.
    pub fn new(library: &Path, code: &[u8]) -> Result<Harness, String> {
        let lib = open_library(library)?;
        // SAFETY: each type below is the hsa.h declaration of its symbol.
        let api = unsafe {
            Api {
                init: symbol(lib, "hsa_init")?,
                shut_down: symbol(lib, "hsa_shut_down")?,
                iterate_agents: symbol(lib, "hsa_iterate_agents")?,
                agent_get_info: symbol(lib, "hsa_agent_get_info")?,
                agent_iterate_regions: symbol(lib, "hsa_agent_iterate_regions")?,
                region_get_info: symbol(lib, "hsa_region_get_info")?,
                memory_allocate: symbol(lib, "hsa_memory_allocate")?,
                queue_create: symbol(lib, "hsa_queue_create")?,
                queue_destroy: symbol(lib, "hsa_queue_destroy")?,
                queue_load_read_index: symbol(lib, "hsa_queue_load_read_index_scacquire")?,
                queue_store_write_index: symbol(lib, "hsa_queue_store_write_index_screlease")?,
                signal_create: symbol(lib, "hsa_signal_create")?,
                signal_destroy: symbol(lib, "hsa_signal_destroy")?,
                signal_load: symbol(lib, "hsa_signal_load_scacquire")?,
                signal_store: symbol(lib, "hsa_signal_store_screlease")?,
                reader_from_memory: symbol(lib, "hsa_code_object_reader_create_from_memory")?,
                executable_create: symbol(lib, "hsa_executable_create_alt")?,
                load_code_object: symbol(lib, "hsa_executable_load_agent_code_object")?,
                freeze: symbol(lib, "hsa_executable_freeze")?,
                symbol_by_name: symbol(lib, "hsa_executable_get_symbol_by_name")?,
                symbol_get_info: symbol(lib, "hsa_executable_symbol_get_info")?,
            }
        };
        // SAFETY: plain HSA calls; every output pointer below is a local of
        // the type hsa.h gives it, and callbacks get data they expect.
        unsafe {
            check("hsa_init", (api.init)())?;
            let mut search: (*const Api, Option<u64>) = (&api, None);
            check(
                "hsa_iterate_agents",
                (api.iterate_agents)(find_gpu, &mut search as *mut _ as *mut c_void),
            )?;
            let agent = search.1.ok_or("no GPU agent")?;
            let mut search: (*const Api, Option<u64>) = (&api, None);
            check(
                "hsa_agent_iterate_regions",
                (api.agent_iterate_regions)(
                    agent,
                    find_kernarg_region,
                    &mut search as *mut _ as *mut c_void,
                ),
            )?;
            let region = search.1.ok_or("no kernarg region")?;
            let mut reader = 0u64;
            check(
                "hsa_code_object_reader_create_from_memory",
                (api.reader_from_memory)(code.as_ptr() as *const c_void, code.len(), &mut reader),
            )?;
            let mut executable = 0u64;
            check(
                "hsa_executable_create_alt",
                (api.executable_create)(PROFILE_FULL, 0, std::ptr::null(), &mut executable),
            )?;
            let mut loaded = 0u64;
            check(
                "hsa_executable_load_agent_code_object",
                (api.load_code_object)(executable, agent, reader, std::ptr::null(), &mut loaded),
            )?;
            check(
                "hsa_executable_freeze",
                (api.freeze)(executable, std::ptr::null()),
            )?;
            let mut sym = 0u64;
            check(
                "hsa_executable_get_symbol_by_name",
                (api.symbol_by_name)(executable, c"k.kd".as_ptr(), &agent, &mut sym),
            )?;
            let mut kernel_object = 0u64;
            check(
                "hsa_executable_symbol_get_info",
                (api.symbol_get_info)(
                    sym,
                    SYMBOL_INFO_KERNEL_OBJECT,
                    &mut kernel_object as *mut u64 as *mut c_void,
                ),
            )?;
            let mut kernarg: *mut c_void = std::ptr::null_mut();
            check(
                "hsa_memory_allocate",
                (api.memory_allocate)(region, 64, &mut kernarg),
            )?;
            let mut output: *mut c_void = std::ptr::null_mut();
            check(
                "hsa_memory_allocate",
                (api.memory_allocate)(region, 64, &mut output),
            )?;
            // The kernarg segment's one argument: the output pointer.
            (kernarg as *mut u64).write_volatile(output as u64);
            Ok(Harness {
                api,
                agent,
                kernel_object,
                kernarg: kernarg as u64,
                output: output as u64,
                error: Box::new(AtomicU32::new(0)),
            })
        }
    }

    /// A valid dispatch of `k` over `items` work-items.
    pub fn dispatch_packet(&self, items: u32) -> [u8; 64] {
        let mut p = [0u8; 64];
        let header = PACKET_KERNEL_DISPATCH as u16 | 1 << 8 | 2 << 9 | 2 << 11;
        p[0..2].copy_from_slice(&header.to_le_bytes());
        p[2..4].copy_from_slice(&1u16.to_le_bytes());
        p[4..6].copy_from_slice(&32u16.to_le_bytes());
        p[6..8].copy_from_slice(&1u16.to_le_bytes());
        p[8..10].copy_from_slice(&1u16.to_le_bytes());
        p[12..16].copy_from_slice(&items.max(1).to_le_bytes());
        p[16..20].copy_from_slice(&1u32.to_le_bytes());
        p[20..24].copy_from_slice(&1u32.to_le_bytes());
        p[32..40].copy_from_slice(&self.kernel_object.to_le_bytes());
        p[40..48].copy_from_slice(&self.kernarg.to_le_bytes());
        p
    }

    /// A valid BARRIER_AND packet with no dependencies.
    pub fn barrier_packet(&self) -> [u8; 64] {
        let mut p = [0u8; 64];
        let header = PACKET_BARRIER_AND as u16 | 1 << 8 | 2 << 9 | 2 << 11;
        p[0..2].copy_from_slice(&header.to_le_bytes());
        p
    }

    /// Runs one fuzz input: bytes 0..64 are the packet (zero-padded), byte
    /// 64's bits substitute real values the fuzzer cannot guess: bit 0 the
    /// kernel object, bit 1 the kernarg address, bit 2 a live completion
    /// signal, bit 3 live (satisfied) dependency signals in every barrier
    /// slot byte 65 selects. Returns what happened, or an error when the
    /// library misbehaved (hung, or stopped a queue with a success status).
    pub fn run(&self, data: &[u8]) -> Result<Outcome, String> {
        let mut p = [0u8; 64];
        let n = data.len().min(64);
        p[..n].copy_from_slice(&data[..n]);
        let flags = data.get(64).copied().unwrap_or(0);
        let slots = data.get(65).copied().unwrap_or(0);
        let kind = p[0];
        if flags & 1 != 0 {
            p[32..40].copy_from_slice(&self.kernel_object.to_le_bytes());
            // A real kernel runs: keep the grid small so the run is short.
            for d in 0..3 {
                let at = 12 + 4 * d;
                let v = u32::from_le_bytes(p[at..at + 4].try_into().unwrap()) % 4096;
                p[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        if flags & 2 != 0 {
            p[40..48].copy_from_slice(&self.kernarg.to_le_bytes());
        }
        let mut signals = Vec::new();
        let mut new_signal = |value: i64| -> Result<u64, String> {
            let mut s = 0u64;
            // SAFETY: `s` is a u64 output, no consumer list.
            check("hsa_signal_create", unsafe {
                (self.api.signal_create)(value, 0, std::ptr::null(), &mut s)
            })?;
            signals.push(s);
            Ok(s)
        };
        let completion = if flags & 4 != 0 {
            let s = new_signal(1)?;
            p[56..64].copy_from_slice(&s.to_le_bytes());
            Some(s)
        } else {
            None
        };
        if flags & 8 != 0 && (kind == PACKET_BARRIER_AND || kind == 5) {
            for k in 0..5 {
                if slots >> k & 1 != 0 {
                    let s = new_signal(0)?;
                    p[8 + 8 * k..16 + 8 * k].copy_from_slice(&s.to_le_bytes());
                }
            }
        }
        let outcome = self.submit(&p, completion);
        for s in signals {
            // SAFETY: a signal this call created; its queue is destroyed.
            unsafe { (self.api.signal_destroy)(s) };
        }
        outcome
    }

    /// Publishes `p` as packet 0 of a fresh queue and waits for it.
    fn submit(&self, p: &[u8; 64], completion: Option<u64>) -> Result<Outcome, String> {
        self.error.store(0, Ordering::SeqCst);
        let mut queue: *mut Queue = std::ptr::null_mut();
        let data = &*self.error as *const AtomicU32 as *mut c_void;
        // SAFETY: `queue` is an output; `data` outlives the queue (it is
        // destroyed below, before `self`).
        check("hsa_queue_create", unsafe {
            (self.api.queue_create)(
                self.agent,
                64,
                QUEUE_TYPE_SINGLE,
                Some(on_error),
                data,
                u32::MAX,
                u32::MAX,
                &mut queue,
            )
        })?;
        // SAFETY: `queue` is a live hsa_queue_t whose ring holds at least
        // one 64-byte packet slot; the body is written before the header,
        // which is published with a release store, as AQL requires.
        let outcome = unsafe {
            let slot = (*queue).base_address;
            std::ptr::copy_nonoverlapping(p[2..].as_ptr(), slot.add(2), 62);
            let header = u16::from_le_bytes([p[0], p[1]]);
            (*(slot as *const std::sync::atomic::AtomicU16)).store(header, Ordering::Release);
            (self.api.queue_store_write_index)(queue, 1);
            (self.api.signal_store)((*queue).doorbell_signal, 0);
            self.wait(queue, p[0], completion)
        };
        // SAFETY: the queue this call created.
        unsafe { (self.api.queue_destroy)(queue) };
        outcome
    }

    /// Waits (bounded) for packet 0 of `queue` to complete or fail.
    ///
    /// # Safety
    /// `queue` is live.
    unsafe fn wait(
        &self,
        queue: *mut Queue,
        kind: u8,
        completion: Option<u64>,
    ) -> Result<Outcome, String> {
        if kind == PACKET_INVALID {
            // Not a packet: the processor waits for the client to publish.
            return Ok(Outcome::NotPublished);
        }
        let start = Instant::now();
        loop {
            let error = self.error.load(Ordering::SeqCst);
            if error == u32::MAX {
                return Err("the error callback was called with HSA_STATUS_SUCCESS".into());
            }
            if error != 0 {
                return Ok(Outcome::Failed(error));
            }
            // SAFETY: `queue` is live (this function's contract).
            if unsafe { (self.api.queue_load_read_index)(queue) } >= 1 {
                if let Some(s) = completion {
                    // SAFETY: a live signal of this harness.
                    let v = unsafe { (self.api.signal_load)(s) };
                    if v != 0 {
                        // The decrement follows the read index; give it a moment.
                        if start.elapsed() > PACKET_BOUND {
                            return Err(format!("packet completed but its signal is {v}"));
                        }
                        std::thread::yield_now();
                        continue;
                    }
                }
                return Ok(Outcome::Completed);
            }
            if start.elapsed() > PACKET_BOUND {
                return Err(format!(
                    "packet of type {kind} neither completed nor failed within {PACKET_BOUND:?}"
                ));
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    /// Device address of the kernel's output word.
    pub fn output(&self) -> u64 {
        self.output
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        // SAFETY: balances the harness's hsa_init.
        unsafe { (self.api.shut_down)() };
    }
}

/// What one packet did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    /// The queue stopped with this error status.
    Failed(Status),
    /// The header said INVALID: nothing to process.
    NotPublished,
}
