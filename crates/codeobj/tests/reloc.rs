//! Dynamic relocations of linked code objects, applied by `Image::place`.

mod common;

use common::*;
use softgpu_codeobj::*;

fn u64_at(b: &[u8], at: u64) -> u64 {
    u64::from_le_bytes(b[at as usize..at as usize + 8].try_into().unwrap())
}

#[test]
fn constant_pointer_table_relative64() {
    let (_, bytes) = compile_cl("reloc.cl", "gfx1151", &[]);
    let co = load(&bytes).unwrap();
    let rels = &co.image.relocations;
    assert!(!rels.is_empty());
    assert!(
        rels.iter().all(|r| r.kind == RelocKind::Relative64),
        "{rels:?}"
    );
    let table = co.symbol("table").unwrap();
    let first = co.symbol("first").unwrap();
    let second = co.symbol("second").unwrap();
    let counter = co.symbol("counter").unwrap();
    let counter_ptr = co.symbol("counter_ptr").unwrap();
    for base in [0u64, 0x1000, 0x7fff_0000_0000] {
        let img = co.image.place(base).unwrap();
        assert_eq!(u64_at(&img, table.value), base + first.value);
        assert_eq!(u64_at(&img, table.value + 8), base + second.value + 4);
        assert_eq!(u64_at(&img, counter_ptr.value), base + counter.value);
        // Non-relocated data is copied verbatim.
        let c = counter.value as usize;
        assert_eq!(i32::from_le_bytes(img[c..c + 4].try_into().unwrap()), 5);
    }
    // Relocation targets lie in writable or read-only data, never in code.
    for r in rels {
        assert!(!co.image.segment_at(r.offset).unwrap().executable);
    }
}

#[test]
fn abs64_against_defined_symbols() {
    let (_, bytes) = compile_cl("extern.cl", "gfx1151", &[]);
    let co = load(&bytes).unwrap();
    let visible = co.symbol("visible").unwrap();
    let visible_ptr = co.symbol("visible_ptr").unwrap();
    let abs: Vec<_> = co
        .image
        .relocations
        .iter()
        .filter(|r| r.kind == RelocKind::Abs64)
        .collect();
    assert!(abs.len() >= 2, "{:?}", co.image.relocations);
    let r = abs.iter().find(|r| r.symbol_name == "visible").unwrap();
    assert_eq!(r.symbol_value, Some(visible.value));
    let base = 0x4_0000_0000u64;
    let img = co.image.place(base).unwrap();
    assert_eq!(u64_at(&img, visible_ptr.value), base + visible.value);
    for r in &abs {
        assert_eq!(
            u64_at(&img, r.offset),
            base + r.symbol_value.unwrap() + r.addend as u64
        );
    }
}

#[test]
fn undefined_symbol_is_an_error_naming_it() {
    let (_, bytes) = compile_cl("extern.cl", "gfx1151", &["-DWITH_UNDEFINED"]);
    let co = load(&bytes).unwrap();
    let r = co
        .image
        .relocations
        .iter()
        .find(|r| r.symbol_name == "not_defined_anywhere")
        .unwrap();
    assert_eq!(r.symbol_value, None);
    let e = co.image.place(0x1000).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("not_defined_anywhere"), "{msg}");
    assert!(msg.contains("undefined"), "{msg}");
    assert!(msg.contains("R_AMDGPU_ABS64"), "{msg}");
}

fn tiny_image(rel: Relocation) -> Image {
    Image {
        size: 0x40,
        segments: vec![Segment {
            offset: 0,
            data: vec![0xaa; 0x20],
            mem_size: 0x40,
            executable: false,
            writable: true,
        }],
        relocations: vec![rel],
    }
}

fn rel(kind: RelocKind, offset: u64, sym: Option<u64>, addend: i64) -> Relocation {
    Relocation {
        offset,
        kind,
        symbol_value: sym,
        symbol_name: "s".into(),
        addend,
    }
}

#[test]
fn place_semantics() {
    let base = 0x1234_5678_0000u64;
    let img = tiny_image(rel(RelocKind::Relative64, 8, None, 0x10))
        .place(base)
        .unwrap();
    assert_eq!(u64_at(&img, 8), base + 0x10);
    assert_eq!(img[0], 0xaa);
    assert_eq!(img[0x30], 0, "zero fill past file size");
    let img = tiny_image(rel(RelocKind::Abs32Lo, 0, Some(0x20), 4))
        .place(base)
        .unwrap();
    assert_eq!(&img[0..4], &((base + 0x24) as u32).to_le_bytes());
    assert_eq!(img[4], 0xaa);
    let img = tiny_image(rel(RelocKind::Abs32Hi, 0, Some(0x20), 4))
        .place(base)
        .unwrap();
    assert_eq!(&img[0..4], &(((base + 0x24) >> 32) as u32).to_le_bytes());
    let img = tiny_image(rel(RelocKind::Abs32, 4, Some(0x20), -4))
        .place(0x1000)
        .unwrap();
    assert_eq!(&img[4..8], &0x101cu32.to_le_bytes());
    let e = tiny_image(rel(RelocKind::Abs32, 4, Some(0x20), 0))
        .place(base)
        .unwrap_err();
    assert!(e.to_string().contains("32 bits"), "{e}");
    // REL64: S + A - P.
    let img = tiny_image(rel(RelocKind::Other(5), 8, Some(0x30), 0))
        .place(base)
        .unwrap();
    assert_eq!(u64_at(&img, 8), 0x28);
    // Out of range and unknown types are errors naming them.
    let e = tiny_image(rel(RelocKind::Abs64, 0x3c, Some(0), 0))
        .place(0)
        .unwrap_err();
    assert!(e.to_string().contains("0x3c"), "{e}");
    let e = tiny_image(rel(RelocKind::Abs64, u64::MAX - 2, Some(0), 0))
        .place(0)
        .unwrap_err();
    assert!(matches!(e, Error::Relocation { .. }), "{e}");
    let e = tiny_image(rel(RelocKind::Other(7), 0, Some(0), 0))
        .place(0)
        .unwrap_err();
    assert!(e.to_string().contains("R_AMDGPU_GOTPCREL"), "{e}");
    // R_AMDGPU_NONE is ignored.
    let img = tiny_image(rel(RelocKind::Other(0), 0, None, 0))
        .place(0)
        .unwrap();
    assert_eq!(img[0], 0xaa);
    assert_eq!(RelocKind::from_raw(13), RelocKind::Relative64);
    assert_eq!(RelocKind::Abs32Hi.raw(), 2);
}
