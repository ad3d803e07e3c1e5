//! The body of the `api` fuzz target: random sequences of HSA calls into
//! softgpu's library (`libhsa-runtime64.so.1`, loaded with `dlopen`) with
//! random and hostile arguments — wild and freed pointers, read-only
//! memory, forged handles, huge sizes, random attribute numbers. The
//! library must survive every call (no signal, no hang) and valid state
//! must stay valid: a canary allocation keeps its bytes, and a valid copy
//! still works after every call.
//!
//! Pointers offered to calls that write are never ones the library could
//! not know to be wrong: the harness's own host buffer is offered only with
//! sizes that fit it (host memory is the client's; the library cannot know
//! a host buffer's size, only whether its pages are mapped).
//!
//! Shared by `fuzz/fuzz_targets/api.rs` (cargo-fuzz, nightly) and the
//! stable test `crates/hsa/tests/fuzz.rs`, which includes this file.

use std::ffi::c_void;
use std::path::Path;

use crate::aql::{open_library, symbol};
pub use crate::sequence::Counts;
use crate::sequence::{Input, Target};

type Status = u32;
const SUCCESS: Status = 0;
const AGENT_INFO_DEVICE: u32 = 17;
const DEVICE_TYPE_GPU: u32 = 1;
const REGION_INFO_GLOBAL_FLAGS: u32 = 1;
const REGION_GLOBAL_FLAG_KERNARG: u32 = 1;

type AgentCallback = unsafe extern "C" fn(u64, *mut c_void) -> Status;

/// The HSA functions the target calls.
struct Api {
    init: unsafe extern "C" fn() -> Status,
    iterate_agents: unsafe extern "C" fn(AgentCallback, *mut c_void) -> Status,
    agent_get_info: unsafe extern "C" fn(u64, u32, *mut c_void) -> Status,
    agent_iterate_regions: unsafe extern "C" fn(u64, AgentCallback, *mut c_void) -> Status,
    region_get_info: unsafe extern "C" fn(u64, u32, *mut c_void) -> Status,
    memory_allocate: unsafe extern "C" fn(u64, usize, *mut *mut c_void) -> Status,
    memory_free: unsafe extern "C" fn(*mut c_void) -> Status,
    memory_copy: unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> Status,
    memory_fill: unsafe extern "C" fn(*mut c_void, u32, usize) -> Status,
    memory_lock:
        unsafe extern "C" fn(*mut c_void, usize, *const u64, i32, *mut *mut c_void) -> Status,
    memory_unlock: unsafe extern "C" fn(*mut c_void) -> Status,
    memory_register: unsafe extern "C" fn(*mut c_void, usize) -> Status,
    memory_deregister: unsafe extern "C" fn(*mut c_void, usize) -> Status,
    async_copy: unsafe extern "C" fn(
        *mut c_void,
        u64,
        *const c_void,
        u64,
        usize,
        u32,
        *const u64,
        u64,
    ) -> Status,
    pointer_info: unsafe extern "C" fn(
        *const c_void,
        *mut u8,
        Option<AllocFn>,
        *mut u32,
        *mut *mut u64,
    ) -> Status,
    signal_create: unsafe extern "C" fn(i64, u32, *const u64, *mut u64) -> Status,
    signal_destroy: unsafe extern "C" fn(u64) -> Status,
    signal_store: unsafe extern "C" fn(u64, i64),
    signal_load: unsafe extern "C" fn(u64) -> i64,
    signal_wait: unsafe extern "C" fn(u64, u32, i64, u64, u32) -> i64,
    executable_destroy: unsafe extern "C" fn(u64) -> Status,
    queue_destroy: unsafe extern "C" fn(*mut c_void) -> Status,
}

type AllocFn = unsafe extern "C" fn(usize) -> *mut c_void;

/// Sizes at and around the edges the library checks.
const SIZES: [u64; 12] = [
    0,
    1,
    3,
    4,
    255,
    4096,
    4097,
    65536,
    1 << 20,
    1 << 32,
    1 << 44,
    u64::MAX,
];

/// Addresses no one allocated: null, low, wild, the top of the space.
const WILD: [u64; 5] = [0, 0x1000, 0xdea_dbee_f000, 0x7fff_ffff_f000, u64::MAX - 7];

/// Bytes of the harness's host buffer.
const HOST_BYTES: usize = 1 << 20;
/// Bytes of each allocation the harness makes.
const ALLOC_BYTES: usize = 4096;
/// The canary's pattern.
const CANARY: u8 = 0xC5;

static READ_ONLY: [u8; 4096] = [0x11; 4096];

pub struct Harness {
    api: Api,
    agent: u64,
    region: u64,
    /// Memory nobody's call may change; checked after every call.
    canary: u64,
    /// Live allocations of [`ALLOC_BYTES`].
    live: Vec<u64>,
    /// Allocations freed.
    freed: Vec<u64>,
    /// Signals created (some destroyed since).
    signals: Vec<u64>,
    /// The harness's own host memory, offered with sizes that fit it
    /// (kept alive here; only ever reached through `host_at`, the pointer
    /// taken from it when it was made).
    _host: Vec<u8>,
    host_at: u64,
}

unsafe extern "C" fn find_gpu(agent: u64, data: *mut c_void) -> Status {
    // SAFETY: `data` is the `(&Api, Option<u64>)` `Harness::new` passes.
    let search = unsafe { &mut *(data as *mut (*const Api, Option<u64>)) };
    let mut device = 0u32;
    // SAFETY: `search.0` points to the live `Api`; `device` is a u32.
    unsafe { ((*search.0).agent_get_info)(agent, AGENT_INFO_DEVICE, &mut device as *mut u32 as _) };
    if device == DEVICE_TYPE_GPU && search.1.is_none() {
        search.1 = Some(agent);
    }
    SUCCESS
}

unsafe extern "C" fn find_kernarg_region(region: u64, data: *mut c_void) -> Status {
    // SAFETY: as for `find_gpu`.
    let search = unsafe { &mut *(data as *mut (*const Api, Option<u64>)) };
    let mut flags = 0u32;
    // SAFETY: as for `find_gpu`.
    unsafe {
        ((*search.0).region_get_info)(
            region,
            REGION_INFO_GLOBAL_FLAGS,
            &mut flags as *mut u32 as _,
        )
    };
    if flags & REGION_GLOBAL_FLAG_KERNARG != 0 && search.1.is_none() {
        search.1 = Some(region);
    }
    SUCCESS
}

impl Harness {
    /// Loads the library at `library`, initialises HSA, allocates the
    /// canary.
    pub fn new(library: &Path) -> Result<Harness, String> {
        let lib = open_library(library)?;
        // SAFETY: each type below is the hsa.h / hsa_ext_amd.h declaration
        // of its symbol.
        let api = unsafe {
            Api {
                init: symbol(lib, "hsa_init")?,
                iterate_agents: symbol(lib, "hsa_iterate_agents")?,
                agent_get_info: symbol(lib, "hsa_agent_get_info")?,
                agent_iterate_regions: symbol(lib, "hsa_agent_iterate_regions")?,
                region_get_info: symbol(lib, "hsa_region_get_info")?,
                memory_allocate: symbol(lib, "hsa_memory_allocate")?,
                memory_free: symbol(lib, "hsa_memory_free")?,
                memory_copy: symbol(lib, "hsa_memory_copy")?,
                memory_fill: symbol(lib, "hsa_amd_memory_fill")?,
                memory_lock: symbol(lib, "hsa_amd_memory_lock")?,
                memory_unlock: symbol(lib, "hsa_amd_memory_unlock")?,
                memory_register: symbol(lib, "hsa_memory_register")?,
                memory_deregister: symbol(lib, "hsa_memory_deregister")?,
                async_copy: symbol(lib, "hsa_amd_memory_async_copy")?,
                pointer_info: symbol(lib, "hsa_amd_pointer_info")?,
                signal_create: symbol(lib, "hsa_signal_create")?,
                signal_destroy: symbol(lib, "hsa_signal_destroy")?,
                signal_store: symbol(lib, "hsa_signal_store_screlease")?,
                signal_load: symbol(lib, "hsa_signal_load_scacquire")?,
                signal_wait: symbol(lib, "hsa_signal_wait_scacquire")?,
                executable_destroy: symbol(lib, "hsa_executable_destroy")?,
                queue_destroy: symbol(lib, "hsa_queue_destroy")?,
            }
        };
        let check = |what: &str, s: Status| {
            (s == SUCCESS)
                .then_some(())
                .ok_or(format!("{what} returned {s:#x}"))
        };
        // SAFETY: plain HSA calls; every output is a local of its hsa.h type.
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
                (api.agent_iterate_regions)(agent, find_kernarg_region, &mut search as *mut _ as _),
            )?;
            let region = search.1.ok_or("no kernarg region")?;
            let mut canary: *mut c_void = std::ptr::null_mut();
            check(
                "hsa_memory_allocate",
                (api.memory_allocate)(region, ALLOC_BYTES, &mut canary),
            )?;
            let pattern = [CANARY; ALLOC_BYTES];
            check(
                "hsa_memory_copy",
                (api.memory_copy)(canary, pattern.as_ptr().cast(), ALLOC_BYTES),
            )?;
            let mut host = vec![0u8; HOST_BYTES];
            let host_at = host.as_mut_ptr() as u64;
            Ok(Harness {
                api,
                agent,
                region,
                canary: canary as u64,
                live: Vec::new(),
                freed: Vec::new(),
                signals: Vec::new(),
                _host: host,
                host_at,
            })
        }
    }

    /// A pointer for a call, and the most bytes the harness lets a call
    /// write through it (`u64::MAX`: any; the library must refuse what it
    /// cannot hold).
    fn pointer(&self, input: &mut Input) -> Option<(u64, u64)> {
        let offsets = [
            0u64,
            1,
            4,
            ALLOC_BYTES as u64 - 4,
            ALLOC_BYTES as u64,
            1 << 20,
            1 << 32,
        ];
        Some(match input.byte()? % 6 {
            0 => (input.pick(&WILD)?, u64::MAX),
            1 if !self.live.is_empty() => {
                let at = input.pick(&self.live)? + input.pick(&offsets)?;
                (at, u64::MAX)
            }
            2 if !self.freed.is_empty() => (input.pick(&self.freed)?, u64::MAX),
            3 => (READ_ONLY.as_ptr() as u64, u64::MAX),
            4 => {
                let offset = input.pick(&[0usize, 1, 4096, HOST_BYTES - 64])?;
                let at = self.host_at + offset as u64;
                (at, (HOST_BYTES - offset) as u64)
            }
            _ => (self.canary + input.pick(&offsets)?, 0),
        })
    }

    /// A size for a write through a pointer that allows `room` bytes.
    fn size(input: &mut Input, room: u64) -> Option<u64> {
        let s = input.pick(&SIZES)?;
        Some(s.min(room))
    }

    /// One call chosen by `input`; `None` when the input ran out.
    fn call(&mut self, input: &mut Input) -> Option<Status> {
        let op = input.byte()? % 14;
        let api = &self.api;
        // SAFETY: every call below hands the library pointers that are
        // either wild (it must refuse them), the harness's own memory with
        // sizes that fit, read-only memory (it must refuse writes), or
        // device memory it manages; outputs are locals of the right type.
        let status = unsafe {
            match op {
                0 => {
                    let size = input.pick(&[0u64, 1, 64, ALLOC_BYTES as u64, 1 << 40])?;
                    let mut p: *mut c_void = std::ptr::null_mut();
                    let s = (api.memory_allocate)(self.region, size as usize, &mut p);
                    if s == SUCCESS && size == ALLOC_BYTES as u64 {
                        self.live.push(p as u64);
                    } else if s == SUCCESS {
                        (api.memory_free)(p);
                    }
                    s
                }
                1 => {
                    let (p, _) = self.pointer(input)?;
                    if p == self.canary {
                        return Some(SUCCESS);
                    }
                    let s = (api.memory_free)(p as *mut c_void);
                    if let Some(i) = self
                        .live
                        .iter()
                        .position(|&l| l == p)
                        .filter(|_| s == SUCCESS)
                    {
                        self.freed.push(self.live.swap_remove(i));
                    }
                    s
                }
                2 => {
                    let (dst, room) = self.pointer(input)?;
                    let (src, _) = self.pointer(input)?;
                    let size = Self::size(input, room)?;
                    (api.memory_copy)(dst as *mut c_void, src as *const c_void, size as usize)
                }
                3 => {
                    let (dst, room) = self.pointer(input)?;
                    let count = Self::size(input, room)? / 4;
                    (api.memory_fill)(dst as *mut c_void, 0xabab_abab, count as usize)
                }
                4 => {
                    let (p, room) = self.pointer(input)?;
                    let size = Self::size(input, room)?;
                    let mut out: *mut c_void = std::ptr::null_mut();
                    let s = (api.memory_lock)(
                        p as *mut c_void,
                        size as usize,
                        std::ptr::null(),
                        0,
                        &mut out,
                    );
                    if s == SUCCESS {
                        (api.memory_unlock)(p as *mut c_void);
                    }
                    s
                }
                5 => {
                    let (p, room) = self.pointer(input)?;
                    let size = Self::size(input, room)?;
                    let s = (api.memory_register)(p as *mut c_void, size as usize);
                    if s == SUCCESS {
                        (api.memory_deregister)(p as *mut c_void, size as usize);
                    }
                    s
                }
                6 => {
                    let (dst, room) = self.pointer(input)?;
                    let (src, _) = self.pointer(input)?;
                    let size = Self::size(input, room)?;
                    let mut done = 0u64;
                    (api.signal_create)(1, 0, std::ptr::null(), &mut done);
                    let s = (api.async_copy)(
                        dst as *mut c_void,
                        self.agent,
                        src as *const c_void,
                        self.agent,
                        size as usize,
                        0,
                        std::ptr::null(),
                        done,
                    );
                    if s == SUCCESS {
                        // A refused copy fails its signal; either way it ends.
                        (api.signal_wait)(done, 2, 1, 10_000_000_000, 0);
                    }
                    (api.signal_destroy)(done);
                    s
                }
                7 => {
                    let (p, _) = self.pointer(input)?;
                    // hsa_amd_pointer_info_t is 72 bytes; its size field first.
                    let mut info = [0u8; 256];
                    info[..4].copy_from_slice(&72u32.to_le_bytes());
                    (api.pointer_info)(
                        p as *const c_void,
                        info.as_mut_ptr(),
                        None,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                    )
                }
                8 => {
                    let mut s = 0u64;
                    let r = (api.signal_create)(input.byte()? as i64, 0, std::ptr::null(), &mut s);
                    if r == SUCCESS {
                        self.signals.push(s);
                    }
                    r
                }
                9 => {
                    let s = self.signal(input)?;
                    (api.signal_destroy)(s)
                }
                10 => {
                    let s = self.signal(input)?;
                    (api.signal_store)(s, input.byte()? as i64);
                    (api.signal_load)(s);
                    (api.signal_wait)(s, input.byte()? as u32 % 6, 0, 100_000, 0);
                    SUCCESS
                }
                11 => {
                    // Any attribute number, into a buffer larger than any.
                    let mut out = [0u8; 4096];
                    let attribute = u32::from(input.byte()?) | u32::from(input.byte()?) << 8;
                    let agent = if input.byte()? % 2 == 0 {
                        self.agent
                    } else {
                        self.agent ^ 0x5a5a
                    };
                    (api.agent_get_info)(agent, attribute, out.as_mut_ptr().cast())
                }
                12 => (api.executable_destroy)(input.pick(&WILD)? | 1),
                _ => {
                    let (p, _) = self.pointer(input)?;
                    if self.live.contains(&p) || p == self.canary {
                        return Some(SUCCESS);
                    }
                    (api.queue_destroy)(p as *mut c_void)
                }
            }
        };
        Some(status)
    }

    /// A signal handle: made, destroyed or forged.
    fn signal(&self, input: &mut Input) -> Option<u64> {
        Some(match input.byte()? % 3 {
            0 if !self.signals.is_empty() => input.pick(&self.signals)?,
            1 => input.pick(&WILD)? | 0x1_0000,
            _ => self.signals.last().map_or(0x77, |s| s ^ (1 << 40)),
        })
    }

    /// Runs the calls `data` chooses; after each, the canary must hold its
    /// bytes and a valid copy must work.
    pub fn run(&mut self, data: &[u8]) -> Result<Counts, String> {
        let counts = crate::sequence::run(self, data)?;
        // Allocations do not pile up across runs.
        for p in self.live.drain(..) {
            // SAFETY: a live allocation of the library's.
            unsafe { (self.api.memory_free)(p as *mut c_void) };
        }
        self.freed.truncate(64);
        Ok(counts)
    }

    /// The canary still holds its bytes, read through a valid copy.
    fn canary_intact(&self) -> Result<(), String> {
        let mut back = vec![0u8; ALLOC_BYTES];
        // SAFETY: the canary is a live allocation of `ALLOC_BYTES`; `back`
        // is ours.
        let s = unsafe {
            (self.api.memory_copy)(
                back.as_mut_ptr().cast(),
                self.canary as *const c_void,
                ALLOC_BYTES,
            )
        };
        if s != SUCCESS {
            return Err(format!("a valid copy of the canary failed: {s:#x}"));
        }
        crate::sequence::canary_holds(&back, CANARY)
    }
}

impl Target for Harness {
    fn step(&mut self, input: &mut Input) -> Option<bool> {
        Some(self.call(input)? == SUCCESS)
    }

    fn check(&self) -> Result<(), String> {
        self.canary_intact()
    }
}
