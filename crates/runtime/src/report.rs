//! The check report of a run under `softgpu check` ([`Config::report`]):
//! every error of every launch (the fault that failed it with the errors
//! it ran past, or the findings of one that succeeded) printed on stderr
//! as it is found, each line marked `========= ` as compute-sanitizer
//! marks its own, up to the print limit; and the same errors appended as
//! one JSON record per line to the report file the check command counts.
//! With leakcheck, the program's allocations still live when the runtime
//! ends are reported the same way.
//!
//! [`Config::report`]: crate::Config::report

use std::backtrace::Backtrace;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::{json, Value};
use softgpu_exec::arena::{backtrace_after, Allocation, Arena};
use softgpu_exec::{DispatchError, DispatchOutcome, Fault};

use crate::config::Report;
use crate::error::{Error, Result};

/// The mark at the start of every line the report prints.
pub const MARK: &str = "========= ";

/// Where a runtime's errors and leaks go when it is checked.
#[derive(Debug, Default)]
pub struct Reporter {
    report: Option<Report>,
    file: Option<Mutex<File>>,
    /// Errors printed so far, against the print limit.
    printed: AtomicU64,
    /// Whether the leaks at the runtime's end were reported.
    ended: AtomicBool,
    /// Where the program launched each dispatch in flight, by its kernarg
    /// segment's address.
    launches: Mutex<HashMap<u64, Backtrace>>,
}

/// Launch sites remembered at most (dispatches a failed queue dropped
/// unrun are never taken back).
const LAUNCHES: usize = 4096;

/// Whether a backtrace frame's function is an entry point of softgpu's
/// APIs that launches a kernel (what called it is the program's).
fn launches_a_kernel(function: &str) -> bool {
    function.starts_with("hip") || function.starts_with("hsa_") || function.starts_with("dispatch")
}

impl Reporter {
    /// A reporter for `report`; none reports nothing.
    pub fn new(report: Option<&Report>) -> Result<Reporter> {
        let file = match report.and_then(|r| r.file.as_ref()) {
            Some(path) => {
                let file = OpenOptions::new().create(true).append(true).open(path);
                let file = file.map_err(|source| Error::Output {
                    what: "the check report file",
                    path: path.clone(),
                    source,
                })?;
                Some(Mutex::new(file))
            }
            None => None,
        };
        let reporter = Reporter {
            report: report.cloned(),
            file,
            ..Reporter::default()
        };
        // Tells the check command this process's runtime was checked.
        reporter.write(json!({"record": "start", "pid": std::process::id()}));
        Ok(reporter)
    }

    /// Whether errors are reported here (then the API layers above need
    /// not print them again).
    pub fn is_on(&self) -> bool {
        self.report.is_some()
    }

    /// Whether leaks are reported.
    pub fn checks_leaks(&self) -> bool {
        self.report.as_ref().is_some_and(|r| r.leaks)
    }

    /// Remembers the host call stack of the program's launch of the
    /// dispatch whose kernarg segment is at `kernarg`, for the reports of
    /// its errors (symbols are resolved only if one is reported).
    pub fn note_launch(&self, kernarg: u64) {
        if !self.is_on() {
            return;
        }
        let lock = || self.launches.lock().unwrap_or_else(|e| e.into_inner());
        if lock().len() >= LAUNCHES {
            return;
        }
        // Captured outside the lock: launches on other threads go on.
        let trace = Backtrace::force_capture();
        lock().insert(kernarg, trace);
    }

    /// Reports the errors of the launch whose kernarg segment is at
    /// `kernarg` (`kernarg` finds where it was launched), from its result:
    /// the fault that failed it with the errors it ran past, or the
    /// findings of a launch that succeeded.
    pub fn launch(&self, kernarg: u64, result: &Result<DispatchOutcome, DispatchError>) {
        if !self.is_on() {
            return;
        }
        let site = self
            .launches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&kernarg);
        let (fault, others) = match result {
            Ok(outcome) => (None, &outcome.findings),
            Err(DispatchError::Fault(f)) => (Some(&**f), &f.others),
            Err(_) => return,
        };
        if fault.is_none() && others.is_empty() {
            return;
        }
        let launched = site.map(|t| backtrace_after(&t.to_string(), launches_a_kernel));
        let launched = launched.as_deref();
        // The launch site goes with its first error only.
        let errors = fault.into_iter().chain(&others.recorded);
        for (k, f) in errors.enumerate() {
            self.error(f, launched, k == 0);
        }
        if others.unrecorded > 0 {
            let kernel = fault.or(others.recorded.first()).map(|f| &f.kernel);
            self.print(&format!(
                "{} more errors of this launch were counted but not recorded",
                others.unrecorded
            ));
            self.write(json!({
                "record": "unrecorded", "count": others.unrecorded, "kernel": kernel,
            }));
        }
    }

    /// Reports the program's allocations still live when the runtime
    /// ends, once.
    pub fn leaks_at_end(&self, arena: &Arena) {
        if self.checks_leaks() && !self.ended.swap(true, Ordering::AcqRel) {
            self.leaks(&arena.program_allocations());
        }
    }

    /// Reports `live` as leaked (leakcheck at `hipDeviceReset`, which
    /// then frees them).
    pub fn leaks(&self, live: &[Allocation]) {
        if !self.checks_leaks() {
            return;
        }
        for a in live {
            let mut text = format!(
                "Leaked {} bytes at {:#x}: an allocation made by {} was never freed",
                a.len, a.base, a.allocated_by
            );
            if let Some(trace) = &a.backtrace {
                text.push_str(&format!("\n    allocated at:\n{trace}"));
            }
            self.print(&text);
            self.write(json!({
                "record": "leak", "address": a.base, "size": a.len,
                "made_by": a.allocated_by, "backtrace": a.backtrace,
            }));
        }
    }

    /// One error: printed alone (without the launch's others, which are
    /// reported one by one; the first with where the launch was made)
    /// and written with the launch site.
    fn error(&self, f: &Fault, launched: Option<&str>, first: bool) {
        let mut text = f.alone().to_string();
        if let (Some(site), true) = (launched, first) {
            text.push_str(&format!("\n  launched at:\n{site}"));
        }
        let limit = self.report.as_ref().and_then(|r| r.print_limit);
        let n = self.printed.fetch_add(1, Ordering::Relaxed);
        match limit {
            Some(limit) if n == limit => self.print(&format!(
                "the print limit of {limit} errors is reached: further errors are counted, not printed"
            )),
            Some(limit) if n > limit => {}
            _ => self.print(&text),
        }
        let mut record = error_record(f);
        record["report"] = Value::String(text);
        record["launch_backtrace"] = launched.map_or(Value::Null, |s| Value::String(s.into()));
        self.write(record);
    }

    fn print(&self, text: &str) {
        let mut lines = String::new();
        for line in text.lines() {
            lines.push_str(MARK);
            lines.push_str(line);
            lines.push('\n');
        }
        // One write, so reports of two threads do not interleave.
        let _ = std::io::stderr().lock().write_all(lines.as_bytes());
    }

    fn write(&self, record: Value) {
        if let Some(file) = &self.file {
            let mut line = record.to_string();
            line.push('\n');
            let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
            // An append of one line: several processes of one check may
            // share the file.
            if let Err(e) = file.write_all(line.as_bytes()) {
                self.print(&format!("softgpu: the check report file: {e}"));
            }
        }
    }
}

/// A fault as the report file's JSON record: its kind, kernel (and its
/// symbol), reason, HIP block and thread, wave, lane, pc, code offset,
/// instruction, source frames (innermost first), address and access
/// size, the allocation and its origin, the kernel argument.
pub fn error_record(f: &Fault) -> Value {
    let site = f.site.as_ref();
    let source: Option<Vec<Value>> = site.map(|s| {
        s.source
            .iter()
            .map(|frame| {
                json!({
                    "file": frame.file, "line": frame.line,
                    "column": frame.column, "function": frame.function,
                })
            })
            .collect()
    });
    json!({
        "record": "error",
        "kind": f.kind.name(),
        "kernel": softgpu_codeobj::demangle(&f.kernel),
        "symbol": f.kernel,
        "reason": f.reason,
        "block": site.map(|s| s.workgroup),
        "thread": site.and_then(|s| s.thread),
        "wave": site.map(|s| s.wave),
        "lane": site.and_then(|s| s.lane),
        "pc": site.map(|s| s.pc),
        "code_offset": site.map(|s| s.offset),
        "instruction": site.map(|s| &s.instruction),
        "source": source,
        "address": site.and_then(|s| s.address),
        "size": site.and_then(|s| s.size),
        "allocation": f.allocation.as_ref().map(|a| json!({
            "base": a.base, "size": a.len, "made_by": a.allocated_by,
            "freed_by": a.freed_by, "backtrace": a.backtrace,
        })),
        "argument": f.argument,
    })
}
