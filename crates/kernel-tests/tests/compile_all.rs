//! Compiles every kernel under `kernels/` for every target (no executor needed).

use softgpu_kernel_tests::{compile_kernel, kernels_dir, TARGETS};

/// Extra clang flags some kernels need (matched by file name).
fn flags_for(name: &str) -> &'static [&'static str] {
    match name {
        "wave64.cl" => &["-mwavefrontsize64"],
        "math.cl" => &[],
        _ => &[],
    }
}

#[test]
fn every_kernel_compiles_for_every_target() {
    let mut names: Vec<String> = std::fs::read_dir(kernels_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cl") || n.ends_with(".hip"))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let mut failures = Vec::new();
    for target in TARGETS {
        // WMMA is gfx11's and gfx12's, MFMA CDNA's: clang-19 refuses
        // their builtins elsewhere.
        let cdna = softgpu_isa::target::wave64_only(target);
        let has = |name: &str| match name {
            "wmma.cl" => !cdna && !target.starts_with("gfx10"),
            "mfma.cl" => cdna,
            // RDNA's wave32 cross-lane builtins (permlanex16).
            "wave_ops.cl" => !cdna,
            _ => true,
        };
        for name in names.iter().filter(|n| has(n)) {
            let r = std::panic::catch_unwind(|| {
                let code = compile_kernel(name, target, flags_for(name));
                assert!(
                    code.starts_with(b"\x7fELF"),
                    "{name} for {target}: not an ELF"
                );
                // e_machine EM_AMDGPU
                assert_eq!(
                    u16::from_le_bytes([code[18], code[19]]),
                    224,
                    "{name}: e_machine"
                );
                let mach = code[48] as u32; // low byte of e_flags
                let want = softgpu_codeobj::mach_from_name(target);
                assert_eq!(Some(mach), want, "{name} for {target}: e_flags machine");
                code.len()
            });
            match r {
                Ok(len) => eprintln!("{target} {name}: {len} bytes"),
                Err(_) => failures.push(format!("{target} {name}")),
            }
        }
    }
    assert!(failures.is_empty(), "failed to compile: {failures:?}");
}
