//! `softgpu hotspots`: one dispatch, as `softgpu run` makes it, with a
//! count of every instruction's executions; reports the hottest
//! instructions. (`softgpu profile` is its old name, kept as an alias.)

use std::fmt::Write as _;

use softgpu_exec::{DispatchCounters, Hotspots, Launch, SlotCount, SlotEntry};
use softgpu_runtime::estimate::Estimate;

use crate::args::{self, LaunchSpec};
use crate::CliError;

/// Instructions listed when `--top` is not given.
pub const DEFAULT_TOP: usize = 20;

/// Runs the counted dispatch, writes the `--out` files and prints the
/// report (`--json` and `--top N` may also follow the kernel arguments).
pub fn run(spec: &LaunchSpec, top: usize, json: bool) -> Result<(), CliError> {
    let mut words = spec.words.to_vec();
    let json = args::take_switch(&mut words, "--json") || json;
    let top = match args::take_value(&mut words, "--top").map_err(CliError::Usage)? {
        Some(n) => n
            .parse()
            .map_err(|_| CliError::Usage(format!("--top {n}: not a number of instructions")))?,
        None => top,
    };
    let mut device = spec.device;
    device.take_from(&mut words).map_err(CliError::Usage)?;
    let spec = LaunchSpec {
        words: &words,
        device,
        ..*spec
    };
    let prepared = args::prepare(&spec)?;
    let outcome = prepared.dispatch(spec.kernel, true)?;
    let estimate = prepared.estimate(spec.kernel, &outcome)?;
    let stats = outcome.counters;
    let hotspots = outcome
        .hotspots
        .expect("a dispatch asked for hotspots returns them");
    prepared.write_outputs()?;
    let wave64 = hotspots.wave_size() == 64;
    // The hotspots count the slots of the program that ran the kernel.
    let ran = (prepared.program.kernel(spec.kernel))
        .map(|k| prepared.program.for_kernel(k))
        .map_err(|e| CliError::Dispatch(e.into()))?;
    let report = Report {
        spec: &spec,
        part: crate::inspect::part_profile(prepared.device.target())?,
        launch: &prepared.launch,
        stats: &stats,
        hotspots: &hotspots,
        host_threads: prepared.device.threads(),
        occupancy: prepared.occupancy(spec.kernel)?,
        estimate,
        hottest: hotspots
            .hottest(top)
            .into_iter()
            .map(|entry| (entry, ran.text_for(entry.slot, wave64)))
            .collect(),
    };
    if json {
        println!("{}", report.json());
        Ok(())
    } else {
        Ok(crate::inspect::print_all(&report.text())?)
    }
}

/// What the report shows, gathered once for either output form.
struct Report<'a> {
    spec: &'a LaunchSpec<'a>,
    /// The profile of the part the device emulated.
    part: softgpu_runtime::profile::Profile,
    launch: &'a Launch,
    stats: &'a DispatchCounters,
    hotspots: &'a Hotspots,
    host_threads: usize,
    /// The estimated time on the real part.
    estimate: Option<Estimate>,
    /// Work-items per workgroup and the occupancy on the real part.
    occupancy: (u32, softgpu_runtime::occupancy::Occupancy),
    /// The hottest instructions with their disassembly.
    hottest: Vec<(SlotEntry, String)>,
}

impl Report<'_> {
    /// Active lanes per wave instruction over the whole dispatch.
    fn avg_lanes(&self) -> f64 {
        let whole = SlotCount {
            waves: self.stats.wave_instructions,
            lanes: self.stats.lane_instructions,
        };
        whole.avg_lanes()
    }

    fn lane_percent(&self) -> f64 {
        100.0 * self.avg_lanes() / self.hotspots.wave_size() as f64
    }

    /// Percentage of all wave instructions that `waves` is.
    fn wave_share(&self, waves: u64) -> f64 {
        // No instructions ran means no instruction has a share.
        100.0 * waves as f64 / self.stats.wave_instructions.max(1) as f64
    }

    fn text(&self) -> String {
        let (s, l) = (self.stats, self.launch);
        let mut out = String::new();
        writeln!(
            out,
            "kernel {} ({}, wave{})",
            self.spec.kernel,
            self.part.name,
            self.hotspots.wave_size()
        )
        .ok();
        writeln!(
            out,
            "grid {} x block {}: {} workgroups, {} work-items",
            shape(l.grid),
            shape(l.block),
            s.workgroups,
            s.threads
        )
        .ok();
        writeln!(out, "waves              {}", s.waves).ok();
        writeln!(out, "wave instructions  {}", s.wave_instructions).ok();
        writeln!(out, "lane instructions  {}", s.lane_instructions).ok();
        writeln!(
            out,
            "active lanes       {:.2} per instruction ({:.1}% of {})",
            self.avg_lanes(),
            self.lane_percent(),
            self.hotspots.wave_size()
        )
        .ok();
        writeln!(out, "seconds            {:.6}", s.seconds).ok();
        let (size, o) = &self.occupancy;
        writeln!(out, "{}", crate::inspect::occupancy_text(*size, o)).ok();
        if let Some(e) = &self.estimate {
            writeln!(out, "{}", e.text()).ok();
        }
        writeln!(
            out,
            "\nhottest {} of {} executed instructions:",
            self.hottest.len(),
            self.hotspots.executed().count()
        )
        .ok();
        writeln!(
            out,
            "{:>12}  {:>12}  {:>6}  {:>6}  instruction",
            "offset", "waves", "%", "lanes"
        )
        .ok();
        for (entry, text) in &self.hottest {
            writeln!(
                out,
                "{:012X}  {:>12}  {:>5.1}%  {:>6.2}  {text}",
                entry.offset,
                entry.count.waves,
                self.wave_share(entry.count.waves),
                entry.count.avg_lanes()
            )
            .ok();
        }
        out
    }

    /// `run --stats`'s object plus the launch shape, lane averages and the
    /// hottest instructions.
    fn json(&self) -> serde_json::Value {
        let (size, o) = &self.occupancy;
        let occupancy = crate::inspect::occupancy_json(*size, o);
        let mut json = args::stats_json(
            self.spec.kernel,
            &self.part,
            self.stats,
            self.host_threads,
            occupancy,
            self.estimate.as_ref(),
        );
        json["grid"] = self.launch.grid.into();
        json["block"] = self.launch.block.into();
        json["wave_size"] = self.hotspots.wave_size().into();
        json["avg_active_lanes"] = self.avg_lanes().into();
        json["active_lane_percent"] = self.lane_percent().into();
        json["executed_instructions"] = self.hotspots.executed().count().into();
        json["hottest"] = self
            .hottest
            .iter()
            .map(|(entry, text)| {
                serde_json::json!({
                    "offset": entry.offset,
                    "text": text,
                    "waves": entry.count.waves,
                    "lanes": entry.count.lanes,
                    "avg_lanes": entry.count.avg_lanes(),
                })
            })
            .collect();
        json
    }
}

/// `X,Y,Z` as the command line writes it.
fn shape(d: [u32; 3]) -> String {
    format!("{},{},{}", d[0], d[1], d[2])
}
