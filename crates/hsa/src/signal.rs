//! Signals: creation, every load/store/read-modify-write in every memory
//! order `hsa.h` declares, waits, `hsa_amd_signal_wait_any`, async handlers,
//! the value pointer, and signal groups.
//!
//! A signal is a runtime handle (`Runtime::signals`). Functions that return
//! a value or nothing cannot report a bad handle to C: they print it on
//! stderr and return a fallback ([`guard_value`]); a wait on a bad handle
//! returns a value that does not satisfy its condition, as a timed-out wait
//! would.
//!
//! Timeouts are in the system timestamp unit, nanoseconds here
//! (`HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY` is 1 GHz); `UINT64_MAX` waits for
//! ever.

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use softgpu_runtime::error::invalid;
use softgpu_runtime::handle::Handles;
use softgpu_runtime::signal::{wait_any, Condition, Order, Signal, WaitHint};
use softgpu_runtime::{Error, Runtime};

use crate::{guard, guard_value, non_null, put, runtime, Status};

symver!("signal");

/// `hsa_signal_value_t` in the large model (every 64-bit target).
pub type Value = i64;

/// `HSA_AMD_SIGNAL_AMD_GPU_ONLY`.
const AMD_GPU_ONLY: u64 = 1;
/// `HSA_AMD_SIGNAL_IPC`.
const AMD_IPC: u64 = 2;

/// The live signal behind a handle.
pub(crate) fn signal_of(handle: u64) -> Result<Arc<Signal>, Error> {
    runtime()?.signal(handle)
}

/// `hsa_signal_condition_t`.
pub(crate) fn condition(raw: u32) -> Result<Condition, Error> {
    Ok(match raw {
        0 => Condition::Eq,
        1 => Condition::Ne,
        2 => Condition::Lt,
        3 => Condition::Gte,
        _ => return Err(invalid(format!("{raw} is not an hsa_signal_condition_t"))),
    })
}

/// `hsa_wait_state_t`; only a hint, so an unknown value means "blocked".
fn hint(raw: u32) -> WaitHint {
    if raw == 1 {
        WaitHint::Active
    } else {
        WaitHint::Blocked
    }
}

/// A timeout hint in ns; `UINT64_MAX` means no limit.
fn timeout(ns: u64) -> Option<Duration> {
    (ns != u64::MAX).then(|| Duration::from_nanos(ns))
}

/// A value for which `condition(value, compare)` does not hold (where one
/// exists): what a wait that could not run returns, so the caller sees it
/// as not satisfied.
fn unsatisfying(raw_condition: u32, compare: Value) -> Value {
    match condition(raw_condition) {
        Ok(Condition::Eq) => compare.wrapping_add(1),
        Ok(Condition::Ne | Condition::Lt) => compare,
        Ok(Condition::Gte) => compare.wrapping_sub(1),
        Err(_) => 0,
    }
}

/// Checks a consumer list: non-null when non-empty, valid agents, no
/// duplicates.
///
/// # Safety
/// A non-null `consumers` must be valid for reads of `count` agent handles
/// (the C caller's input contract, crate docs, "Inputs").
unsafe fn check_consumers(rt: &Runtime, count: u32, consumers: *const u64) -> Result<(), Error> {
    if count == 0 {
        return Ok(());
    }
    non_null(consumers, "consumers (with num_consumers > 0)")?;
    // SAFETY: non-null (checked), `count` handles by this function's
    // contract.
    let list = unsafe { std::slice::from_raw_parts(consumers, count as usize) };
    let mut seen = HashSet::new();
    for &agent in list {
        rt.agent(agent)?;
        if !seen.insert(agent) {
            return Err(invalid(format!(
                "agent {agent:#x} is listed twice in consumers"
            )));
        }
    }
    Ok(())
}

/// Creates a signal and writes its handle.
///
/// # Safety
/// As for [`check_consumers`]; `out` NULL or valid for a write of a handle
/// (crate docs, "Outputs").
unsafe fn create(
    initial: Value,
    count: u32,
    consumers: *const u64,
    out: *mut u64,
    interprocess: bool,
) -> Result<(), Error> {
    let rt = runtime()?;
    non_null(out, "signal")?;
    // SAFETY: `consumers` as this function's contract says.
    unsafe { check_consumers(&rt, count, consumers)? };
    let handle = if interprocess {
        rt.create_ipc_signal(initial)?
    } else {
        rt.signals.insert(Arc::new(Signal::new(initial)))
    };
    // SAFETY: `out` as this function's contract says.
    unsafe { put(out, handle) }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_signal_create(
    initial_value: Value,
    num_consumers: u32,
    consumers: *const u64,
    signal: *mut u64,
) -> Status {
    // SAFETY: the C caller's `consumers` array and `signal` output meet
    // `create`'s contract (crate docs, "Inputs", "Outputs").
    guard("hsa_signal_create", || unsafe {
        create(initial_value, num_consumers, consumers, signal, false)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_signal_create(
    initial_value: Value,
    num_consumers: u32,
    consumers: *const u64,
    attributes: u64,
    signal: *mut u64,
) -> Status {
    guard("hsa_amd_signal_create", || {
        runtime()?;
        if attributes & !(AMD_GPU_ONLY | AMD_IPC) != 0 {
            return Err(invalid(format!(
                "unknown signal attributes {attributes:#x}"
            )));
        }
        // SAFETY: the C caller's `consumers` array and `signal` output meet
        // `create`'s contract (crate docs, "Inputs", "Outputs").
        unsafe {
            create(
                initial_value,
                num_consumers,
                consumers,
                signal,
                attributes & AMD_IPC != 0,
            )
        }
    })
}

/// The handle another process attaches to share an IPC signal (one made
/// with `HSA_AMD_SIGNAL_IPC`; any other is an invalid argument, as in
/// ROCr's `IPCSignal::CreateHandle`): an `hsa_amd_ipc_signal_t`, eight
/// 32-bit words.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_ipc_signal_create(signal: u64, handle: *mut c_void) -> Status {
    guard("hsa_amd_ipc_signal_create", || {
        let rt = runtime()?;
        non_null(handle, "handle")?;
        let words = rt.ipc_signal_handle(signal)?;
        // SAFETY: the C caller's output for an hsa_amd_ipc_signal_t (crate
        // docs, "Outputs"), eight 32-bit words.
        unsafe { put(handle.cast::<[u32; 8]>(), words) }
    })
}

/// A signal of this process over the IPC signal `handle` names (made here
/// or in another process); changes on either side are seen on both.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_ipc_signal_attach(
    handle: *const c_void,
    signal: *mut u64,
) -> Status {
    guard("hsa_amd_ipc_signal_attach", || {
        let rt = runtime()?;
        non_null(handle, "handle")?;
        non_null(signal, "signal")?;
        // SAFETY: non-null (checked), the C caller's hsa_amd_ipc_signal_t
        // (crate docs, "Inputs"), eight 32-bit words.
        let words = unsafe { handle.cast::<[u32; 8]>().read_unaligned() };
        let attached = rt.attach_ipc_signal(&words)?;
        // SAFETY: non-null (checked), the C caller's output (crate docs,
        // "Outputs").
        unsafe { put(signal, attached) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_signal_destroy(signal: u64) -> Status {
    guard("hsa_signal_destroy", || {
        let rt = runtime()?;
        if signal == 0 {
            return Err(invalid("signal handle 0"));
        }
        rt.signal(signal)?;
        let queues = rt.queues.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(q) = queues.values().find(|q| q.doorbell_handle == signal) {
            return Err(invalid(format!(
                "signal {signal:#x} is the doorbell of queue {} (destroy the queue instead)",
                q.id
            )));
        }
        drop(queues);
        // Threads still waiting on it wake and return its last value.
        rt.signals.remove(signal).map(|s| s.destroy())
    })
}

/// Runs `op` on a live signal; a bad handle is reported and ignored.
fn modify(name: &'static str, handle: u64, op: impl FnOnce(&Signal)) {
    guard_value(name, (), || {
        op(&*signal_of(handle)?);
        Ok(())
    })
}

/// Returns `op`'s value on a live signal; a bad handle is reported and
/// gives 0.
fn read(name: &'static str, handle: u64, op: impl FnOnce(&Signal) -> Value) -> Value {
    guard_value(name, 0, || Ok(op(&*signal_of(handle)?)))
}

/// Loads: `pub extern "C" fn NAME(signal) => ORDER;`.
macro_rules! loads {
    ($(pub extern "C" fn $name:ident(signal) => $order:ident;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: u64) -> Value {
            read(stringify!($name), signal, |s| s.load(Order::$order))
        }
    )*};
}

loads! {
    pub extern "C" fn hsa_signal_load_relaxed(signal) => Relaxed;
    pub extern "C" fn hsa_signal_load_scacquire(signal) => Acquire;
    pub extern "C" fn hsa_signal_load_acquire(signal) => Acquire;
}

/// Stores and other value-less operations:
/// `pub extern "C" fn NAME(signal, value) => METHOD, ORDER;`.
macro_rules! updates {
    ($(pub extern "C" fn $name:ident(signal, value) => $method:ident, $order:ident;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: u64, value: Value) {
            modify(stringify!($name), signal, |s| s.$method(value, Order::$order))
        }
    )*};
}

updates! {
    pub extern "C" fn hsa_signal_store_relaxed(signal, value) => store, Relaxed;
    pub extern "C" fn hsa_signal_store_screlease(signal, value) => store, Release;
    pub extern "C" fn hsa_signal_store_release(signal, value) => store, Release;
    pub extern "C" fn hsa_signal_silent_store_relaxed(signal, value) => silent_store, Relaxed;
    pub extern "C" fn hsa_signal_silent_store_screlease(signal, value) => silent_store, Release;

    pub extern "C" fn hsa_signal_add_relaxed(signal, value) => add, Relaxed;
    pub extern "C" fn hsa_signal_add_scacquire(signal, value) => add, Acquire;
    pub extern "C" fn hsa_signal_add_acquire(signal, value) => add, Acquire;
    pub extern "C" fn hsa_signal_add_screlease(signal, value) => add, Release;
    pub extern "C" fn hsa_signal_add_release(signal, value) => add, Release;
    pub extern "C" fn hsa_signal_add_scacq_screl(signal, value) => add, AcqRel;
    pub extern "C" fn hsa_signal_add_acq_rel(signal, value) => add, AcqRel;

    pub extern "C" fn hsa_signal_subtract_relaxed(signal, value) => subtract, Relaxed;
    pub extern "C" fn hsa_signal_subtract_scacquire(signal, value) => subtract, Acquire;
    pub extern "C" fn hsa_signal_subtract_acquire(signal, value) => subtract, Acquire;
    pub extern "C" fn hsa_signal_subtract_screlease(signal, value) => subtract, Release;
    pub extern "C" fn hsa_signal_subtract_release(signal, value) => subtract, Release;
    pub extern "C" fn hsa_signal_subtract_scacq_screl(signal, value) => subtract, AcqRel;
    pub extern "C" fn hsa_signal_subtract_acq_rel(signal, value) => subtract, AcqRel;

    pub extern "C" fn hsa_signal_and_relaxed(signal, value) => and, Relaxed;
    pub extern "C" fn hsa_signal_and_scacquire(signal, value) => and, Acquire;
    pub extern "C" fn hsa_signal_and_acquire(signal, value) => and, Acquire;
    pub extern "C" fn hsa_signal_and_screlease(signal, value) => and, Release;
    pub extern "C" fn hsa_signal_and_release(signal, value) => and, Release;
    pub extern "C" fn hsa_signal_and_scacq_screl(signal, value) => and, AcqRel;
    pub extern "C" fn hsa_signal_and_acq_rel(signal, value) => and, AcqRel;

    pub extern "C" fn hsa_signal_or_relaxed(signal, value) => or, Relaxed;
    pub extern "C" fn hsa_signal_or_scacquire(signal, value) => or, Acquire;
    pub extern "C" fn hsa_signal_or_acquire(signal, value) => or, Acquire;
    pub extern "C" fn hsa_signal_or_screlease(signal, value) => or, Release;
    pub extern "C" fn hsa_signal_or_release(signal, value) => or, Release;
    pub extern "C" fn hsa_signal_or_scacq_screl(signal, value) => or, AcqRel;
    pub extern "C" fn hsa_signal_or_acq_rel(signal, value) => or, AcqRel;

    pub extern "C" fn hsa_signal_xor_relaxed(signal, value) => xor, Relaxed;
    pub extern "C" fn hsa_signal_xor_scacquire(signal, value) => xor, Acquire;
    pub extern "C" fn hsa_signal_xor_acquire(signal, value) => xor, Acquire;
    pub extern "C" fn hsa_signal_xor_screlease(signal, value) => xor, Release;
    pub extern "C" fn hsa_signal_xor_release(signal, value) => xor, Release;
    pub extern "C" fn hsa_signal_xor_scacq_screl(signal, value) => xor, AcqRel;
    pub extern "C" fn hsa_signal_xor_acq_rel(signal, value) => xor, AcqRel;
}

/// Exchanges: `pub extern "C" fn NAME(signal, value) => ORDER;`, returning
/// the previous value.
macro_rules! exchanges {
    ($(pub extern "C" fn $name:ident(signal, value) => $order:ident;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: u64, value: Value) -> Value {
            read(stringify!($name), signal, |s| s.exchange(value, Order::$order))
        }
    )*};
}

exchanges! {
    pub extern "C" fn hsa_signal_exchange_relaxed(signal, value) => Relaxed;
    pub extern "C" fn hsa_signal_exchange_scacquire(signal, value) => Acquire;
    pub extern "C" fn hsa_signal_exchange_acquire(signal, value) => Acquire;
    pub extern "C" fn hsa_signal_exchange_screlease(signal, value) => Release;
    pub extern "C" fn hsa_signal_exchange_release(signal, value) => Release;
    pub extern "C" fn hsa_signal_exchange_scacq_screl(signal, value) => AcqRel;
    pub extern "C" fn hsa_signal_exchange_acq_rel(signal, value) => AcqRel;
}

/// Compare-and-swaps: `pub extern "C" fn NAME(signal, expected, value) =>
/// ORDER;`, returning the value observed before.
macro_rules! cases {
    ($(pub extern "C" fn $name:ident(signal, expected, value) => $order:ident;)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(signal: u64, expected: Value, value: Value) -> Value {
            read(stringify!($name), signal, |s| s.cas(expected, value, Order::$order))
        }
    )*};
}

cases! {
    pub extern "C" fn hsa_signal_cas_relaxed(signal, expected, value) => Relaxed;
    pub extern "C" fn hsa_signal_cas_scacquire(signal, expected, value) => Acquire;
    pub extern "C" fn hsa_signal_cas_acquire(signal, expected, value) => Acquire;
    pub extern "C" fn hsa_signal_cas_screlease(signal, expected, value) => Release;
    pub extern "C" fn hsa_signal_cas_release(signal, expected, value) => Release;
    pub extern "C" fn hsa_signal_cas_scacq_screl(signal, expected, value) => AcqRel;
    pub extern "C" fn hsa_signal_cas_acq_rel(signal, expected, value) => AcqRel;
}

/// One `hsa_signal_wait_*`.
fn wait(
    name: &'static str,
    signal: u64,
    raw_condition: u32,
    compare: Value,
    timeout_hint: u64,
    wait_state: u32,
    order: Order,
) -> Value {
    guard_value(name, unsatisfying(raw_condition, compare), || {
        let s = signal_of(signal)?;
        let cond = condition(raw_condition)?;
        Ok(s.wait(
            cond,
            compare,
            timeout(timeout_hint),
            hint(wait_state),
            order,
        ))
    })
}

#[no_mangle]
pub extern "C" fn hsa_signal_wait_relaxed(
    signal: u64,
    condition: u32,
    compare_value: Value,
    timeout_hint: u64,
    wait_state_hint: u32,
) -> Value {
    let name = "hsa_signal_wait_relaxed";
    wait(
        name,
        signal,
        condition,
        compare_value,
        timeout_hint,
        wait_state_hint,
        Order::Relaxed,
    )
}

#[no_mangle]
pub extern "C" fn hsa_signal_wait_scacquire(
    signal: u64,
    condition: u32,
    compare_value: Value,
    timeout_hint: u64,
    wait_state_hint: u32,
) -> Value {
    let name = "hsa_signal_wait_scacquire";
    wait(
        name,
        signal,
        condition,
        compare_value,
        timeout_hint,
        wait_state_hint,
        Order::Acquire,
    )
}

#[no_mangle]
pub extern "C" fn hsa_signal_wait_acquire(
    signal: u64,
    condition: u32,
    compare_value: Value,
    timeout_hint: u64,
    wait_state_hint: u32,
) -> Value {
    let name = "hsa_signal_wait_acquire";
    wait(
        name,
        signal,
        condition,
        compare_value,
        timeout_hint,
        wait_state_hint,
        Order::Acquire,
    )
}

/// Gathers `(signal, condition, compare)` triples from parallel C arrays.
///
/// # Safety
/// Each non-null array must be valid for reads of `count` elements (the C
/// caller's input contract, crate docs, "Inputs").
unsafe fn triples(
    count: usize,
    signals: *const u64,
    conditions: *const u32,
    values: *const Value,
) -> Result<Vec<(Arc<Signal>, Condition, Value)>, Error> {
    non_null(signals, "signals")?;
    non_null(conditions, "conditions")?;
    non_null(values, "compare values")?;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: all three non-null (checked) and `count` elements long
        // by this function's contract; `i < count`.
        let (s, c, v) = unsafe { (*signals.add(i), *conditions.add(i), *values.add(i)) };
        out.push((signal_of(s)?, condition(c)?, v));
    }
    Ok(out)
}

/// Waits for any of several signal conditions; returns the index of one
/// that held and writes its value, or returns `UINT32_MAX` on timeout (and
/// on a bad argument, which is also reported on stderr). Loads acquire,
/// more than the relaxed order promised.
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_signal_wait_any(
    signal_count: u32,
    signals: *const u64,
    conds: *const u32,
    values: *const Value,
    timeout_hint: u64,
    wait_hint: u32,
    satisfying_value: *mut Value,
) -> u32 {
    guard_value("hsa_amd_signal_wait_any", u32::MAX, || {
        if signal_count == 0 {
            return Err(invalid("signal_count is 0"));
        }
        // SAFETY: the C caller's three arrays of `signal_count` elements
        // (crate docs, "Inputs").
        let list = unsafe { triples(signal_count as usize, signals, conds, values)? };
        match wait_any(&list, timeout(timeout_hint), hint(wait_hint)) {
            Some((index, value)) => {
                if !satisfying_value.is_null() {
                    // SAFETY: non-null (checked) and the C caller's output
                    // for an hsa_signal_value_t (crate docs, "Outputs").
                    unsafe { put(satisfying_value, value)? };
                }
                Ok(index as u32)
            }
            None => Ok(u32::MAX),
        }
    })
}

/// A C pointer handed back to C on another thread.
#[derive(Clone, Copy)]
pub(crate) struct CPointer(pub *mut c_void);

// SAFETY: Rust never dereferences the pointer: it is only passed back to
// the C callback it came with, which HSA calls on runtime threads, so the
// C code is responsible for what it points to being usable there (crate
// docs, "Callbacks").
unsafe impl Send for CPointer {}
// SAFETY: as for `Send`: sharing a `CPointer` only lets threads copy the
// pointer value.
unsafe impl Sync for CPointer {}

impl CPointer {
    /// The pointer (a method, so closures capture the whole `Send` wrapper).
    pub(crate) fn get(self) -> *mut c_void {
        self.0
    }
}

/// `hsa_amd_signal_handler`.
pub type Handler = unsafe extern "C" fn(Value, *mut c_void) -> bool;

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_signal_async_handler(
    signal: u64,
    cond: u32,
    value: Value,
    handler: Option<Handler>,
    arg: *mut c_void,
) -> Status {
    guard("hsa_amd_signal_async_handler", || {
        let rt = runtime()?;
        let s = rt.signal(signal)?;
        let cond = condition(cond)?;
        let handler = handler.ok_or_else(|| invalid("handler is NULL"))?;
        let arg = CPointer(arg);
        rt.async_handlers.register(
            s,
            cond,
            value,
            // SAFETY: the client's handler, of the signature hsa_ext_amd.h
            // declares, called with its own `arg` (crate docs, "Callbacks").
            Box::new(move |v| unsafe { handler(v, arg.get()) }),
        );
        Ok(())
    })
}

/// Runs `callback(arg)` once on the async handler thread, as a handler
/// whose condition already holds (a private signal, never visible to the
/// client, that is 0 and waited on for 0).
#[no_mangle]
pub unsafe extern "C" fn hsa_amd_async_function(
    callback: Option<unsafe extern "C" fn(*mut c_void)>,
    arg: *mut c_void,
) -> Status {
    guard("hsa_amd_async_function", || {
        let rt = runtime()?;
        let callback = callback.ok_or_else(|| invalid("callback is NULL"))?;
        let arg = CPointer(arg);
        rt.async_handlers.register(
            Arc::new(Signal::new(0)),
            Condition::Eq,
            0,
            Box::new(move |_| {
                // SAFETY: the client's function, of the signature
                // hsa_ext_amd.h declares, called with its own `arg` (crate
                // docs, "Callbacks").
                unsafe { callback(arg.get()) };
                false
            }),
        );
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_amd_signal_value_pointer(
    signal: u64,
    value_ptr: *mut *mut Value,
) -> Status {
    guard("hsa_amd_signal_value_pointer", || {
        let s = signal_of(signal)?;
        // SAFETY: the C caller's output for a pointer (crate docs,
        // "Outputs"); `put` refuses NULL.
        unsafe { put(value_ptr, s.value_ptr().cast_mut()) }
    })
}

/// A signal group: the signals it was created with, in order.
struct Group {
    signals: Vec<u64>,
}

/// Signal groups of the process (their signals are looked up at each wait,
/// so a group outliving its signals or the runtime is refused then).
fn groups() -> &'static Handles<Group> {
    static GROUPS: OnceLock<Handles<Group>> = OnceLock::new();
    GROUPS.get_or_init(|| Handles::new("signal group", 0x47))
}

#[no_mangle]
pub unsafe extern "C" fn hsa_signal_group_create(
    num_signals: u32,
    signals: *const u64,
    num_consumers: u32,
    consumers: *const u64,
    signal_group: *mut u64,
) -> Status {
    guard("hsa_signal_group_create", || {
        let rt = runtime()?;
        if num_signals == 0 || num_consumers == 0 {
            return Err(invalid("num_signals and num_consumers must not be 0"));
        }
        non_null(signals, "signals")?;
        non_null(signal_group, "signal_group")?;
        // SAFETY: the C caller's array of `num_consumers` handles (crate
        // docs, "Inputs").
        unsafe { check_consumers(&rt, num_consumers, consumers)? };
        // SAFETY: non-null (checked) and the C caller's array of
        // `num_signals` handles (crate docs, "Inputs").
        let list = unsafe { std::slice::from_raw_parts(signals, num_signals as usize) }.to_vec();
        let mut seen = HashSet::new();
        for &s in &list {
            rt.signal(s)?;
            if !seen.insert(s) {
                return Err(invalid(format!("signal {s:#x} is listed twice")));
            }
        }
        let handle = groups().insert(Arc::new(Group { signals: list }));
        // SAFETY: non-null (checked) and the C caller's output for a
        // handle (crate docs, "Outputs").
        unsafe { put(signal_group, handle) }
    })
}

#[no_mangle]
pub extern "C" fn hsa_signal_group_destroy(signal_group: u64) -> Status {
    guard("hsa_signal_group_destroy", || {
        runtime()?;
        groups().remove(signal_group).map(|_| ())
    })
}

/// One `hsa_signal_group_wait_any_*`.
///
/// # Safety
/// The C caller's contract of `hsa_signal_group_wait_any_*`: a non-null
/// `conditions` or `compare_values` is valid for reads of one element per
/// signal of the group, and `signal` and `value` are NULL or valid for a
/// write of their types (crate docs, "Inputs", "Outputs").
unsafe fn group_wait(
    name: &'static str,
    group: u64,
    conditions: *const u32,
    compare_values: *const Value,
    wait_state: u32,
    signal: *mut u64,
    value: *mut Value,
) -> Status {
    guard(name, || {
        runtime()?;
        let g = groups().get(group)?;
        non_null(signal, "signal")?;
        non_null(value, "value")?;
        // SAFETY: the group's own list, and the caller's two arrays of one
        // element per group signal (this function's contract).
        let list = unsafe {
            triples(
                g.signals.len(),
                g.signals.as_ptr(),
                conditions,
                compare_values,
            )?
        };
        let (index, v) = wait_any(&list, None, hint(wait_state))
            .ok_or_else(|| invalid("the runtime shut down during the group's wait"))?;
        // SAFETY: both non-null (checked), valid for the writes by this
        // function's contract.
        unsafe {
            put(signal, g.signals[index])?;
            put(value, v)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hsa_signal_group_wait_any_scacquire(
    signal_group: u64,
    conditions: *const u32,
    compare_values: *const Value,
    wait_state_hint: u32,
    signal: *mut u64,
    value: *mut Value,
) -> Status {
    let name = "hsa_signal_group_wait_any_scacquire";
    // SAFETY: the C caller's arguments meet `group_wait`'s contract, which
    // is this export's (hsa.h).
    unsafe {
        group_wait(
            name,
            signal_group,
            conditions,
            compare_values,
            wait_state_hint,
            signal,
            value,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn hsa_signal_group_wait_any_relaxed(
    signal_group: u64,
    conditions: *const u32,
    compare_values: *const Value,
    wait_state_hint: u32,
    signal: *mut u64,
    value: *mut Value,
) -> Status {
    let name = "hsa_signal_group_wait_any_relaxed";
    // SAFETY: the C caller's arguments meet `group_wait`'s contract, which
    // is this export's (hsa.h).
    unsafe {
        group_wait(
            name,
            signal_group,
            conditions,
            compare_values,
            wait_state_hint,
            signal,
            value,
        )
    }
}
