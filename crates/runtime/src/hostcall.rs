//! The host side of the hostcall protocol (HIP's default device printf).
//!
//! A kernel's `hidden_hostcall_buffer` argument points at one buffer per
//! device, laid out as ockl's `hostcall_impl.cl` (device side) and ROCclr's
//! `devhostcall.cpp` (host side) define it:
//!
//! | offset | field |
//! | --- | --- |
//! | 0 | `headers`: address of the packet headers |
//! | 8 | `payloads`: address of the packet payloads |
//! | 16 | `doorbell`: an HSA signal handle (an `amd_signal_t` address) |
//! | 24 | `free_stack`: top of the stack of free packets |
//! | 32 | `ready_stack`: top of the stack of packets for the host |
//! | 40 | `index_mask`: packet count - 1 (a power of two) |
//!
//! A packet header is 24 bytes: `next` (u64, the stack link), `activemask`
//! (u64, EXEC of the calling wave), `service` (u32) and `control` (u32, bit
//! 0 = "ready": the host has not answered yet). A payload is 64 lanes × 8
//! u64 slots. Both stacks hold *tagged* packet pointers: the low bits
//! (`& index_mask`) index the packet, the high bits are a tag the device
//! bumps each time it returns a packet to the free stack, so its lock-free
//! compare-exchange pops cannot suffer ABA. Packet 0 is the null packet
//! that ends both stacks and is never handed out.
//!
//! One call: the wave's first active lane pops a free packet, every active
//! lane writes its 8 arguments to its payload slots, the first lane writes
//! service, activemask and control = 1, pushes the packet on the ready
//! stack and adds 1 to the doorbell signal's value (with the signal's event
//! mailbox at null, it sends no interrupt). The wave then spins
//! (`s_sleep`) until control's ready bit is clear, reads each lane's two
//! return slots, and pushes the packet back on the free stack.
//!
//! The host: a listener thread per device takes the whole ready stack with
//! one exchange, and for each packet runs the service on every active
//! lane, writes the answers into the payload, and clears the ready bit with
//! release order. softgpu runs waves round-robin, so a spinning wave does
//! not starve the rest of its workgroup, and the listener runs on its own
//! thread, beside the queue processors. It polls only while a dispatch that
//! was given the buffer is in flight ([`HostcallUse`]), and parks otherwise.
//!
//! Services: 2 (`SERVICE_PRINTF`, also used by `fprintf` to stderr) is
//! implemented as ockl's message protocol: slot 0 is a descriptor (bit 0
//! begin, bit 1 end, bits 5..8 the number of data words in slots 1..8, bits
//! 8.. the message id the host handed out), slots 1.. are data. A message
//! is collected per work-item: the stream (0 stdout, 1 stderr), the format
//! string and the arguments as 8-byte words, strings inline (see
//! [`crate::printf::Words`]); when the end chunk arrives it is formatted
//! and printed, so each work-item's output is in order. 3
//! (`SERVICE_DEVMEM`: device `malloc`'s memory) is served by the device's
//! [`DeviceHeap`]. Any other service id gets a one-time error message and
//! zero answers.
//!
//! Everything the device wrote is read through the arena's checked
//! accessors; a malformed packet is reported on standard error, never a
//! panic or an unchecked host access.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use softgpu_exec::arena::{Access, AllocSpec, Arena};

use crate::devmem::{DeviceHeap, SERVICE_DEVMEM};
use crate::printf::{complain, emit, format, ArgSource, OutStream, Value, Want, Words};

/// Packets in a device's hostcall buffer (one is the null packet). Each
/// wave in a hostcall holds one, so this bounds the waves of all queues of
/// the device that may wait on the host at once.
pub const PACKETS: u64 = 1024;

const HEADER_BYTES: u64 = 24;
const PAYLOAD_BYTES: u64 = 64 * 8 * 8;
const BUFFER_HEADER_BYTES: u64 = 64;
const SIGNAL_BYTES: u64 = 64;

/// ockl's printf service id.
pub const SERVICE_PRINTF: u32 = 2;

const DESC_BEGIN: u64 = 1;
const DESC_END: u64 = 2;

/// How long the listener keeps checking without sleeping after it last
/// serviced a packet, while a dispatch using the buffer is in flight.
/// Spinning (without giving the core up) for the first part of it: a
/// yield can cost a whole scheduler time slice when the cores are busy.
const HOT: Duration = Duration::from_millis(2);
const SPIN: Duration = Duration::from_micros(300);

/// Longest message kept per work-item; longer ones are cut (and reported).
const MAX_MESSAGE: usize = 1 << 20;

/// A device's hostcall buffer and its listener thread.
pub struct Hostcall {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The heap was made for this buffer alone ([`Hostcall::start`]).
    owns_heap: bool,
}

struct Shared {
    arena: Arc<Arena>,
    /// The device's malloc heap, which `SERVICE_DEVMEM` serves.
    heap: Arc<DeviceHeap>,
    /// Start of the arena block.
    block: u64,
    /// The buffer header kernels get.
    addr: u64,
    headers: u64,
    payloads: u64,
    /// Dispatches in flight that were given the buffer.
    active: AtomicUsize,
    stop: AtomicBool,
    wake: Mutex<()>,
    cv: Condvar,
    state: Mutex<Listener>,
}

#[derive(Default)]
struct Listener {
    next_id: u64,
    /// Messages being collected, by id: the data words so far.
    messages: HashMap<u64, Vec<u8>>,
    /// Service ids already reported as unknown.
    reported: HashSet<u32>,
    /// Packets serviced, for tests and diagnostics.
    serviced: u64,
}

/// Keeps a device's listener polling while a dispatch that uses the
/// hostcall buffer may run; drop it once the dispatch has completed.
pub struct HostcallUse {
    shared: Arc<Shared>,
}

impl HostcallUse {
    /// The device address kernels get as `hidden_hostcall_buffer`.
    pub fn addr(&self) -> u64 {
        self.shared.addr
    }
}

impl Drop for HostcallUse {
    fn drop(&mut self) {
        self.shared.active.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Hostcall {
    /// Lays out a buffer of [`PACKETS`] packets in `arena` and starts its
    /// listener, with a device malloc heap of its own (freed by
    /// [`Hostcall::stop`]).
    pub fn start(arena: &Arc<Arena>, name: &str) -> crate::Result<Hostcall> {
        let heap = Arc::new(DeviceHeap::new(arena));
        let mut hostcall = Hostcall::with_heap(arena, heap, name)?;
        hostcall.owns_heap = true;
        Ok(hostcall)
    }

    /// Lays out a buffer of [`PACKETS`] packets in `arena` and starts its
    /// listener, which serves device memory requests from `heap`.
    pub fn with_heap(
        arena: &Arc<Arena>,
        heap: Arc<DeviceHeap>,
        name: &str,
    ) -> crate::Result<Hostcall> {
        let headers_off = BUFFER_HEADER_BYTES;
        let payloads_off = (headers_off + PACKETS * HEADER_BYTES).next_multiple_of(64);
        let signal_off = payloads_off + PACKETS * PAYLOAD_BYTES;
        let total = signal_off + SIGNAL_BYTES + 64;
        let block = arena
            .alloc_with(AllocSpec::internal(
                total,
                "the hostcall buffer",
                Access::ReadWrite,
            ))
            .map_err(|source| crate::Error::OutOfMemory {
                what: "the hostcall buffer".into(),
                source,
            })?;
        let addr = block.next_multiple_of(64);
        let shared = Arc::new(Shared {
            arena: arena.clone(),
            heap,
            block,
            addr,
            headers: addr + headers_off,
            payloads: addr + payloads_off,
            active: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            wake: Mutex::new(()),
            cv: Condvar::new(),
            state: Mutex::new(Listener {
                next_id: 1,
                ..Listener::default()
            }),
        });
        let init = (|| -> Result<(), softgpu_exec::arena::MemError> {
            let a = &**arena;
            let doorbell = addr + signal_off;
            // amd_signal_t: kind 1 (user), value, event mailbox null, event id.
            a.write(doorbell, &[0u8; SIGNAL_BYTES as usize])?;
            a.write(doorbell, &1u64.to_le_bytes())?;
            a.write(addr, &shared.headers.to_le_bytes())?;
            a.write(addr + 8, &shared.payloads.to_le_bytes())?;
            a.write(addr + 16, &doorbell.to_le_bytes())?;
            a.write(addr + 24, &(PACKETS - 1).to_le_bytes())?;
            a.write(addr + 32, &0u64.to_le_bytes())?;
            a.write(addr + 40, &(PACKETS - 1).to_le_bytes())?;
            for i in 0..PACKETS {
                let h = shared.headers + i * HEADER_BYTES;
                a.write(h, &[0u8; HEADER_BYTES as usize])?;
                a.write(h, &i.saturating_sub(1).to_le_bytes())?;
            }
            Ok(())
        })();
        if let Err(e) = init {
            let _ = arena.free(block);
            return Err(crate::Error::OutOfMemory {
                what: "the hostcall buffer".into(),
                source: e,
            });
        }
        fence(Ordering::Release);
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("softgpu-hostcall-{name}"))
            .spawn(move || s.run())
            .map_err(|source| crate::Error::Spawn {
                thread: format!("hostcall listener ({name})"),
                source,
            })?;
        Ok(Hostcall {
            shared,
            thread: Mutex::new(Some(thread)),
            owns_heap: false,
        })
    }

    /// Marks a dispatch using the buffer as in flight.
    pub fn take_use(&self) -> HostcallUse {
        self.shared.active.fetch_add(1, Ordering::AcqRel);
        let _g = self.shared.wake.lock().unwrap_or_else(|e| e.into_inner());
        self.shared.cv.notify_all();
        HostcallUse {
            shared: self.shared.clone(),
        }
    }

    /// The device address of the buffer.
    pub fn addr(&self) -> u64 {
        self.shared.addr
    }

    /// The device malloc heap whose memory requests the listener serves.
    pub fn heap(&self) -> &Arc<DeviceHeap> {
        &self.shared.heap
    }

    /// Packets serviced so far.
    pub fn serviced(&self) -> u64 {
        self.shared.lock_state().serviced
    }

    /// Stops the listener (after servicing what is ready) and frees the
    /// buffer. Kernels must no longer use it.
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Release);
        {
            let _g = self.shared.wake.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.cv.notify_all();
        }
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = thread {
            let _ = t.join();
            let _ = self.shared.arena.free(self.shared.block);
            if self.owns_heap {
                self.shared.heap.release_all();
            }
        }
    }
}

impl Drop for Hostcall {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Shared {
    fn lock_state(&self) -> std::sync::MutexGuard<'_, Listener> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn run(&self) {
        // After servicing a packet the next one usually follows within
        // microseconds (a printf is three calls or more): keep checking,
        // yielding the core, for a while before sleeping between checks.
        let mut last_work = Instant::now();
        loop {
            let stopping = self.stop.load(Ordering::Acquire);
            let worked = match self.service_ready() {
                Ok(n) => n > 0,
                Err(e) => {
                    complain(&format!("hostcall: {e}"));
                    false
                }
            };
            if stopping {
                return;
            }
            if worked {
                last_work = Instant::now();
                continue;
            }
            if self.active.load(Ordering::Acquire) == 0 {
                let g = self.wake.lock().unwrap_or_else(|e| e.into_inner());
                if self.active.load(Ordering::Acquire) == 0 && !self.stop.load(Ordering::Acquire) {
                    let _ = self.cv.wait_timeout(g, Duration::from_millis(100));
                }
            } else if last_work.elapsed() < SPIN {
                std::hint::spin_loop();
            } else if last_work.elapsed() < HOT {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// Services every packet on the ready stack; returns how many.
    fn service_ready(&self) -> Result<usize, ServiceError> {
        let a = &*self.arena;
        let top = a.rmw_u64(self.addr + 32, |_| 0)?;
        if top == 0 {
            return Ok(0);
        }
        fence(Ordering::Acquire);
        let mask = PACKETS - 1;
        let mut list = Vec::new();
        let mut p = top;
        while p & mask != 0 {
            if list.len() as u64 >= PACKETS {
                return Err(ServiceError::ReadyStackLoops);
            }
            let index = p & mask;
            list.push(index);
            p = self.load_u64(self.headers + index * HEADER_BYTES)?;
        }
        // The stack is last-in first-out: answer the oldest first.
        for &index in list.iter().rev() {
            self.service_packet(index)?;
        }
        Ok(list.len())
    }

    fn load_u64(&self, addr: u64) -> Result<u64, ServiceError> {
        let mut b = [0u8; 8];
        self.arena.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn service_packet(&self, index: u64) -> Result<(), ServiceError> {
        let a = &*self.arena;
        let header = self.headers + index * HEADER_BYTES;
        let mask = self.load_u64(header + 8)?;
        let service = a.load_u32(header + 16)?;
        let payload = self.payloads + index * PAYLOAD_BYTES;
        let mut state = self.lock_state();
        state.serviced += 1;
        for lane in (0..64).filter(|l| mask >> l & 1 != 0) {
            let slots_at = payload + lane * 64;
            let mut slots = [0u8; 64];
            a.read(slots_at, &mut slots)?;
            let words: Vec<u64> = slots
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            let answer = match service {
                SERVICE_PRINTF => state.printf(&words),
                SERVICE_DEVMEM => [self.heap.serve(words[0], words[1]), 0],
                other => {
                    if state.reported.insert(other) {
                        complain(&format!(
                            "hostcall service {other} is not provided by softgpu \
                             (only printf, service {SERVICE_PRINTF}, and device memory, service \
                             {SERVICE_DEVMEM}); the device gets zeros"
                        ));
                    }
                    [0, 0]
                }
            };
            let mut out = [0u8; 16];
            out[..8].copy_from_slice(&answer[0].to_le_bytes());
            out[8..].copy_from_slice(&answer[1].to_le_bytes());
            a.write(slots_at, &out)?;
        }
        drop(state);
        fence(Ordering::Release);
        a.rmw_u32(header + 20, |c| c & !1)?;
        Ok(())
    }
}

/// Why the listener could not service the ready packets (it says so on
/// stderr and keeps listening).
#[derive(Debug, thiserror::Error)]
enum ServiceError {
    /// The buffer's memory refused an access.
    #[error(transparent)]
    Memory(#[from] softgpu_exec::arena::MemError),
    /// The ready stack's links form a cycle.
    #[error("the ready stack loops; packets left unanswered")]
    ReadyStackLoops,
}

impl Listener {
    /// One lane's printf chunk; returns the lane's answer.
    fn printf(&mut self, slots: &[u64]) -> [u64; 2] {
        let desc = slots[0];
        let len = ((desc >> 5) & 7) as usize;
        let data = &slots[1..1 + len.min(7)];
        let id = if desc & DESC_BEGIN != 0 {
            let id = self.next_id;
            self.next_id = (self.next_id + 1) & ((1 << 56) - 1);
            if self.next_id == 0 {
                self.next_id = 1;
            }
            self.messages.insert(id, Vec::new());
            id
        } else {
            desc >> 8
        };
        let Some(message) = self.messages.get_mut(&id) else {
            complain(&format!(
                "hostcall printf: a chunk of unknown message {id}; dropped"
            ));
            return [0, 0];
        };
        if message.len() < MAX_MESSAGE {
            message.extend(data.iter().flat_map(|w| w.to_le_bytes()));
        }
        if desc & DESC_END == 0 {
            return [id << 8, 0];
        }
        let message = self.messages.remove(&id).unwrap_or_default();
        let n = print_message(&message);
        [n as u64, 0]
    }
}

/// Formats and prints one complete printf message; returns the bytes
/// printed (printf's return value), or -1 for a malformed message.
fn print_message(message: &[u8]) -> i64 {
    if message.len() >= MAX_MESSAGE {
        complain(&format!(
            "hostcall printf: a message over {MAX_MESSAGE} bytes was cut"
        ));
    }
    let mut words = Words {
        data: message,
        at: 0,
    };
    let stream = match words.next(Want::Int) {
        Some(Value::Bits { bits: 0, .. }) => OutStream::Stdout,
        Some(Value::Bits { bits: 1, .. }) => OutStream::Stderr,
        other => {
            complain(&format!(
                "hostcall printf: a message for unknown stream {other:?}"
            ));
            return -1;
        }
    };
    let Some(Value::Bytes(fmt)) = words.next(Want::Str) else {
        complain("hostcall printf: a message without a format string");
        return -1;
    };
    let text = format(&fmt, &mut words);
    emit(stream, &text);
    text.len() as i64
}

/// The hostcall buffers of a runtime's devices, by agent index, each
/// started on first use and stopped by [`Hostcalls::stop_all`].
#[derive(Default)]
pub struct Hostcalls {
    by_agent: Mutex<HashMap<usize, Arc<Hostcall>>>,
}

impl Hostcalls {
    /// Agent `agent`'s hostcall buffer, started now if it was not (its
    /// device memory requests served from `heap`).
    pub fn get(
        &self,
        arena: &Arc<Arena>,
        agent: usize,
        heap: impl FnOnce() -> Arc<DeviceHeap>,
    ) -> crate::Result<Arc<Hostcall>> {
        let mut g = self.by_agent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = g.get(&agent) {
            return Ok(h.clone());
        }
        let h = Arc::new(Hostcall::with_heap(arena, heap(), &agent.to_string())?);
        g.insert(agent, h.clone());
        Ok(h)
    }

    /// Stops every listener.
    pub fn stop_all(&self) {
        let all: Vec<_> = {
            let mut g = self.by_agent.lock().unwrap_or_else(|e| e.into_inner());
            g.drain().map(|(_, h)| h).collect()
        };
        for h in all {
            h.stop();
        }
    }
}
