//! Devices: count, selection, properties and attributes (from the device
//! profile), synchronization, reset, versions, peers.

use std::ffi::{c_char, c_void};

use crate::abi::*;
use crate::error::{c_str, get, guard, put, HipError, HipResult};
use crate::state::{hip, lock, set_current};

/// The HIP version softgpu's library implements: Debian's headers'
/// (`HIP_VERSION` of 5.2.21153).
pub const HIP_VERSION: i32 = 5 * 10_000_000 + 2 * 100_000 + 21153;

/// The properties of device `index`, filled from its profile.
pub fn properties(index: usize) -> HipResult<hipDeviceProp_t> {
    let hip = hip()?;
    let d = &hip.device(index as i32)?.device;
    let p = d.properties();
    // SAFETY: hipDeviceProp_t is plain data (integers, byte arrays and
    // raw pointers), for which all-zero bytes are a valid value.
    let mut props: hipDeviceProp_t = unsafe { std::mem::zeroed() };
    copy_c(&mut props.name, &p.marketing_name);
    // RDNA3 has neither XNACK nor SRAMECC, so ROCm names gfx11 devices by
    // the bare processor.
    copy_c(&mut props.gcnArchName, &p.name);
    let (free, total) = d.memory_info()?;
    let _ = free;
    let v = softgpu_isa::target::version(&p.name).unwrap_or_default();
    let (major, minor) = (v.major as i32, v.minor as i32);
    // CLR's gcnArch: major·100 + minor·10 + stepping (gfx1151: 1151,
    // gfx90a: 910).
    let version = major * 100 + minor * 10 + v.stepping as i32;
    props.totalGlobalMem = total as usize;
    props.sharedMemPerBlock = p.lds_bytes as usize;
    props.regsPerBlock = 65536;
    props.warpSize = p.wave_sizes.first().copied().unwrap_or(32) as i32;
    props.maxThreadsPerBlock = p.max_workgroup_size as i32;
    props.maxThreadsDim = p.max_workgroup_dims.map(|v| v as i32);
    props.maxGridSize = p.max_grid_dims.map(|v| v.min(i32::MAX as u32) as i32);
    props.clockRate = (p.clock_mhz * 1000) as i32;
    props.memoryClockRate = (p.memory_clock_mhz * 1000) as i32;
    props.memoryBusWidth = p.memory_bus_width_bits as i32;
    props.totalConstMem = total.min(i32::MAX as u64) as usize;
    props.major = major;
    props.minor = minor;
    props.multiProcessorCount = p.compute_units as i32;
    props.l2CacheSize = p.l2_cache_bytes as i32;
    props.maxThreadsPerMultiProcessor =
        (p.max_waves_per_cu * props.warpSize as u32).min(2048) as i32;
    props.computeMode = 0;
    // The shader clock `clock64()`/`s_memtime` reads, in kHz (100 MHz,
    // as ROCm reports for RDNA).
    props.clockInstructionRate = 100_000;
    // hipDeviceArch_t: every feature flag except dynamic parallelism and
    // surface functions (bits 0-16 set, 17 = surfaces off, 18 = dynamic
    // parallelism off). Bit 16 is has3dGrid.
    props.arch = (1 << 17) - 1 - (1 << 15);
    props.concurrentKernels = 1;
    props.pciDomainID = 0;
    props.pciBusID = 0xc1 + index as i32;
    props.pciDeviceID = 0;
    props.maxSharedMemoryPerMultiProcessor = p.lds_bytes as usize * 2;
    props.isMultiGpuBoard = 0;
    props.canMapHostMemory = 1;
    props.gcnArch = version;
    props.integrated = p.is_apu as i32;
    props.cooperativeLaunch = 1;
    props.cooperativeMultiDeviceLaunch = 0;
    // The T# limits (crate::texture::MAX_EXTENT); a linear (buffer)
    // texture is limited by NUM_RECORDS' 32 bits.
    let [w, h, d] = crate::texture::MAX_EXTENT.map(|v| v as i32);
    props.maxTexture1DLinear = i32::MAX;
    props.maxTexture1D = w;
    props.maxTexture2D = [w, h];
    props.maxTexture3D = [d, d, d];
    props.memPitch = i32::MAX as usize;
    props.textureAlignment = 256;
    props.texturePitchAlignment = 256;
    props.isLargeBar = 1;
    props.asicRevision = 0;
    props.managedMemory = 1;
    props.directManagedMemAccessFromHost = 1;
    props.concurrentManagedAccess = 1;
    props.pageableMemoryAccess = 0;
    props.pageableMemoryAccessUsesHostPageTables = 0;
    Ok(props)
}

fn copy_c(out: &mut [u8; 256], s: &str) {
    let n = s.len().min(255);
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
    out[n] = 0;
}

/// One `hipDeviceAttribute_t` (numbering of HIP 5.2.3's header).
fn attribute(attr: i32, index: usize) -> HipResult<i32> {
    let p = properties(index)?;
    let hip = hip()?;
    let profile = hip.devices[index].device.properties();
    let clamp = |v: usize| v.min(i32::MAX as usize) as i32;
    Ok(match attr {
        1 => 0, // AccessPolicyMaxWindowSize
        2 => 1, // AsyncEngineCount
        3 => p.canMapHostMemory,
        4 => 1, // CanUseHostPointerForRegisteredMem
        5 => p.clockRate,
        6 => p.computeMode,
        7 => 0, // ComputePreemptionSupported
        8 => p.concurrentKernels,
        9 => p.concurrentManagedAccess,
        10 => p.cooperativeLaunch,
        11 => p.cooperativeMultiDeviceLaunch,
        12 => 1, // DeviceOverlap
        13 => p.directManagedMemAccessFromHost,
        14 | 20 => 1, // Global/Local L1 cache
        15 => 1,      // HostNativeAtomicSupported
        16 => p.integrated,
        17 => p.isMultiGpuBoard,
        18 => p.kernelExecTimeoutEnabled,
        19 => p.l2CacheSize,
        21 | 22 => 0, // Luid, LuidDeviceNodeMask
        23 => p.major,
        24 => p.managedMemory,
        25 => p.maxThreadsPerMultiProcessor / p.warpSize, // MaxBlocksPerMultiProcessor
        26..=28 => p.maxThreadsDim[(attr - 26) as usize],
        29..=31 => p.maxGridSize[(attr - 29) as usize],
        39 => p.maxTexture1D,
        41 => p.maxTexture1DLinear,
        43 | 44 => p.maxTexture2D[(attr - 43) as usize],
        49..=51 => p.maxTexture3D[(attr - 49) as usize],
        // Surfaces, layered, gather, mipmapped and cube map limits: HIP
        // marks them CUDA only.
        32..=54 => 0,
        55 => p.maxThreadsDim[0],
        56 => p.maxThreadsPerBlock,
        57 => p.maxThreadsPerMultiProcessor,
        58 => clamp(p.memPitch),
        59 => p.memoryBusWidth,
        60 => p.memoryClockRate,
        61 => p.minor,
        62 => 0, // MultiGpuBoardGroupID
        63 => p.multiProcessorCount,
        65 => p.pageableMemoryAccess,
        66 => p.pageableMemoryAccessUsesHostPageTables,
        67 => p.pciBusID,
        68 => p.pciDeviceID,
        69 => p.pciDomainID,
        70 => 0, // PersistingL2CacheMaxSize
        71 => p.regsPerBlock,
        72 => p.regsPerBlock, // MaxRegistersPerMultiprocessor
        73 => 0,              // ReservedSharedMemPerBlock
        74 => clamp(p.sharedMemPerBlock),
        75 => clamp(p.sharedMemPerBlock), // SharedMemPerBlockOptin
        76 => clamp(p.maxSharedMemoryPerMultiProcessor),
        77 => 2, // SingleToDoublePrecisionPerfRatio
        78 => 1, // StreamPrioritiesSupported
        79 => 0, // SurfaceAlignment
        80 => p.tccDriver,
        81 => clamp(p.textureAlignment),
        82 => clamp(p.texturePitchAlignment),
        83 => clamp(p.totalConstMem),
        84 => clamp(p.totalGlobalMem),
        85 => 1, // UnifiedAddressing
        87 => p.warpSize,
        88 => 0, // MemoryPoolsSupported
        10000 => p.clockInstructionRate,
        10002 => clamp(p.maxSharedMemoryPerMultiProcessor),
        10003 => p.gcnArch,
        10007..=10010 => 0,
        10011 => p.isLargeBar,
        10012 => p.asicRevision,
        10013 => 0,                            // CanUseStreamWaitValue
        10014 => 1,                            // ImageSupport
        10015 => profile.compute_units as i32, // PhysicalMultiProcessorCount
        10016 => 1,                            // FineGrainSupport
        64 | 86 | 10001 | 10004..=10006 => {
            return Err(HipError::invalid(format!(
                "device attribute {attr} is not an int (use hipGetDeviceProperties)"
            )))
        }
        _ => {
            return Err(HipError::invalid(format!(
                "unknown device attribute {attr}"
            )))
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipInit(flags: u32) -> hipError_t {
    guard("hipInit", || {
        if flags != 0 {
            return Err(HipError::invalid("hipInit flags must be 0"));
        }
        hip().map(drop)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut i32) -> hipError_t {
    guard("hipGetDeviceCount", || {
        let n = hip().map(|h| h.devices.len() as i32)?;
        // SAFETY: output of an int (crate docs).
        unsafe { put(count, n) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipSetDevice(device: i32) -> hipError_t {
    guard("hipSetDevice", || {
        let index = hip()?.device(device)?.index;
        set_current(index);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevice(device: *mut i32) -> hipError_t {
    // SAFETY: output of an int (crate docs).
    guard("hipGetDevice", || unsafe {
        put(device, hip()?.current().index as i32)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGet(device: *mut i32, ordinal: i32) -> hipError_t {
    guard("hipDeviceGet", || {
        hip()?.device(ordinal)?;
        // SAFETY: output of an int (crate docs).
        unsafe { put(device, ordinal) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceProperties(
    props: *mut hipDeviceProp_t,
    device: i32,
) -> hipError_t {
    guard("hipGetDeviceProperties", || {
        let index = hip()?.device(device)?.index;
        // SAFETY: output of a hipDeviceProp_t (crate docs).
        unsafe { put(props, properties(index)?) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetAttribute(
    value: *mut i32,
    attr: i32,
    device: i32,
) -> hipError_t {
    guard("hipDeviceGetAttribute", || {
        let index = hip()?.device(device)?.index;
        let v = attribute(attr, index)?;
        // SAFETY: output of an int (crate docs).
        unsafe { put(value, v) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetName(name: *mut c_char, len: i32, device: i32) -> hipError_t {
    guard("hipDeviceGetName", || {
        let index = hip()?.device(device)?.index;
        if name.is_null() || len <= 0 {
            return Err(HipError::invalid("null or empty name buffer"));
        }
        let p = properties(index)?;
        let n = p
            .name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(255)
            .min(len as usize - 1);
        // SAFETY: `name` is valid for `len` bytes (crate docs, "Outputs");
        // `n + 1 <= len`.
        unsafe {
            std::ptr::copy_nonoverlapping(p.name.as_ptr() as *const c_char, name, n);
            *name.add(n) = 0;
        }
        Ok(())
    })
}

/// softgpu's own (`include/softgpu_ext.h`): the device profile `device`
/// emulates, its revision and the fidelity it reaches (a
/// `softgpu_fidelity_t`), which `hipDeviceProp_t` has no field for.
#[no_mangle]
pub unsafe extern "C" fn softgpuHipDeviceGetProfile(
    device: i32,
    id: *mut c_char,
    len: usize,
    revision: *mut u32,
    fidelity: *mut u32,
) -> hipError_t {
    guard("softgpuHipDeviceGetProfile", || {
        let hip = hip()?;
        let profile = hip.device(device)?.device.properties();
        let text = profile.profile_id.as_bytes();
        if id.is_null() || revision.is_null() || fidelity.is_null() {
            return Err(HipError::invalid("null output pointer"));
        }
        if text.len() >= len {
            return Err(HipError::invalid(format!(
                "the profile id needs {} bytes, the buffer has {len}",
                text.len() + 1
            )));
        }
        // SAFETY: `id` is valid for `len` bytes and `revision`, `fidelity`
        // for a u32 each (crate docs, "Outputs"); `text.len() + 1 <= len`.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr() as *const c_char, id, text.len());
            *id.add(text.len()) = 0;
            *revision = profile.revision;
            *fidelity = profile.max_fidelity.code();
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceComputeCapability(
    major: *mut i32,
    minor: *mut i32,
    device: i32,
) -> hipError_t {
    guard("hipDeviceComputeCapability", || {
        let p = properties(hip()?.device(device)?.index)?;
        // SAFETY: outputs of ints (crate docs).
        unsafe {
            put(major, p.major)?;
            put(minor, p.minor)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceTotalMem(bytes: *mut usize, device: i32) -> hipError_t {
    guard("hipDeviceTotalMem", || {
        let (_, total) = hip()?.device(device)?.device.memory_info()?;
        // SAFETY: output of a size (crate docs).
        unsafe { put(bytes, total as usize) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipChooseDevice(
    device: *mut i32,
    _props: *const hipDeviceProp_t,
) -> hipError_t {
    // Every softgpu device follows the same profile: the first fits best.
    // SAFETY: output of an int (crate docs).
    guard("hipChooseDevice", || unsafe {
        put(device, hip().map(|_| 0)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceSynchronize() -> hipError_t {
    guard("hipDeviceSynchronize", || {
        crate::graph::capture::refuse_synchronous_call("hipDeviceSynchronize")?;
        let hip = hip()?;
        crate::stream::synchronize_device(hip, hip.current().index)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceReset() -> hipError_t {
    guard("hipDeviceReset", || {
        let hip = hip()?;
        let device = hip.current();
        // Let queued work finish (or fail); then the device starts clean:
        // no sticky fault, no allocations, no peers.
        let _ = crate::stream::synchronize_device(hip, device.index);
        for s in crate::stream::device_streams(hip, device.index) {
            let _ = s.synchronize(hip);
        }
        *lock(&device.sticky) = None;
        lock(&device.peers).clear();
        crate::memory::free_device(device.index);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipRuntimeGetVersion(version: *mut i32) -> hipError_t {
    // SAFETY: output of an int (crate docs).
    guard("hipRuntimeGetVersion", || unsafe {
        put(version, HIP_VERSION)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDriverGetVersion(version: *mut i32) -> hipError_t {
    // SAFETY: output of an int (crate docs).
    guard("hipDriverGetVersion", || unsafe {
        put(version, HIP_VERSION)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipSetDeviceFlags(flags: u32) -> hipError_t {
    guard("hipSetDeviceFlags", || {
        // Scheduling flags (spin, yield, blocking sync) change how the host
        // waits, not results; softgpu's waits spin briefly, then sleep.
        if flags & !0x1f != 0 {
            return Err(HipError::invalid(format!(
                "unknown device flags {flags:#x}"
            )));
        }
        *lock(&hip()?.current().flags) = flags;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceFlags(flags: *mut u32) -> hipError_t {
    // SAFETY: output of an unsigned int (crate docs).
    guard("hipGetDeviceFlags", || unsafe {
        put(flags, *lock(&hip()?.current().flags))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetLimit(value: *mut usize, limit: i32) -> hipError_t {
    guard("hipDeviceGetLimit", || {
        let v = match limit {
            0 => 1 << 10, // hipLimitStackSize: per work-item scratch grows on demand
            1 => 1 << 20, // hipLimitPrintfFifoSize
            // The limit set, else CLR's initial heap size.
            HIP_LIMIT_MALLOC_HEAP_SIZE => hip()?.current().device.malloc_heap_limit() as usize,
            _ => return Err(HipError::new(215, format!("unknown limit {limit}"))),
        };
        // SAFETY: output of a size (crate docs).
        unsafe { put(value, v) }
    })
}

/// Newer than Debian's HIP 5.2.3 (whose headers do not declare it):
/// exported for programs that find it with `dlsym`. Only the device malloc
/// heap can be set, as in CLR (`hipErrorUnsupportedLimit` otherwise); see
/// [`softgpu::Device::set_malloc_heap_limit`] for what the limit does.
#[no_mangle]
pub unsafe extern "C" fn hipDeviceSetLimit(limit: i32, value: usize) -> hipError_t {
    guard("hipDeviceSetLimit", || {
        if limit != HIP_LIMIT_MALLOC_HEAP_SIZE {
            return Err(HipError::new(
                HIP_ERROR_UNSUPPORTED_LIMIT,
                format!(
                    "hipDeviceSetLimit: limit {limit} cannot be set (only \
                     hipLimitMallocHeapSize, {HIP_LIMIT_MALLOC_HEAP_SIZE})"
                ),
            ));
        }
        hip()?
            .current()
            .device
            .set_malloc_heap_limit(value as u64)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetCacheConfig(config: *mut i32) -> hipError_t {
    // SAFETY: output of an enum (crate docs).
    guard("hipDeviceGetCacheConfig", || unsafe { put(config, 0) })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceSetCacheConfig(_config: i32) -> hipError_t {
    // Accepted: softgpu has no configurable L1/LDS split.
    guard("hipDeviceSetCacheConfig", || hip().map(drop))
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetSharedMemConfig(config: *mut i32) -> hipError_t {
    // SAFETY: output of an enum (crate docs); 4-byte banks.
    guard("hipDeviceGetSharedMemConfig", || unsafe { put(config, 1) })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceSetSharedMemConfig(_config: i32) -> hipError_t {
    // Accepted: LDS banking does not change results.
    guard("hipDeviceSetSharedMemConfig", || hip().map(drop))
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetPCIBusId(
    out: *mut c_char,
    len: i32,
    device: i32,
) -> hipError_t {
    guard("hipDeviceGetPCIBusId", || {
        let p = properties(hip()?.device(device)?.index)?;
        let id = format!(
            "{:04x}:{:02x}:{:02x}.0\0",
            p.pciDomainID, p.pciBusID, p.pciDeviceID
        );
        if out.is_null() || (len as usize) < id.len() {
            return Err(HipError::invalid("bus id buffer too small"));
        }
        // SAFETY: `out` holds `len` >= id.len() bytes (crate docs).
        unsafe { std::ptr::copy_nonoverlapping(id.as_ptr() as *const c_char, out, id.len()) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetByPCIBusId(
    device: *mut i32,
    bus_id: *const c_char,
) -> hipError_t {
    guard("hipDeviceGetByPCIBusId", || {
        // SAFETY: a NUL-terminated string (crate docs).
        let want = unsafe { c_str(bus_id, "bus id")? }.to_ascii_lowercase();
        let hip = hip()?;
        for d in &hip.devices {
            let p = properties(d.index)?;
            let id = format!(
                "{:04x}:{:02x}:{:02x}.0",
                p.pciDomainID, p.pciBusID, p.pciDeviceID
            );
            if id == want || id.ends_with(&want) {
                // SAFETY: output of an int (crate docs).
                return unsafe { put(device, d.index as i32) };
            }
        }
        Err(HipError::invalid(format!("no device at bus id {want}")))
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceCanAccessPeer(
    can: *mut i32,
    device: i32,
    peer: i32,
) -> hipError_t {
    guard("hipDeviceCanAccessPeer", || {
        let hip = hip()?;
        hip.device(device)?;
        hip.device(peer)?;
        // Every softgpu GPU shares one arena, so all of them reach each
        // other's memory (a device is not its own peer).
        // SAFETY: output of an int (crate docs).
        unsafe { put(can, (device != peer) as i32) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceEnablePeerAccess(peer: i32, flags: u32) -> hipError_t {
    guard("hipDeviceEnablePeerAccess", || {
        let hip = hip()?;
        let me = hip.current();
        let peer_index = hip.device(peer)?.index;
        if flags != 0 {
            return Err(HipError::invalid("flags must be 0"));
        }
        if peer_index == me.index {
            return Err(HipError::invalid("a device cannot be its own peer"));
        }
        let mut peers = lock(&me.peers);
        if peers.contains(&peer_index) {
            return Err(HipError::new(
                HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED,
                format!("peer access to device {peer} is already enabled"),
            ));
        }
        peers.push(peer_index);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceDisablePeerAccess(peer: i32) -> hipError_t {
    guard("hipDeviceDisablePeerAccess", || {
        let hip = hip()?;
        let peer_index = hip.device(peer)?.index;
        let mut peers = lock(&hip.current().peers);
        let before = peers.len();
        peers.retain(|&p| p != peer_index);
        if peers.len() == before {
            return Err(HipError::new(
                HIP_ERROR_PEER_ACCESS_NOT_ENABLED,
                format!("peer access to device {peer} was not enabled"),
            ));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetP2PAttribute(
    value: *mut i32,
    attr: i32,
    src: i32,
    dst: i32,
) -> hipError_t {
    guard("hipDeviceGetP2PAttribute", || {
        let hip = hip()?;
        hip.device(src)?;
        hip.device(dst)?;
        let v = match attr {
            1 => 0,                       // PerformanceRank
            2..=4 => (src != dst) as i32, // AccessSupported, NativeAtomicSupported, CudaArrayAccess
            _ => return Err(HipError::invalid(format!("unknown peer attribute {attr}"))),
        };
        // SAFETY: output of an int (crate docs).
        unsafe { put(value, v) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipProfilerStart() -> hipError_t {
    // No profiler attaches to softgpu through HIP (use SOFTGPU_TRACE).
    guard("hipProfilerStart", || hip().map(drop))
}

#[no_mangle]
pub unsafe extern "C" fn hipProfilerStop() -> hipError_t {
    guard("hipProfilerStop", || hip().map(drop))
}

#[no_mangle]
pub unsafe extern "C" fn hipCreateChannelDesc(
    x: i32,
    y: i32,
    z: i32,
    w: i32,
    f: i32,
) -> hipChannelFormatDesc {
    hipChannelFormatDesc { x, y, z, w, f }
}

#[no_mangle]
pub unsafe extern "C" fn hipApiName(_id: u32) -> *const c_char {
    c"unknown".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn hipGetCmdName(_id: u32) -> *const c_char {
    c"unknown".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn hipInitActivityCallback(
    _id: *mut c_void,
    _op: *mut c_void,
    _arg: *mut c_void,
) {
    crate::error::unsupported("hipInitActivityCallback (roctracer activity callbacks)");
}

#[no_mangle]
pub unsafe extern "C" fn hipEnableActivityCallback(_op: u32, _enable: bool) -> bool {
    crate::error::unsupported("hipEnableActivityCallback (roctracer activity callbacks)");
    false
}

#[no_mangle]
pub unsafe extern "C" fn amd_dbgapi_get_build_name() -> *const c_char {
    c"softgpu".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn amd_dbgapi_get_git_hash() -> *const c_char {
    c"".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn amd_dbgapi_get_build_id() -> usize {
    0
}

/// Reads a `dim3` argument given by pointer.
///
/// # Safety
/// `p` is NULL or points to a `dim3` (crate docs, "Inputs").
pub unsafe fn dim3_arg(p: *const dim3) -> HipResult<dim3> {
    // SAFETY: forwarded to the caller.
    unsafe { get(p, "dim3") }
}

/// The compiler-runtime helper converting a float to IEEE half bits
/// (round to nearest even), which Debian's library also exports.
#[no_mangle]
pub unsafe extern "C" fn __gnu_f2h_ieee(value: f32) -> u16 {
    half::f16::from_f32(value).to_bits()
}

/// IEEE half bits to float.
#[no_mangle]
pub unsafe extern "C" fn __gnu_h2f_ieee(bits: u16) -> f32 {
    half::f16::from_bits(bits).to_f32()
}

symver!("device");
