//! Where a code offset comes from in the program's source: the DWARF line
//! tables and inlining records a code object carries when it was built
//! with `-g` or `-gline-tables-only`, read with `gimli`/`addr2line`; and
//! kernel names demangled for people.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use gimli::{EndianArcSlice, LittleEndian, SectionId};

type Reader = EndianArcSlice<LittleEndian>;

/// The DWARF sections of a code object; their index is built on the first
/// lookup (a fault report), not at load.
pub struct DebugInfo {
    sections: Vec<(SectionId, Arc<[u8]>)>,
    context: OnceLock<Option<Mutex<addr2line::Context<Reader>>>>,
}

/// One frame of a source location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFrame {
    /// The function the code belongs to (demangled), when DWARF names it.
    pub function: Option<String>,
    /// The source file, as the compiler named it (with its directory).
    pub file: Option<String>,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
}

impl fmt::Display for SourceFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.as_deref().unwrap_or("??"))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if let Some(function) = &self.function {
            write!(f, " in {function}")?;
        }
        Ok(())
    }
}

/// A source location as fault reports print it: one line per frame,
/// "at FILE:LINE:COLUMN in F", then "inlined into …" for each function the
/// code was inlined into; nothing for no frames.
pub struct SourceLines<'a>(pub &'a [SourceFrame]);

impl fmt::Display for SourceLines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, frame) in self.0.iter().enumerate() {
            let how = if i == 0 { "at" } else { "  inlined into" };
            write!(f, "\n  {how} {frame}")?;
        }
        Ok(())
    }
}

impl DebugInfo {
    /// The DWARF sections `section` finds by name (`.debug_info`, …);
    /// `None` when there is no line table to read.
    pub(crate) fn from_sections<'d>(
        section: impl Fn(&str) -> Option<&'d [u8]>,
    ) -> Option<DebugInfo> {
        section(".debug_line")?;
        let sections = ALL
            .iter()
            .filter_map(|&id| Some((id, Arc::from(section(id.name())?))))
            .collect();
        Some(DebugInfo {
            sections,
            context: OnceLock::new(),
        })
    }

    /// The source location of image offset `offset`: the innermost frame
    /// first, then each function it was inlined into. Empty when the
    /// tables say nothing about it, or cannot be read.
    pub fn frames(&self, offset: u64) -> Vec<SourceFrame> {
        let Some(context) = self.context.get_or_init(|| self.index().map(Mutex::new)) else {
            return Vec::new();
        };
        let context = context.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(mut frames) = context.find_frames(offset).skip_all_loads() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Ok(Some(frame)) = frames.next() {
            let function = frame
                .function
                .as_ref()
                .and_then(|f| f.raw_name().ok())
                .map(|name| demangle(&name).into_owned());
            let (file, line, column) = frame.location.map_or((None, None, None), |l| {
                (l.file.map(str::to_string), l.line, l.column)
            });
            out.push(SourceFrame {
                function,
                file,
                line,
                column,
            });
        }
        out
    }

    fn index(&self) -> Option<addr2line::Context<Reader>> {
        let dwarf = gimli::Dwarf::load(|id| -> Result<Reader, gimli::Error> {
            let data = (self.sections.iter())
                .find(|(s, _)| *s == id)
                .map_or_else(|| Arc::from(&[][..]), |(_, d)| d.clone());
            Ok(EndianArcSlice::new(data, LittleEndian))
        })
        .ok()?;
        addr2line::Context::from_dwarf(dwarf).ok()
    }
}

impl fmt::Debug for DebugInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.sections.iter().map(|(id, _)| id.name()).collect();
        f.debug_struct("DebugInfo")
            .field("sections", &names)
            .finish()
    }
}

/// The DWARF sections a line lookup may read.
const ALL: [SectionId; 12] = [
    SectionId::DebugAbbrev,
    SectionId::DebugAddr,
    SectionId::DebugAranges,
    SectionId::DebugInfo,
    SectionId::DebugLine,
    SectionId::DebugLineStr,
    SectionId::DebugLoc,
    SectionId::DebugLocLists,
    SectionId::DebugRanges,
    SectionId::DebugRngLists,
    SectionId::DebugStr,
    SectionId::DebugStrOffsets,
];

/// A C++ (Itanium ABI) symbol name as a person reads it
/// (`_Z5scalePKfPffi` → `scale(float const*, float*, float, int)`); any
/// other name as it is.
pub fn demangle(name: &str) -> Cow<'_, str> {
    if !name.starts_with("_Z") {
        return Cow::Borrowed(name);
    }
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle().ok())
        .map_or(Cow::Borrowed(name), Cow::Owned)
}

/// A symbol as reports list it: `_Z5scalePKfPfi (scale(float const*,
/// float*, int))`, or the name alone when it is not mangled.
pub fn with_demangled(name: &str) -> String {
    match demangle(name) {
        d if d == name => name.to_string(),
        d => format!("{name} ({d})"),
    }
}

/// The names among `names` nearest `name`, for a lookup that missed (a
/// library's code object has thousands of kernels of a few hundred
/// characters each): those sharing the most with it at the start and end,
/// at most eight, each [`with_demangled`], then how many there are.
pub fn nearest_names<'a>(names: impl Iterator<Item = &'a str>, name: &str) -> String {
    const LISTED: usize = 8;
    let shared = |other: &str| {
        let (a, b) = (name.as_bytes(), other.as_bytes());
        let front = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let back = (a.iter().rev().zip(b.iter().rev()))
            .take_while(|(x, y)| x == y)
            .count();
        front + back.min(a.len().min(b.len()) - front)
    };
    let mut ranked: Vec<(usize, &str)> = names.map(|n| (shared(n), n)).collect();
    let total = ranked.len();
    // Stable: equally near names keep their order.
    ranked.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
    let mut listed: Vec<String> = (ranked.iter().take(LISTED))
        .map(|(_, n)| with_demangled(n))
        .collect();
    if total > LISTED {
        listed.push(format!("… (the {LISTED} nearest of {total})"));
    }
    listed.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_miss_lists_the_nearest_names_only() {
        let names: Vec<String> = (0..100).map(|i| format!("Cijk_MT{i}x64_ISA1100")).collect();
        let listed = nearest_names(
            names.iter().map(String::as_str),
            "Cijk_MT42x64_ISA1100_typo",
        );
        assert!(listed.starts_with("Cijk_MT42x64_ISA1100,"), "{listed}");
        assert!(listed.ends_with("… (the 8 nearest of 100)"), "{listed}");
        assert_eq!(listed.matches("Cijk").count(), 8);
        assert_eq!(nearest_names(["a", "b"].into_iter(), "c"), "a, b");
    }

    #[test]
    fn demangles_itanium_names_and_leaves_others() {
        assert_eq!(
            demangle("_Z5scalePKfPffi"),
            "scale(float const*, float*, float, int)"
        );
        assert_eq!(demangle("vadd"), "vadd");
        assert_eq!(demangle("_Zgarbage"), "_Zgarbage");
    }
}
