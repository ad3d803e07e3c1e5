//! The occupancy model against LLVM's own figure: clang-19 prints
//! `; Occupancy: N` (waves per SIMD) for every kernel it compiles, from the
//! registers and LDS the kernel uses and its largest workgroup. Each kernel
//! here fixes its workgroup size (`reqd_work_group_size`), so LLVM's
//! figure is the one a launch of that size gets, and the model must agree
//! over a matrix of register pressure, LDS and workgroup sizes, in wave32
//! and wave64, on every built-in profile: the parts with 1.5x VGPRs
//! (gfx1100, gfx1101, gfx1151) and those without (gfx1102, gfx1103,
//! gfx1150, gfx1152), each read from its profile, and CDNA's in wave64
//! with its unified VGPR and AccVGPR file.

use std::collections::BTreeMap;
use std::path::Path;

use softgpu_runtime::occupancy::{occupancy, KernelResources};
use softgpu_runtime::profile::Profile;

const REGISTERS: [u32; 5] = [4, 40, 72, 110, 160];
const LDS_FLOATS: [u32; 4] = [0, 4096, 8192, 12288];
const BLOCKS: [u32; 3] = [64, 256, 1024];

/// One kernel per (registers, LDS, block): `r` accumulators kept live
/// through a loop, `l` floats of LDS written and read across a barrier.
fn source() -> String {
    let mut s = String::new();
    for r in REGISTERS {
        for l in LDS_FLOATS {
            for b in BLOCKS {
                let lds = if l == 0 {
                    String::new()
                } else {
                    format!(
                        "__local float t[{l}]; t[lid % {l}] = x[gid]; \
                         barrier(CLK_LOCAL_MEM_FENCE); x[gid] += t[(lid * 7) % {l}];"
                    )
                };
                s += &format!(
                    "__kernel __attribute__((reqd_work_group_size({b}, 1, 1)))
void k_{r}_{l}_{b}(__global float* x) {{
    uint lid = __builtin_amdgcn_workitem_id_x();
    uint gid = __builtin_amdgcn_workgroup_id_x() * {b} + lid;
    float a[{r}];
    #pragma unroll
    for (int i = 0; i < {r}; i++) a[i] = x[gid * {r} + i];
    for (int round = 0; round < (int)x[0]; round++) {{
        #pragma unroll
        for (int i = 0; i < {r}; i++) a[i] = a[i] * a[(i + 1) % {r}] + 1.0f;
    }}
    float sum = 0.0f;
    #pragma unroll
    for (int i = 0; i < {r}; i++) sum += a[i];
    x[gid] = sum;
    {lds}
}}
"
                );
            }
        }
    }
    s
}

/// Per kernel: (VGPRs, LDS bytes, LLVM's occupancy), from clang's
/// assembly comments.
fn compile(target: &str, wave64: bool) -> BTreeMap<String, (u32, u32, u32)> {
    let dir = softgpu_test_support::fresh_dir("occ");
    let src = dir.join("k.cl");
    std::fs::write(&src, source()).unwrap();
    let mut flags = vec!["-O3", "-S"];
    if wave64 {
        flags.push("-mwavefrontsize64");
    }
    let asm = softgpu_test_support::tool::clang_cl(&src, target, &flags, Path::new("-"));
    let _ = std::fs::remove_dir_all(&dir);
    let (mut found, mut current, mut vgprs, mut lds) = (BTreeMap::new(), None, 0, 0);
    let number = |line: &str, key: &str| -> Option<u32> {
        let rest = line.trim().strip_prefix(key)?;
        rest.split_whitespace().next()?.parse().ok()
    };
    for line in asm.lines() {
        // A kernel's label: `k_4_0_64:  ; @k_4_0_64`.
        if let Some((name, _)) = line.split_once(':').filter(|(n, _)| n.starts_with("k_")) {
            current = Some(name.to_string());
        }
        if let Some(n) = number(line, "; NumVgprs:") {
            vgprs = n;
        }
        // CDNA's unified file: the ArchVGPRs (up to ACCUM_OFFSET) and
        // AccVGPRs together, which LLVM prints after NumVgprs.
        if let Some(n) = number(line, "; TotalNumVgprs:") {
            vgprs = n;
        }
        if let Some(n) = number(line, "; LDSByteSize:") {
            lds = n;
        }
        if let Some(n) = number(line, "; Occupancy:") {
            let name = current
                .take()
                .expect("an occupancy after its kernel's label");
            found.insert(name, (vgprs, lds, n));
        }
    }
    assert_eq!(
        found.len(),
        REGISTERS.len() * LDS_FLOATS.len() * BLOCKS.len()
    );
    found
}

#[test]
fn occupancy_matches_llvm_across_registers_lds_and_workgroups() {
    let mut mismatches = Vec::new();
    let mut limits = std::collections::BTreeSet::new();
    // Compile every (target, wave size) at once: clang dominates the time.
    let builds: Vec<_> = std::thread::scope(|s| {
        // CDNA runs wave64 only.
        // One profile per processor clang compiles for (`mi250x` and
        // `mi300a` are parts of gfx90a and gfx942, with their rules).
        let jobs: Vec<_> = Profile::built_in_names()
            .filter(|&t| Profile::built_in(t).is_ok_and(|p| p.name == t))
            .flat_map(|t| [(t, false), (t, true)])
            .filter(|&(t, wave64)| wave64 || !softgpu_isa::target::wave64_only(t))
            .map(|(t, w)| (t, w, s.spawn(move || compile(t, w))))
            .collect();
        jobs.into_iter()
            .map(|(t, w, job)| (t, w, job.join().expect("compiling the matrix")))
            .collect()
    });
    for (target, wave64, built) in builds {
        let profile = Profile::built_in(target).unwrap();
        for (name, (vgprs, lds_bytes, llvm)) in built {
            let block: u32 = name.rsplit('_').next().unwrap().parse().unwrap();
            let kernel = KernelResources {
                wave_size: if wave64 { 64 } else { 32 },
                vgprs,
                lds_bytes,
                workgroup_size: block,
                wgp_mode: true,
            };
            let ours = occupancy(&profile, &kernel);
            limits.insert(ours.limit.name());
            if ours.waves_per_simd != llvm {
                mismatches.push(format!(
                    "{target} wave{} {name}: {vgprs} VGPRs, {lds_bytes} B LDS: LLVM {llvm}, softgpu {} ({})",
                    kernel.wave_size,
                    ours.waves_per_simd,
                    ours.limit.name()
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    // The matrix reaches every limit, so each rule is tested.
    assert_eq!(limits.len(), 3, "limits reached: {limits:?}");
}
