//! Compiler diagnostics parsed from clang's and lld's standard error.

use std::fmt;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    /// An error (including clang's "fatal error"): the compile failed.
    Error,
    /// A warning: the compile can still succeed.
    Warning,
    /// A note (or remark) adding detail to the diagnostic before it.
    Note,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        })
    }
}

/// One diagnostic line such as `k.cl:3:14: error: use of undeclared identifier 'x'`.
///
/// Source passed as a string is compiled from standard input, so its
/// diagnostics name the file `<stdin>`; [`Compiler::compile_file`] keeps the
/// file's path. Diagnostics without a location (a driver or linker message
/// such as `ld.lld-19: error: undefined symbol: f`) have no file, line or column.
///
/// [`Compiler::compile_file`]: crate::Compiler::compile_file
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file the diagnostic points into, if it has a location.
    pub file: Option<String>,
    /// 1-based line, if known.
    pub line: Option<u32>,
    /// 1-based column, if known.
    pub column: Option<u32>,
    /// Error, warning or note.
    pub severity: Severity,
    /// The message text after the severity (with clang's `[-Wflag]` suffix, if any).
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
            if let Some(line) = self.line {
                write!(f, "{line}:")?;
                if let Some(col) = self.column {
                    write!(f, "{col}:")?;
                }
            }
            f.write_str(" ")?;
        }
        write!(f, "{}: {}", self.severity, self.message)
    }
}

/// The severity words clang and lld print, longest first so that
/// "fatal error" wins over "error".
const MARKERS: [(&str, Severity); 5] = [
    ("fatal error", Severity::Error),
    ("error", Severity::Error),
    ("warning", Severity::Warning),
    ("note", Severity::Note),
    ("remark", Severity::Note),
];

/// Parses every diagnostic line of a tool's standard error.
///
/// Lines that are not diagnostics (the echoed source line and caret, which
/// clang indents, "In file included from", "1 error generated.") are skipped.
pub(crate) fn parse(stderr: &str) -> Vec<Diagnostic> {
    stderr.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Diagnostic> {
    if line.is_empty() || line.starts_with(char::is_whitespace) {
        return None;
    }
    // A line that starts with the severity word: "error: ...".
    for (word, severity) in MARKERS {
        if let Some(message) = line
            .strip_prefix(word)
            .and_then(|rest| rest.strip_prefix(": "))
        {
            return Some(Diagnostic {
                file: None,
                line: None,
                column: None,
                severity,
                message: message.to_string(),
            });
        }
    }
    // "PREFIX: severity: message", taking the earliest marker in the line.
    let (start, word, severity) = MARKERS
        .iter()
        .filter_map(|&(word, sev)| {
            let pos = line.find(&format!(": {word}: "))?;
            Some((pos, word, sev))
        })
        .min_by_key(|&(pos, word, _)| (pos, std::cmp::Reverse(word.len())))?;
    let prefix = &line[..start];
    let message = line[start + word.len() + 4..].to_string();
    let (file, line_no, column) = split_location(prefix);
    Some(Diagnostic {
        file,
        line: line_no,
        column,
        severity,
        message,
    })
}

/// `file:line:col`, `file:line`, or a program name (no location).
fn split_location(prefix: &str) -> (Option<String>, Option<u32>, Option<u32>) {
    let mut parts = prefix.rsplitn(3, ':');
    let last = parts.next();
    let middle = parts.next();
    let first = parts.next();
    let num = |s: Option<&str>| s.and_then(|s| s.parse::<u32>().ok());
    match (first, num(middle), num(last)) {
        (Some(file), Some(line), Some(col)) => (Some(file.to_string()), Some(line), Some(col)),
        _ => match prefix.rsplit_once(':') {
            Some((file, line)) if line.parse::<u32>().is_ok() => {
                (Some(file.to_string()), line.parse().ok(), None)
            }
            // A tool name such as "clang-19" or "ld.lld-19": no location.
            _ => (None, None, None),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clang_and_lld_lines() {
        let text = "\
In file included from <stdin>:1:
inc/h.h:4:9: warning: unused variable 'y' [-Wunused-variable]
    4 |     int y;
      |         ^
<stdin>:12:3: error: expected ';' after expression
/tmp/a b/k.cl:7: fatal error: 'x.h' file not found
inc/h.h:1:5: note: candidate function not viable
clang-19: error: unknown argument: '-fnope'
ld.lld-19: error: undefined symbol: helper
>>> referenced by k.o
error: no such file
1 error generated.
";
        let d = parse(text);
        assert_eq!(d.len(), 7, "{d:#?}");
        assert_eq!(d[0].file.as_deref(), Some("inc/h.h"));
        assert_eq!((d[0].line, d[0].column), (Some(4), Some(9)));
        assert_eq!(d[0].severity, Severity::Warning);
        assert_eq!(d[0].message, "unused variable 'y' [-Wunused-variable]");
        assert_eq!(d[1].file.as_deref(), Some("<stdin>"));
        assert_eq!((d[1].line, d[1].column), (Some(12), Some(3)));
        assert_eq!(d[1].severity, Severity::Error);
        assert_eq!(d[2].file.as_deref(), Some("/tmp/a b/k.cl"));
        assert_eq!((d[2].line, d[2].column), (Some(7), None));
        assert_eq!(d[2].severity, Severity::Error);
        assert_eq!(d[2].message, "'x.h' file not found");
        assert_eq!(d[3].severity, Severity::Note);
        assert_eq!(d[4].file, None);
        assert_eq!(d[4].message, "unknown argument: '-fnope'");
        assert_eq!(d[5].message, "undefined symbol: helper");
        assert_eq!(d[6].severity, Severity::Error);
        assert_eq!(
            d[1].to_string(),
            "<stdin>:12:3: error: expected ';' after expression"
        );
        assert_eq!(d[5].to_string(), "error: undefined symbol: helper");
    }
}
