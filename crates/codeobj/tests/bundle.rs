//! Clang offload bundles and target selection.

mod common;

use common::*;
use softgpu_codeobj::*;

#[test]
fn hip_bundle_two_targets() {
    let (_, bytes) = compile_hip("bundle.hip", &["gfx1151", "gfx1100"], true, &[]);
    assert!(is_offload_bundle(&bytes));
    let entries = bundle_entries(&bytes).unwrap();
    let ids: Vec<_> = entries.iter().map(|e| e.id.as_str()).collect();
    assert!(ids.contains(&"hipv4-amdgcn-amd-amdhsa--gfx1151"), "{ids:?}");
    assert!(ids.contains(&"hipv4-amdgcn-amd-amdhsa--gfx1100"), "{ids:?}");
    for t in ["gfx1151", "gfx1100"] {
        let elf = unbundle(&bytes, t).unwrap();
        assert!(!is_offload_bundle(elf));
        assert_eq!(load(elf).unwrap().target, t);
        let co = load_for_target(&bytes, t).unwrap();
        assert_eq!(co.target, t);
        assert_eq!(co.target_id, format!("amdgcn-amd-amdhsa--{t}"));
        assert_eq!(co.kernels[0].name, "scale");
        // Target features in the request are accepted.
        let co = load_for_target(&bytes, &format!("{t}:xnack-")).unwrap();
        assert_eq!(co.target, t);
    }
    // Same as clang-offload-bundler's extraction.
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bundle-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let inp = d.join("k.bundle");
    let out = d.join("k.gfx1151.hsaco");
    std::fs::write(&inp, &bytes).unwrap();
    run(
        "/usr/lib/llvm-19/bin/clang-offload-bundler",
        &[
            "-unbundle",
            "-type=o",
            "-targets=hipv4-amdgcn-amd-amdhsa--gfx1151",
            &format!("-input={}", inp.display()),
            &format!("-output={}", out.display()),
        ],
    );
    assert_eq!(
        unbundle(&bytes, "gfx1151").unwrap(),
        &std::fs::read(&out).unwrap()[..]
    );

    // Absent target: the error lists the entries.
    let e = unbundle(&bytes, "gfx1201").unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("gfx1201"), "{msg}");
    assert!(msg.contains("hipv4-amdgcn-amd-amdhsa--gfx1100"), "{msg}");
    assert!(msg.contains("hipv4-amdgcn-amd-amdhsa--gfx1151"), "{msg}");
    assert!(matches!(
        load_for_target(&bytes, "gfx1201"),
        Err(Error::NoBundleEntry { .. })
    ));
    // A bundle is not an ELF.
    assert!(matches!(load(&bytes), Err(Error::NotElf)));
    // Every truncation of the bundle is an error or a shorter valid prefix, never a panic.
    for n in 0..bytes.len().min(4096) {
        let _ = load_for_target(&bytes[..n], "gfx1151");
        let _ = bundle_entries(&bytes[..n]);
    }
}

/// `clang --offload-compress` writes a zstd-compressed bundle (CCOB
/// version 2 with clang-19); it decompresses to the same bundle
/// clang-offload-bundler makes uncompressed, and loads per target.
#[test]
fn compressed_bundles_load() {
    let (_, plain) = compile_hip("bundle.hip", &["gfx1151", "gfx1100"], true, &[]);
    let (_, packed) = compile_hip(
        "bundle.hip",
        &["gfx1151", "gfx1100"],
        true,
        &["--offload-compress"],
    );
    assert!(
        is_compressed_offload_bundle(&packed),
        "clang did not compress"
    );
    let (bundle, used) = decompress(&packed).unwrap();
    assert_eq!(used, packed.len());
    // The same entries as the uncompressed build (whose code objects
    // differ only in the compile id clang derives from the options), and
    // the gfx1151 code object clang-offload-bundler extracts from it.
    let ids = |b: &[u8]| -> Vec<String> {
        let mut ids: Vec<_> = bundle_entries(b)
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&bundle), ids(&plain));
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ccob-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let (inp, out) = (d.join("k.ccob"), d.join("k.gfx1151.hsaco"));
    std::fs::write(&inp, &packed).unwrap();
    run(
        "/usr/lib/llvm-19/bin/clang-offload-bundler",
        &[
            "-unbundle",
            "-type=o",
            "-targets=hipv4-amdgcn-amd-amdhsa--gfx1151",
            &format!("-input={}", inp.display()),
            &format!("-output={}", out.display()),
        ],
    );
    assert!(unbundle(&bundle, "gfx1151").unwrap() == &std::fs::read(&out).unwrap()[..]);
    for t in ["gfx1151", "gfx1100"] {
        assert_eq!(load_for_target(&packed, t).unwrap().target, t);
    }
    for n in 0..packed.len() {
        let _ = load_for_target(&packed[..n], "gfx1151");
    }
    let mut corrupt = packed.clone();
    let last = corrupt.len() - 5;
    corrupt[last] ^= 0xff;
    let _ = load_for_target(&corrupt, "gfx1151");
}

#[test]
fn target_mismatch() {
    let (_, bytes) = compile_cl("vadd.cl", "gfx1100", &[]);
    let e = load_for_target(&bytes, "gfx1151").unwrap_err();
    assert_eq!(
        e,
        Error::TargetMismatch {
            expected: "gfx1151".into(),
            found: "gfx1100".into()
        }
    );
    assert!(e.to_string().contains("gfx1100") && e.to_string().contains("gfx1151"));
    assert_eq!(
        load_for_target(&bytes, "gfx1100").unwrap().target,
        "gfx1100"
    );
}

fn make_bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut hdr = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    hdr.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let header_len: usize = hdr.len() + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut off = header_len;
    let mut body = Vec::new();
    for (id, data) in entries {
        hdr.extend_from_slice(&(off as u64).to_le_bytes());
        hdr.extend_from_slice(&(data.len() as u64).to_le_bytes());
        hdr.extend_from_slice(&(id.len() as u64).to_le_bytes());
        hdr.extend_from_slice(id.as_bytes());
        body.extend_from_slice(data);
        off += data.len();
    }
    hdr.extend_from_slice(&body);
    hdr
}

#[test]
fn synthetic_bundles() {
    let b = make_bundle(&[
        ("host-x86_64-unknown-linux-gnu-", b""),
        ("hip-amdgcn-amd-amdhsa--gfx1151:xnack+", b"PLUS"),
        ("openmp-amdgcn-amd-amdhsa--gfx1151:xnack-", b"MINUS"),
        ("hipv4-amdgcn-amd-amdhsa--gfx1100", b"ELEVEN"),
    ]);
    assert_eq!(unbundle(&b, "gfx1151").unwrap(), b"PLUS");
    assert_eq!(unbundle(&b, "gfx1151:xnack-").unwrap(), b"MINUS");
    assert_eq!(unbundle(&b, "gfx1100:sramecc+").unwrap(), b"ELEVEN");
    assert!(matches!(
        unbundle(&b, "gfx1200"),
        Err(Error::NoBundleEntry { .. })
    ));
    // XNACK/SRAMECC modes, as ROCm's loader matches them: an entry that
    // sets a feature runs only on a device in that mode; one that leaves
    // it out runs in either; the closest fit wins.
    let fat = make_bundle(&[
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"ON"),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", b"OFF"),
        ("hipv4-amdgcn-amd-amdhsa--gfx942", b"ANY"),
        ("hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", b"ECC"),
    ]);
    assert_eq!(unbundle(&fat, "gfx90a:xnack-").unwrap(), b"OFF");
    assert_eq!(unbundle(&fat, "gfx90a:sramecc+:xnack+").unwrap(), b"ON");
    assert_eq!(unbundle(&fat, "gfx90a").unwrap(), b"ON");
    assert_eq!(unbundle(&fat, "gfx942:sramecc+:xnack-").unwrap(), b"ECC");
    assert_eq!(unbundle(&fat, "gfx942:xnack+").unwrap(), b"ANY");
    assert_eq!(unbundle(&fat, "gfx942").unwrap(), b"ANY");
    let only_on = make_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"ON")]);
    assert!(matches!(
        unbundle(&only_on, "gfx90a:xnack-"),
        Err(Error::NoBundleEntry { .. })
    ));
    // Loading the selected bytes fails as "not ELF", not with a panic.
    assert!(matches!(load_for_target(&b, "gfx1100"), Err(Error::NotElf)));

    // Hostile headers.
    let mut huge = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    huge.extend_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(bundle_entries(&huge), Err(Error::Bundle(_))));
    let mut bad = make_bundle(&[("hip-amdgcn-amd-amdhsa--gfx1151", b"x")]);
    bad[32..40].copy_from_slice(&u64::MAX.to_le_bytes()); // offset
    assert!(matches!(unbundle(&bad, "gfx1151"), Err(Error::Bundle(_))));
    let mut bad = make_bundle(&[("hip-amdgcn-amd-amdhsa--gfx1151", b"x")]);
    bad[48..56].copy_from_slice(&(u64::MAX - 3).to_le_bytes()); // id length
    assert!(matches!(unbundle(&bad, "gfx1151"), Err(Error::Bundle(_))));

    // Compressed bundles: hostile or unknown headers are errors naming
    // what is wrong (the real thing is covered by compressed_bundles_load).
    let mut ccob = b"CCOB".to_vec();
    ccob.extend_from_slice(&[0; 32]);
    assert!(is_compressed_offload_bundle(&ccob));
    let e = load_for_target(&ccob, "gfx1151").unwrap_err();
    assert!(matches!(e, Error::CompressedBundle(_)), "{e}");
    assert!(e.to_string().contains("format version 0"), "{e}");
    let mut v2 = b"CCOB".to_vec();
    v2.extend_from_slice(&2u16.to_le_bytes());
    v2.extend_from_slice(&1u16.to_le_bytes());
    v2.extend_from_slice(&u32::MAX.to_le_bytes()); // total size beyond the input
    v2.extend_from_slice(&[0; 12]);
    assert!(load_for_target(&v2, "gfx1151")
        .unwrap_err()
        .to_string()
        .contains("out of range"));
    let len = v2.len() as u32;
    v2[8..12].copy_from_slice(&len.to_le_bytes());
    assert!(load_for_target(&v2, "gfx1151")
        .unwrap_err()
        .to_string()
        .contains("zstd"));
    v2[6] = 0; // zlib
    assert!(load_for_target(&v2, "gfx1151")
        .unwrap_err()
        .to_string()
        .contains("method 0"));
    for cut in 0..v2.len() {
        let _ = load_for_target(&v2[..cut], "gfx1151");
    }
}
