#!/usr/bin/env python3
"""Build and run every Makefile-based HIP program under a folder on softgpu,
and classify each one. For measuring softgpu against public suites by hand
(HeCBench, rocm-examples, ...); not part of CI, and nothing of a suite it
runs belongs in this repository.

    scripts/hip-suite.py [--timeout S] [--build-timeout S] [--jobs N]
                       [--json FILE] [--only NAME,...] FOLDER

Every folder below FOLDER holding a Makefile, and no folder below it with
one, is a program. Its build runs
`make` with softgpu's tools standing in for ROCm's: a fake ROCm root whose
`bin/hipcc` and `bin/hipconfig` are links to the `softgpu` executable (so
both the `HIPCC=` override and `$(ROCM_PATH)/bin/hipcc` reach it), whose
`include` is Debian's headers and whose `lib` holds softgpu's
libamdhip64. The program then runs with `make run` when the Makefile has a
`run` target, else the executable the build produced, with a timeout.

Classes:
  pass          exit 0 and the output says it passed (PASS, passed, correct, ...)
  unchecked     exit 0 and no verdict in the output
  wrong         the output reports a failed check (FAIL, mismatch, incorrect, ...)
  unsupported   a HIP function or option softgpu does not support (named)
  fault         a kernel fault report
  timeout       the run took longer than --timeout
  crashed       killed by a signal
  error         another non-zero exit (first error line given)
  build         the build failed (first error line given)
  no-program    the build produced nothing to run
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PASS = re.compile(r"\b(PASS(ED)?|passed|correct|Success|SUCCESS|succeeded|verified|Test OK|OK!)\b")
WRONG = re.compile(r"\b(FAIL(ED|URE)?|[Ff]ailed|[Mm]ismatch|[Ii]ncorrect|[Ww]rong|Error at|not match)\b")
UNSUPPORTED = re.compile(r"(hip\w+|hiprtc\w+|hsa_\w+)[^\n]*(not supported|is not implemented|unsupported)|"
                         r"(not supported|unsupported)[^\n]*(hip\w+|hiprtc\w+)")
FAULT = re.compile(r"faulted|hipErrorIllegalAddress|illegal memory access|kernel fault")
ERROR_LINE = re.compile(r"(error|Error|ERROR)[: ]")


def fake_rocm(root: Path, release: Path) -> Path:
    """A ROCm install whose tools are softgpu's."""
    softgpu = release / "softgpu"
    lib = release / "libamdhip64.so"
    for need in (softgpu, lib):
        if not need.exists():
            sys.exit(f"{need} is missing: cargo build --release -p softgpu-hip -p softgpu-cli")
    (root / "bin").mkdir(parents=True, exist_ok=True)
    for tool in ("hipcc", "hipconfig"):
        link = root / "bin" / tool
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(softgpu)
    for name, target in (("lib", release), ("llvm", Path("/usr/lib/llvm-19"))):
        link = root / name
        if not link.exists():
            link.symlink_to(target)
    # ROCm's include folder holds only ROCm's headers: naming /usr/include
    # itself with -I would break libstdc++'s #include_next <math.h>.
    include = root / "include"
    include.mkdir(exist_ok=True)
    for d in Path("/usr/include").iterdir():
        if d.name.startswith(("hip", "hsa", "roc")) and not (include / d.name).exists():
            (include / d.name).symlink_to(d)
    return root


def first_error(text: str) -> str:
    for line in text.splitlines():
        if ERROR_LINE.search(line):
            return line.strip()[:200]
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip()[:200] if lines else ""


def executables(folder: Path):
    """Executable files the build made (newer than the Makefile)."""
    out = []
    for p in folder.rglob("*"):
        if p.is_file() and os.access(p, os.X_OK) and p.suffix not in (".sh", ".py", ".pl", ".o", ".so"):
            try:
                with open(p, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        out.append(p)
            except OSError:
                pass
    return sorted(out, key=lambda p: p.stat().st_mtime, reverse=True)


def run(cmd, cwd, env, timeout):
    """Runs `cmd` in a session of its own; on timeout the whole session is
    killed (`make run` starts the program as a grandchild, which killing
    make alone would leave running)."""
    start = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        code = None
    return code, out.decode(errors="replace"), err.decode(errors="replace"), time.time() - start


def classify(code, out, err):
    both = out + "\n" + err
    if code is None:
        return "timeout", ""
    if code < 0:
        return "crashed", f"signal {signal.Signals(-code).name}"
    m = UNSUPPORTED.search(both)
    if m and code != 0:
        return "unsupported", m.group(0)[:200]
    if FAULT.search(err):
        return "fault", first_error(err)
    if WRONG.search(both):
        line = next((l for l in both.splitlines() if WRONG.search(l)), "")
        return "wrong", line.strip()[:200]
    if code != 0:
        return "error", f"exit {code}: {first_error(both)}"
    if PASS.search(both):
        return "pass", ""
    return "unchecked", ""


def one(folder: Path, rocm: Path, args) -> dict:
    env = dict(os.environ)
    hipcc = str(rocm / "bin" / "hipcc")
    env.update(HIP_PATH=str(rocm), ROCM_PATH=str(rocm), ROCM_INSTALL_DIR=str(rocm), HIPCC=hipcc,
               HIPCXX=hipcc, PATH=f"{rocm / 'bin'}:{env.get('PATH', '')}",
               # Programs a Makefile links with plain g++ -lamdhip64 find softgpu's.
               LD_LIBRARY_PATH=f"{rocm / 'lib'}:{env.get('LD_LIBRARY_PATH', '')}")
    make = ["make", f"HIPCC={hipcc}", f"HIPCXX={hipcc}", f"HIP_PATH={rocm}", f"ROCM_PATH={rocm}",
            f"ROCM_INSTALL_DIR={rocm}"]
    code, out, err, secs = run(make, folder, env, args.build_timeout)
    result = {"program": str(folder.relative_to(args.folder)), "build_seconds": round(secs, 1)}
    if code != 0:
        result.update({"class": "build", "detail": "timeout" if code is None else first_error(err + out)})
        return result
    has_run = subprocess.run(["make", "-n", "run"], cwd=folder, capture_output=True).returncode == 0
    if has_run:
        cmd = make + ["run"]
    else:
        exes = executables(folder)
        if not exes:
            result.update({"class": "no-program", "detail": ""})
            return result
        cmd = [str(exes[0])]
    code, out, err, secs = run(cmd, folder, env, args.timeout)
    cls, detail = classify(code, out, err)
    result.update({"class": cls, "detail": detail, "run_seconds": round(secs, 1),
                   "stdout_tail": out[-600:], "stderr_tail": err[-600:]})
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--build-timeout", type=float, default=600)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--only", help="comma-separated program folder names")
    ap.add_argument("--release", type=Path, default=REPO / "target" / "release")
    args = ap.parse_args()
    args.folder = args.folder.resolve()
    rocm = fake_rocm(Path(os.environ.get("TMPDIR", "/tmp")) / f"softgpu-rocm-{os.getuid()}", args.release.resolve())
    # The leaves: a folder whose Makefile only recurses into others is not a program.
    made = {m.parent for m in args.folder.rglob("Makefile")}
    folders = sorted(f for f in made if not any(o != f and f in o.parents for o in made))
    if args.only:
        keep = set(args.only.split(","))
        folders = [f for f in folders if f.name in keep]
    results = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(lambda f: one(f, rocm, args), folders):
            results.append(r)
            print(f"{r['class']:<12} {r['program']}  {r.get('detail', '')}", flush=True)
    counts = {}
    for r in results:
        counts[r["class"]] = counts.get(r["class"], 0) + 1
    print("summary: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" (of {len(results)})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
