//! The shadows on their own: which access pairs are hazards and which are
//! not, whatever order they come in.

use super::global::{GlobalRace, Stamp};
use super::*;

const INIT: Checks = Checks {
    init: true,
    race: false,
    sync: false,
    contain: false,
};
const RACE: Checks = Checks {
    init: false,
    race: true,
    sync: false,
    contain: false,
};

fn shadow(checks: Checks) -> LdsShadow {
    let mut s = LdsShadow::default();
    s.begin(256, checks);
    s
}

/// Wave `wave` at instruction slot `10 + wave` accesses `len` bytes at `addr`.
fn lds(s: &mut LdsShadow, wave: u32, u: Use, addr: u64, len: u64) -> Result<(), Box<Report>> {
    s.access(wave, 10 + wave, Some(0), u, addr, len)
}

fn race_of(r: Result<(), Box<Report>>) -> (Hazard, Earlier, u64) {
    match *r.expect_err("a race") {
        Report::Race {
            hazard,
            earlier,
            first,
            ..
        } => (hazard, earlier, first),
        other => panic!("not a race: {other:?}"),
    }
}

#[test]
fn initcheck_reports_the_first_unwritten_byte() {
    let mut s = shadow(INIT);
    lds(&mut s, 0, Use::Write, 16, 2).unwrap();
    lds(&mut s, 1, Use::Read, 16, 2).unwrap();
    match *lds(&mut s, 0, Use::Read, 16, 4).unwrap_err() {
        Report::Uninitialized {
            space,
            addr,
            len,
            first,
            ..
        } => assert_eq!((space, addr, len, first), (Space::Lds, 16, 4, 18)),
        other => panic!("{other:?}"),
    }
    // An atomic reads: on never-written bytes it is reported, and it writes.
    assert!(lds(&mut s, 0, Use::Atomic, 32, 4).is_err());
    lds(&mut s, 0, Use::Write, 32, 4).unwrap();
    lds(&mut s, 0, Use::Atomic, 32, 4).unwrap();
    // Out of range touches nothing (reads zero): not checked.
    lds(&mut s, 0, Use::Read, 254, 4).unwrap();
    // A new workgroup starts with nothing written.
    s.begin(256, INIT);
    assert!(lds(&mut s, 0, Use::Read, 16, 1).is_err());
}

#[test]
fn lds_races_are_found_in_either_order() {
    let mut s = shadow(RACE);
    lds(&mut s, 0, Use::Write, 8, 4).unwrap();
    let (h, e, first) = race_of(lds(&mut s, 1, Use::Read, 8, 4));
    assert_eq!(
        (h, e.wave, e.slot, first),
        (Hazard::ReadAfterWrite, 0, 10, 8)
    );

    let mut s = shadow(RACE);
    lds(&mut s, 1, Use::Read, 8, 4).unwrap();
    let (h, e, _) = race_of(lds(&mut s, 0, Use::Write, 8, 4));
    assert_eq!((h, e.wave), (Hazard::WriteAfterRead, 1));

    let mut s = shadow(RACE);
    lds(&mut s, 2, Use::Write, 8, 4).unwrap();
    let (h, e, _) = race_of(lds(&mut s, 3, Use::Write, 10, 4));
    assert_eq!((h, e.wave), (Hazard::WriteAfterWrite, 2));
}

#[test]
fn lds_accesses_ordered_or_disjoint_are_not_races() {
    let mut s = shadow(RACE);
    lds(&mut s, 0, Use::Write, 0, 4).unwrap();
    lds(&mut s, 0, Use::Read, 0, 4).unwrap();
    s.barrier();
    lds(&mut s, 1, Use::Read, 0, 4).unwrap();
    lds(&mut s, 2, Use::Read, 0, 4).unwrap();
    s.barrier();
    lds(&mut s, 3, Use::Write, 0, 4).unwrap();
    s.barrier();
    // Atomics never conflict with each other.
    lds(&mut s, 4, Use::Atomic, 0, 4).unwrap();
    lds(&mut s, 5, Use::Atomic, 0, 4).unwrap();
    // Neighbouring bytes of one dword are separate.
    lds(&mut s, 6, Use::Write, 4, 2).unwrap();
    lds(&mut s, 7, Use::Write, 6, 2).unwrap();
    lds(&mut s, 7, Use::Read, 6, 2).unwrap();
    let (h, e, first) = race_of(lds(&mut s, 7, Use::Read, 5, 2));
    assert_eq!((h, e.wave, first), (Hazard::ReadAfterWrite, 6, 5));
    // The next workgroup does not see this one's stamps.
    s.begin(256, RACE);
    lds(&mut s, 9, Use::Read, 4, 4).unwrap();
}

/// An atomic writes: another wave's plain access of the same interval
/// races it, either way round; the same wave's does not.
#[test]
fn lds_plain_access_racing_an_atomic_is_a_race() {
    let atomic_race = |r: Result<(), Box<Report>>| match *r.expect_err("a race") {
        Report::Race {
            hazard,
            earlier,
            atomic,
            ..
        } => (hazard, earlier.wave, atomic),
        other => panic!("not a race: {other:?}"),
    };
    let mut s = shadow(RACE);
    lds(&mut s, 1, Use::Atomic, 0, 4).unwrap();
    lds(&mut s, 1, Use::Read, 0, 4).unwrap();
    let found = atomic_race(lds(&mut s, 2, Use::Read, 0, 4));
    assert_eq!(found, (Hazard::ReadAfterWrite, 1, true));
    let mut s = shadow(RACE);
    lds(&mut s, 1, Use::Read, 0, 4).unwrap();
    let found = atomic_race(lds(&mut s, 2, Use::Atomic, 2, 2));
    assert_eq!(found, (Hazard::WriteAfterRead, 1, true));
    let mut s = shadow(RACE);
    lds(&mut s, 3, Use::Write, 0, 4).unwrap();
    let found = atomic_race(lds(&mut s, 2, Use::Atomic, 0, 4));
    assert_eq!(found, (Hazard::WriteAfterWrite, 3, true));
    let mut s = shadow(RACE);
    lds(&mut s, 1, Use::Atomic, 0, 4).unwrap();
    lds(&mut s, 2, Use::Atomic, 0, 4).unwrap();
    let found = atomic_race(lds(&mut s, 3, Use::Write, 0, 4));
    assert_eq!(found, (Hazard::WriteAfterWrite, 1, true));
    // A barrier orders them.
    let mut s = shadow(RACE);
    lds(&mut s, 1, Use::Atomic, 0, 4).unwrap();
    s.barrier();
    lds(&mut s, 2, Use::Write, 0, 4).unwrap();
}

#[test]
fn a_write_after_reads_names_a_reader_of_another_wave() {
    let mut s = shadow(RACE);
    lds(&mut s, 1, Use::Read, 0, 4).unwrap();
    lds(&mut s, 1, Use::Read, 0, 4).unwrap();
    lds(&mut s, 0, Use::Read, 0, 4).unwrap();
    let (h, e, _) = race_of(lds(&mut s, 1, Use::Write, 0, 4));
    assert_eq!((h, e.wave, e.slot), (Hazard::WriteAfterRead, 0, 10));
    // Reads by the writing wave alone are no hazard.
    let mut s = shadow(RACE);
    lds(&mut s, 1, Use::Read, 0, 4).unwrap();
    lds(&mut s, 1, Use::Write, 0, 4).unwrap();
}

fn stamp(group: u32, wave: u8, interval: u32, grid: u16) -> Stamp {
    Stamp {
        group,
        slot: 100 + group,
        interval,
        grid,
        wave,
        bytes: 0,
    }
}

#[test]
fn global_races_across_workgroups_and_waves() {
    let t = GlobalRace::new();
    let at = |s: Stamp, u: Use, addr: u64, len: u64| t.access(s, None, u, addr, len);
    at(stamp(0, 0, 1, 0), Use::Write, 0x1000, 4).unwrap();
    let (h, e, first) = race_of(at(stamp(1, 0, 1, 0), Use::Write, 0x1002, 1));
    assert_eq!(
        (h, e.group, e.slot, first),
        (Hazard::WriteAfterWrite, 0, 100, 0x1002)
    );
    // The same workgroup: another wave conflicts in the same interval only.
    race_of(at(stamp(0, 1, 1, 0), Use::Read, 0x1000, 4));
    at(stamp(0, 1, 2, 0), Use::Read, 0x1000, 4).unwrap();
    at(stamp(0, 0, 1, 0), Use::Read, 0x1000, 4).unwrap();
    // After a grid barrier nothing earlier counts.
    at(stamp(3, 0, 7, 1), Use::Write, 0x1000, 4).unwrap();
    // Reads do not conflict with reads; a later write does.
    at(stamp(4, 0, 1, 1), Use::Read, 0x2000, 8).unwrap();
    at(stamp(5, 0, 1, 1), Use::Read, 0x2004, 4).unwrap();
    let (h, e, first) = race_of(at(stamp(4, 0, 1, 1), Use::Write, 0x2006, 2));
    assert_eq!((h, e.group, first), (Hazard::WriteAfterRead, 5, 0x2006));
    // Atomics never conflict with atomics…
    at(stamp(6, 0, 1, 1), Use::Atomic, 0x3000, 4).unwrap();
    at(stamp(7, 0, 1, 1), Use::Atomic, 0x3000, 4).unwrap();
    // …but a plain access racing one does, either way round.
    let (h, e, first) = race_of(at(stamp(8, 0, 1, 1), Use::Write, 0x3002, 2));
    assert_eq!((h, e.group, first), (Hazard::WriteAfterWrite, 6, 0x3002));
    race_of(at(stamp(8, 0, 1, 1), Use::Read, 0x3000, 1));
    at(stamp(9, 0, 1, 1), Use::Read, 0x3800, 4).unwrap();
    let (h, e, _) = race_of(at(stamp(10, 0, 1, 1), Use::Atomic, 0x3800, 4));
    assert_eq!((h, e.group), (Hazard::WriteAfterRead, 9));
    // The same wave's plain and atomic accesses are ordered.
    at(stamp(11, 0, 1, 1), Use::Write, 0x3c00, 4).unwrap();
    at(stamp(11, 0, 1, 1), Use::Atomic, 0x3c00, 4).unwrap();
    // Ordered by a grid barrier: no hazard.
    at(stamp(12, 0, 1, 2), Use::Write, 0x3000, 4).unwrap();
    // Each workgroup writing its own bytes: no hazard, even in one dword.
    for g in 0..4 {
        at(stamp(10 + g, 0, 1, 1), Use::Write, 0x4000 + g as u64, 1).unwrap();
    }
}

#[test]
fn a_covering_read_does_not_hide_an_earlier_reader() {
    let t = GlobalRace::new();
    let at = |s: Stamp, u: Use| t.access(s, None, u, 0x100, 4);
    at(stamp(0, 0, 1, 0), Use::Read).unwrap();
    at(stamp(1, 0, 1, 0), Use::Read).unwrap();
    at(stamp(1, 1, 1, 0), Use::Read).unwrap();
    // Workgroup 1's own write still conflicts with workgroup 0's read.
    let (h, e, _) = race_of(at(stamp(1, 0, 1, 0), Use::Write));
    assert_eq!((h, e.group), (Hazard::WriteAfterRead, 0));
}

#[test]
fn the_global_table_stops_tracking_at_its_limit() {
    let t = GlobalRace::with_limit(1);
    t.access(stamp(0, 0, 1, 0), None, Use::Write, 0, 4).unwrap();
    t.access(stamp(0, 0, 1, 0), None, Use::Write, 8, 4).unwrap();
    assert!(t.saturated());
    // The tracked dword is still checked; the other is not.
    assert!(t.access(stamp(1, 0, 1, 0), None, Use::Write, 0, 4).is_err());
    t.access(stamp(1, 0, 1, 0), None, Use::Write, 8, 4).unwrap();
}
