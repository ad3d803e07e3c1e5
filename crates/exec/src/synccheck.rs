//! synccheck (`SOFTGPU_CHECK=sync`): barriers that not every live wave of
//! the workgroup reaches together. The scheduler calls these only when the
//! check is on, and only when a wave arrives at a barrier, ends, or a
//! barrier is released, so they cost the hot loop nothing.
//!
//! Reported as [`FaultKind::Sync`]:
//! - a wave that ends while another wave of its workgroup waits at a
//!   barrier, or before another arrives at one (the ended wave never
//!   reaches it: the same bug in either order, so both are reported);
//! - waves released together that waited at different `s_barrier`
//!   instructions (a barrier on both sides of a divergent branch);
//! - `s_barrier` executed by a wave whose EXEC is not all of its live
//!   lanes (a barrier in code some of its work-items skip).

use crate::fault::Fault;
use crate::plan::Plan;
use softgpu_interp::trap::FaultKind;
use softgpu_interp::wave::Wave;

/// The slot of the barrier a waiting wave waits at (it has stepped past).
fn barrier_pc(wave: &Wave) -> u32 {
    wave.pc.saturating_sub(1)
}

/// "pc 0x… (s_barrier)" for slot `pc`.
fn place(plan: &Plan, wave: &Wave, pc: u32) -> String {
    let program = plan.program;
    format!(
        "pc {:#x} ({})",
        program.image_base + program.slot_at(pc).offset,
        program.text_for(pc, wave.lanes == 64)
    )
}

/// Wave `w` has just executed `s_barrier`.
pub(crate) fn arrived(
    plan: &Plan,
    group: [u32; 3],
    waves: &[Wave],
    w: usize,
) -> Result<(), Box<Fault>> {
    let wave = &waves[w];
    if wave.exec() != wave.live_lanes {
        return Err(Box::new(Fault::at(
            plan,
            group,
            wave,
            barrier_pc(wave),
            FaultKind::Sync,
            format!(
                "synccheck: wave {} executed s_barrier with EXEC {:#x}, not all of its live lanes {:#x}: a barrier in divergent code, which the work-items outside EXEC skip",
                wave.id,
                wave.exec(),
                wave.live_lanes
            ),
        )));
    }
    match waves.iter().find(|e| e.ended) {
        Some(gone) => Err(ended_early(plan, group, gone, wave)),
        None => Ok(()),
    }
}

/// Wave `w` has just ended.
pub(crate) fn ended(
    plan: &Plan,
    group: [u32; 3],
    waves: &[Wave],
    w: usize,
) -> Result<(), Box<Fault>> {
    match waves.iter().find(|o| o.at_barrier) {
        Some(waiting) => Err(ended_early(plan, group, &waves[w], waiting)),
        None => Ok(()),
    }
}

/// The fault of wave `gone`, which ended without reaching the barrier
/// `waiting` waits at; reported at `gone`'s `s_endpgm`.
fn ended_early(plan: &Plan, group: [u32; 3], gone: &Wave, waiting: &Wave) -> Box<Fault> {
    Box::new(Fault::at(
        plan,
        group,
        gone,
        gone.pc,
        FaultKind::Sync,
        format!(
            "synccheck: wave {} ended, but wave {} of its workgroup waits at the barrier at {}, which wave {} never reaches (a barrier not every wave executes)",
            gone.id,
            waiting.id,
            place(plan, waiting, barrier_pc(waiting)),
            gone.id
        ),
    ))
}

/// Every live wave waits at a barrier and they are about to be released.
pub(crate) fn released(plan: &Plan, group: [u32; 3], waves: &[Wave]) -> Result<(), Box<Fault>> {
    let mut waiting = waves.iter().filter(|w| !w.ended && w.at_barrier);
    let Some(first) = waiting.next() else {
        return Ok(());
    };
    let Some(other) = waiting.find(|w| barrier_pc(w) != barrier_pc(first)) else {
        return Ok(());
    };
    Err(Box::new(Fault::at(
        plan,
        group,
        other,
        barrier_pc(other),
        FaultKind::Sync,
        format!(
            "synccheck: waves of one workgroup met at different barriers: wave {} at {} and wave {} at {} (a barrier inside divergent control flow)",
            first.id,
            place(plan, first, barrier_pc(first)),
            other.id,
            place(plan, other, barrier_pc(other))
        ),
    )))
}
