//! A dispatch's hotspots: how many times waves ran each decoded
//! instruction, and with how many active lanes.

use softgpu_interp::program::Program;

/// Executions of one instruction slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotCount {
    /// Times a wave executed the instruction.
    pub waves: u64,
    /// Active lanes (EXEC popcount) summed over those executions.
    pub lanes: u64,
}

impl SlotCount {
    /// Active lanes per execution, 0 for an instruction that never ran.
    pub fn avg_lanes(&self) -> f64 {
        if self.waves == 0 {
            0.0
        } else {
            self.lanes as f64 / self.waves as f64
        }
    }

    pub(crate) fn add(&mut self, other: SlotCount) {
        self.waves += other.waves;
        self.lanes += other.lanes;
    }
}

/// One instruction of a dispatch's [`Hotspots`]: its slot, code offset and count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotEntry {
    /// Index of the instruction in its program (as
    /// [`Hotspots::counts`] is indexed).
    pub slot: u32,
    /// Code offset (image offset, the address `llvm-objdump` shows).
    pub offset: u64,
    /// How often it ran, and with how many lanes.
    pub count: SlotCount,
}

/// The counts of every instruction slot of a program (indexed as
/// `Program::slots`) over one dispatch.
#[derive(Clone, Debug, PartialEq)]
pub struct Hotspots {
    wave_size: u32,
    /// Image offset of each slot, so the counts read without the program.
    offsets: Vec<u64>,
    counts: Vec<SlotCount>,
}

impl Hotspots {
    pub(crate) fn new(program: &Program, wave_size: u32, counts: Vec<SlotCount>) -> Self {
        Hotspots {
            wave_size,
            offsets: program.slots().iter().map(|s| s.offset).collect(),
            counts,
        }
    }

    /// Lanes per wave of the counted kernel (32 or 64).
    pub fn wave_size(&self) -> u32 {
        self.wave_size
    }

    /// The count of every slot, indexed by slot.
    pub fn counts(&self) -> &[SlotCount] {
        &self.counts
    }

    /// Code offset (image offset, the address `llvm-objdump` shows) of slot
    /// `slot`.
    pub fn offset(&self, slot: u32) -> Option<u64> {
        self.offsets.get(slot as usize).copied()
    }

    /// The instructions that ran, in code order.
    pub fn executed(&self) -> impl Iterator<Item = SlotEntry> + '_ {
        self.offsets
            .iter()
            .zip(&self.counts)
            .enumerate()
            .filter(|(_, (_, count))| count.waves > 0)
            .map(|(slot, (&offset, &count))| SlotEntry {
                slot: slot as u32,
                offset,
                count,
            })
    }

    /// Up to `n` instructions that ran, most wave executions first (ties in
    /// code order).
    pub fn hottest(&self, n: usize) -> Vec<SlotEntry> {
        let mut ran: Vec<SlotEntry> = self.executed().collect();
        ran.sort_by_key(|e| std::cmp::Reverse(e.count.waves));
        ran.truncate(n);
        ran
    }
}

#[cfg(test)]
mod tests {
    use crate::args::{Arg, Launch};
    use crate::config::DeviceConfig;
    use crate::desc::DispatchDesc;
    use crate::device::Device;

    fn example(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/bin")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// vector_add over 1000 elements in 4 workgroups of 256: the last
    /// workgroup's tail lanes are masked off, so lane counts differ from
    /// wave counts × 32 and the counts must follow EXEC.
    #[test]
    fn per_slot_counts_sum_to_the_dispatch_totals() {
        let mut config = DeviceConfig::default();
        config
            .arena_bytes(64 << 20)
            .settings_mut()
            .threads(2)
            .unwrap();
        let device = Device::new(&config).unwrap();
        let program = device.load(&example("vector_add-gfx1151.hsaco")).unwrap();
        let n = 1000u64;
        let a = device.alloc_from(&vec![0u8; 4 * n as usize]).unwrap();
        let b = device.alloc_from(&vec![0u8; 4 * n as usize]).unwrap();
        let c = device.alloc_zeroed(4 * n).unwrap();
        let args = [
            Arg::Buffer(a),
            Arg::Buffer(b),
            Arg::Buffer(c),
            Arg::I32(n as i32),
        ];
        let launch = Launch {
            grid: [4, 1, 1],
            block: [256, 1, 1],
            dynamic_lds: 0,
        };
        let kernel = program.kernel("vector_add").unwrap();
        let desc = DispatchDesc::launch(&program, kernel, &launch, &args);
        let plain = device.dispatch(&desc).unwrap().counters;
        let counted = DispatchDesc {
            hotspots: true,
            ..desc
        };
        let outcome = device.dispatch(&counted).unwrap();
        let (stats, hotspots) = (outcome.counters, outcome.hotspots.unwrap());
        assert_eq!(stats.wave_instructions, plain.wave_instructions);
        assert_eq!(stats.lane_instructions, plain.lane_instructions);
        assert_eq!(hotspots.wave_size(), 32);
        assert_eq!(hotspots.counts().len(), program.slots().len());
        let waves: u64 = hotspots.counts().iter().map(|c| c.waves).sum();
        let lanes: u64 = hotspots.counts().iter().map(|c| c.lanes).sum();
        assert_eq!(waves, stats.wave_instructions);
        assert_eq!(lanes, stats.lane_instructions);
        assert!(lanes < waves * 32, "masked lanes were counted");

        // Every wave runs the kernel's first instruction with all its lanes.
        let kernel = &program.code_object.kernels[0];
        let entry = program.index_of_offset(kernel.entry_offset).unwrap();
        let first = hotspots.counts()[entry as usize];
        assert_eq!(first.waves, stats.waves);
        assert_eq!(first.lanes, stats.threads);
        assert_eq!(hotspots.offset(entry), Some(kernel.entry_offset));

        let hottest = hotspots.hottest(3);
        assert_eq!(hottest.len(), 3);
        assert!(hottest
            .windows(2)
            .all(|w| w[0].count.waves >= w[1].count.waves));
        assert!(hotspots
            .counts()
            .iter()
            .all(|c| c.waves <= hottest[0].count.waves));
        for e in &hottest {
            assert_eq!(e.count, hotspots.counts()[e.slot as usize]);
            assert_eq!(Some(e.offset), hotspots.offset(e.slot));
        }
    }
}
