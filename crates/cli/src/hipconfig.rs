//! `softgpu hipconfig`: what ROCm's `hipconfig` answers, for the Makefiles
//! that ask it (`HIP_PLATFORM=$(shell hipconfig --platform)`), describing
//! the HIP softgpu builds with: Debian's headers under `/usr`, clang 19.
//! Run as `hipconfig` (a link to the `softgpu` executable under that name)
//! it is this command. As ROCm's, it prints without a newline unless
//! `--newline`/`-n` is given.

use std::process::ExitCode;

use softgpu_compiler::hip_program::{HIP_PATH, HIP_VERSION};

/// Where clang 19's executables are (`hipconfig --hipclangpath`).
const CLANG_BIN: &str = "/usr/lib/llvm-19/bin";

/// The preprocessor options of a host-only translation unit that includes
/// HIP's headers. ROCm's also adds `-I<rocm>/include`; with Debian's
/// headers that is `/usr/include`, already searched, and naming it with
/// `-I` would break libstdc++'s `#include_next`, so it is left out.
const CPP_CONFIG: &str = "-D__HIP_PLATFORM_HCC__= -D__HIP_PLATFORM_AMD__=";

/// One answer: its options and the text.
struct Answer {
    options: &'static [&'static str],
    text: &'static str,
}

const ANSWERS: &[Answer] = &[
    Answer {
        options: &["--path", "-p"],
        text: HIP_PATH,
    },
    Answer {
        options: &["--rocmpath", "-R"],
        text: HIP_PATH,
    },
    Answer {
        options: &["--compiler", "-c"],
        text: "clang",
    },
    Answer {
        options: &["--platform", "-P"],
        text: "amd",
    },
    Answer {
        options: &["--runtime", "-r"],
        text: "rocclr",
    },
    Answer {
        options: &["--hipclangpath", "-l"],
        text: CLANG_BIN,
    },
    Answer {
        options: &["--cpp_config", "--cxx_config", "-C"],
        text: CPP_CONFIG,
    },
    Answer {
        options: &["--version", "-v"],
        text: HIP_VERSION,
    },
];

fn answer(option: &str) -> Option<&'static str> {
    ANSWERS
        .iter()
        .find(|a| a.options.contains(&option))
        .map(|a| a.text)
}

/// The `--full` summary (also `--check` and no option at all).
fn full() -> String {
    let mut out = format!(
        "HIP version  : {HIP_VERSION}\n\n== hipconfig\nHIP_PATH     : {HIP_PATH}\n\
         ROCM_PATH    : {HIP_PATH}\nHIP_COMPILER : clang\nHIP_PLATFORM : amd\n\
         HIP_RUNTIME  : rocclr\nCPP_CONFIG   : {CPP_CONFIG}\n\n== hip-clang\n\
         HIP_CLANG_PATH : {CLANG_BIN}\n\n== softgpu\n"
    );
    out.push_str(
        "HIP programs built with `softgpu hipcc` run on softgpu's libamdhip64; \
         see `softgpu hipcc --print-devlibs`.\n",
    );
    out
}

/// Prints the answers to `args`; an unknown option is an error naming it.
pub fn run(args: &[String]) -> ExitCode {
    let newline = args.iter().any(|a| a == "--newline" || a == "-n");
    let asked: Vec<&String> = args
        .iter()
        .filter(|a| *a != "--newline" && *a != "-n")
        .collect();
    if asked.is_empty()
        || asked
            .iter()
            .any(|a| matches!(a.as_str(), "--full" | "-f" | "--info" | "--check"))
    {
        print!("{}", full());
        return ExitCode::SUCCESS;
    }
    let mut texts = Vec::new();
    for a in asked {
        match answer(a) {
            Some(t) => texts.push(t),
            None if a == "--help" || a == "-h" => {
                println!("usage: hipconfig [OPTION]...  (softgpu's: answers as ROCm's hipconfig)");
                for ans in ANSWERS {
                    println!("  {:<32} {}", ans.options.join(", "), ans.text);
                }
                println!("  {:<32} print a newline after the answer", "--newline, -n");
                println!("  {:<32} everything", "--full, -f, --info, --check");
                return ExitCode::SUCCESS;
            }
            None => {
                eprintln!("hipconfig: unknown option `{a}` (see hipconfig --help)");
                return ExitCode::from(2);
            }
        }
    }
    print!("{}", texts.join(" "));
    if newline {
        println!();
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_rocm_hipconfig() {
        assert_eq!(answer("--platform"), Some("amd"));
        assert_eq!(answer("-P"), Some("amd"));
        assert_eq!(answer("--rocmpath"), Some("/usr"));
        assert_eq!(answer("--version"), Some("5.2.21153"));
        assert!(answer("--cpp_config")
            .unwrap()
            .contains("-D__HIP_PLATFORM_AMD__="));
        assert_eq!(answer("--bogus"), None);
        // Each option answers one question.
        let mut all: Vec<&str> = ANSWERS
            .iter()
            .flat_map(|a| a.options.iter().copied())
            .collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
