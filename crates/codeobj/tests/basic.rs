mod common;

use common::*;
use softgpu_codeobj::*;

#[test]
fn vadd_gfx1151_v5() {
    let (path, bytes) = compile_cl("vadd.cl", "gfx1151", &[]);
    let co = load(&bytes).unwrap();
    assert_eq!(co.target, "gfx1151");
    assert_eq!(co.target_id, "amdgcn-amd-amdhsa--gfx1151");
    assert_eq!(co.version, 5);
    assert_eq!(co.kernels.len(), 1);
    let k = &co.kernels[0];
    assert_eq!(k.name, "vadd");
    assert_eq!(k.symbol, "vadd.kd");
    let f = co.symbol("vadd").unwrap();
    assert_eq!(f.kind, SymbolKind::Function);
    assert_eq!(k.entry_offset, f.value);
    assert!(co.text.contains(&k.entry_offset));
    assert!(k.descriptor.wave32);
    assert!(k.descriptor.enable_sgpr_kernarg_segment_ptr);
    assert!(k.descriptor.enable_sgpr_workgroup_id_x);
    assert_eq!(
        k.meta.args.len(),
        4 + k
            .meta
            .args
            .iter()
            .filter(|a| a.value_kind.is_hidden())
            .count()
    );
    assert_eq!(k.meta.args[0].value_kind, ValueKind::GlobalBuffer);
    assert_eq!(k.meta.args[0].address_space, Some(AddressSpace::Global));
    assert!(k.meta.args[0].is_const);
    assert_eq!(k.meta.args[3].value_kind, ValueKind::ByValue);
    assert_eq!(k.meta.args[3].offset, 24);
    assert_eq!(k.meta.args[3].size, 4);
    assert_eq!(k.meta.args[4].value_kind, ValueKind::HiddenBlockCountX);
    assert_eq!(k.meta.wavefront_size, 32);
    assert_eq!(k.meta.kernarg_segment_size, k.descriptor.kernarg_size);
    let placed = co.image.place(0x7000_0000).unwrap();
    assert_eq!(placed.len() as u64, co.image.size);
    let e = k.entry_offset as usize;
    let seg = co.image.segment_at(k.entry_offset).unwrap();
    assert!(seg.executable, "{}", path.display());
    let s = (k.entry_offset - seg.offset) as usize;
    assert_eq!(&placed[e..e + 16], &seg.data[s..s + 16]);
}

/// A code object linked from several objects carries one metadata note
/// per object (rocBLAS's Tensile library: one per kernel); every note's
/// kernels are read, as ROCm's loader reads them.
#[test]
fn every_metadata_note_of_a_linked_code_object_is_read() {
    let (path, bytes) = compile_cl_linked(&["vadd.cl", "multi.cl"], "gfx1100");
    let notes = readelf_notes(&path);
    assert!(
        notes.matches("NT_AMDGPU_METADATA").count() >= 2,
        "the linked object has one metadata note: {notes}"
    );
    let co = load(&bytes).unwrap();
    let (_, alone) = compile_cl("multi.cl", "gfx1100", &[]);
    let multi = load(&alone).unwrap();
    let mut names: Vec<&str> = co.kernels.iter().map(|k| k.name.as_str()).collect();
    names.sort_unstable();
    let mut want: Vec<&str> = multi.kernels.iter().map(|k| k.name.as_str()).collect();
    want.push("vadd");
    want.sort_unstable();
    assert_eq!(names, want);
    for k in &co.kernels {
        let f = co.symbol(&k.name).unwrap();
        assert_eq!(k.entry_offset, f.value, "{}", k.name);
    }
}
