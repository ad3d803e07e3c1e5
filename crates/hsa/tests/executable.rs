//! Code object readers, executables, symbols and the AMD loader extension
//! through `libhsa-runtime64.so.1`: the C program `tests/c/executable.c`
//! loads a clang-compiled code object (and the same source built for
//! gfx1100, which the gfx1151 agent must refuse).

mod common;

/// Two kernels, a `__constant` table and a `__global` variable.
const SOURCE: &str = r#"
__constant int table[4] = {10, 20, 30, 40};
__global int counter = 7;

__kernel void add(__global int *out, int k) {
    size_t i = get_global_id(0);
    out[i] = table[i & 3] + k + counter;
    counter += 1;
}

__kernel void scale(__global float *x, float s, int j) {
    __local float tile[64];
    float priv[128];
    size_t l = get_local_id(0);
    for (int n = 0; n < 128; n++) priv[n] = x[n] * s + (float)n;
    tile[l] = priv[(j + (int)l) & 127];
    barrier(CLK_LOCAL_MEM_FENCE);
    x[get_global_id(0)] = tile[63 - l];
}
"#;

/// The value after `key: ` on the first line that has it.
fn field<'a>(out: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}: ");
    out.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {key:?} line in:\n{out}"))
}

/// `name value` pairs of a line such as `kernarg 16 align 8`.
fn number(line: &str, name: &str) -> u64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == name)
        .unwrap_or_else(|| panic!("no {name} in {line:?}"));
    words[at + 1]
        .parse()
        .unwrap_or_else(|_| panic!("{name} in {line:?}"))
}

#[test]
fn executables_load_and_report_symbols() {
    let exe = common::build_c("executable");
    let gfx1151 = common::kernel_file("executable-kernels", SOURCE, "gfx1151");
    let gfx1100 = common::kernel_file("executable-kernels", SOURCE, "gfx1100");
    let out = common::run_ok(
        &exe,
        &[gfx1151.to_str().unwrap(), gfx1100.to_str().unwrap()],
        &[],
    );
    assert!(out.contains("OK executable"), "{out}");

    let add = field(&out, "kernel add.kd");
    assert!(number(add, "kernarg") >= 12, "{add}");
    assert!(number(add, "align") >= 16, "{add}");
    assert_eq!(number(add, "group"), 0, "{add}");
    assert_eq!(number(add, "dynamic"), 0, "{add}");
    let scale = field(&out, "kernel scale.kd");
    assert!(number(scale, "group") >= 64 * 4, "{scale}");
    assert!(number(scale, "private") > 0, "{scale}");
    assert_eq!(field(&out, "kernel objects differ"), "1");

    assert_eq!(
        field(&out, "variable table"),
        "size 16 segment readonly const 1"
    );
    assert_eq!(
        field(&out, "variable counter"),
        "size 4 segment global const 0"
    );
    assert_eq!(field(&out, "table values"), "10 20 30 40");
    assert_eq!(field(&out, "counter value"), "7");
    // Every symbol the code object defines: the two kernels, the two
    // variables, and whatever the device libraries add.
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("symbol: "))
        .collect();
    for want in ["add.kd", "scale.kd", "table", "counter"] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    let n = names.len();
    assert_eq!(field(&out, "symbols"), format!("{n} agent {n} program 0"));
    assert_eq!(field(&out, "defined"), "agent 2 program 1");

    let refused = field(&out, "gfx1100 code object on the gfx1151 agent");
    assert!(refused == "0x100f" || refused == "0x100d", "{refused}");
    let uris: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("uri: "))
        .collect();
    assert_eq!(uris, ["file://", "memory://"]);
}
