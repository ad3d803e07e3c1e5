//! The `#[repr(C)]` structs of `softgpu_runtime::packet` against the
//! system's `hsa.h`: a C program compiled against the header prints the
//! size of each type and the offset and size of each field, and every
//! number must equal Rust's. A missing compiler or header fails the test,
//! naming the package, so a layout can never go unchecked.

use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use softgpu_runtime::packet::{
    AgentDispatchPacket, BarrierPacket, KernelDispatchPacket, QueueDescriptor,
};

const HEADER: &str = "/usr/include/hsa/hsa.h";

/// A C type and the Rust struct mirroring it: its size and, for each field
/// (C name), the Rust field's offset and size.
struct Layout {
    c_type: &'static str,
    size: usize,
    fields: Vec<(&'static str, usize, usize)>,
}

/// The size of the field `field` selects (the closure is never called).
fn field_size<T, F>(_field: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

macro_rules! layout {
    ($rust:ty => $c:literal { $($rf:ident => $cf:literal),* $(,)? }) => {
        Layout {
            c_type: $c,
            size: size_of::<$rust>(),
            fields: vec![$(($cf, offset_of!($rust, $rf), field_size(|s: &$rust| &s.$rf))),*],
        }
    };
}

fn layouts() -> Vec<Layout> {
    let barrier = |c_type| {
        let mut l = layout!(BarrierPacket => "" {
            header => "header",
            reserved0 => "reserved0",
            reserved1 => "reserved1",
            dep_signal => "dep_signal",
            reserved2 => "reserved2",
            completion_signal => "completion_signal",
        });
        l.c_type = c_type;
        l
    };
    vec![
        layout!(QueueDescriptor => "hsa_queue_t" {
            queue_type => "type",
            features => "features",
            base_address => "base_address",
            doorbell_signal => "doorbell_signal",
            size => "size",
            reserved1 => "reserved1",
            id => "id",
        }),
        layout!(KernelDispatchPacket => "hsa_kernel_dispatch_packet_t" {
            header => "header",
            setup => "setup",
            workgroup_size_x => "workgroup_size_x",
            workgroup_size_y => "workgroup_size_y",
            workgroup_size_z => "workgroup_size_z",
            reserved0 => "reserved0",
            grid_size_x => "grid_size_x",
            grid_size_y => "grid_size_y",
            grid_size_z => "grid_size_z",
            private_segment_size => "private_segment_size",
            group_segment_size => "group_segment_size",
            kernel_object => "kernel_object",
            kernarg_address => "kernarg_address",
            reserved2 => "reserved2",
            completion_signal => "completion_signal",
        }),
        layout!(AgentDispatchPacket => "hsa_agent_dispatch_packet_t" {
            header => "header",
            dispatch_type => "type",
            reserved0 => "reserved0",
            return_address => "return_address",
            arg => "arg",
            reserved2 => "reserved2",
            completion_signal => "completion_signal",
        }),
        barrier("hsa_barrier_and_packet_t"),
        barrier("hsa_barrier_or_packet_t"),
    ]
}

/// A C program printing `TYPE size N` and `TYPE FIELD OFFSET SIZE` lines.
fn c_program(layouts: &[Layout]) -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <hsa/hsa.h>\n\nint main(void) {\n",
    );
    for l in layouts {
        let t = l.c_type;
        c += &format!("  printf(\"{t} size %zu\\n\", sizeof({t}));\n");
        for (f, _, _) in &l.fields {
            c += &format!(
                "  printf(\"{t} {f} %zu %zu\\n\", offsetof({t}, {f}), sizeof((({t} *)0)->{f}));\n"
            );
        }
    }
    c + "  return 0;\n}\n"
}

/// The first C compiler found: clang-19, else the system's cc.
fn compiler() -> &'static str {
    let runs = |cc: &str| Command::new(cc).arg("--version").output().is_ok();
    ["clang-19", "cc"]
        .into_iter()
        .find(|cc| runs(cc))
        .unwrap_or_else(|| {
            panic!("no C compiler (clang-19 or cc): install the Debian package clang-19 or gcc")
        })
}

/// Compiles and runs `source`; returns what it printed.
fn run_c(source: &str) -> String {
    assert!(
        Path::new(HEADER).exists(),
        "{HEADER} is missing: install the Debian package libhsa-runtime-dev"
    );
    let dir: PathBuf =
        std::env::temp_dir().join(format!("softgpu-packet-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("layout.c"), dir.join("layout"));
    std::fs::write(&src, source).unwrap();
    let cc = compiler();
    let out = Command::new(cc)
        .args(["-std=c11", "-Wall", "-Werror", "-I/usr/include"])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "{cc} failed on the layout program:\n{}\n{source}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    assert!(run.status.success(), "the layout program failed");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout).expect("ASCII output")
}

#[test]
fn packet_and_queue_structs_match_hsa_h() {
    let layouts = layouts();
    let printed = run_c(&c_program(&layouts));
    let mut lines = printed.lines();
    let mut next = || lines.next().expect("a line per size and field");
    for l in &layouts {
        assert_eq!(
            next(),
            format!("{} size {}", l.c_type, l.size),
            "sizeof({})",
            l.c_type
        );
        for (f, offset, size) in &l.fields {
            assert_eq!(
                next(),
                format!("{} {f} {offset} {size}", l.c_type),
                "offsetof and sizeof of {}.{f} (C's line first)",
                l.c_type
            );
        }
        // Every byte belongs to a listed field, so none of the struct's
        // fields is missing from the comparison.
        let mut fields = l.fields.clone();
        fields.sort_by_key(|&(_, offset, _)| offset);
        let end = fields.iter().fold(0, |at, &(f, offset, size)| {
            assert_eq!(
                offset, at,
                "{}.{f} does not follow the field before",
                l.c_type
            );
            at + size
        });
        assert_eq!(end, l.size, "{}: the fields cover it", l.c_type);
    }
}
