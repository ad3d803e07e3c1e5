//! `docs/SUPPORT.md` lists every HIP function softgpu's library exports,
//! whether it is implemented, and which test programs call it. The table
//! is generated here from what the build found (`build.rs` writes
//! `support.tsv`) and the sources of `tests/programs/`; this test fails
//! when the copy in `docs/SUPPORT.md` is stale. `UPDATE_SUPPORT=1`
//! rewrites it.

use std::fmt::Write as _;
use std::path::Path;

const SUPPORT: &str = include_str!(concat!(env!("OUT_DIR"), "/support.tsv"));
const BEGIN: &str = "<!-- hip functions: begin -->";
const END: &str = "<!-- hip functions: end -->";

/// Implemented functions that accept their request and change nothing,
/// and why that is right on softgpu.
const NO_EFFECT: &[(&str, &str)] = &[
    ("hipFuncSetCacheConfig", "no configurable L1/LDS split"),
    ("hipDeviceSetCacheConfig", "no configurable L1/LDS split"),
    (
        "hipFuncSetSharedMemConfig",
        "LDS banking does not change results",
    ),
    (
        "hipDeviceSetSharedMemConfig",
        "LDS banking does not change results",
    ),
    ("hipFuncSetAttribute", "limits are checked at launch"),
    (
        "hipMemAdvise",
        "memory is unified; recorded for the range attributes",
    ),
    (
        "hipMemPrefetchAsync",
        "memory is unified; recorded for the range attributes",
    ),
    ("hipCtxSetCacheConfig", "no configurable L1/LDS split"),
    (
        "hipCtxSetSharedMemConfig",
        "LDS banking does not change results",
    ),
    ("hipStreamAttachMemAsync", "memory is unified"),
    (
        "hipSetDeviceFlags",
        "host waits spin, then sleep, whatever the flags",
    ),
    ("hipProfilerStart", "use SOFTGPU_TRACE"),
    ("hipProfilerStop", "use SOFTGPU_TRACE"),
    ("__hipUnregisterFatBinary", "code stays loaded until exit"),
];

/// Functions clang's host code calls in every HIP program.
const EVERY_PROGRAM: &[&str] = &[
    "__hipRegisterFatBinary",
    "__hipRegisterFunction",
    "__hipUnregisterFatBinary",
    "__hipPushCallConfiguration",
    "__hipPopCallConfiguration",
];

fn table() -> String {
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut sources: Vec<(String, String)> = std::fs::read_dir(&programs)
        .expect("tests/programs")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "hip" || e == "h"))
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("program source"))
        })
        // It runs on Debian's HIP library (over softgpu's HSA), not on
        // softgpu's, so it proves none of this library's functions.
        .filter(|(name, _)| name != "debian_clr")
        .collect();
    sources.sort();
    let mut out = String::from("| function | version | state | called by (`crates/hip/tests/programs/`) |\n| --- | --- | --- | --- |\n");
    let (mut yes, mut total) = (0, 0);
    for line in SUPPORT.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (name, version, implemented, why) = (f[0], f[1], f[2] == "yes", f[3]);
        total += 1;
        yes += implemented as usize;
        let state = match (implemented, NO_EFFECT.iter().find(|(n, _)| *n == name)) {
            (true, Some((_, why))) => format!("yes, no effect ({why})"),
            (true, None) => "yes".to_string(),
            (false, _) => format!("no: `hipErrorNotSupported` ({why})"),
        };
        let users: Vec<&str> = if EVERY_PROGRAM.contains(&name) {
            vec!["every program"]
        } else {
            sources
                .iter()
                .filter(|(_, text)| calls(text, name))
                .map(|(n, _)| n.as_str())
                .collect()
        };
        writeln!(
            out,
            "| `{}` | {version} | {state} | {} |",
            name.replace('|', "\\|"),
            users.join(", ")
        )
        .unwrap();
    }
    format!("{yes} of {total} exported functions are implemented.\n\n{out}")
}

/// Whether `text` names `function` as a whole word.
fn calls(text: &str, function: &str) -> bool {
    text.match_indices(function).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + function.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

#[test]
fn support_md_lists_every_hip_function() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/SUPPORT.md");
    let doc = std::fs::read_to_string(&path).expect("docs/SUPPORT.md");
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/SUPPORT.md has no {BEGIN} ... {END} section");
    };
    let fresh = format!(
        "{}{BEGIN}\n{}{END}{}",
        &doc[..b],
        table(),
        &doc[e + END.len()..]
    );
    if std::env::var_os("UPDATE_SUPPORT").is_some() {
        std::fs::write(&path, &fresh).expect("write docs/SUPPORT.md");
        return;
    }
    assert!(
        fresh == doc,
        "docs/SUPPORT.md's HIP function table is stale: run UPDATE_SUPPORT=1 cargo test -p softgpu-hip --test support"
    );
}
