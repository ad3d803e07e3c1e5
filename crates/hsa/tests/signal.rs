//! Signals through `libhsa-runtime64.so.1`: the C program
//! `tests/c/signal.c` runs each scenario against our library.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

fn program() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| common::build_c("signal"))
}

/// Runs one scenario; returns its stderr.
fn scenario(name: &str) -> String {
    common::scenario(program(), &[name], &[])
}

#[test]
fn every_operation_in_every_order() {
    scenario("ops");
}

#[test]
fn creation_checks_consumers_and_attributes() {
    scenario("create");
}

#[test]
fn waits_with_conditions_and_timeouts_sleep() {
    scenario("wait");
}

#[test]
fn two_threads_ping_pong() {
    scenario("pingpong");
}

#[test]
fn async_handlers_run_on_the_runtime_thread() {
    scenario("handlers");
}

#[test]
fn wait_any() {
    scenario("waitany");
}

#[test]
fn value_pointer_reflects_stores() {
    scenario("valueptr");
}

#[test]
fn signal_groups() {
    scenario("groups");
}

#[test]
fn destroyed_and_forged_handles_are_invalid() {
    let stderr = scenario("invalid");
    assert!(
        stderr.contains("hsa_signal_load_scacquire") && stderr.contains("invalid signal handle"),
        "bad handles in value functions are reported on stderr; stderr:\n{stderr}"
    );
}

#[test]
fn shutting_down_ends_waits_without_a_timeout() {
    scenario("shutdown");
}
