//! Hostile input: truncated, corrupted and randomly mutated code objects must
//! produce errors, never panics or huge allocations.

mod common;

use common::*;
use proptest::prelude::*;
use softgpu_codeobj::*;
use std::sync::OnceLock;

fn vadd() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| compile_cl("vadd.cl", "gfx1151", &[]).1)
}

fn reloc() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| compile_cl("reloc.cl", "gfx1100", &[]).1)
}

fn multi() -> &'static [u8] {
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    B.get_or_init(|| compile_cl("multi.cl", "gfx1100", &["-mcode-object-version=4"]).1)
}

/// Load and, on success, place: nothing may panic.
fn exercise(bytes: &[u8]) {
    if let Ok(co) = load(bytes) {
        let _ = co.image.place(0x1_0000_0000);
        for k in &co.kernels {
            assert!(k.descriptor_offset + 64 <= co.image.size);
            assert!(k.entry_offset < co.image.size);
        }
    }
    let _ = load_for_target(bytes, "gfx1151");
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .unwrap_or_else(|| panic!("{:?} not found", String::from_utf8_lossy(needle)))
}

#[test]
fn every_truncation_is_an_error() {
    for bytes in [vadd(), reloc(), multi()] {
        assert!(load(bytes).is_ok());
        for n in 0..bytes.len() {
            let r = load(&bytes[..n]);
            assert!(
                r.is_err(),
                "truncation to {n} of {} bytes loaded",
                bytes.len()
            );
        }
    }
}

fn patched(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = vadd().to_vec();
    f(&mut b);
    b
}

#[test]
fn header_checks() {
    assert_eq!(load(b"").unwrap_err(), Error::NotElf);
    assert_eq!(
        load(b"MZ\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0").unwrap_err(),
        Error::NotElf
    );
    let e = load(&patched(|b| b[4] = 1)).unwrap_err();
    assert_eq!(e, Error::NotElf64Le);
    let e = load(&patched(|b| {
        b[18..20].copy_from_slice(&62u16.to_le_bytes())
    }))
    .unwrap_err();
    assert_eq!(e, Error::WrongMachine(62));
    let e = load(&patched(|b| b[7] = 65)).unwrap_err();
    assert_eq!(e, Error::WrongOsAbi(65));
    let e = load(&patched(|b| b[8] = 4)).unwrap_err();
    assert!(
        matches!(e, Error::UnsupportedVersion { abi_version: 4, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("v6"), "{e}");
    let e = load(&patched(|b| b[8] = 1)).unwrap_err();
    assert!(e.to_string().contains("v3"), "{e}");
    let e = load(&patched(|b| b[48] = 0x27)).unwrap_err();
    assert!(matches!(e, Error::UnknownMach { mach: 0x27, .. }), "{e}");
    // e_flags says gfx1100 but metadata says gfx1151: contradiction.
    let e = load(&patched(|b| b[48] = 0x41)).unwrap_err();
    assert!(e.to_string().contains("contradicts"), "{e}");
    // xnack/sramecc bits.
    let co = load(&patched(|b| b[49] |= 0x02)).unwrap();
    assert_eq!(co.xnack, FeatureSetting::Off);
}

#[test]
fn segment_checks() {
    // Program header 1 (the first PT_LOAD) of the vadd object.
    let ph = |b: &[u8]| -> usize {
        let phoff = u64::from_le_bytes(b[32..40].try_into().unwrap()) as usize;
        let n = u16::from_le_bytes(b[56..58].try_into().unwrap()) as usize;
        (0..n)
            .map(|i| phoff + 56 * i)
            .find(|&p| u32::from_le_bytes(b[p..p + 4].try_into().unwrap()) == 1)
            .unwrap()
    };
    // Huge p_memsz.
    let e = load(&patched(|b| {
        let p = ph(b);
        b[p + 40..p + 48].copy_from_slice(&(1u64 << 40).to_le_bytes());
    }))
    .unwrap_err();
    assert!(
        matches!(e, Error::Image(_)) && e.to_string().contains("limit"),
        "{e}"
    );
    // Overflowing p_vaddr + p_memsz.
    let e = load(&patched(|b| {
        let p = ph(b);
        b[p + 16..p + 24].copy_from_slice(&u64::MAX.to_le_bytes());
    }))
    .unwrap_err();
    assert!(matches!(e, Error::Image(_)), "{e}");
    // p_filesz > p_memsz.
    let e = load(&patched(|b| {
        let p = ph(b);
        b[p + 32..p + 40].copy_from_slice(&0x10_0000u64.to_le_bytes());
    }))
    .unwrap_err();
    assert!(e.to_string().contains("p_filesz"), "{e}");
    // File range outside the file.
    let e = load(&patched(|b| {
        let p = ph(b);
        b[p + 8..p + 16].copy_from_slice(&0xffff_fff0u64.to_le_bytes());
    }))
    .unwrap_err();
    assert!(matches!(e, Error::Elf { .. }), "{e}");
}

#[test]
fn kernel_checks() {
    let co = load(vadd()).unwrap();
    let raw = co.kernels[0].descriptor.raw;
    let kd = find(vadd(), &raw);
    // Entry offset pointing outside the code.
    let e = load(&patched(|b| {
        b[kd + 16..kd + 24].copy_from_slice(&(-0x10000i64).to_le_bytes())
    }))
    .unwrap_err();
    assert!(
        matches!(e, Error::Kernel { .. }) && e.to_string().contains("vadd"),
        "{e}"
    );
    let e = load(&patched(|b| {
        b[kd + 16..kd + 24].copy_from_slice(&i64::MAX.to_le_bytes())
    }))
    .unwrap_err();
    assert!(matches!(e, Error::Kernel { .. }), "{e}");
    // Entry offset pointing at the (non-executable) descriptor itself.
    let e = load(&patched(|b| {
        b[kd + 16..kd + 24].copy_from_slice(&0i64.to_le_bytes())
    }))
    .unwrap_err();
    assert!(e.to_string().contains("executable"), "{e}");
    // Wave32 bit contradicting .wavefront_size: the descriptor wins, with
    // a warning (see below).
    let wave64 = load(&patched(|b| b[kd + 57] &= !0x04)).unwrap();
    assert!(!wave64.kernels[0].descriptor.wave32);
    assert!(wave64.kernels[0].warnings[0].contains("runs in wave64"));
    // Descriptor symbol renamed in the metadata.
    let note_sym = find(vadd(), b"vadd.kd");
    let e = load(&patched(|b| b[note_sym + 3] = b'x')).unwrap_err();
    assert!(e.to_string().contains("vadx.kd"), "{e}");
}

#[test]
fn metadata_checks() {
    let pos = find(vadd(), b"amdhsa.kernels");
    let e = load(&patched(|b| b[pos + 13] = b'z')).unwrap_err();
    assert!(e.to_string().contains("amdhsa.kernels"), "{e}");
    let pos = find(vadd(), b".kernarg_segment_size");
    let e = load(&patched(|b| b[pos + 1] = b'K')).unwrap_err();
    assert!(e.to_string().contains(".kernarg_segment_size"), "{e}");
    // Note type changed: no metadata, so the kernels are found by their
    // descriptor symbols, as ROCm's loader finds them.
    let no_note = |b: &mut Vec<u8>| {
        let p = find(b, b"AMDGPU\0\0");
        b[p - 4..p].copy_from_slice(&33u32.to_le_bytes());
    };
    let co = load(&patched(no_note)).unwrap();
    assert!(!co.kernels.is_empty());
    assert!(co.kernels.iter().all(|k| !k.meta.described));
    // Without descriptor symbols too, there is nothing to run.
    let e = load(&patched(|b| {
        no_note(b);
        for i in 0..b.len() - 4 {
            if &b[i..i + 4] == b".kd\0" {
                b[i + 2] = b'x';
            }
        }
    }))
    .unwrap_err();
    assert_eq!(e, Error::MissingMetadata);
    // Garbage msgpack.
    let e = load(&patched(|b| {
        let p = find(b, b"AMDGPU\0\0") + 8;
        b[p] = 0xc1; // never-used msgpack marker
    }))
    .unwrap_err();
    assert!(matches!(e, Error::Metadata(_)), "{e}");
}

/// Metadata saying wave64 for a wave32 descriptor loads (the hardware
/// runs what the descriptor says) with a warning naming both.
#[test]
fn a_wavefront_size_contradicting_the_descriptor_is_a_warning() {
    let bytes = patched(|b| {
        // `.wavefront_size` then the msgpack fixint 32.
        let p = find(b, b".wavefront_size") + ".wavefront_size".len();
        assert_eq!(b[p], 32);
        b[p] = 64;
    });
    let co = load(&bytes).expect("a contradiction loads");
    let k = &co.kernels[0];
    assert!(k.descriptor.wave32);
    assert_eq!(k.meta.wavefront_size, 64);
    assert_eq!(k.warnings.len(), 1, "{:?}", k.warnings);
    assert!(
        k.warnings[0].contains(".wavefront_size 64 contradicts")
            && k.warnings[0].contains("runs in wave32"),
        "{}",
        k.warnings[0]
    );
    let plain = load(vadd()).unwrap();
    assert!(plain.kernels.iter().all(|k| k.warnings.is_empty()));
}

#[test]
fn flip_every_byte_of_the_headers() {
    // Exhaustive single-byte corruption of the first 1 KiB (ELF header, program
    // headers, start of the note) and of the section headers.
    let b = vadd();
    let shoff = u64::from_le_bytes(b[40..48].try_into().unwrap()) as usize;
    for i in (0..1024.min(b.len())).chain(shoff..b.len()) {
        for v in [0x00, 0xff, b[i] ^ 0x80, b[i].wrapping_add(1)] {
            let mut m = b.to_vec();
            m[i] = v;
            exercise(&m);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, .. ProptestConfig::default() })]

    #[test]
    fn random_mutations_never_panic(
        which in 0usize..3,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
        cut in any::<prop::sample::Index>(),
        do_cut in any::<bool>(),
    ) {
        let src = [vadd(), reloc(), multi()][which];
        let mut m = src.to_vec();
        for (i, v) in edits {
            let i = i.index(m.len());
            m[i] = v;
        }
        if do_cut {
            m.truncate(cut.index(m.len() + 1));
        }
        exercise(&m);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048), elf in any::<bool>()) {
        let mut b = bytes;
        if elf && b.len() >= 20 {
            b[..4].copy_from_slice(b"\x7fELF");
            b[4] = 2;
            b[5] = 1;
            b[7] = 64;
            b[8] = 3;
            b[18] = 224;
            b[19] = 0;
        }
        exercise(&b);
        let _ = bundle_entries(&b);
    }
}

/// A code object at an odd address (as `include_bytes!` or a bundle may
/// place it) loads like an aligned one.
#[test]
fn misaligned_input_loads() {
    let (_, elf) = common::compile_cl("vadd.cl", "gfx1151", &[]);
    let mut shifted = vec![0u8; elf.len() + 1];
    shifted[1..].copy_from_slice(&elf);
    let a = softgpu_codeobj::load(&elf).expect("aligned");
    let b = softgpu_codeobj::load(&shifted[1..]).expect("misaligned");
    assert_eq!(a.kernels.len(), b.kernels.len());
    assert_eq!(a.kernels[0].name, b.kernels[0].name);
}
