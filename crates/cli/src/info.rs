//! `softgpu info`: the emulated devices and their profiles, without starting
//! a runtime.

use softgpu_runtime::profile::{Performance, Profile};

/// `n` bytes in the largest unit that divides it.
fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size && n.is_multiple_of(size) {
            return format!("{} {unit}", n / size);
        }
    }
    format!("{n} B")
}

fn dims(d: [u32; 3]) -> String {
    format!("{} x {} x {}", d[0], d[1], d[2])
}

pub fn run(json: bool) -> Result<(), String> {
    // The GPUs `SOFTGPU_DEVICES` and `SOFTGPU_PROFILE` describe.
    let config = softgpu_env::config().map_err(|e| e.to_string())?;
    let profiles = config.get_devices();
    let names: Vec<&str> = Profile::built_in_names().collect();
    if json {
        let mut devices = Vec::new();
        for (index, profile) in profiles.iter().enumerate() {
            let mut v = serde_json::to_value(profile).map_err(|e| e.to_string())?;
            let obj = v.as_object_mut().ok_or("profile is not a JSON object")?;
            obj.insert("index".into(), index.into());
            obj.insert("isa".into(), profile.isa_name().into());
            devices.push(v);
        }
        let doc = serde_json::json!({ "devices": devices, "profiles": names });
        println!("{doc}");
        return Ok(());
    }
    for (index, p) in profiles.iter().enumerate() {
        println!("device {index}: {} ({})", p.name, p.marketing_name);
        if !p.profile_id.is_empty() {
            println!(
                "  profile              {} revision {}, fidelity {}, conformance claims {}",
                p.profile_id,
                p.revision,
                p.max_fidelity.name(),
                if p.conformance_allowed {
                    "allowed"
                } else {
                    "not allowed"
                }
            );
        }
        for (label, value, fields) in rows(p) {
            println!("  {label:<20} {value}{}", provenance(p, fields));
        }
        performance(p);
        quirks(p);
        println!();
    }
    println!(
        "built-in profiles: {} (choose with SOFTGPU_PROFILE=NAME or a JSON file; \
         SOFTGPU_DEVICES=N sets the number of devices)",
        names.join(", ")
    );
    Ok(())
}

/// The lines `info` prints for a profile: label, value, and the fields the
/// value comes from.
fn rows(p: &Profile) -> Vec<(&'static str, String, &'static [&'static str])> {
    let waves: Vec<String> = p.wave_sizes.iter().map(|w| w.to_string()).collect();
    let m = &p.memory;
    vec![
        ("vendor", p.vendor.clone(), &["vendor"]),
        ("ISA", p.isa_name(), &["name"]),
        ("chip id", format!("0x{:04x}", p.chip_id), &["chip_id"]),
        (
            "APU",
            if p.is_apu { "yes" } else { "no" }.into(),
            &["is_apu"],
        ),
        (
            "compute units",
            p.compute_units.to_string(),
            &["compute_units"],
        ),
        (
            "SIMDs per CU",
            p.simds_per_cu.to_string(),
            &["simds_per_cu"],
        ),
        (
            "shader engines",
            format!(
                "{} ({} arrays each)",
                p.shader_engines, p.shader_arrays_per_engine
            ),
            &["shader_engines", "shader_arrays_per_engine"],
        ),
        ("wave sizes", waves.join(", "), &["wave_sizes"]),
        (
            "max waves per CU",
            p.max_waves_per_cu.to_string(),
            &["max_waves_per_cu"],
        ),
        (
            "max workgroup size",
            p.max_workgroup_size.to_string(),
            &["max_workgroup_size"],
        ),
        (
            "max workgroup dims",
            dims(p.max_workgroup_dims),
            &["max_workgroup_dims"],
        ),
        ("max grid dims", dims(p.max_grid_dims), &["max_grid_dims"]),
        (
            "LDS",
            format!(
                "{} per workgroup, {} per WGP",
                bytes(p.lds_bytes.into()),
                bytes(p.lds_bytes_per_wgp.into())
            ),
            &["lds_bytes", "lds_bytes_per_wgp"],
        ),
        (
            "max waves per SIMD",
            p.max_waves_per_simd.to_string(),
            &["max_waves_per_simd"],
        ),
        (
            "VGPR file",
            format!(
                "{} per SIMD in wave32, allocated in blocks of {}",
                p.vgprs_per_simd_wave32, p.vgpr_alloc_granule_wave32
            ),
            &["vgprs_per_simd_wave32", "vgpr_alloc_granule_wave32"],
        ),
        (
            "memory pools",
            format!(
                "device {}, system {}, kernarg {}",
                bytes(m.device_bytes),
                bytes(m.system_bytes),
                bytes(m.kernarg_bytes)
            ),
            &["memory"],
        ),
        (
            "cache line",
            format!("{} B", p.cache_line_bytes),
            &["cache_line_bytes"],
        ),
        (
            "caches",
            format!(
                "L1 {}, L2 {}, L3 {}",
                bytes(p.l1_cache_bytes.into()),
                bytes(p.l2_cache_bytes.into()),
                bytes(p.l3_cache_bytes.into())
            ),
            &["l1_cache_bytes", "l2_cache_bytes", "l3_cache_bytes"],
        ),
        ("clock", format!("{} MHz", p.clock_mhz), &["clock_mhz"]),
        (
            "memory bus",
            format!(
                "{} bits at {} MHz",
                p.memory_bus_width_bits, p.memory_clock_mhz
            ),
            &["memory_bus_width_bits", "memory_clock_mhz"],
        ),
        (
            "queues",
            format!(
                "up to {} per device, {} to {} packets",
                p.queues.max_queues, p.queues.min_size, p.queues.max_size
            ),
            &["queues"],
        ),
    ]
}

/// The performance section the time estimate uses, each figure with its
/// provenance, and the peaks they give.
fn performance(p: &Profile) {
    let Some(perf) = &p.analytical_performance else {
        return;
    };
    println!(
        "  analytical performance (peaks: {:.1} TFLOP/s FP32 with dual issue, {:.0} GB/s memory)",
        p.peak_fp32_flops().unwrap_or(0.0) / 1e12,
        perf.memory_bytes_per_second as f64 / 1e9
    );
    let values = serde_json::to_value(perf).unwrap_or_default();
    // The optional fields (CDNA's matrix rates) where the profile has them.
    let optional = Performance::OPTIONAL_FIELDS
        .iter()
        .filter(|f| !values[**f].is_null());
    for field in Performance::FIELDS.iter().chain(optional) {
        let name = format!("analytical_performance.{field}");
        println!(
            "    {field:<24} {}{}",
            values[field],
            provenance(p, &[name.as_str()])
        );
    }
}

/// The behaviours of the part the profile lists, as the executor
/// describes them.
fn quirks(p: &Profile) {
    if p.quirks.is_empty() {
        return;
    }
    println!("  quirks (behaviours softgpu honours where the ISA guide is silent or differs)");
    let honoured = softgpu_isa::Family::of_target(&p.name)
        .map_or(&[][..], softgpu_runtime::exec::quirks::quirks);
    for name in &p.quirks {
        let what = honoured
            .iter()
            .find(|q| q.name == name.as_str())
            .map_or("", |q| q.behaviour);
        println!("    {name}: {what}");
    }
}

/// `  [source: ref]` for the fields of one line (each distinct source
/// once), or nothing for a profile without provenance (schema 1).
fn provenance(p: &Profile, fields: &[&str]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for field in fields {
        if let Some(s) = p.source_of(field) {
            let text = format!("{}: {}", s.source.name(), s.reference);
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
    }
    if seen.is_empty() {
        String::new()
    } else {
        format!("  [{}]", seen.join("; "))
    }
}
