//! Running the test toolchain: the Debian LLVM 19 packages (`clang-19`,
//! `lld-19`, `llvm-19`) and the host C compiler.
//!
//! A tool that cannot be started fails the test with the Debian package
//! to install (scripts/install-test-deps.sh installs them all); a tool
//! that fails fails the test with its command line and standard error.
//! Tests never skip for a missing tool.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The Debian package that provides `tool`.
pub fn package(tool: &str) -> &str {
    let name = tool.rsplit('/').next().unwrap_or(tool);
    match name {
        "clang-19" | "clang++-19" => "clang-19",
        "ld.lld-19" => "lld-19",
        // /usr/lib/llvm-19/bin/clang-offload-bundler
        "clang-offload-bundler" => "clang-tools-19",
        "cc" | "gcc" => "gcc",
        _ if name.starts_with("llvm-") && name.ends_with("-19") => "llvm-19",
        _ => name,
    }
}

/// Panics because `tool` could not be started.
fn missing(tool: &str, e: std::io::Error) -> ! {
    panic!(
        "cannot run `{tool}` ({e}): this test needs it; install the Debian package {} \
         (scripts/install-test-deps.sh installs every test dependency)",
        package(tool)
    )
}

/// The program `cmd` runs, as text.
fn program(cmd: &Command) -> String {
    cmd.get_program().to_string_lossy().into_owned()
}

/// `cmd` as a shell would spell it, for messages.
fn command_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `cmd` to completion and returns its output, whatever its exit
/// status; panics only if the tool cannot be started.
pub fn output(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| missing(&program(cmd), e))
}

/// Runs `cmd`, asserts it succeeded and returns its standard output.
pub fn run_command(cmd: &mut Command) -> String {
    let out = output(cmd);
    stdout_of(cmd, out)
}

/// Runs `tool` with `args`, asserts it succeeded and returns its standard
/// output.
pub fn run<S: AsRef<OsStr>>(tool: &str, args: &[S]) -> String {
    run_command(Command::new(tool).args(args))
}

/// [`run`] with `input` on the tool's standard input.
pub fn run_with_stdin<S: AsRef<OsStr>>(tool: &str, args: &[S], input: &str) -> String {
    let mut cmd = Command::new(tool);
    cmd.args(args);
    let out = output_with_stdin(&mut cmd, input);
    stdout_of(&cmd, out)
}

/// [`output`] with `input` on the command's standard input.
pub fn output_with_stdin(cmd: &mut Command, input: &str) -> Output {
    let mut child = (cmd.stdin(Stdio::piped()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| missing(&program(cmd), e));
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_string();
    // Written from another thread: a tool may fill its output pipe before
    // it has read all its input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("wait for the tool");
    writer
        .join()
        .expect("writer thread")
        .expect("write the tool's input");
    out
}

/// Compiles the OpenCL C 2.0 file `src` with clang-19 for `mcpu`, without
/// the device libraries, with `flags` (an optimisation level, `-c` for an
/// object or `-S` for assembly, ...), into `out` (`-`: standard output);
/// returns clang's standard output.
pub fn clang_cl(src: &Path, mcpu: &str, flags: &[&str], out: &Path) -> String {
    run_command(
        Command::new("clang-19")
            .args(["-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa"])
            .arg(format!("-mcpu={mcpu}"))
            .arg("-nogpulib")
            .args(flags)
            .arg(src)
            .arg("-o")
            .arg(out),
    )
}

/// Links `objects` with ld.lld-19 into the code object (a shared object)
/// `out`.
pub fn link<P: AsRef<Path>>(objects: &[P], out: &Path) {
    run_command(
        Command::new("ld.lld-19")
            .arg("-shared")
            .args(objects.iter().map(AsRef::as_ref))
            .arg("-o")
            .arg(out),
    );
}

/// The standard output of `cmd`, once it succeeded.
fn stdout_of(cmd: &Command, out: Output) -> String {
    assert!(
        out.status.success(),
        "`{}` failed with {}:\n{}",
        command_line(cmd),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages() {
        assert_eq!(package("clang-19"), "clang-19");
        assert_eq!(package("ld.lld-19"), "lld-19");
        assert_eq!(package("llvm-objdump-19"), "llvm-19");
        assert_eq!(package("/usr/bin/llvm-mc-19"), "llvm-19");
        assert_eq!(
            package("/usr/lib/llvm-19/bin/clang-offload-bundler"),
            "clang-tools-19"
        );
    }

    #[test]
    #[should_panic(expected = "install the Debian package llvm-19")]
    fn a_missing_tool_fails_naming_its_package() {
        run("llvm-no-such-tool-19", &["--version"]);
    }

    #[test]
    #[should_panic(expected = "`sh -c exit 3` failed")]
    fn a_failing_tool_fails_with_its_command_line() {
        run("sh", &["-c", "exit 3"]);
    }

    #[test]
    fn stdin_reaches_the_tool() {
        assert_eq!(run_with_stdin("cat", &[] as &[&str], "a\nb\n"), "a\nb\n");
    }
}
