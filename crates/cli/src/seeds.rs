//! `softgpu run --schedule-seeds N`: looks for a schedule-dependent result.
//! The dispatch runs once in order and then under seeded schedules 0..N,
//! all on one host thread, every run from the same initial buffers; the
//! first seed whose outputs differ from the in-order run's, or whose run
//! faults (e.g. under `--check race`), is reported with the command line
//! that replays it. The `--out` files get the in-order run's results.

use softgpu_exec::{Arg, Buffer, Schedule};

use crate::args::{prepare, LaunchSpec, Prepared};
use crate::CliError;

/// Parses the N of `--schedule-seeds N`.
pub fn count(n: &str) -> Result<u64, String> {
    n.parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("--schedule-seeds {n}: expected a number of seeds (1 or more)"))
}

pub fn run(spec: &LaunchSpec, seeds: u64) -> Result<(), CliError> {
    let mut spec = *spec;
    spec.device.threads = Some(1);
    spec.device.schedule = Some(Schedule::InOrder);
    let prepared = prepare(&spec)?;
    let buffers: Vec<Buffer> = prepared
        .args
        .iter()
        .filter_map(|a| match a {
            Arg::Buffer(b) => Some(*b),
            _ => None,
        })
        .collect();
    let initial = read_all(&prepared, &buffers)?;
    let expected = dispatch(&prepared, spec.kernel)
        .map_err(|e| format!("the in-order run failed, so there is nothing to compare: {e}"))?;
    prepared.write_outputs()?;
    for seed in 0..seeds {
        for (b, data) in buffers.iter().zip(&initial) {
            prepared.device.write(b, data).map_err(|e| e.to_string())?;
        }
        prepared.device.set_schedule(Schedule::Seeded(seed));
        let finding = match dispatch(&prepared, spec.kernel) {
            Err(fault) => Some(format!("faults:\n{fault}")),
            Ok(got) => first_difference(&prepared, &expected, &got),
        };
        if let Some(what) = finding {
            return Err(CliError::Fault(format!(
                "schedule seed {seed} {what}\nreproduce with:\n  SOFTGPU_THREADS=1 SOFTGPU_SCHEDULE={seed} {}",
                command_line()
            )));
        }
    }
    println!(
        "schedule seeds 0..{seeds}: every output equals the in-order run's, and no run faulted"
    );
    Ok(())
}

/// Runs the dispatch and returns the contents of its output buffers.
fn dispatch(prepared: &Prepared, kernel: &str) -> Result<Vec<Vec<u8>>, String> {
    (prepared.dispatch(kernel, false)).map_err(|e| e.to_string())?;
    let outputs: Vec<Buffer> = prepared.outputs.iter().map(|(_, b)| *b).collect();
    read_all(prepared, &outputs)
}

fn read_all(prepared: &Prepared, buffers: &[Buffer]) -> Result<Vec<Vec<u8>>, String> {
    buffers
        .iter()
        .map(|b| prepared.device.read(b).map_err(|e| e.to_string()))
        .collect()
}

/// "changes OUTPUT at byte K (…)", for the first output that differs.
fn first_difference(prepared: &Prepared, want: &[Vec<u8>], got: &[Vec<u8>]) -> Option<String> {
    let ((path, _), (w, g)) = prepared
        .outputs
        .iter()
        .zip(want.iter().zip(got))
        .find(|(_, (w, g))| w != g)?;
    let at = w.iter().zip(g.iter()).position(|(a, b)| a != b)?;
    let word = |bytes: &[u8]| {
        let start = at / 4 * 4;
        bytes[start..(start + 4).min(bytes.len())]
            .iter()
            .rev()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    Some(format!(
        "changes the output {}: at byte {at} the in-order run wrote 0x{} (the dword holding it), this one 0x{}",
        path.display(),
        word(w),
        word(g)
    ))
}

/// This command line without `--schedule-seeds N`, quoted for a shell.
fn command_line() -> String {
    let mut words = vec!["softgpu".to_string()];
    let mut args = std::env::args_os()
        .skip(1)
        .map(|w| w.to_string_lossy().into_owned());
    while let Some(word) = args.next() {
        if word == "--schedule-seeds" {
            args.next();
        } else if !word.starts_with("--schedule-seeds=") {
            words.push(quote(&word));
        }
    }
    words.join(" ")
}

/// `word` quoted for a shell when it needs it (for printed commands).
pub(crate) fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_a_shell_would_split_or_expand() {
        assert_eq!(quote("--out"), "--out");
        assert_eq!(quote("/tmp/c.bin:256"), "/tmp/c.bin:256");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert!(count("0").is_err() && count("x").is_err());
        assert_eq!(count("8"), Ok(8));
    }
}
