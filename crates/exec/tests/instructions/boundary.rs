//! The edges of the wave-wide memory fast paths (`ops/ds.rs`, `ops/vmem.rs`):
//! a wave whose lanes all fall in one checked range runs without per-lane
//! checks, any other wave runs lane by lane. These tests put lanes on both
//! sides of the edges that choose between the two — the end of LDS, the
//! end of an allocation, a second allocation, a hole inside the range,
//! EXEC — and check every register and byte against the per-lane rules,
//! written out here: lanes run in lane order; an LDS access not wholly in
//! range reads zero (a multi-dword one zero for all of it) or is dropped
//! (RDNA3 ISA §3.3.4.1); the first lane whose device-memory access the
//! arena refuses faults, naming that lane and address, after the lanes
//! before it have done their accesses and before any after it does.
//!
//! They drive [`Bench`] directly (the case-file language cannot say what
//! must hold after a fault, or place a second allocation) and assemble
//! with llvm-mc-19 like the case files.

// The expectations index per-lane rows of several registers and memories
// by lane, as the handlers do.
#![allow(clippy::needless_range_loop)]

use softgpu_exec::arena::Access;
use softgpu_exec::harness::{
    Bench, BenchError, MemCause, Space, Trap, BUFFER_BYTES, LDS_BYTES, NUM_VGPRS, SHARED_APERTURE,
};

use crate::asm::{self, Variant};

const TARGET: &str = "gfx1100";
const LDS: u64 = LDS_BYTES as u64;
const BUF: u64 = BUFFER_BYTES as u64;

/// What every VGPR lane holds before a snippet, so a write shows.
fn noise(r: usize, l: usize) -> u32 {
    0xdead_0000 ^ (r as u32) << 6 ^ l as u32
}

/// The byte at offset `i` of LDS or of the buffer before a snippet: every
/// dword distinct.
fn pattern(i: usize, salt: usize) -> u8 {
    ((i ^ salt).wrapping_mul(0x9e) ^ (i >> 8) ^ (i >> 16)) as u8
}

/// A bench of `lanes` lanes, all active, registers and memory patterned.
fn bench(lanes: usize) -> Bench {
    let mut b = Bench::new(TARGET, crate::jit_mode()).expect("bench");
    b.wave.lanes = lanes;
    for (r, row) in b.wave.vgpr.iter_mut().enumerate() {
        for (l, v) in row.iter_mut().enumerate() {
            *v = noise(r, l);
        }
    }
    let full = b.wave.full_mask();
    b.wave.set_exec(full);
    for (i, byte) in b.lds.iter_mut().enumerate() {
        *byte = pattern(i, 0);
    }
    let buf: Vec<u8> = (0..BUFFER_BYTES).map(|i| pattern(i, 0x55)).collect();
    b.write_buffer(&buf).unwrap();
    b
}

/// Runs `lines` on the bench's wave.
fn run(b: &mut Bench, lines: &[&str]) -> Result<u64, BenchError> {
    let variant = Variant {
        target: TARGET.into(),
        wave64: b.wave.lanes == 64,
        mattr: None,
    };
    let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let code: Vec<u8> = asm::assemble(&variant, &lines)
        .into_iter()
        .flat_map(|r| r.unwrap_or_else(|e| panic!("llvm-mc-19: {e}")))
        .collect();
    b.run(&code, 100)
}

fn set_v(b: &mut Bench, reg: usize, f: impl Fn(usize) -> u32) {
    for l in 0..b.wave.lanes {
        b.wave.vgpr[reg][l] = f(l);
    }
}

fn set_v64(b: &mut Bench, reg: usize, f: impl Fn(usize) -> u64) {
    for l in 0..b.wave.lanes {
        let a = f(l);
        b.wave.vgpr[reg][l] = a as u32;
        b.wave.vgpr[reg + 1][l] = (a >> 32) as u32;
    }
}

fn set_s64(b: &mut Bench, reg: usize, v: u64) {
    b.wave.sgpr[reg] = v as u32;
    b.wave.sgpr[reg + 1] = (v >> 32) as u32;
}

fn le32(bytes: &[u8], at: u64) -> u32 {
    u32::from_le_bytes(bytes[at as usize..at as usize + 4].try_into().unwrap())
}

/// Every VGPR lane, for comparing a whole register file.
fn vgprs(b: &Bench) -> Vec<[u32; 64]> {
    b.wave.vgpr.to_vec()
}

/// Fails naming the first VGPR lane where `got` and `want` differ.
fn same_vgprs(got: &[[u32; 64]], want: &[[u32; 64]], what: &str) {
    for r in 0..NUM_VGPRS {
        for l in 0..64 {
            assert_eq!(
                got[r][l], want[r][l],
                "{what}: v{r} lane {l}: got {:#x}, want {:#x}",
                got[r][l], want[r][l]
            );
        }
    }
}

/// Fails naming the first byte where two memories differ.
fn same_bytes(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len());
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: byte {i:#x}: got {:#x}, want {:#x}",
            got[i], want[i]
        );
    }
}

/// The lanes of the split tests: how many lanes (from lane 0) are in range.
fn splits(lanes: usize) -> [usize; 5] {
    [lanes, lanes - 1, lanes / 2, 1, 0]
}

/// A snippet's global-memory fault: (lane, address, length, cause).
fn global_fault(r: Result<u64, BenchError>) -> (usize, u64, u64, MemCause) {
    match r {
        Err(BenchError::Trap {
            trap:
                Trap::Memory {
                    space: Space::Global,
                    lane: Some(l),
                    addr,
                    len,
                    cause,
                },
            ..
        }) => (l, addr, len, cause),
        other => panic!("expected a global memory fault naming a lane, got {other:?}"),
    }
}

/// The cause a refused global access reports.
fn cause(write: bool) -> MemCause {
    if write {
        MemCause::Write
    } else {
        MemCause::Read
    }
}

/// Checks the arena explains the refused access as `expect` about the
/// test buffer, as a dispatch's fault report would.
fn names_buffer(b: &Bench, addr: u64, len: u64, write: bool, expect: &str) {
    let (text, hit) = b.arena().explain(addr, len, write);
    let hit = hit.map(|a| (a.base, a.len));
    assert_eq!(hit, Some((b.buffer(), BUF)), "{text}");
    assert!(text.contains(expect), "`{text}` does not say `{expect}`");
}

// ---- (a) LDS: lanes on both sides of its end -------------------------

/// ds_load_b32 / ds_load_b64 with lanes `0..split` wholly in LDS (the
/// last of them ending exactly at its end) and the rest past it, the
/// first of those straddling the end: in-range lanes read LDS, the others
/// zero, the whole of a multi-dword load partly out of range zero too.
#[test]
fn ds_load_lanes_past_the_end_of_lds() {
    for lanes in [32, 64] {
        for (line, bytes) in [
            ("ds_load_b32 v4, v1 offset:16", 4u64),
            ("ds_load_b64 v[4:5], v1 offset:16", 8),
        ] {
            for split in splits(lanes) {
                let mut b = bench(lanes);
                // Lane split - 1 ends at the end of LDS; lane split (if
                // any) starts 4 bytes before it (the b64 straddles it,
                // its first dword in range), later lanes start past it.
                let addr = |l: usize| -> u64 {
                    if l < split {
                        LDS - bytes * (split - l) as u64
                    } else if l == split {
                        LDS - bytes + 4
                    } else {
                        LDS + 4 * (l - split - 1) as u64
                    }
                };
                set_v(&mut b, 1, |l| (addr(l) - 16) as u32);
                let mut want = vgprs(&b);
                let lds = b.lds.clone();
                for l in 0..lanes {
                    let a = addr(l);
                    let fits = a + bytes <= LDS;
                    for k in 0..bytes / 4 {
                        want[4 + k as usize][l] = if fits { le32(&lds, a + 4 * k) } else { 0 };
                    }
                }
                run(&mut b, &[line]).unwrap();
                same_vgprs(
                    &vgprs(&b),
                    &want,
                    &format!("{line} wave{lanes} split {split}"),
                );
                same_bytes(&b.lds, &lds, "LDS");
            }
        }
    }
}

/// ds_load_2addr_b32 / _b64 with offset1 reaching past the end of LDS for
/// lanes `split..` only (their second access straddles it, for b64) while
/// every first access is in range: each half is checked on its own.
#[test]
fn ds_load_2addr_second_half_past_the_end_of_lds() {
    for lanes in [32, 64] {
        for (line, dwords, reach) in [
            // offset1:255 × 4 bytes; offset1:127 × 8 bytes.
            (
                "ds_load_2addr_b32 v[4:5], v1 offset0:1 offset1:255",
                1u64,
                1020u64,
            ),
            (
                "ds_load_2addr_b64 v[4:7], v1 offset0:1 offset1:127",
                2,
                1016,
            ),
        ] {
            let size = 4 * dwords;
            for split in splits(lanes) {
                let mut b = bench(lanes);
                // Lane split - 1's second access ends at the end of LDS;
                // lane split's straddles it (b64, its first dword in
                // range) or starts at it (b32); later lanes' start past.
                let base = |l: usize| -> u64 {
                    if l < split {
                        LDS - reach - size * (split - l) as u64
                    } else {
                        LDS - reach - (size - 4) + 4 * (l - split) as u64
                    }
                };
                set_v(&mut b, 1, |l| base(l) as u32);
                let mut want = vgprs(&b);
                let lds = b.lds.clone();
                for l in 0..lanes {
                    for (slot, off) in [(0u64, size), (1, reach)] {
                        let a = base(l) + off;
                        let fits = a + size <= LDS;
                        for k in 0..dwords {
                            let v = if fits { le32(&lds, a + 4 * k) } else { 0 };
                            want[(4 + slot * dwords + k) as usize][l] = v;
                        }
                    }
                }
                run(&mut b, &[line]).unwrap();
                same_vgprs(
                    &vgprs(&b),
                    &want,
                    &format!("{line} wave{lanes} split {split}"),
                );
            }
        }
    }
}

/// ds_store_b32 / ds_store_b64 with lanes `0..split` in range (lanes 0
/// and 1 to the same address: lane 1's value stays) and the rest
/// straddling the end or past it: out-of-range writes are dropped whole,
/// in-range ones land once.
#[test]
fn ds_store_lanes_past_the_end_of_lds() {
    for lanes in [32, 64] {
        for (line, bytes) in [
            ("ds_store_b32 v1, v2", 4u64),
            ("ds_store_b64 v1, v[2:3]", 8),
        ] {
            for split in splits(lanes) {
                let mut b = bench(lanes);
                let addr = |l: usize| -> u64 {
                    match l {
                        _ if l >= split => LDS - bytes + 4 + 4 * (l - split) as u64,
                        0 if split >= 2 => LDS - bytes * (split - 1) as u64,
                        _ => LDS - bytes * (split - l) as u64,
                    }
                };
                set_v(&mut b, 1, |l| addr(l) as u32);
                set_v(&mut b, 2, |l| 0x5100_0000 + l as u32);
                set_v(&mut b, 3, |l| 0x5200_0000 + l as u32);
                let mut want = b.lds.clone();
                for l in 0..lanes {
                    let a = addr(l) as usize;
                    if a as u64 + bytes <= LDS {
                        want[a..a + 4].copy_from_slice(&(0x5100_0000 + l as u32).to_le_bytes());
                        if bytes == 8 {
                            want[a + 4..a + 8]
                                .copy_from_slice(&(0x5200_0000 + l as u32).to_le_bytes());
                        }
                    }
                }
                let regs = vgprs(&b);
                run(&mut b, &[line]).unwrap();
                same_bytes(&b.lds, &want, &format!("{line} wave{lanes} split {split}"));
                same_vgprs(&vgprs(&b), &regs, "registers");
            }
        }
    }
}

// ---- (b) global memory: the last active lane past the allocation's end

/// global_load_b32 (64-bit VGPR address, and SGPR base plus VGPR offset)
/// with lanes packed against the end of the test buffer and only the last
/// active lane past it, by 0 bytes or straddling: that lane faults, with
/// its address and the buffer named; the lanes before it have loaded,
/// it and the lanes after it (inactive ones, when EXEC ends early) keep
/// their registers.
#[test]
fn global_load_last_lane_past_the_end() {
    for lanes in [32, 64] {
        for last in [lanes - 1, lanes - 3] {
            for (line, saddr) in [
                ("global_load_b32 v4, v[2:3], off offset:-4", false),
                ("global_load_b32 v4, v2, s[6:7] offset:-4", true),
            ] {
                for past in [0, 2] {
                    let mut b = bench(lanes);
                    let buf = b.buffer();
                    let exec = if last == lanes - 1 {
                        b.wave.full_mask()
                    } else {
                        (1u64 << (last + 1)) - 1
                    };
                    b.wave.set_exec(exec);
                    // Lane l < last reads the dword `last - l` dwords
                    // before the end; lane `last` starts `past` bytes
                    // before it (so 4 - past bytes overhang, or all 4);
                    // inactive lanes point at garbage.
                    let at = |l: usize| -> u64 {
                        match l {
                            _ if l < last => BUF - 4 * (last - l) as u64,
                            _ if l == last => BUF - past,
                            _ => u64::MAX - 64,
                        }
                    };
                    if saddr {
                        set_s64(&mut b, 6, buf);
                        set_v(&mut b, 2, |l| (at(l).wrapping_add(4)) as u32);
                    } else {
                        set_v64(&mut b, 2, |l| buf.wrapping_add(at(l)).wrapping_add(4));
                    }
                    let mut want = vgprs(&b);
                    let mem = b.read_buffer().unwrap();
                    for l in 0..last {
                        want[4][l] = le32(&mem, at(l));
                    }
                    let what = format!("{line} wave{lanes} last {last} past {past}");
                    let fault = global_fault(run(&mut b, &[line]));
                    assert_eq!(fault, (last, buf + BUF - past, 4, MemCause::Read), "{what}");
                    let expect = if past == 0 {
                        "are 0 bytes past the end of a 65536-byte allocation".to_string()
                    } else {
                        format!(
                            "run {} bytes past the end of a 65536-byte allocation",
                            4 - past
                        )
                    };
                    names_buffer(&b, fault.1, fault.2, false, &expect);
                    same_vgprs(&vgprs(&b), &want, &what);
                }
            }
        }
    }
}

/// global_store_b32 with only the last active lane past the end of the
/// buffer (lanes 0 and 1 storing to the same dword, so lane 1's value must
/// be the one left): that lane faults with its address and the buffer
/// named; every lane before it has stored exactly its own dword, nothing
/// else in the buffer changed.
#[test]
fn global_store_last_lane_past_the_end() {
    for lanes in [32, 64] {
        for last in [lanes - 1, lanes - 3] {
            for (line, saddr) in [
                ("global_store_b32 v[2:3], v4, off offset:8", false),
                ("global_store_b32 v2, v4, s[6:7] offset:8", true),
            ] {
                for past in [0, 2] {
                    let mut b = bench(lanes);
                    let buf = b.buffer();
                    let exec = if last == lanes - 1 {
                        b.wave.full_mask()
                    } else {
                        (1u64 << (last + 1)) - 1
                    };
                    b.wave.set_exec(exec);
                    let at = |l: usize| -> u64 {
                        match l {
                            0 if last >= 2 => BUF - 4 * (last - 1) as u64,
                            _ if l < last => BUF - 4 * (last - l) as u64,
                            _ if l == last => BUF - past,
                            _ => 0x10,
                        }
                    };
                    if saddr {
                        set_s64(&mut b, 6, buf);
                        set_v(&mut b, 2, |l| at(l).wrapping_sub(8) as u32);
                    } else {
                        set_v64(&mut b, 2, |l| (buf + at(l)).wrapping_sub(8));
                    }
                    set_v(&mut b, 4, |l| 0x6200_0000 + l as u32);
                    let mut want = b.read_buffer().unwrap();
                    for l in 0..last {
                        let a = at(l) as usize;
                        want[a..a + 4].copy_from_slice(&(0x6200_0000 + l as u32).to_le_bytes());
                    }
                    let regs = vgprs(&b);
                    let what = format!("{line} wave{lanes} last {last} past {past}");
                    let fault = global_fault(run(&mut b, &[line]));
                    assert_eq!(
                        fault,
                        (last, buf + BUF - past, 4, MemCause::Write),
                        "{what}"
                    );
                    let expect = if past == 0 {
                        "are 0 bytes past the end of a 65536-byte allocation".to_string()
                    } else {
                        format!(
                            "run {} bytes past the end of a 65536-byte allocation",
                            4 - past
                        )
                    };
                    names_buffer(&b, fault.1, fault.2, true, &expect);
                    same_bytes(&b.read_buffer().unwrap(), &want, &what);
                    same_vgprs(&vgprs(&b), &regs, &what);
                }
            }
        }
    }
}

/// Of several lanes past the end, the lowest faults, and the lanes above
/// it store nothing, even the in-range ones.
#[test]
fn global_store_first_faulting_lane_is_named() {
    for lanes in [32, 64] {
        let mut b = bench(lanes);
        let buf = b.buffer();
        let bad = [5, 9, lanes - 1];
        let at = |l: usize| -> u64 {
            if bad.contains(&l) {
                BUF + 4 * l as u64
            } else {
                BUF - 4 * lanes as u64 + 4 * l as u64
            }
        };
        set_v64(&mut b, 2, |l| buf + at(l));
        set_v(&mut b, 4, |l| 0x7300_0000 + l as u32);
        let mut want = b.read_buffer().unwrap();
        for l in 0..5 {
            let a = at(l) as usize;
            want[a..a + 4].copy_from_slice(&(0x7300_0000 + l as u32).to_le_bytes());
        }
        let fault = global_fault(run(&mut b, &["global_store_b32 v[2:3], v4, off"]));
        assert_eq!(
            fault,
            (5, buf + BUF + 20, 4, MemCause::Write),
            "wave{lanes}"
        );
        names_buffer(&b, fault.1, 4, true, "are 20 bytes past the end");
        same_bytes(&b.read_buffer().unwrap(), &want, &format!("wave{lanes}"));
    }
}

/// The window's end is the last lane's address plus the access's own
/// width: a byte load of the buffer's last byte is allowed, a 16-bit load
/// there or a 64-bit load of its last dword faults with its width; a
/// 64-bit store of its last 8 bytes lands.
#[test]
fn global_access_widths_at_the_end() {
    for lanes in [32, 64] {
        let mut b = bench(lanes);
        let buf = b.buffer();
        let mem = b.read_buffer().unwrap();
        let last = lanes - 1;
        // Lane l reads the byte `last - l` bytes before the last one.
        set_v64(&mut b, 2, |l| buf + BUF - 1 - (last - l) as u64);
        let mut want = vgprs(&b);
        for l in 0..lanes {
            want[4][l] = mem[BUFFER_BYTES - 1 - (last - l)] as u32;
        }
        run(&mut b, &["global_load_u8 v4, v[2:3], off"]).unwrap();
        same_vgprs(&vgprs(&b), &want, &format!("u8 wave{lanes}"));

        let fault = global_fault(run(&mut b, &["global_load_u16 v5, v[2:3], off"]));
        assert_eq!(fault, (last, buf + BUF - 1, 2, MemCause::Read), "u16");
        names_buffer(&b, fault.1, 2, false, "run 1 bytes past the end");

        set_v64(&mut b, 2, |l| buf + BUF - 4 - 4 * (last - l) as u64);
        let fault = global_fault(run(&mut b, &["global_load_b64 v[6:7], v[2:3], off"]));
        assert_eq!(fault, (last, buf + BUF - 4, 8, MemCause::Read), "b64");

        set_v64(&mut b, 2, |l| buf + BUF - 8 - 8 * (last - l) as u64);
        set_v(&mut b, 8, |l| 0x8000_0000 + l as u32);
        set_v(&mut b, 9, |l| 0x9000_0000 + l as u32);
        let mut want = b.read_buffer().unwrap();
        for l in 0..lanes {
            let a = BUFFER_BYTES - 8 - 8 * (last - l);
            want[a..a + 4].copy_from_slice(&(0x8000_0000 + l as u32).to_le_bytes());
            want[a + 4..a + 8].copy_from_slice(&(0x9000_0000 + l as u32).to_le_bytes());
        }
        run(&mut b, &["global_store_b64 v[2:3], v[8:9], off"]).unwrap();
        same_bytes(
            &b.read_buffer().unwrap(),
            &want,
            &format!("b64 store wave{lanes}"),
        );
    }
}

/// Lanes storing to the same and to overlapping bytes, all in range (one
/// window): stores land lane by lane in lane order, so of the lanes
/// writing a byte the highest one's value is left.
#[test]
fn global_stores_to_shared_bytes_land_in_lane_order() {
    for lanes in [32, 64] {
        for (line, bytes) in [
            ("global_store_b32 v[2:3], v4, off", 4usize),
            ("global_store_b64 v[2:3], v[4:5], off", 8),
            ("global_store_b16 v[2:3], v4, off", 2),
        ] {
            let mut b = bench(lanes);
            let buf = b.buffer();
            // Lane l at dword l % 5 (odd lanes 2 bytes on): b64 stores
            // overlap their neighbours' by 4 or 6 bytes.
            let off = |l: usize| 4 * (l % 5) + 2 * (l % 2);
            set_v64(&mut b, 2, |l| buf + off(l) as u64);
            set_v(&mut b, 4, |l| 0xe000_0000 + l as u32);
            set_v(&mut b, 5, |l| 0xf000_0000 + l as u32);
            let mut want = b.read_buffer().unwrap();
            for l in 0..lanes {
                let mut data = [0u8; 8];
                data[..4].copy_from_slice(&(0xe000_0000 + l as u32).to_le_bytes());
                data[4..].copy_from_slice(&(0xf000_0000 + l as u32).to_le_bytes());
                want[off(l)..off(l) + bytes].copy_from_slice(&data[..bytes]);
            }
            run(&mut b, &[line]).unwrap();
            same_bytes(
                &b.read_buffer().unwrap(),
                &want,
                &format!("{line} wave{lanes}"),
            );
        }
    }
}

// ---- (c) lanes in two allocations, or around a hole in one -------------

/// Lanes alternating between two allocations: loads read each lane's own
/// allocation, stores land in it. Two pairs: the test buffer and a block
/// after it (a red zone apart, too far for one window), and two blocks
/// placed back to back with no red zone (as a capture replay places
/// them), which one window covers: every byte of it is allowed, so the
/// wave may take the fast path, and must get the same values.
#[test]
fn lanes_in_two_allocations() {
    for lanes in [32, 64] {
        for adjacent in [false, true] {
            let mut b = bench(lanes);
            let (first, second) = if adjacent {
                let at = b.arena().base() + (8 << 20);
                b.arena().alloc_at(at, 4096).unwrap();
                b.arena().alloc_at(at + 4096, 4096).unwrap();
                (at, at + 4096)
            } else {
                (b.buffer(), b.arena().alloc(4096).unwrap())
            };
            let ones: Vec<u8> = (0..4096).map(|i| pattern(i, 0x33)).collect();
            let twos: Vec<u8> = (0..4096).map(|i| pattern(i, 0xaa)).collect();
            b.arena().write(first, &ones).unwrap();
            b.arena().write(second, &twos).unwrap();
            // Even lanes at the end of the first, odd ones at the start
            // of the second.
            let in_second = |l: usize| l % 2 == 1;
            let off = |l: usize| -> u64 {
                if in_second(l) {
                    8 * l as u64
                } else {
                    4096 - 8 * lanes as u64 + 8 * l as u64
                }
            };
            let addr = |l: usize| off(l) + if in_second(l) { second } else { first };
            set_v64(&mut b, 2, addr);
            let mut want = vgprs(&b);
            for l in 0..lanes {
                let mem = if in_second(l) { &twos } else { &ones };
                want[4][l] = le32(mem, off(l));
                want[5][l] = le32(mem, off(l) + 4);
            }
            let what = format!("wave{lanes} adjacent {adjacent}");
            run(&mut b, &["global_load_b64 v[4:5], v[2:3], off"]).unwrap();
            same_vgprs(&vgprs(&b), &want, &what);

            set_v(&mut b, 6, |l| 0xa000_0000 + l as u32);
            let (mut want_first, mut want_second) = (ones, twos);
            for l in 0..lanes {
                let mem = if in_second(l) {
                    &mut want_second
                } else {
                    &mut want_first
                };
                let a = off(l) as usize;
                mem[a..a + 4].copy_from_slice(&(0xa000_0000 + l as u32).to_le_bytes());
            }
            run(&mut b, &["global_store_b32 v[2:3], v6, off"]).unwrap();
            let mut got = vec![0; 4096];
            b.arena().read(first, &mut got).unwrap();
            same_bytes(&got, &want_first, &format!("{what}: first allocation"));
            b.arena().read(second, &mut got).unwrap();
            same_bytes(&got, &want_second, &format!("{what}: second allocation"));
        }
    }
}

/// Lanes close together inside the buffer with one lane in the middle on
/// bytes kernels may not touch (or only read): the first and last lanes'
/// accesses are fine, so only a check of every byte between them sends
/// the wave to the per-lane path, where that lane faults.
#[test]
fn a_refused_lane_between_allowed_ones() {
    for lanes in [32, 64] {
        for (access, line, write) in [
            (Access::HostOnly, "global_load_b32 v4, v[2:3], off", false),
            (Access::ReadOnly, "global_store_b32 v[2:3], v4, off", true),
        ] {
            let mut b = bench(lanes);
            let buf = b.buffer();
            // Lane l at 4096 + 16 l, lane 7's 16 bytes refused: the
            // lanes around it bracket the hole.
            let at = |l: usize| 4096 + 16 * l as u64;
            b.arena().protect(buf + at(7), 16, access).unwrap();
            set_v64(&mut b, 2, |l| buf + at(l));
            let mem = b.read_buffer().unwrap();
            let mut want_regs = vgprs(&b);
            let mut want_mem = mem.clone();
            for l in 0..7 {
                if write {
                    let a = at(l) as usize;
                    want_mem[a..a + 4].copy_from_slice(&want_regs[4][l].to_le_bytes());
                } else {
                    want_regs[4][l] = le32(&mem, at(l));
                }
            }
            let what = format!("{line} wave{lanes}");
            let fault = global_fault(run(&mut b, &[line]));
            assert_eq!(fault, (7, buf + at(7), 4, cause(write)), "{what}");
            let says = if write {
                "which kernels may only read"
            } else {
                "which kernels may not touch"
            };
            names_buffer(&b, fault.1, 4, write, says);
            same_vgprs(&vgprs(&b), &want_regs, &what);
            same_bytes(&b.read_buffer().unwrap(), &want_mem, &what);
        }
    }
}

/// Lanes spread wider than the one-range check covers (`WINDOW_SPAN`,
/// 16 KiB), so each lane's own bytes are checked in one pass over the wave
/// (`Memory::window_at`), in two layouts, each with and without one refused
/// granule: the lane whose access overlaps it faults, named, after the
/// lanes before it. A third layout is narrow, but its range holds a refused
/// granule no lane touches: the one-range check refuses it, the lanes are
/// checked one by one the same way, and none faults.
#[test]
fn wide_lanes_checked_one_by_one() {
    // (lane address offset, refused granule, first lane in it, if any)
    type Layout = (fn(usize) -> u64, u64, Option<usize>);
    let layouts: [Layout; 3] = [
        // 584 bytes apart (32 lanes span 17.7 KiB): lane l's dword starts
        // at 62 + 8 l (mod 64) in its 64-byte shadow block, so every eighth
        // crosses into the next block. Lane 7 reads bytes 6198..6202; the
        // granule from 6200 overlaps its last two.
        (|l| 2048 + 584 * l as u64 + 62, 6200, Some(7)),
        // Rows of 16 consecutive dwords, one 64-byte block each, 16448
        // bytes apart (two rows span over 16 KiB): one shadow word settles
        // a row. The granule from 2072 holds lanes 6 and 7.
        (
            |l| 2048 + 16448 * (l / 16) as u64 + 4 * (l % 16) as u64,
            2072,
            Some(6),
        ),
        // A dword every 16 bytes: lane 3 reads 2096..2100, lane 4 from
        // 2112; the granule from 2104 lies between them.
        (|l| 2048 + 16 * l as u64, 2104, None),
    ];
    for lanes in [32, 64] {
        for (access, line, write) in [
            (Access::HostOnly, "global_load_b32 v4, v[2:3], off", false),
            (Access::ReadOnly, "global_store_b32 v[2:3], v4, off", true),
        ] {
            for (at, granule, faulting) in layouts {
                for hole in [false, true] {
                    let mut b = bench(lanes);
                    let buf = b.buffer();
                    if hole {
                        b.arena().protect(buf + granule, 8, access).unwrap();
                    }
                    set_v64(&mut b, 2, |l| buf + at(l));
                    let mem = b.read_buffer().unwrap();
                    let mut want_regs = vgprs(&b);
                    let mut want_mem = mem.clone();
                    let faulting = faulting.filter(|_| hole);
                    let done = faulting.unwrap_or(lanes);
                    for l in 0..done {
                        let a = at(l) as usize;
                        if write {
                            want_mem[a..a + 4].copy_from_slice(&want_regs[4][l].to_le_bytes());
                        } else {
                            want_regs[4][l] = le32(&mem, at(l));
                        }
                    }
                    let what = format!("{line} wave{lanes} at(1) {} hole {hole}", at(1));
                    let result = run(&mut b, &[line]);
                    if let Some(f) = faulting {
                        let want = (f, buf + at(f), 4, cause(write));
                        assert_eq!(global_fault(result), want, "{what}");
                    } else {
                        result.unwrap();
                    }
                    same_vgprs(&vgprs(&b), &want_regs, &what);
                    same_bytes(&b.read_buffer().unwrap(), &want_mem, &what);
                }
            }
        }
    }
}

/// FLAT lanes split between global memory and the LDS aperture (which
/// lies far from the buffer): each goes to its own space.
#[test]
fn flat_lanes_in_global_memory_and_lds() {
    for lanes in [32, 64] {
        let mut b = bench(lanes);
        let buf = b.buffer();
        let addr = |l: usize| -> u64 {
            if l % 4 == 3 {
                SHARED_APERTURE + LDS - 4 * lanes as u64 + 4 * l as u64
            } else {
                buf + 4 * l as u64
            }
        };
        set_v64(&mut b, 2, addr);
        let (mem, lds) = (b.read_buffer().unwrap(), b.lds.clone());
        let mut want = vgprs(&b);
        for l in 0..lanes {
            want[4][l] = if l % 4 == 3 {
                le32(&lds, addr(l) - SHARED_APERTURE)
            } else {
                le32(&mem, addr(l) - buf)
            };
        }
        run(&mut b, &["flat_load_b32 v4, v[2:3]"]).unwrap();
        same_vgprs(&vgprs(&b), &want, &format!("wave{lanes}"));
    }
}

// ---- (d) EXEC with holes -----------------------------------------------

/// Inactive lanes holding addresses that would fault (null, unmapped,
/// past the buffer, non-canonical) or lie in LDS's aperture do nothing:
/// no fault, their registers kept, nothing stored for them; the active
/// lanes, all in the buffer, load and store as usual.
#[test]
fn inactive_lanes_with_wild_addresses() {
    let wild = [
        0,
        0x7fff_0000_0000,
        u64::MAX - 3,
        SHARED_APERTURE + 0x100,
        0xdead_beef_dead_beef,
    ];
    for lanes in [32, 64] {
        for exec in [
            0x5555_5555_5555_5555u64,
            0x8000_0001_8000_0001,
            0x0ff0_0ff0_0ff0_0ff0,
            0,
        ] {
            let exec = exec & (u64::MAX >> (64 - lanes));
            let active = |l: usize| exec >> l & 1 != 0;
            let mut b = bench(lanes);
            b.wave.set_exec(exec);
            let buf = b.buffer();
            let off = |l: usize| BUF - 4 * lanes as u64 + 4 * l as u64;
            let addr = |l: usize| {
                if active(l) {
                    buf + off(l)
                } else {
                    // Past the buffer's end, or wild.
                    [buf + BUF + 4 * l as u64, wild[l % wild.len()]][l % 2]
                }
            };
            set_v64(&mut b, 2, addr);
            set_v(&mut b, 6, |l| 0xb000_0000 + l as u32);
            let (mem, lds) = (b.read_buffer().unwrap(), b.lds.clone());
            let mut want = vgprs(&b);
            let mut want_mem = mem.clone();
            for l in (0..lanes).filter(|&l| active(l)) {
                want[4][l] = le32(&mem, off(l));
                want_mem[off(l) as usize..off(l) as usize + 4]
                    .copy_from_slice(&(0xb000_0000 + l as u32).to_le_bytes());
            }
            let what = format!("wave{lanes} exec {exec:#x}");
            run(&mut b, &["global_load_b32 v4, v[2:3], off"]).unwrap();
            run(&mut b, &["flat_store_b32 v[2:3], v6"]).unwrap();
            same_vgprs(&vgprs(&b), &want, &what);
            same_bytes(&b.read_buffer().unwrap(), &want_mem, &what);
            same_bytes(&b.lds, &lds, &what);
        }
    }
}

/// DS with EXEC holes: inactive lanes out of range or anywhere neither
/// read (their registers stay) nor write; active lanes, in range, do.
#[test]
fn ds_inactive_lanes_out_of_range() {
    for lanes in [32, 64] {
        for exec in [0xaaaa_aaaa_aaaa_aaaau64, 0x0000_0001_8000_0000, 0] {
            let exec = exec & (u64::MAX >> (64 - lanes));
            let active = |l: usize| exec >> l & 1 != 0;
            let mut b = bench(lanes);
            b.wave.set_exec(exec);
            let addr = |l: usize| -> u32 {
                if active(l) {
                    (LDS - 8 * lanes as u64 + 8 * l as u64) as u32
                } else {
                    [LDS as u32 - 4, 0xffff_fffc, 0x8000_0000][l % 3]
                }
            };
            set_v(&mut b, 1, addr);
            set_v(&mut b, 2, |l| 0xc000_0000 + l as u32);
            let lds = b.lds.clone();
            let mut want = vgprs(&b);
            let mut want_lds = lds.clone();
            for l in (0..lanes).filter(|&l| active(l)) {
                let a = addr(l) as u64;
                want[4][l] = le32(&lds, a);
                want[5][l] = le32(&lds, a + 4);
                want_lds[a as usize..a as usize + 4]
                    .copy_from_slice(&(0xc000_0000 + l as u32).to_le_bytes());
            }
            let what = format!("wave{lanes} exec {exec:#x}");
            run(&mut b, &["ds_load_b64 v[4:5], v1", "ds_store_b32 v1, v2"]).unwrap();
            same_vgprs(&vgprs(&b), &want, &what);
            same_bytes(&b.lds, &want_lds, &what);
        }
    }
}

/// MUBUF lanes past the resource's num_records read zero and store
/// nothing, the others access the buffer: the dropped lanes must send the
/// wave down the per-lane path rather than fault.
#[test]
fn buffer_lanes_past_num_records() {
    for lanes in [32, 64] {
        let mut b = bench(lanes);
        let buf = b.buffer();
        // V#: base = buf, num_records 128, OOB_SELECT 3 raw, 32_FLOAT.
        set_s64(&mut b, 4, buf);
        b.wave.sgpr[6] = 128;
        b.wave.sgpr[7] = 0x3001_6fac;
        set_v(&mut b, 1, |l| 8 * l as u32);
        set_v(&mut b, 2, |l| 0xd000_0000 + l as u32);
        let mem = b.read_buffer().unwrap();
        let mut want = vgprs(&b);
        let mut want_mem = mem.clone();
        for l in 0..lanes {
            let a = 8 * l;
            let inside = a + 4 <= 128;
            want[4][l] = if inside { le32(&mem, a as u64) } else { 0 };
            if inside {
                want_mem[a..a + 4].copy_from_slice(&(0xd000_0000 + l as u32).to_le_bytes());
            }
        }
        run(
            &mut b,
            &[
                "buffer_load_b32 v4, v1, s[4:7], 0 offen",
                "buffer_store_b32 v2, v1, s[4:7], 0 offen",
            ],
        )
        .unwrap();
        same_vgprs(&vgprs(&b), &want, &format!("wave{lanes}"));
        same_bytes(
            &b.read_buffer().unwrap(),
            &want_mem,
            &format!("wave{lanes}"),
        );
    }
}
