//! The C types and constants of HIP 5.2.3 (`/usr/include/hip`), as
//! `#[repr(C)]` mirrors. `tests/abi.rs` compiles a C program against
//! Debian's headers and checks every size and offset here.

use std::ffi::c_void;

pub type hipError_t = i32;
pub type hipStream_t = *mut c_void;
pub type hipEvent_t = *mut c_void;
pub type hipModule_t = *mut c_void;
pub type hipFunction_t = *mut c_void;
pub type hipGraph_t = *mut c_void;
pub type hipGraphExec_t = *mut c_void;
pub type hipGraphNode_t = *mut c_void;
pub type hipDeviceptr_t = *mut c_void;

pub const HIP_SUCCESS: hipError_t = 0;
pub const HIP_ERROR_INVALID_VALUE: hipError_t = 1;
pub const HIP_ERROR_OUT_OF_MEMORY: hipError_t = 2;
pub const HIP_ERROR_INVALID_CONFIGURATION: hipError_t = 9;
pub const HIP_ERROR_INVALID_PITCH_VALUE: hipError_t = 12;
pub const HIP_ERROR_INVALID_SYMBOL: hipError_t = 13;
pub const HIP_ERROR_INVALID_DEVICE_POINTER: hipError_t = 17;
pub const HIP_ERROR_INVALID_MEMCPY_DIRECTION: hipError_t = 21;
pub const HIP_ERROR_MISSING_CONFIGURATION: hipError_t = 52;
pub const HIP_ERROR_INVALID_DEVICE_FUNCTION: hipError_t = 98;
pub const HIP_ERROR_NO_DEVICE: hipError_t = 100;
pub const HIP_ERROR_INVALID_DEVICE: hipError_t = 101;
pub const HIP_ERROR_INVALID_IMAGE: hipError_t = 200;
pub const HIP_ERROR_NO_BINARY_FOR_GPU: hipError_t = 209;
pub const HIP_ERROR_FILE_NOT_FOUND: hipError_t = 301;
pub const HIP_ERROR_INVALID_HANDLE: hipError_t = 400;
pub const HIP_ERROR_NOT_FOUND: hipError_t = 500;
pub const HIP_ERROR_NOT_READY: hipError_t = 600;
pub const HIP_ERROR_ILLEGAL_ADDRESS: hipError_t = 700;
pub const HIP_ERROR_LAUNCH_OUT_OF_RESOURCES: hipError_t = 701;
pub const HIP_ERROR_LAUNCH_TIMEOUT: hipError_t = 702;
pub const HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED: hipError_t = 704;
pub const HIP_ERROR_PEER_ACCESS_NOT_ENABLED: hipError_t = 705;
pub const HIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED: hipError_t = 712;
pub const HIP_ERROR_HOST_MEMORY_NOT_REGISTERED: hipError_t = 713;
pub const HIP_ERROR_LAUNCH_FAILURE: hipError_t = 719;
pub const HIP_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: hipError_t = 720;
pub const HIP_ERROR_NOT_SUPPORTED: hipError_t = 801;
pub const HIP_ERROR_STREAM_CAPTURE_UNSUPPORTED: hipError_t = 900;
pub const HIP_ERROR_STREAM_CAPTURE_INVALIDATED: hipError_t = 901;
pub const HIP_ERROR_STREAM_CAPTURE_UNMATCHED: hipError_t = 903;
pub const HIP_ERROR_STREAM_CAPTURE_ILLEGAL: hipError_t = 401;
pub const HIP_ERROR_STREAM_CAPTURE_WRONG_THREAD: hipError_t = 908;
pub const HIP_ERROR_UNKNOWN: hipError_t = 999;
/// `HIPRTC_ERROR_INTERNAL_ERROR`: what an absent `hiprtc*` returns.
pub const HIPRTC_ERROR_INTERNAL_ERROR: i32 = 11;

/// Every `hipError_t` with its enumerator name and a message.
pub const ERRORS: &[(hipError_t, &str, &str)] = &[
    (0, "hipSuccess", "no error"),
    (1, "hipErrorInvalidValue", "invalid argument"),
    (2, "hipErrorOutOfMemory", "out of memory"),
    (3, "hipErrorNotInitialized", "initialization error"),
    (4, "hipErrorDeinitialized", "driver shutting down"),
    (5, "hipErrorProfilerDisabled", "profiler disabled while using external profiling tool"),
    (6, "hipErrorProfilerNotInitialized", "profiler is not initialized"),
    (7, "hipErrorProfilerAlreadyStarted", "profiler already started"),
    (8, "hipErrorProfilerAlreadyStopped", "profiler already stopped"),
    (9, "hipErrorInvalidConfiguration", "invalid configuration argument"),
    (12, "hipErrorInvalidPitchValue", "invalid pitch argument"),
    (13, "hipErrorInvalidSymbol", "invalid device symbol"),
    (17, "hipErrorInvalidDevicePointer", "invalid device pointer"),
    (21, "hipErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"),
    (35, "hipErrorInsufficientDriver", "driver version is insufficient for runtime version"),
    (52, "hipErrorMissingConfiguration", "__global__ function call is not configured"),
    (53, "hipErrorPriorLaunchFailure", "unspecified launch failure in prior launch"),
    (98, "hipErrorInvalidDeviceFunction", "invalid device function"),
    (100, "hipErrorNoDevice", "no ROCm-capable device is detected"),
    (101, "hipErrorInvalidDevice", "invalid device ordinal"),
    (200, "hipErrorInvalidImage", "device kernel image is invalid"),
    (201, "hipErrorInvalidContext", "invalid device context"),
    (202, "hipErrorContextAlreadyCurrent", "context is already current context"),
    (205, "hipErrorMapFailed", "mapping of buffer object failed"),
    (206, "hipErrorUnmapFailed", "unmapping of buffer object failed"),
    (207, "hipErrorArrayIsMapped", "array is mapped"),
    (208, "hipErrorAlreadyMapped", "resource already mapped"),
    (209, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"),
    (210, "hipErrorAlreadyAcquired", "resource already acquired"),
    (211, "hipErrorNotMapped", "resource not mapped"),
    (212, "hipErrorNotMappedAsArray", "resource not mapped as array"),
    (213, "hipErrorNotMappedAsPointer", "resource not mapped as pointer"),
    (214, "hipErrorECCNotCorrectable", "uncorrectable ECC error encountered"),
    (215, "hipErrorUnsupportedLimit", "limit is not supported on this architecture"),
    (216, "hipErrorContextAlreadyInUse", "exclusive-thread device already in use by a different thread"),
    (217, "hipErrorPeerAccessUnsupported", "peer access is not supported between these two devices"),
    (218, "hipErrorInvalidKernelFile", "invalid kernel file"),
    (219, "hipErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context"),
    (300, "hipErrorInvalidSource", "device kernel image is invalid"),
    (301, "hipErrorFileNotFound", "file not found"),
    (302, "hipErrorSharedObjectSymbolNotFound", "shared object symbol not found"),
    (303, "hipErrorSharedObjectInitFailed", "shared object initialization failed"),
    (304, "hipErrorOperatingSystem", "OS call failed or operation not supported on this OS"),
    (400, "hipErrorInvalidHandle", "invalid resource handle"),
    (401, "hipErrorIllegalState", "the operation cannot be performed in the present state"),
    (500, "hipErrorNotFound", "named symbol not found"),
    (600, "hipErrorNotReady", "device not ready"),
    (700, "hipErrorIllegalAddress", "an illegal memory access was encountered"),
    (701, "hipErrorLaunchOutOfResources", "too many resources requested for launch"),
    (702, "hipErrorLaunchTimeOut", "the launch timed out and was terminated"),
    (704, "hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled"),
    (705, "hipErrorPeerAccessNotEnabled", "peer access has not been enabled"),
    (708, "hipErrorSetOnActiveProcess", "cannot set while device is active in this process"),
    (709, "hipErrorContextIsDestroyed", "context is destroyed"),
    (710, "hipErrorAssert", "device-side assert triggered"),
    (712, "hipErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"),
    (713, "hipErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"),
    (719, "hipErrorLaunchFailure", "unspecified launch failure"),
    (720, "hipErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"),
    (801, "hipErrorNotSupported", "operation not supported"),
    (900, "hipErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"),
    (901, "hipErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"),
    (902, "hipErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences"),
    (903, "hipErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began"),
    (904, "hipErrorStreamCaptureUnjoined", "capturing stream has unjoined work"),
    (905, "hipErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream"),
    (906, "hipErrorStreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream"),
    (907, "hipErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream"),
    (908, "hipErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"),
    (910, "hipErrorGraphExecUpdateFailure", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"),
    (999, "hipErrorUnknown", "unknown error"),
    (1052, "hipErrorRuntimeMemory", "runtime memory call returned error"),
    (1053, "hipErrorRuntimeOther", "runtime call other than memory returned error"),
];

pub const HIP_MEMCPY_HOST_TO_HOST: i32 = 0;
pub const HIP_MEMCPY_HOST_TO_DEVICE: i32 = 1;
pub const HIP_MEMCPY_DEVICE_TO_HOST: i32 = 2;
pub const HIP_MEMCPY_DEVICE_TO_DEVICE: i32 = 3;
pub const HIP_MEMCPY_DEFAULT: i32 = 4;

pub const HIP_STREAM_NON_BLOCKING: u32 = 1;
pub const HIP_EVENT_DISABLE_TIMING: u32 = 2;
/// `hipStreamPerThread`.
pub const STREAM_PER_THREAD: usize = 2;
/// `hipStreamLegacy` (not in 5.2.3's headers; CUDA's value, which later
/// HIP adopted).
pub const STREAM_LEGACY: usize = 1;

pub const HIP_MEMORY_TYPE_HOST: i32 = 0;
pub const HIP_MEMORY_TYPE_DEVICE: i32 = 1;
pub const HIP_MEMORY_TYPE_UNIFIED: i32 = 3;

/// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `..._SIZE`, `..._END` in `extra`.
pub const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
pub const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
pub const LAUNCH_PARAM_END: usize = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl dim3 {
    pub fn array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipDeviceProp_t {
    pub name: [u8; 256],
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: i32,
    pub warpSize: i32,
    pub maxThreadsPerBlock: i32,
    pub maxThreadsDim: [i32; 3],
    pub maxGridSize: [i32; 3],
    pub clockRate: i32,
    pub memoryClockRate: i32,
    pub memoryBusWidth: i32,
    pub totalConstMem: usize,
    pub major: i32,
    pub minor: i32,
    pub multiProcessorCount: i32,
    pub l2CacheSize: i32,
    pub maxThreadsPerMultiProcessor: i32,
    pub computeMode: i32,
    pub clockInstructionRate: i32,
    /// `hipDeviceArch_t`: 19 one-bit feature flags in one `unsigned`.
    pub arch: u32,
    pub concurrentKernels: i32,
    pub pciDomainID: i32,
    pub pciBusID: i32,
    pub pciDeviceID: i32,
    pub maxSharedMemoryPerMultiProcessor: usize,
    pub isMultiGpuBoard: i32,
    pub canMapHostMemory: i32,
    pub gcnArch: i32,
    pub gcnArchName: [u8; 256],
    pub integrated: i32,
    pub cooperativeLaunch: i32,
    pub cooperativeMultiDeviceLaunch: i32,
    pub maxTexture1DLinear: i32,
    pub maxTexture1D: i32,
    pub maxTexture2D: [i32; 2],
    pub maxTexture3D: [i32; 3],
    pub hdpMemFlushCntl: *mut u32,
    pub hdpRegFlushCntl: *mut u32,
    pub memPitch: usize,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub kernelExecTimeoutEnabled: i32,
    pub ECCEnabled: i32,
    pub tccDriver: i32,
    pub cooperativeMultiDeviceUnmatchedFunc: i32,
    pub cooperativeMultiDeviceUnmatchedGridDim: i32,
    pub cooperativeMultiDeviceUnmatchedBlockDim: i32,
    pub cooperativeMultiDeviceUnmatchedSharedMem: i32,
    pub isLargeBar: i32,
    pub asicRevision: i32,
    pub managedMemory: i32,
    pub directManagedMemAccessFromHost: i32,
    pub concurrentManagedAccess: i32,
    pub pageableMemoryAccess: i32,
    pub pageableMemoryAccessUsesHostPageTables: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipPointerAttribute_t {
    pub memoryType: i32,
    pub device: i32,
    pub devicePointer: *mut c_void,
    pub hostPointer: *mut c_void,
    pub isManaged: i32,
    pub allocationFlags: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipFuncAttributes {
    pub binaryVersion: i32,
    pub cacheModeCA: i32,
    pub constSizeBytes: usize,
    pub localSizeBytes: usize,
    pub maxDynamicSharedSizeBytes: i32,
    pub maxThreadsPerBlock: i32,
    pub numRegs: i32,
    pub preferredShmemCarveout: i32,
    pub ptxVersion: i32,
    pub sharedSizeBytes: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipPitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipExtent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipPos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemcpy3DParms {
    pub srcArray: *mut c_void,
    pub srcPos: hipPos,
    pub srcPtr: hipPitchedPtr,
    pub dstArray: *mut c_void,
    pub dstPos: hipPos,
    pub dstPtr: hipPitchedPtr,
    pub extent: hipExtent,
    pub kind: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipKernelNodeParams {
    pub blockDim: dim3,
    pub extra: *mut *mut c_void,
    pub func: *mut c_void,
    pub gridDim: dim3,
    pub kernelParams: *mut *mut c_void,
    pub sharedMemBytes: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemsetParams {
    pub dst: *mut c_void,
    pub elementSize: u32,
    pub height: usize,
    pub pitch: usize,
    pub value: u32,
    pub width: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipLaunchParams {
    pub func: *mut c_void,
    pub gridDim: dim3,
    pub blockDim: dim3,
    pub args: *mut *mut c_void,
    pub sharedMem: usize,
    pub stream: hipStream_t,
}

/// `hipChannelFormatDesc` (returned by value from `hipCreateChannelDesc`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipChannelFormatDesc {
    pub x: i32,
    pub y: i32,
    pub z: i32,
    pub w: i32,
    pub f: i32,
}

/// `hipHostFn_t` and `hipStreamCallback_t`.
pub type hipHostFn_t = Option<unsafe extern "C" fn(*mut c_void)>;
pub type hipStreamCallback_t = Option<unsafe extern "C" fn(hipStream_t, hipError_t, *mut c_void)>;

// --- Contexts, memory pools, IPC, stream memory operations -------------
//
// Types and constants of the 5.2.3 headers used by `context.rs`,
// `pool/`, `ipc.rs` and `stream_ops.rs`.

pub type hipCtx_t = *mut c_void;
pub type hipMemPool_t = *mut c_void;

pub const HIP_ERROR_INVALID_CONTEXT: hipError_t = 201;
pub const HIP_ERROR_CONTEXT_ALREADY_IN_USE: hipError_t = 216;
pub const HIP_ERROR_CONTEXT_IS_DESTROYED: hipError_t = 709;

/// `hipMemLocationTypeDevice`.
pub const HIP_MEM_LOCATION_TYPE_DEVICE: i32 = 1;
/// `hipMemAllocationTypePinned`.
pub const HIP_MEM_ALLOCATION_TYPE_PINNED: i32 = 1;
/// `hipMemAccessFlagsProtNone`, `...ProtRead`, `...ProtReadWrite`.
pub const HIP_MEM_ACCESS_NONE: i32 = 0;
pub const HIP_MEM_ACCESS_READ: i32 = 1;
pub const HIP_MEM_ACCESS_READ_WRITE: i32 = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipMemLocation {
    pub type_: i32,
    pub id: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipMemAccessDesc {
    pub location: hipMemLocation,
    pub flags: i32,
}

/// `hipMemPoolPtrExportData`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemPoolPtrExportData {
    pub reserved: [u8; 64],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemPoolProps {
    pub allocType: i32,
    pub handleTypes: i32,
    pub location: hipMemLocation,
    pub win32SecurityAttributes: *mut c_void,
    pub reserved: [u8; 64],
}

/// `hipUUID`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipUUID {
    pub bytes: [u8; 16],
}

/// `HIP_IPC_HANDLE_SIZE`.
pub const HIP_IPC_HANDLE_SIZE: usize = 64;

/// `hipIpcMemHandle_t` and `hipIpcEventHandle_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipIpcHandle {
    pub reserved: [u8; HIP_IPC_HANDLE_SIZE],
}

/// `hipStreamWaitValueGte`, `...Eq`, `...And`, `...Nor`.
pub const HIP_STREAM_WAIT_VALUE_GTE: u32 = 0;
pub const HIP_STREAM_WAIT_VALUE_EQ: u32 = 1;
pub const HIP_STREAM_WAIT_VALUE_AND: u32 = 2;
pub const HIP_STREAM_WAIT_VALUE_NOR: u32 = 3;

/// `hipMemoryTypeArray` (a HIP array side of a driver-style copy).
pub const HIP_MEMORY_TYPE_ARRAY: i32 = 2;

/// `hip_Memcpy2D` (`hipMemcpyParam2D`, `hipDrvMemcpy2DUnaligned`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_Memcpy2D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcMemoryType: i32,
    pub srcHost: *const c_void,
    pub srcDevice: hipDeviceptr_t,
    pub srcArray: *mut c_void,
    pub srcPitch: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstMemoryType: i32,
    pub dstHost: *mut c_void,
    pub dstDevice: hipDeviceptr_t,
    pub dstArray: *mut c_void,
    pub dstPitch: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
}

/// `HIP_MEMCPY3D` (`hipDrvMemcpy3D`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HIP_MEMCPY3D {
    pub srcXInBytes: u32,
    pub srcY: u32,
    pub srcZ: u32,
    pub srcLOD: u32,
    pub srcMemoryType: i32,
    pub srcHost: *const c_void,
    pub srcDevice: hipDeviceptr_t,
    pub srcArray: *mut c_void,
    pub srcPitch: u32,
    pub srcHeight: u32,
    pub dstXInBytes: u32,
    pub dstY: u32,
    pub dstZ: u32,
    pub dstLOD: u32,
    pub dstMemoryType: i32,
    pub dstHost: *mut c_void,
    pub dstDevice: hipDeviceptr_t,
    pub dstArray: *mut c_void,
    pub dstPitch: u32,
    pub dstHeight: u32,
    pub WidthInBytes: u32,
    pub Height: u32,
    pub Depth: u32,
}

/// `hipMemAllocationProp` as Debian's 5.2.3 headers lay it out (later
/// HIP versions reordered it).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemAllocationProp {
    pub compressionType: u8,
    pub location: hipMemLocation,
    pub requestedHandleType: i32,
    pub type_: i32,
    pub usage: u16,
    pub win32HandleMetaData: *mut c_void,
}

pub type hipMemGenericAllocationHandle_t = *mut c_void;
/// `hipMemHandleTypePosixFileDescriptor`.
pub const HIP_MEM_HANDLE_TYPE_POSIX_FD: i32 = 1;

/// `hipLimitMallocHeapSize`: the device malloc heap's limit.
pub const HIP_LIMIT_MALLOC_HEAP_SIZE: i32 = 2;
pub const HIP_ERROR_UNSUPPORTED_LIMIT: hipError_t = 215;
/// `hipCooperativeLaunchMultiDeviceNoPreSync`: a multi-device launch need
/// not wait for work queued before it on the other devices.
pub const HIP_MULTI_DEVICE_NO_PRE_SYNC: u32 = 0x01;
/// `hipCooperativeLaunchMultiDeviceNoPostSync`: work queued after a
/// multi-device launch need not wait for its kernels on the other devices.
pub const HIP_MULTI_DEVICE_NO_POST_SYNC: u32 = 0x02;

// ---- arrays, textures and surfaces (driver_types.h, texture_types.h) ----

/// `struct hipArray`: what a `hipArray_t` points to. The runtime owns it;
/// programs may read its fields.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipArray {
    pub data: *mut c_void,
    pub desc: hipChannelFormatDesc,
    pub type_: u32,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub Format: i32,
    pub NumChannels: u32,
    pub isDrv: bool,
    pub textureType: u32,
}

/// `HIP_ARRAY_DESCRIPTOR` (`hipArrayCreate`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HIP_ARRAY_DESCRIPTOR {
    pub Width: usize,
    pub Height: usize,
    pub Format: i32,
    pub NumChannels: u32,
}

/// `HIP_ARRAY3D_DESCRIPTOR` (`hipArray3DCreate`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HIP_ARRAY3D_DESCRIPTOR {
    pub Width: usize,
    pub Height: usize,
    pub Depth: usize,
    pub Format: i32,
    pub NumChannels: u32,
    pub Flags: u32,
}

/// `hipResourceDesc`'s `res.linear`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipResourceLinear {
    pub devPtr: *mut c_void,
    pub desc: hipChannelFormatDesc,
    pub sizeInBytes: usize,
}

/// `hipResourceDesc`'s `res.pitch2D`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipResourcePitch2D {
    pub devPtr: *mut c_void,
    pub desc: hipChannelFormatDesc,
    pub width: usize,
    pub height: usize,
    pub pitchInBytes: usize,
}

/// `hipResourceDesc`'s union (`res.array.array`, `res.mipmap.mipmap`,
/// `res.linear`, `res.pitch2D`).
#[repr(C)]
#[derive(Clone, Copy)]
pub union hipResourceUnion {
    pub array: *mut hipArray,
    pub mipmap: *mut c_void,
    pub linear: hipResourceLinear,
    pub pitch2D: hipResourcePitch2D,
}

/// `hipResourceDesc`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipResourceDesc {
    pub resType: i32,
    pub res: hipResourceUnion,
}

pub const HIP_RESOURCE_TYPE_ARRAY: i32 = 0;
pub const HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY: i32 = 1;
pub const HIP_RESOURCE_TYPE_LINEAR: i32 = 2;
pub const HIP_RESOURCE_TYPE_PITCH2D: i32 = 3;

/// `hipTextureDesc`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct hipTextureDesc {
    pub addressMode: [i32; 3],
    pub filterMode: i32,
    pub readMode: i32,
    pub sRGB: i32,
    pub borderColor: [f32; 4],
    pub normalizedCoords: i32,
    pub maxAnisotropy: u32,
    pub mipmapFilterMode: i32,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
}

/// `struct hipMipmappedArray`: what a `hipMipmappedArray_t` points to.
/// The runtime owns it; programs may read its fields.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMipmappedArray {
    pub data: *mut c_void,
    pub desc: hipChannelFormatDesc,
    pub type_: u32,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub min_mipmap_level: u32,
    pub max_mipmap_level: u32,
    pub flags: u32,
    pub format: i32,
}

/// `HIP_RESOURCE_DESC`'s `res.linear` (driver API).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HIP_RESOURCE_DESC_linear {
    pub devPtr: *mut c_void,
    pub format: i32,
    pub numChannels: u32,
    pub sizeInBytes: usize,
}

/// `HIP_RESOURCE_DESC`'s `res.pitch2D` (driver API).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HIP_RESOURCE_DESC_pitch2D {
    pub devPtr: *mut c_void,
    pub format: i32,
    pub numChannels: u32,
    pub width: usize,
    pub height: usize,
    pub pitchInBytes: usize,
}

/// `HIP_RESOURCE_DESC`'s union: `res.array.hArray`, `res.mipmap.hMipmappedArray`,
/// `res.linear`, `res.pitch2D`, and 128 reserved bytes that size it.
#[repr(C)]
#[derive(Clone, Copy)]
pub union HIP_RESOURCE_DESC_res {
    pub array: *mut hipArray,
    pub mipmap: *mut c_void,
    pub linear: HIP_RESOURCE_DESC_linear,
    pub pitch2D: HIP_RESOURCE_DESC_pitch2D,
    pub reserved: [i32; 32],
}

/// `HIP_RESOURCE_DESC` (`hipTexObjectCreate`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HIP_RESOURCE_DESC {
    pub resType: i32,
    pub res: HIP_RESOURCE_DESC_res,
    pub flags: u32,
}

/// `HIP_TEXTURE_DESC` (`hipTexObjectCreate`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct HIP_TEXTURE_DESC {
    pub addressMode: [i32; 3],
    pub filterMode: i32,
    pub flags: u32,
    pub maxAnisotropy: u32,
    pub mipmapFilterMode: i32,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
    pub borderColor: [f32; 4],
    pub reserved: [i32; 12],
}

/// `textureReference` (texture_types.h): the host side of a texture
/// reference, and the layout of its device copy, which device code reads
/// `textureObject` from. `texture<T, dim, mode>` derives from it and adds
/// no field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct textureReference {
    pub normalized: i32,
    pub readMode: i32,
    pub filterMode: i32,
    pub addressMode: [i32; 3],
    pub channelDesc: hipChannelFormatDesc,
    pub sRGB: i32,
    pub maxAnisotropy: u32,
    pub mipmapFilterMode: i32,
    pub mipmapLevelBias: f32,
    pub minMipmapLevelClamp: f32,
    pub maxMipmapLevelClamp: f32,
    pub textureObject: *mut c_void,
    pub numChannels: i32,
    pub format: i32,
}

/// `HIP_TRSA_OVERRIDE_FORMAT`, the one flag `hipTexRefSetArray` takes.
pub const HIP_TRSA_OVERRIDE_FORMAT: u32 = 0x01;
/// `hipTexRefSetFlags`' flags.
pub const HIP_TRSF_READ_AS_INTEGER: u32 = 0x01;
pub const HIP_TRSF_NORMALIZED_COORDINATES: u32 = 0x02;
pub const HIP_TRSF_SRGB: u32 = 0x10;

#[cfg(test)]
mod tests {
    //! Every size and field offset here against Debian's HIP headers: a C
    //! program compiled with them prints `offsetof` and `sizeof`.
    use super::*;
    use std::mem::{offset_of, size_of};

    /// `(C expression, Rust value)` pairs: sizes and offsets.
    macro_rules! layout {
        ($($ty:ident { $($field:ident),* })*) => {
            vec![$(
                (format!("sizeof({})", stringify!($ty)), size_of::<$ty>()),
                $((format!("offsetof({}, {})", stringify!($ty), stringify!($field)), offset_of!($ty, $field)),)*
            )*]
        };
    }

    #[test]
    fn layouts_and_error_codes_match_debians_hip_headers() {
        let rust = layout! {
            dim3 { x, y, z }
            hipDeviceProp_t { name, totalGlobalMem, sharedMemPerBlock, regsPerBlock, warpSize,
                maxThreadsPerBlock, maxThreadsDim, maxGridSize, clockRate, memoryClockRate,
                memoryBusWidth, totalConstMem, major, minor, multiProcessorCount, l2CacheSize,
                maxThreadsPerMultiProcessor, computeMode, clockInstructionRate, arch,
                concurrentKernels, pciDomainID, pciBusID, pciDeviceID,
                maxSharedMemoryPerMultiProcessor, isMultiGpuBoard, canMapHostMemory, gcnArch,
                gcnArchName, integrated, cooperativeLaunch, cooperativeMultiDeviceLaunch,
                maxTexture1DLinear, maxTexture1D, maxTexture2D, maxTexture3D, hdpMemFlushCntl,
                hdpRegFlushCntl, memPitch, textureAlignment, texturePitchAlignment,
                kernelExecTimeoutEnabled, ECCEnabled, tccDriver,
                cooperativeMultiDeviceUnmatchedFunc, cooperativeMultiDeviceUnmatchedGridDim,
                cooperativeMultiDeviceUnmatchedBlockDim, cooperativeMultiDeviceUnmatchedSharedMem,
                isLargeBar, asicRevision, managedMemory, directManagedMemAccessFromHost,
                concurrentManagedAccess, pageableMemoryAccess,
                pageableMemoryAccessUsesHostPageTables }
            hipPointerAttribute_t { memoryType, device, devicePointer, hostPointer, isManaged,
                allocationFlags }
            hipFuncAttributes { binaryVersion, cacheModeCA, constSizeBytes, localSizeBytes,
                maxDynamicSharedSizeBytes, maxThreadsPerBlock, numRegs, preferredShmemCarveout,
                ptxVersion, sharedSizeBytes }
            hipPitchedPtr { ptr, pitch, xsize, ysize }
            hipExtent { width, height, depth }
            hipPos { x, y, z }
            hipMemcpy3DParms { srcArray, srcPos, srcPtr, dstArray, dstPos, dstPtr, extent, kind }
            hipKernelNodeParams { blockDim, extra, func, gridDim, kernelParams, sharedMemBytes }
            hipMemsetParams { dst, elementSize, height, pitch, value, width }
            hipLaunchParams { func, gridDim, blockDim, args, sharedMem, stream }
            hipChannelFormatDesc { x, y, z, w, f }
            hipMemAccessDesc { location, flags }
            hipMemPoolProps { allocType, handleTypes, location, win32SecurityAttributes, reserved }
            hipMemPoolPtrExportData { reserved }
            hipUUID { bytes }
            hipMemAllocationProp { compressionType, location, requestedHandleType, usage,
                win32HandleMetaData }
            hip_Memcpy2D { srcXInBytes, srcY, srcMemoryType, srcHost, srcDevice, srcArray,
                srcPitch, dstXInBytes, dstY, dstMemoryType, dstHost, dstDevice, dstArray,
                dstPitch, WidthInBytes, Height }
            HIP_MEMCPY3D { srcXInBytes, srcY, srcZ, srcLOD, srcMemoryType, srcHost, srcDevice,
                srcArray, srcPitch, srcHeight, dstXInBytes, dstY, dstZ, dstLOD, dstMemoryType,
                dstHost, dstDevice, dstArray, dstPitch, dstHeight, WidthInBytes, Height, Depth }
            hipTextureDesc { addressMode, filterMode, readMode, sRGB, borderColor,
                normalizedCoords, maxAnisotropy, mipmapFilterMode, mipmapLevelBias,
                minMipmapLevelClamp, maxMipmapLevelClamp }
            hipResourceDesc { resType, res }
            HIP_ARRAY_DESCRIPTOR { Width, Height, Format, NumChannels }
            HIP_ARRAY3D_DESCRIPTOR { Width, Height, Depth, Format, NumChannels, Flags }
            hipMipmappedArray { data, desc, width, height, depth, min_mipmap_level,
                max_mipmap_level, flags, format }
            HIP_RESOURCE_DESC { resType, res, flags }
            HIP_TEXTURE_DESC { addressMode, filterMode, flags, maxAnisotropy, mipmapFilterMode,
                mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp, borderColor, reserved }
            textureReference { normalized, readMode, filterMode, addressMode, channelDesc, sRGB,
                maxAnisotropy, mipmapFilterMode, mipmapLevelBias, minMipmapLevelClamp,
                maxMipmapLevelClamp, textureObject, numChannels, format }
        };
        // The error codes by their enumerator names.
        let mut rust = rust;
        rust.extend(
            ERRORS
                .iter()
                .map(|(code, name, _)| (name.to_string(), *code as usize)),
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let mut c = String::from(
            "#include <hip/hip_runtime_api.h>\n#include <stdio.h>\n#include <stddef.h>\nint main(void) {\n",
        );
        for (expr, _) in &rust {
            c.push_str(&format!("  printf(\"%zu\\n\", (size_t){expr});\n"));
        }
        c.push_str("  return 0;\n}\n");
        let src = dir.path().join("layout.c");
        std::fs::write(&src, c).expect("write C");
        let exe = dir.path().join("layout");
        let built = std::process::Command::new("cc")
            .args(["-D__HIP_PLATFORM_AMD__", "-I/usr/include", "-o"])
            .arg(&exe)
            .arg(&src)
            .output()
            .expect("cc (Debian package gcc) must be installed");
        assert!(
            built.status.success(),
            "compiling against /usr/include/hip (Debian package libamdhip64-dev) failed:\n{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let out = std::process::Command::new(&exe)
            .output()
            .expect("run layout");
        let c_values: Vec<usize> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.parse().expect("a number"))
            .collect();
        assert_eq!(c_values.len(), rust.len());
        for ((expr, r), c) in rust.iter().zip(c_values) {
            assert_eq!(*r, c, "{expr}: Rust {r}, C {c}");
        }
    }

    #[test]
    fn every_error_code_has_one_name() {
        let mut codes: Vec<_> = ERRORS.iter().map(|e| e.0).collect();
        codes.dedup();
        assert_eq!(codes.len(), ERRORS.len());
    }
}
