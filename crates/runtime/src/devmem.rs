//! Device-side `malloc`/`free`: the heap a kernel's `hidden_heap_v1`
//! argument points at, and the hostcall service that gives it memory.
//!
//! clang's HIP headers map device `malloc`/`free` to ockl's
//! `__ockl_dm_alloc`/`__ockl_dm_dealloc` (rocm-device-libs' `dm.cl`).
//! With code object v5 that allocator keeps its state (per size kind: the
//! slabs it has and which blocks of each are taken) in the buffer
//! `hidden_heap_v1` points at, which the runtime must hand over zeroed;
//! CLR allocates 128 KiB of it once per device, on the first dispatch of a
//! kernel that has the argument. ockl 5.2's state is about 100 KiB of it.
//!
//! Memory itself comes from the host through hostcall service 3
//! (`SERVICE_DEVMEM`, ockl's `__ockl_devmem_request(addr, size)`; CLR's
//! `devhostcall.cpp` is the host side): `(0, size)` asks for `size` bytes
//! and gets their address, or 0 when there is none; `(addr, 0)` gives back
//! what an earlier request returned. ockl asks for 2 MiB slabs, carved
//! into blocks of one size kind (16 to 3072 bytes) and found again from a
//! block's address by rounding down to 2 MiB, so a slab must be 2 MiB
//! aligned; for larger blocks and its own bookkeeping arrays it asks for
//! exactly the bytes needed, and tells a large block from a slab's block
//! on `free` by its 4 KiB alignment. Each request here is an arena
//! allocation of its own, named in fault reports as device malloc: a large
//! block is confined to its bytes like a `hipMalloc`, while a small block
//! shares its slab with its neighbours, so an overflow of one into the next
//! is only caught at the slab's end.
//!
//! The limit (`hipLimitMallocHeapSize`): CLR reports its initial heap size,
//! 8 MiB by default, and lets the heap grow past it. softgpu reports the
//! same and, once a program sets a limit, holds every kernel's requests
//! together to it, so a `malloc` that would pass it returns NULL in the
//! kernel (CUDA's meaning of the limit, which a program that sets it
//! expects).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use softgpu_exec::arena::{Access, AllocSpec, Arena, MemError};

use crate::printf::complain;

/// ockl's hostcall service id for device memory requests.
pub const SERVICE_DEVMEM: u32 = 3;

/// Bytes of the heap state buffer (CLR's `HeapBufferSize`).
pub const HEAP_STATE_BYTES: u64 = 128 << 10;

/// The limit reported until a program sets one (CLR's default
/// `HIP_INITIAL_DM_SIZE`).
pub const DEFAULT_HEAP_LIMIT: u64 = 8 << 20;

/// ockl's slab size: a slab's blocks find its header by rounding down to it.
pub const SLAB_BYTES: u64 = 2 << 20;

/// ockl tells a large block (given back through the host) from a slab's
/// block by this alignment.
const LARGE_ALIGN: u64 = 4 << 10;

/// A device's malloc heap: its state buffer and the memory handed out.
pub struct DeviceHeap {
    arena: Arc<Arena>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The zeroed state buffer, once a kernel needed it.
    state: Option<u64>,
    /// The limit a program set; `None`: bounded only by device memory.
    limit: Option<u64>,
    /// Bytes handed out and not given back.
    in_use: u64,
    /// What each handed-out address is: its arena block and length.
    given: HashMap<u64, Given>,
    /// Addresses already reported as unknown to `free`.
    reported: HashSet<u64>,
}

#[derive(Clone, Copy)]
struct Given {
    /// Start of the arena allocation (below the address when the arena
    /// could not align the allocation itself: then the red zone behind the
    /// block starts up to one alignment later).
    block: u64,
    len: u64,
}

/// Why a device memory request could not be met.
#[derive(Debug, thiserror::Error)]
pub enum DevmemError {
    /// The request would take the heap past the limit the program set.
    #[error("{requested} bytes would take device malloc past its limit ({in_use} of {limit} bytes in use)")]
    OverLimit {
        requested: u64,
        in_use: u64,
        limit: u64,
    },
    /// The arena has no room.
    #[error("no device memory for {requested} bytes of device malloc")]
    Memory {
        requested: u64,
        #[source]
        source: MemError,
    },
}

impl DeviceHeap {
    /// A heap with nothing allocated yet.
    pub fn new(arena: &Arc<Arena>) -> DeviceHeap {
        DeviceHeap {
            arena: arena.clone(),
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The device address of the zeroed heap state buffer (allocated on
    /// the first call): what `hidden_heap_v1` gets.
    pub fn state_addr(&self) -> crate::Result<u64> {
        let mut inner = self.lock();
        if let Some(addr) = inner.state {
            return Ok(addr);
        }
        let spec = AllocSpec::internal(
            HEAP_STATE_BYTES,
            "the device malloc heap state",
            Access::ReadWrite,
        );
        let addr = self
            .arena
            .alloc_with(spec)
            .map_err(|source| crate::Error::OutOfMemory {
                what: "the device malloc heap state".into(),
                source,
            })?;
        inner.state = Some(addr);
        Ok(addr)
    }

    /// Sets the limit every kernel's requests are held to together.
    pub fn set_limit(&self, bytes: u64) {
        self.lock().limit = Some(bytes);
    }

    /// The limit a program set, or [`DEFAULT_HEAP_LIMIT`].
    pub fn limit(&self) -> u64 {
        self.lock().limit.unwrap_or(DEFAULT_HEAP_LIMIT)
    }

    /// Bytes handed out to kernels and not given back.
    pub fn in_use(&self) -> u64 {
        self.lock().in_use
    }

    /// Serves one `SERVICE_DEVMEM` call: `(0, size)` allocates, `(addr, 0)`
    /// frees. Returns what the device gets: the address, or 0 (refused
    /// allocations and every free).
    pub fn serve(&self, addr: u64, size: u64) -> u64 {
        match (addr, size) {
            (0, 0) => {
                complain("device malloc: a devmem request with neither address nor size; ignored");
                0
            }
            (0, size) => self.allocate(size).unwrap_or_else(|e| {
                if matches!(e, DevmemError::Memory { .. }) {
                    complain(&format!("device malloc: {e}; the kernel gets NULL"));
                }
                0
            }),
            (addr, _) => {
                self.give_back(addr);
                0
            }
        }
    }

    /// Allocates `size` bytes for a kernel, aligned as ockl needs.
    pub fn allocate(&self, size: u64) -> Result<u64, DevmemError> {
        let mut inner = self.lock();
        if let Some(limit) = inner.limit {
            if inner.in_use.saturating_add(size) > limit {
                return Err(DevmemError::OverLimit {
                    requested: size,
                    in_use: inner.in_use,
                    limit,
                });
            }
        }
        let align = if size >= SLAB_BYTES {
            SLAB_BYTES
        } else {
            LARGE_ALIGN
        };
        let (block, addr) = self.aligned_block(size, align)?;
        inner.given.insert(addr, Given { block, len: size });
        inner.in_use += size;
        Ok(addr)
    }

    /// An arena allocation of `size` bytes at an address aligned to
    /// `align`: `(block start, address)`. The arena aligns offsets from its
    /// base, so when the base itself is less aligned the block is made
    /// `align` longer, kept from kernels, and only the `size` bytes at the
    /// aligned address inside it opened to them.
    fn aligned_block(&self, size: u64, align: u64) -> Result<(u64, u64), DevmemError> {
        let memory = |source| DevmemError::Memory {
            requested: size,
            source,
        };
        let base_aligned = self.arena.base().is_multiple_of(align);
        let len = if base_aligned {
            size
        } else {
            size.checked_add(align).ok_or(memory(MemError::Exhausted {
                requested: size,
                free: 0,
            }))?
        };
        let access = if base_aligned {
            Access::ReadWrite
        } else {
            Access::HostOnly
        };
        let spec = AllocSpec::internal(len, origin_of(size), access).align(align);
        let block = self.arena.alloc_with(spec).map_err(memory)?;
        let addr = block.next_multiple_of(align);
        if !base_aligned {
            if let Err(source) = self.arena.protect(addr, size, Access::ReadWrite) {
                let _ = self.arena.free(block);
                return Err(memory(source));
            }
        }
        Ok((block, addr))
    }

    /// Frees what an earlier request returned; an address never handed out
    /// (or already freed) is reported once and changes nothing.
    pub fn give_back(&self, addr: u64) {
        let mut inner = self.lock();
        let Some(given) = inner.given.remove(&addr) else {
            if inner.reported.insert(addr) {
                complain(&format!(
                    "device malloc: free of {addr:#x}, which device malloc did not hand out; ignored"
                ));
            }
            return;
        };
        inner.in_use -= given.len;
        drop(inner);
        if let Err(e) = self.arena.free_by(given.block, "device free") {
            complain(&format!("device malloc: freeing {addr:#x}: {e}"));
        }
    }

    /// Frees the state buffer and everything handed out (at shutdown,
    /// when no kernel runs).
    pub fn release_all(&self) {
        let mut inner = self.lock();
        let blocks: Vec<u64> = inner.given.drain().map(|(_, g)| g.block).collect();
        let state = inner.state.take();
        inner.in_use = 0;
        drop(inner);
        for block in blocks.into_iter().chain(state) {
            let _ = self.arena.free(block);
        }
    }
}

/// How fault reports name a device malloc allocation.
fn origin_of(size: u64) -> &'static str {
    if size == SLAB_BYTES {
        "device malloc (a 2 MiB slab of ockl's small blocks: one block may overflow into the next unseen)"
    } else {
        "device malloc (a block of its own)"
    }
}

/// The device heaps of a runtime's GPUs, by agent index, each made on
/// first use.
#[derive(Default)]
pub struct DeviceHeaps {
    by_agent: Mutex<HashMap<usize, Arc<DeviceHeap>>>,
}

impl DeviceHeaps {
    /// Agent `agent`'s heap, made now if it was not.
    pub fn get(&self, arena: &Arc<Arena>, agent: usize) -> Arc<DeviceHeap> {
        let mut g = self.by_agent.lock().unwrap_or_else(|e| e.into_inner());
        g.entry(agent)
            .or_insert_with(|| Arc::new(DeviceHeap::new(arena)))
            .clone()
    }

    /// Frees every heap's memory.
    pub fn release_all(&self) {
        let all: Vec<_> = {
            let g = self.by_agent.lock().unwrap_or_else(|e| e.into_inner());
            g.values().cloned().collect()
        };
        for heap in all {
            heap.release_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heap() -> (Arc<Arena>, DeviceHeap) {
        let arena = Arc::new(Arena::new(64 << 20).expect("arena"));
        let heap = DeviceHeap::new(&arena);
        (arena, heap)
    }

    #[test]
    fn the_state_buffer_is_made_once_and_zeroed() {
        let (arena, heap) = heap();
        let addr = heap.state_addr().unwrap();
        assert_eq!(heap.state_addr().unwrap(), addr);
        let mut bytes = vec![0xffu8; HEAP_STATE_BYTES as usize];
        arena.read(addr, &mut bytes).unwrap();
        assert!(bytes.iter().all(|&b| b == 0));
        // ockl 5.2's state fits CLR's buffer, the last byte included.
        assert!(arena.read(addr + HEAP_STATE_BYTES, &mut [0u8]).is_err());
    }

    /// ockl finds a slab's header by rounding a block's address down to
    /// 2 MiB, and tells a large block by its 4 KiB alignment.
    #[test]
    fn slabs_and_large_blocks_are_aligned_as_ockl_needs() {
        let (_, heap) = heap();
        let slab = heap.serve(0, SLAB_BYTES);
        assert_ne!(slab, 0);
        assert!(slab.is_multiple_of(SLAB_BYTES));
        let large = heap.serve(0, 5000);
        assert_ne!(large, 0);
        assert!(large.is_multiple_of(4096));
        assert_eq!(heap.in_use(), SLAB_BYTES + 5000);
    }

    #[test]
    fn an_overflow_is_caught_at_the_blocks_end_and_named_device_malloc() {
        let (arena, heap) = heap();
        let large = heap.serve(0, 5000);
        arena.write(large + 4996, &[1, 2, 3, 4]).unwrap();
        assert!(arena.write(large + 5000, &[1]).is_err());
        let (text, _) = arena.explain(large + 5000, 4, true);
        assert!(
            text.contains("device malloc (a block of its own)"),
            "{text}"
        );
        let slab = heap.serve(0, SLAB_BYTES);
        let (text, _) = arena.explain(slab + SLAB_BYTES - 4, 8, true);
        assert!(text.contains("2 MiB slab"), "{text}");
        // When another arena took the preferred (2 MiB aligned) base, the
        // slab lies inside a longer block closed to kernels, which host
        // writes like this one still reach.
        if arena.base().is_multiple_of(SLAB_BYTES) {
            assert!(arena.write(slab + SLAB_BYTES, &[1]).is_err());
        }
    }

    #[test]
    fn free_gives_the_memory_back_and_poisons_it() {
        let (arena, heap) = heap();
        let block = heap.serve(0, 8192);
        assert_eq!(heap.serve(block, 0), 0);
        assert_eq!(heap.in_use(), 0);
        assert!(
            arena.write(block, &[1]).is_err(),
            "freed memory stays refused"
        );
        let (text, _) = arena.explain(block, 1, true);
        assert!(text.contains("freed by device free"), "{text}");
    }

    #[test]
    fn a_bad_free_changes_nothing() {
        let (_, heap) = heap();
        let block = heap.serve(0, 8192);
        heap.serve(block + 16, 0);
        heap.serve(0xdead_0000, 0);
        assert_eq!(heap.serve(0, 0), 0);
        assert_eq!(heap.in_use(), 8192);
        // Freed twice: the second is refused, nothing else changes.
        heap.serve(block, 0);
        heap.serve(block, 0);
        assert_eq!(heap.in_use(), 0);
    }

    /// Unset, the limit reads as CLR's initial heap size and does not
    /// bind (ROCm grows the heap past it); once set, a request that
    /// would pass it gets 0, which ockl's malloc returns as NULL.
    #[test]
    fn the_limit_binds_once_set() {
        let (_, heap) = heap();
        assert_eq!(heap.limit(), DEFAULT_HEAP_LIMIT);
        let blocks: Vec<u64> = (0..5).map(|_| heap.serve(0, SLAB_BYTES)).collect();
        assert!(
            blocks.iter().all(|&b| b != 0),
            "10 MiB past an unset 8 MiB limit"
        );
        for b in blocks {
            heap.serve(b, 0);
        }
        heap.set_limit(3 << 20);
        assert_eq!(heap.limit(), 3 << 20);
        let first = heap.serve(0, SLAB_BYTES);
        assert_ne!(first, 0);
        assert_eq!(heap.serve(0, SLAB_BYTES), 0);
        assert!(matches!(
            heap.allocate(SLAB_BYTES),
            Err(DevmemError::OverLimit { in_use, .. }) if in_use == SLAB_BYTES
        ));
        assert_ne!(heap.serve(0, 1 << 20), 0, "what is left of the limit");
        heap.serve(first, 0);
        assert_ne!(heap.serve(0, SLAB_BYTES), 0);
    }

    #[test]
    fn release_all_frees_everything() {
        let (arena, heap) = heap();
        let used = arena.used();
        heap.state_addr().unwrap();
        heap.serve(0, SLAB_BYTES);
        heap.release_all();
        assert_eq!(heap.in_use(), 0);
        assert_eq!(arena.used(), used);
    }
}
