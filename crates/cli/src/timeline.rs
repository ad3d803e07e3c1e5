//! `softgpu trace` and `softgpu replay`: tools over what the runtime records.

use std::path::Path;

use softgpu_runtime::capture::Capture;

type CliResult = Result<(), String>;

/// Converts a JSON-lines trace to a Chrome/Perfetto timeline.
pub fn convert(input: &Path, output: Option<&Path>) -> CliResult {
    // A trace is read as a stream (it may be large), but only from a
    // regular file: a FIFO or device would never end.
    let kind = std::fs::metadata(input)
        .map_err(|e| format!("{}: {e}", input.display()))?
        .file_type();
    if !kind.is_file() {
        return Err(format!("{}: not a regular file", input.display()));
    }
    let file = std::fs::File::open(input).map_err(|e| format!("{}: {e}", input.display()))?;
    let timeline = softgpu_runtime::trace::chrome_trace(std::io::BufReader::new(file))
        .map_err(|e| e.to_string())?;
    let default = input.with_extension("chrome.json");
    let output = output.unwrap_or(&default);
    let bytes = serde_json::to_vec(&timeline).map_err(|e| e.to_string())?;
    std::fs::write(output, bytes).map_err(|e| format!("{}: {e}", output.display()))?;
    let events = timeline["traceEvents"].as_array().map_or(0, Vec::len);
    println!("wrote {} ({events} events)", output.display());
    Ok(())
}

/// Replays a captured dispatch and compares its results.
pub fn replay(dir: &Path) -> CliResult {
    let capture = Capture::load(dir).map_err(|e| e.to_string())?;
    let report = capture.replay(dir).map_err(|e| e.to_string())?;
    println!(
        "replayed {} grid {:?} block {:?}: {} wave instructions, {} buffers identical",
        report.kernel,
        capture.grid,
        capture.block,
        report.counters.wave_instructions,
        report.identical
    );
    if report.different.is_empty() {
        Ok(())
    } else {
        let list: Vec<String> = report
            .different
            .iter()
            .map(|(addr, at)| format!("{addr:#x} (first difference at byte {at})"))
            .collect();
        Err(format!(
            "results differ from the capture in: {}",
            list.join(", ")
        ))
    }
}
