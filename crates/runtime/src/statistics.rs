//! The statistics of the latest dispatches, kept in memory when
//! [`crate::Config::dispatch_statistics`] asks for them: each dispatch's
//! counts, its occupancy on the real part and its estimated time there
//! ([`crate::estimate`]). Keeping them makes every dispatch count its
//! instructions, which costs some speed.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde::Serialize;
use softgpu_exec::DispatchCounters;

use crate::estimate::Estimate;
use crate::occupancy::Occupancy;
use crate::profile::Fidelity;

/// What one dispatch did, and how long it would take on the real part.
#[derive(Clone, Debug, PartialEq)]
pub struct DispatchStatistics {
    /// The queue's id and the packet's index in it.
    pub queue: u64,
    pub index: u64,
    /// The kernel's name.
    pub kernel: String,
    /// Work-items per dimension and per workgroup.
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// The executor's counters (their `seconds` is host time).
    pub counters: DispatchCounters,
    /// The kernel's occupancy on the real part at this launch.
    pub occupancy: Occupancy,
    /// The estimated time on the real part, if the profile has
    /// performance figures.
    pub estimate: Option<Estimate>,
    /// The profile the figures describe, and their fidelity.
    pub profile: String,
    pub profile_revision: u32,
    pub fidelity: Fidelity,
}

impl Serialize for DispatchStatistics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let o = &self.occupancy;
        let st = &self.counters;
        serde_json::json!({
            "queue": self.queue, "index": self.index, "kernel": self.kernel,
            "grid": self.grid, "block": self.block,
            "workgroups": st.workgroups, "waves": st.waves,
            "wave_instructions": st.wave_instructions,
            "lane_instructions": st.lane_instructions,
            "occupancy": {
                "waves_per_simd": o.waves_per_simd, "waves_per_cu": o.waves_per_cu,
                "limit": o.limit.name(),
            },
            "estimate": self.estimate,
            "profile": self.profile, "profile_revision": self.profile_revision,
            "fidelity": self.fidelity,
        })
        .serialize(s)
    }
}

/// The latest dispatch records, at most `capacity` of them.
#[derive(Debug, Default)]
pub struct Statistics {
    capacity: usize,
    records: Mutex<VecDeque<DispatchStatistics>>,
}

impl Statistics {
    /// Keeps the last `capacity` records (0: none, and dispatches run
    /// without counting instructions).
    pub fn new(capacity: usize) -> Self {
        Statistics {
            capacity,
            records: Mutex::new(VecDeque::with_capacity(capacity.min(1024))),
        }
    }

    /// Whether records are kept.
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Keeps `record`, dropping the oldest beyond the capacity.
    pub fn push(&self, record: DispatchStatistics) {
        if !self.enabled() {
            return;
        }
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        if records.len() == self.capacity {
            records.pop_front();
        }
        records.push_back(record);
    }

    /// The kept records, oldest first.
    pub fn snapshot(&self) -> Vec<DispatchStatistics> {
        let records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        records.iter().cloned().collect()
    }
}
