//! Minimal kernels in AMDGPU assembly, for what no source language can
//! express: exact descriptors and metadata, hand-picked instructions.
//!
//! A [`Kernel`] fills the boilerplate a hand-written kernel needs (the
//! symbol, its `.amdhsa_kernel` descriptor block and its entry in the
//! `amdhsa.kernels` metadata note, code object version 5, wave32), from
//! the few values tests vary; [`source`] puts kernels into one assembly
//! file and [`assemble`] makes it a code object with clang-19 and
//! ld.lld-19 ([`assemble_with`]: llvm-mc-19 with `-mattr`, for syntax
//! clang cannot pass to its assembler, such as true16's `v0.h`).
//!
//! ```
//! use softgpu_test_support::kernel::Kernel;
//!
//! // `k`, which only ends, with 64 bytes of private segment per work-item.
//! let text = Kernel { private: 64, private_segment: true, ..Kernel::default() }
//!     .source("gfx1100");
//! assert!(text.contains(".amdhsa_private_segment_fixed_size 64"));
//! assert!(text.contains(".private_segment_fixed_size: 64"));
//! ```

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use crate::tool;

/// One wave32 kernel: its instructions, descriptor and metadata.
#[derive(Clone, Copy, Debug)]
pub struct Kernel<'a> {
    /// The kernel's symbol (its descriptor is `NAME.kd`).
    pub name: &'a str,
    /// The instructions, one per line, ending the program (`s_endpgm`).
    pub body: &'a str,
    /// Private segment bytes per work-item (descriptor and metadata).
    pub private: u64,
    /// Group segment (LDS) bytes (descriptor and metadata).
    pub lds: u64,
    /// Kernarg segment bytes (descriptor and metadata).
    pub kernarg: u32,
    /// The kernarg segment pointer in `s[0:1]` (two user SGPRs).
    pub kernarg_ptr: bool,
    /// The descriptor's `ENABLE_PRIVATE_SEGMENT` (scratch set up).
    pub private_segment: bool,
    /// `.amdhsa_next_free_vgpr` and the metadata's `.vgpr_count`.
    pub vgprs: u32,
    /// `.amdhsa_next_free_sgpr` and the metadata's `.sgpr_count`.
    pub sgprs: u32,
    /// The metadata's `.max_flat_workgroup_size`.
    pub max_workgroup: u32,
    /// The metadata's `.args`, each a YAML flow map
    /// (`{ .offset: 0, .size: 8, .value_kind: global_buffer, ... }`).
    pub args: &'a [&'a str],
    /// Further `.amdhsa_*` directives of the descriptor, one per entry.
    pub directives: &'a [&'a str],
    /// Whether the metadata note describes the kernel (without, it is
    /// found by its descriptor symbol alone).
    pub metadata: bool,
}

impl Default for Kernel<'_> {
    /// `k`, which only ends: 8 VGPRs and SGPRs, no segments, no
    /// arguments, workgroups of up to 1024, described by the metadata.
    fn default() -> Self {
        Kernel {
            name: "k",
            body: "\ts_endpgm",
            private: 0,
            lds: 0,
            kernarg: 0,
            kernarg_ptr: false,
            private_segment: false,
            vgprs: 8,
            sgprs: 8,
            max_workgroup: 1024,
            args: &[],
            directives: &[],
            metadata: true,
        }
    }
}

impl Kernel<'_> {
    /// An assembly file for `target` holding this kernel alone.
    pub fn source(&self, target: &str) -> String {
        source(target, &[*self])
    }

    /// This kernel alone, assembled for `target` ([`assemble`]).
    pub fn assemble(&self, target: &str) -> Vec<u8> {
        assemble(target, &self.source(target))
    }

    /// The kernel's code and descriptor.
    fn code(&self) -> String {
        let Kernel { name, body, .. } = *self;
        let mut s = format!(
            "\t.text\n\t.globl {name}\n\t.p2align 8\n\t.type {name},@function\n{name}:\n{}\n\
             .L{name}_end:\n\t.size {name}, .L{name}_end-{name}\n\
             \t.rodata\n\t.p2align 6\n\t.amdhsa_kernel {name}\n",
            body.trim_end_matches('\n')
        );
        let mut directive = |line: &str| {
            let _ = writeln!(s, "\t\t{line}");
        };
        directive(&format!(
            ".amdhsa_private_segment_fixed_size {}",
            self.private
        ));
        directive(&format!(".amdhsa_group_segment_fixed_size {}", self.lds));
        directive(&format!(".amdhsa_kernarg_size {}", self.kernarg));
        if self.kernarg_ptr {
            directive(".amdhsa_user_sgpr_count 2");
            directive(".amdhsa_user_sgpr_kernarg_segment_ptr 1");
        }
        directive(".amdhsa_wavefront_size32 1");
        directive(&format!(
            ".amdhsa_enable_private_segment {}",
            u8::from(self.private_segment)
        ));
        for line in self.directives {
            directive(line);
        }
        directive(&format!(".amdhsa_next_free_vgpr {}", self.vgprs));
        directive(&format!(".amdhsa_next_free_sgpr {}", self.sgprs));
        s + "\t.end_amdhsa_kernel\n"
    }

    /// The kernel's entry in `amdhsa.kernels`.
    fn metadata_entry(&self) -> String {
        let args = if self.args.is_empty() {
            " []\n".to_string()
        } else {
            let lines: String = self.args.iter().map(|a| format!("      - {a}\n")).collect();
            format!("\n{lines}")
        };
        format!(
            "  - .args:{args}    .group_segment_fixed_size: {lds}\n\
             \x20   .kernarg_segment_align: 8\n\
             \x20   .kernarg_segment_size: {kernarg}\n\
             \x20   .max_flat_workgroup_size: {max}\n\
             \x20   .name: {name}\n\
             \x20   .private_segment_fixed_size: {private}\n\
             \x20   .sgpr_count: {sgprs}\n\
             \x20   .symbol: {name}.kd\n\
             \x20   .vgpr_count: {vgprs}\n\
             \x20   .wavefront_size: 32\n",
            lds = self.lds,
            kernarg = self.kernarg,
            max = self.max_workgroup,
            name = self.name,
            private = self.private,
            sgprs = self.sgprs,
            vgprs = self.vgprs,
        )
    }
}

/// An assembly file for `target` (`gfx1100`, ...) holding `kernels`, with
/// one metadata note describing those of them that ask for it.
pub fn source(target: &str, kernels: &[Kernel]) -> String {
    let mut s = format!(
        "\t.amdgcn_target \"amdgcn-amd-amdhsa--{target}\"\n\t.amdhsa_code_object_version 5\n"
    );
    for k in kernels {
        s += &k.code();
    }
    let described: String = (kernels.iter().filter(|k| k.metadata))
        .map(Kernel::metadata_entry)
        .collect();
    if !described.is_empty() {
        let _ = write!(
            s,
            "\t.amdgpu_metadata\n---\namdhsa.kernels:\n{described}\
             amdhsa.target: amdgcn-amd-amdhsa--{target}\n\
             amdhsa.version: [1, 2]\n...\n\t.end_amdgpu_metadata\n"
        );
    }
    s
}

/// Assembles `source` for `target` with clang-19 and links it with
/// ld.lld-19 into a code object; returns its bytes.
pub fn assemble(target: &str, source: &str) -> Vec<u8> {
    build(source, |s, o| {
        tool::run_command(
            Command::new("clang-19")
                .args(["-x", "assembler", "-target", "amdgcn-amd-amdhsa"])
                .arg(format!("-mcpu={target}"))
                .arg("-c")
                .arg(s)
                .arg("-o")
                .arg(o),
        );
    })
}

/// [`assemble`] with llvm-mc-19 and `-mattr=MATTR` (`+real-true16` for
/// true16 register halves, which clang-19 cannot ask of its assembler).
pub fn assemble_with(target: &str, mattr: &str, source: &str) -> Vec<u8> {
    build(source, |s, o| {
        tool::run_command(
            Command::new("llvm-mc-19")
                .arg("-triple=amdgcn-amd-amdhsa")
                .arg(format!("-mcpu={target}"))
                .arg(format!("-mattr={mattr}"))
                .arg("-filetype=obj")
                .arg(s)
                .arg("-o")
                .arg(o),
        );
    })
}

/// Writes `source` to a scratch folder, makes an object of it with
/// `object(source, object)`, links it and returns the code object.
fn build(source: &str, object: impl FnOnce(&Path, &Path)) -> Vec<u8> {
    let dir = crate::fresh_dir("assemble");
    let (s, o, linked) = (dir.join("k.s"), dir.join("k.o"), dir.join("k.hsaco"));
    std::fs::write(&s, source).unwrap_or_else(|e| panic!("writing {}: {e}", s.display()));
    object(&s, &o);
    tool::link(&[&o], &linked);
    let bytes =
        std::fs::read(&linked).unwrap_or_else(|e| panic!("reading {}: {e}", linked.display()));
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_described_kernels_are_in_the_note() {
        let noted = Kernel {
            name: "a",
            ..Kernel::default()
        };
        let bare = Kernel {
            name: "b",
            metadata: false,
            ..Kernel::default()
        };
        let s = source("gfx1151", &[noted, bare]);
        assert!(s.contains(".amdhsa_kernel a\n") && s.contains(".amdhsa_kernel b\n"));
        assert!(s.contains(".name: a\n") && !s.contains(".name: b\n"), "{s}");
        assert!(
            s.contains("amdhsa.target: amdgcn-amd-amdhsa--gfx1151"),
            "{s}"
        );
        assert!(!source("gfx1100", &[bare]).contains("amdgpu_metadata"));
    }

    #[test]
    fn arguments_are_listed_under_args() {
        let s = Kernel {
            args: &["{ .offset: 0, .size: 8, .value_kind: global_buffer }"],
            ..Kernel::default()
        }
        .source("gfx1100");
        assert!(
            s.contains("  - .args:\n      - { .offset: 0, .size: 8, .value_kind: global_buffer }\n    .group_segment_fixed_size: 0\n"),
            "{s}"
        );
    }
}
