//! `softgpu info`: the emulated devices and their profiles, without starting
//! a runtime.

use softgpu_runtime::profile::Profile;

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
    let profiles = softgpu_env::config().map_err(|e| e.to_string())?.devices;
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
        let waves: Vec<String> = p.wave_sizes.iter().map(|w| w.to_string()).collect();
        println!("device {index}: {} ({})", p.name, p.marketing_name);
        println!("  vendor               {}", p.vendor);
        println!("  ISA                  {}", p.isa_name());
        println!("  chip id              0x{:04x}", p.chip_id);
        println!(
            "  APU                  {}",
            if p.is_apu { "yes" } else { "no" }
        );
        println!("  compute units        {}", p.compute_units);
        println!("  SIMDs per CU         {}", p.simds_per_cu);
        println!(
            "  shader engines       {} ({} arrays each)",
            p.shader_engines, p.shader_arrays_per_engine
        );
        println!("  wave sizes           {}", waves.join(", "));
        println!("  max waves per CU     {}", p.max_waves_per_cu);
        println!("  max workgroup size   {}", p.max_workgroup_size);
        println!("  max workgroup dims   {}", dims(p.max_workgroup_dims));
        println!("  max grid dims        {}", dims(p.max_grid_dims));
        println!("  LDS                  {}", bytes(p.lds_bytes.into()));
        println!("  device memory        {}", bytes(p.memory.device_bytes));
        println!("  system memory        {}", bytes(p.memory.system_bytes));
        println!("  kernarg memory       {}", bytes(p.memory.kernarg_bytes));
        println!("  cache line           {} B", p.cache_line_bytes);
        println!(
            "  caches               L1 {}, L2 {}, L3 {}",
            bytes(p.l1_cache_bytes.into()),
            bytes(p.l2_cache_bytes.into()),
            bytes(p.l3_cache_bytes.into())
        );
        println!("  clock                {} MHz", p.clock_mhz);
        println!(
            "  memory bus           {} bits at {} MHz",
            p.memory_bus_width_bits, p.memory_clock_mhz
        );
        println!(
            "  queues               up to {} per device, {} to {} packets",
            p.queues.max_queues, p.queues.min_size, p.queues.max_size
        );
        println!();
    }
    println!(
        "built-in profiles: {} (choose with SOFTGPU_PROFILE=NAME or a JSON file; \
         SOFTGPU_DEVICES=N sets the number of devices)",
        names.join(", ")
    );
    Ok(())
}
