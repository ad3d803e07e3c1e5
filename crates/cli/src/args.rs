//! `softgpu run`: kernel arguments from the command line, the dispatch, and
//! writing results back.

use std::path::{Path, PathBuf};

use softgpu_exec::{Arg, Buffer, Device, DeviceConfig, Launch};

/// One command-line kernel argument.
enum CliArg {
    In(PathBuf),
    Out(PathBuf, u64),
    InOut(PathBuf),
    Value(Arg),
}

fn parse_args(words: &[String]) -> Result<Vec<CliArg>, String> {
    let mut out = Vec::new();
    let mut it = words.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |what: &str| format!("{flag} {value}: not a valid {what}");
        out.push(match flag.as_str() {
            "--in" => CliArg::In(value.into()),
            "--inout" => CliArg::InOut(value.into()),
            "--out" => {
                let (path, bytes) = value.rsplit_once(':').ok_or_else(|| format!("--out {value}: expected PATH:BYTES"))?;
                CliArg::Out(path.into(), bytes.parse().map_err(|_| num("byte count"))?)
            }
            "--i32" => CliArg::Value(Arg::I32(value.parse().map_err(|_| num("i32"))?)),
            "--u32" => CliArg::Value(Arg::U32(parse_u64(value).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| num("u32"))?)),
            "--i64" => CliArg::Value(Arg::I64(value.parse().map_err(|_| num("i64"))?)),
            "--u64" => CliArg::Value(Arg::U64(parse_u64(value).ok_or_else(|| num("u64"))?)),
            "--f32" => CliArg::Value(Arg::F32(value.parse().map_err(|_| num("f32"))?)),
            "--f64" => CliArg::Value(Arg::F64(value.parse().map_err(|_| num("f64"))?)),
            other => return Err(format!("unknown kernel argument kind {other} (use --in, --out, --inout, --i32, --u32, --i64, --u64, --f32, --f64)")),
        });
    }
    Ok(out)
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Parses `X[,Y[,Z]]`.
pub fn dims(s: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--{what} {s}: expected X[,Y[,Z]]"));
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p
            .trim()
            .parse()
            .map_err(|_| format!("--{what} {s}: {p} is not a positive number"))?;
    }
    Ok(d)
}

#[allow(clippy::too_many_arguments)]
pub fn run(
    file: &Path,
    kernel: &str,
    grid: &str,
    block: &str,
    dynamic_lds: u32,
    target: &str,
    stats: bool,
    words: &[String],
) -> Result<(), String> {
    let (grid, block) = (dims(grid, "grid")?, dims(block, "block")?);
    // `--stats` may also come after the kernel arguments.
    let stats = stats || words.iter().any(|w| w == "--stats");
    let words: Vec<String> = words.iter().filter(|w| *w != "--stats").cloned().collect();
    let cli_args = parse_args(&words)?;
    let bytes = if crate::compile::is_source(file) {
        // OpenCL keeps argument names in the metadata only when asked, and
        // errors about arguments should name them.
        let options = match file.extension().and_then(|e| e.to_str()) {
            Some("cl") => vec!["-cl-kernel-arg-info".to_string()],
            _ => Vec::new(),
        };
        crate::compile::compile_source(
            file,
            &crate::compile::Options {
                target,
                defines: &[],
                include_dirs: &[],
                options: &options,
            },
        )?
    } else {
        std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?
    };
    let device = Device::new(DeviceConfig {
        target: target.into(),
        ..Default::default()
    })
    .map_err(|e| e.to_string())?;
    let program = device
        .load(&bytes)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let mut args = Vec::new();
    let mut outputs: Vec<(PathBuf, Buffer)> = Vec::new();
    for a in cli_args {
        let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
        args.push(match a {
            CliArg::In(p) => Arg::Buffer(device.alloc_from(&read(&p)?).map_err(|e| e.to_string())?),
            CliArg::InOut(p) => {
                let b = device.alloc_from(&read(&p)?).map_err(|e| e.to_string())?;
                outputs.push((p, b));
                Arg::Buffer(b)
            }
            CliArg::Out(p, n) => {
                let b = device.alloc_zeroed(n).map_err(|e| e.to_string())?;
                outputs.push((p, b));
                Arg::Buffer(b)
            }
            CliArg::Value(v) => v,
        });
    }
    let launch = Launch {
        grid,
        block,
        dynamic_lds,
    };
    let s = device
        .dispatch(&program, kernel, &launch, &args)
        .map_err(|e| e.to_string())?;
    for (path, buffer) in outputs {
        let data = device.read(&buffer).map_err(|e| e.to_string())?;
        std::fs::write(&path, data).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if stats {
        let json = serde_json::json!({
            "kernel": kernel,
            "target": target,
            "workgroups": s.workgroups,
            "threads": s.threads,
            "waves": s.waves,
            "wave_instructions": s.wave_instructions,
            "lane_instructions": s.lane_instructions,
            "seconds": s.seconds,
            "host_threads": device.threads(),
        });
        println!("{json}");
    }
    Ok(())
}
