//! `softgpu disasm` and `softgpu inspect`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Writes to stdout; a closed pipe (`softgpu disasm … | head`) is not an error.
pub fn print_all(text: &str) -> Result<(), String> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

use softgpu_exec::{Device, DeviceConfig};
use softgpu_runtime::occupancy::{occupancy, KernelResources, Occupancy};
use softgpu_runtime::profile::Profile;

/// The code object in `file`, placed on a device for `target` (None: the
/// object's own, `args::device_target`).
fn load(file: &Path, target: Option<&str>) -> Result<softgpu_exec::Program, String> {
    let bytes = softgpu_codeobj::read_file(file, softgpu_codeobj::MAX_FILE_SIZE)
        .map_err(|e| e.to_string())?;
    let target = crate::args::device_target(file, &bytes, target)?;
    let mut config = DeviceConfig::new(&target).map_err(|e| e.to_string())?;
    config.arena_bytes(1 << 30);
    let device = Device::new(&config).map_err(|e| e.to_string())?;
    device
        .load(&bytes)
        .map_err(|e| format!("{}: {e}", file.display()))
}

/// Prints every instruction of `.text` with its offset and bytes, and a
/// label at each kernel or function symbol.
pub fn disasm(file: &Path, target: Option<&str>) -> Result<(), String> {
    let loaded = load(file, target)?;
    let program = loaded.whole_text();
    let co = &program.code_object;
    let mut out = String::new();
    let mut labels: Vec<(u64, &str)> = co
        .symbols
        .iter()
        .filter(|s| matches!(s.kind, softgpu_codeobj::SymbolKind::Function) && s.defined)
        .map(|s| (s.value, s.name.as_str()))
        .collect();
    labels.sort();
    // llvm-objdump's header, labels and columns: the instruction padded
    // to 59 columns (a longer one runs into the comment), and a branch's
    // target named by the symbol before it.
    write!(
        out,
        "\n{}:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n",
        file.display()
    )
    .ok();
    // Wave64 code names lane masks as SGPR pairs, as objdump does for it.
    let wave64 = !co.kernels.is_empty() && co.kernels.iter().all(|k| !k.descriptor.wave32);
    for (index, slot) in program.slots().iter().enumerate() {
        if slot.offset >= co.text.end {
            break;
        }
        for (_, name) in labels.iter().filter(|(v, _)| *v == slot.offset) {
            writeln!(out, "\n{:016x} <{name}>:", slot.offset).ok();
        }
        let text = program.text_for(index as u32, wave64);
        let target = (slot.inst.branch_offset())
            .and_then(|d| slot.offset.checked_add_signed(d))
            .and_then(|t| symbolize(&labels, t))
            .map(|at| format!(" {at}"))
            .unwrap_or_default();
        writeln!(
            out,
            "\t{text:<59}// {:012X}: {}{target}",
            slot.offset,
            program.bytes_of(index as u32)
        )
        .ok();
    }
    print_all(&out)
}

/// `offset` as llvm-objdump names it: `<symbol>` or `<symbol+0xN>` after
/// the last of the sorted `labels` at or before it.
fn symbolize(labels: &[(u64, &str)], offset: u64) -> Option<String> {
    let (start, name) = labels.iter().rev().find(|(v, _)| *v <= offset)?;
    Some(match offset - start {
        0 => format!("<{name}>"),
        d => format!("<{name}+{d:#x}>"),
    })
}

/// The occupancy of `k` on `target` at its fixed workgroup size, else
/// the largest it was compiled for (what LLVM assumes too); `None` for a
/// part softgpu has no profile of.
fn occupancy_of(target: &str, k: &softgpu_codeobj::Kernel) -> Option<(u32, Occupancy)> {
    let size = k
        .meta
        .reqd_workgroup_size
        .map_or(k.meta.max_flat_workgroup_size, |[x, y, z]| x * y * z);
    Some((size, kernel_occupancy(target, k, size, 0).ok()?))
}

/// The occupancy of `k` on the real `target` part for workgroups of
/// `workgroup_size` work-items with `dynamic_lds` bytes of LDS beyond the
/// kernel's own.
pub fn kernel_occupancy(
    target: &str,
    k: &softgpu_codeobj::Kernel,
    workgroup_size: u32,
    dynamic_lds: u32,
) -> Result<Occupancy, String> {
    let resources = KernelResources::of(k, workgroup_size, dynamic_lds);
    Ok(occupancy(&part_profile(target)?, &resources))
}

/// The built-in profile of the real `target` part, whose figures
/// occupancy and time estimates use (every processor the executor runs
/// has one; no other part's figures stand in for a missing one).
pub fn part_profile(target: &str) -> Result<Profile, String> {
    Profile::built_in(target).map_err(|_| format!("softgpu has no profile of {target} yet"))
}

/// An occupancy as `inspect --json`, `run --stats` and `profile --json`
/// print it.
pub fn occupancy_json(workgroup_size: u32, o: &Occupancy) -> serde_json::Value {
    serde_json::json!({
        "workgroup_size": workgroup_size,
        "waves_per_simd": o.waves_per_simd,
        "waves_per_cu": o.waves_per_cu,
        "limit": o.limit.name(),
        "workgroups_per_wgp": o.workgroups_per_wgp,
        "whole_group_waves_per_simd": o.whole_group_waves_per_simd,
    })
}

/// An occupancy in one line of text.
pub fn occupancy_text(workgroup_size: u32, o: &Occupancy) -> String {
    format!(
        "occupancy at {workgroup_size} work-items: {} waves/SIMD ({}/CU), bound by {}; {} whole workgroups/WGP ({} waves/SIMD)",
        o.waves_per_simd,
        o.waves_per_cu,
        o.limit.name(),
        o.workgroups_per_wgp,
        o.whole_group_waves_per_simd
    )
}

pub fn inspect(file: &Path, target: Option<&str>, json: bool) -> Result<(), String> {
    let program = load(file, target)?;
    let co = &program.code_object;
    // The device the object runs on: `--target`, else its own processor.
    let device_target = target.map_or_else(|| co.target.to_string(), str::to_string);
    let kernels: Vec<serde_json::Value> = co
        .kernels
        .iter()
        .map(|k| {
            let d = &k.descriptor;
            let args: Vec<serde_json::Value> = k
                .meta
                .args
                .iter()
                .map(|a| {
                    serde_json::json!({
                        "name": a.name, "type": a.type_name, "offset": a.offset, "size": a.size,
                        "value_kind": format!("{:?}", a.value_kind), "address_space": a.address_space.as_ref().map(|s| format!("{s:?}")),
                        "hidden": a.value_kind.is_hidden(),
                    })
                })
                .collect();
            // No profile of the part: no occupancy to claim.
            let occupancy = occupancy_of(&device_target, k)
                .map_or(serde_json::Value::Null, |(size, o)| occupancy_json(size, &o));
            serde_json::json!({
                "name": k.name,
                "symbol": k.symbol,
                "entry_offset": k.entry_offset,
                "wavefront_size": if d.wave32 { 32 } else { 64 },
                "kernarg_segment_size": k.meta.kernarg_segment_size,
                "group_segment_fixed_size": d.group_segment_fixed_size,
                "private_segment_fixed_size": d.private_segment_fixed_size,
                "uses_dynamic_stack": d.uses_dynamic_stack,
                "sgpr_count": k.meta.sgpr_count,
                "vgpr_count": k.meta.vgpr_count,
                "max_flat_workgroup_size": k.meta.max_flat_workgroup_size,
                "reqd_workgroup_size": k.meta.reqd_workgroup_size,
                "occupancy": occupancy,
                "args": args,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "file": file.display().to_string(),
        "target": co.target,
        "target_id": co.target_id,
        "code_object_version": co.version,
        "kernels": kernels,
    });
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    println!(
        "{}: {} (code object v{})",
        file.display(),
        co.target_id,
        co.version
    );
    for k in &co.kernels {
        let d = &k.descriptor;
        println!("\nkernel {}", softgpu_codeobj::with_demangled(&k.name));
        println!(
            "  wave{}  kernarg {} B  LDS {} B  scratch {} B/lane{}  SGPRs {}  {}  max workgroup {}",
            if d.wave32 { 32 } else { 64 },
            k.meta.kernarg_segment_size,
            d.group_segment_fixed_size,
            d.private_segment_fixed_size,
            if d.uses_dynamic_stack {
                " + dynamic stack"
            } else {
                ""
            },
            k.meta.sgpr_count,
            vgprs_text(k),
            k.meta.max_flat_workgroup_size
        );
        match occupancy_of(&device_target, k) {
            Some((size, o)) => println!("  {}", occupancy_text(size, &o)),
            None => println!("  occupancy: softgpu has no profile of {device_target} yet"),
        }
        for (i, a) in k
            .meta
            .args
            .iter()
            .filter(|a| !a.value_kind.is_hidden())
            .enumerate()
        {
            println!(
                "  arg {i}: {} {} ({:?}, {} bytes at offset {})",
                a.type_name.as_deref().unwrap_or("?"),
                a.name.as_deref().unwrap_or("?"),
                a.value_kind,
                a.size,
                a.offset
            );
        }
    }
    Ok(())
}

/// `VGPRs N`; on CDNA, whose unified register file holds the AccVGPRs
/// after the descriptor's ACCUM_OFFSET, how N splits: `VGPRs 28 (12 +
/// AGPRs 16)`.
fn vgprs_text(k: &softgpu_codeobj::Kernel) -> String {
    let vgprs = format!("VGPRs {}", k.meta.vgpr_count);
    match k.descriptor.accum_offset {
        0 => vgprs,
        at => format!("{vgprs} ({at} + AGPRs {})", k.meta.agpr_count),
    }
}
