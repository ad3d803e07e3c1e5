//! The event trace: one JSON object per event, written as a line of a
//! file ([`crate::Config::trace`], `SOFTGPU_TRACE=PATH`) and/or kept in a
//! ring of the last N events in memory ([`crate::Config::trace_ring`],
//! read with [`Tracer::snapshot`]), so a program or test can look at what
//! the runtime did without files.
//!
//! Schema version 1. Every event has `v` (schema version), `ts` (ns since
//! the runtime's clock epoch) and `kind`:
//! - `api`: `name`, `dur` (ns), `status` (the HSA status code returned);
//! - `packet`: `queue` (queue id), `index`, `type` (`kernel_dispatch`,
//!   `barrier_and`, `barrier_or`, or the unsupported type number);
//! - `dispatch`: `queue`, `index`, `kernel`, `grid`, `block` (work-items),
//!   `dur`, `wave_instructions`, `lane_instructions`, `status` (`ok` or the
//!   fault report), and the device profile the figures belong to:
//!   `profile` (its id), `profile_revision`, `fidelity` (the level the
//!   figures have: `dur` is host time, never the part's);
//! - `transfer`: a copy or fill a runtime layer ran (HIP's memcpy and
//!   memset): `what` (`memcpy`, `memset`), `dur`, `bytes`, `dst`, `src`
//!   (null for a fill). (The `api` status of a HIP call is its
//!   `hipError_t`.)

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use serde_json::{json, Value};

use crate::error::{invalid, DataError, Error, Result};

/// Version of the event schema.
pub const SCHEMA_VERSION: u32 = 1;

/// Nanoseconds on the runtime's monotonic clock.
pub fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Where trace events go.
pub struct Tracer {
    out: Option<Mutex<BufWriter<File>>>,
    ring: Option<Ring>,
}

/// The last `capacity` events.
struct Ring {
    capacity: usize,
    events: Mutex<VecDeque<Value>>,
}

impl Tracer {
    /// A tracer writing to the file at `path`, if any, and keeping the
    /// last `ring` events in memory (0: none).
    pub fn new(path: Option<&std::path::Path>, ring: usize) -> Result<Tracer> {
        let out = match path {
            Some(path) => {
                let file = File::create(path).map_err(|source| Error::Output {
                    what: "trace file",
                    path: path.to_path_buf(),
                    source,
                })?;
                Some(Mutex::new(BufWriter::new(file)))
            }
            None => None,
        };
        let ring = (ring > 0).then(|| Ring {
            capacity: ring,
            events: Mutex::new(VecDeque::with_capacity(ring.min(4096))),
        });
        Ok(Tracer { out, ring })
    }

    /// Whether events are being recorded (to a file or the ring).
    pub fn enabled(&self) -> bool {
        self.out.is_some() || self.ring.is_some()
    }

    /// The events in the ring, oldest first: each the JSON object a line
    /// of the trace file holds. Empty when the ring is off.
    pub fn snapshot(&self) -> Vec<Value> {
        self.ring.as_ref().map_or_else(Vec::new, |r| {
            let events = r.events.lock().unwrap_or_else(|e| e.into_inner());
            events.iter().cloned().collect()
        })
    }

    /// Writes one event of `kind` with the fields `fields` builds (only
    /// called when tracing, so an untraced dispatch builds no JSON).
    pub fn event(&self, kind: &str, ts: u64, fields: impl FnOnce() -> Value) {
        if !self.enabled() {
            return;
        }
        let mut fields = fields();
        if let Value::Object(map) = &mut fields {
            map.insert("v".into(), json!(SCHEMA_VERSION));
            map.insert("ts".into(), json!(ts));
            map.insert("kind".into(), json!(kind));
        }
        if let Some(out) = &self.out {
            // One write per line: the buffer then holds or has written out
            // whole lines only, so an event recorded after the last flush
            // (a call from a destructor at exit) is lost whole rather than
            // cut short in the file.
            let mut line = serde_json::to_vec(&fields).unwrap_or_default();
            line.push(b'\n');
            let _ = out
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .write_all(&line);
        }
        if let Some(ring) = &self.ring {
            let mut events = ring.events.lock().unwrap_or_else(|e| e.into_inner());
            if events.len() == ring.capacity {
                events.pop_front();
            }
            events.push_back(fields);
        }
    }

    /// Records an API call that started at `start` and returned `status`.
    pub fn api(&self, name: &str, start: u64, status: u32) {
        if self.enabled() {
            let dur = now_ns().saturating_sub(start);
            self.event(
                "api",
                start,
                || json!({"name": name, "dur": dur, "status": status}),
            );
        }
    }

    /// Records a copy or fill (`what`) of `bytes` a runtime layer ran on
    /// the host from `start` until now (HIP's memcpy and memset).
    pub fn transfer(&self, what: &str, start: u64, bytes: u64, dst: u64, src: Option<u64>) {
        if self.enabled() {
            let dur = now_ns().saturating_sub(start);
            self.event(
                "transfer",
                start,
                || json!({"what": what, "dur": dur, "bytes": bytes, "dst": dst, "src": src}),
            );
        }
    }

    /// Writes buffered events out.
    pub fn flush(&self) {
        if let Some(out) = &self.out {
            let _ = out.lock().unwrap_or_else(|e| e.into_inner()).flush();
        }
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Converts a JSON-lines trace into the Chrome/Perfetto trace format:
/// API calls on one track, each queue a track of its own with a slice per
/// dispatch (kernel name, grid and block in its arguments) and an instant
/// per packet.
pub fn chrome_trace(lines: impl std::io::BufRead) -> Result<Value> {
    let mut events = vec![thread_name(0, "API calls")];
    let mut queues = std::collections::BTreeSet::new();
    let mut saw_transfer = false;
    for (n, line) in lines.lines().enumerate() {
        let at = |e: DataError| Error::Trace {
            line: n + 1,
            source: e,
        };
        let line = line.map_err(|e| at(e.into()))?;
        if line.trim().is_empty() {
            continue;
        }
        let e: Value = serde_json::from_str(&line).map_err(|e| at(e.into()))?;
        let version = e["v"].as_u64().unwrap_or(0);
        if version != SCHEMA_VERSION as u64 {
            return Err(invalid(format!(
                "trace line {}: schema version {version}, expected {SCHEMA_VERSION}",
                n + 1
            )));
        }
        let ts = e["ts"].as_u64().unwrap_or(0) as f64 / 1000.0;
        let dur = e["dur"].as_u64().unwrap_or(0) as f64 / 1000.0;
        match e["kind"].as_str() {
            Some("api") => events.push(json!({
                "name": e["name"], "ph": "X", "pid": 1, "tid": 0, "ts": ts, "dur": dur,
                "args": {"status": e["status"]},
            })),
            Some("dispatch") => {
                let q = e["queue"].as_u64().unwrap_or(0);
                queues.insert(q);
                events.push(json!({
                    "name": e["kernel"], "ph": "X", "pid": 1, "tid": q + 1, "ts": ts, "dur": dur,
                    "args": {
                        "grid": e["grid"], "block": e["block"], "index": e["index"],
                        "wave_instructions": e["wave_instructions"],
                        "lane_instructions": e["lane_instructions"], "status": e["status"],
                    },
                }))
            }
            Some("transfer") => {
                saw_transfer = true;
                events.push(json!({
                    "name": format!("{} {} bytes", e["what"].as_str().unwrap_or("copy"), e["bytes"]),
                    "ph": "X", "pid": 1, "tid": TRANSFER_TRACK, "ts": ts, "dur": dur,
                    "args": {"dst": e["dst"], "src": e["src"]},
                }))
            }
            Some("packet") => {
                let q = e["queue"].as_u64().unwrap_or(0);
                queues.insert(q);
                events.push(json!({
                    "name": e["type"], "ph": "i", "s": "t", "pid": 1, "tid": q + 1, "ts": ts,
                    "args": {"index": e["index"]},
                }))
            }
            other => {
                return Err(invalid(format!(
                    "trace line {}: unknown event kind {other:?}",
                    n + 1
                )))
            }
        }
    }
    for q in queues {
        events.push(thread_name(q + 1, &format!("queue {q}")));
    }
    if saw_transfer {
        events.push(thread_name(TRANSFER_TRACK, "copies and fills"));
    }
    Ok(json!({"traceEvents": events, "displayTimeUnit": "ns"}))
}

/// The Chrome track of copies and fills (after every queue's).
const TRANSFER_TRACK: u64 = 1 << 20;

fn thread_name(tid: u64, name: &str) -> Value {
    json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}})
}
