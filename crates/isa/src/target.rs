//! The processors softgpu emulates: one table, everything else derived.
//!
//! [`for_each_target!`](crate::for_each_target) is the table. The list of
//! [`TARGETS`], [`Family::of_target`], the runtime's built-in device
//! profiles (one JSON file per row, `crates/runtime/profiles/<name>.json`,
//! included by the same macro) and every "supported: …" message come from
//! it, so a new part is one row here plus its profile file (and, for a new
//! family, the family's op table and decoder).

use crate::Family;

/// Calls the macro `$m` with every emulated processor as
/// `name Family;`, in the order the built-in profiles are listed.
///
/// The first row is the default device (softgpu's built-in one, used when
/// no target is named). The macro form lets a crate expand the list into
/// items that need the name as a literal, as the runtime does to
/// `include_str!` each profile.
#[macro_export]
macro_rules! for_each_target {
    ($m:ident) => {
        $m! {
            gfx1151 Gfx11;
            gfx1100 Gfx11;
            gfx1101 Gfx11;
            gfx1102 Gfx11;
            gfx1103 Gfx11;
            gfx1150 Gfx11;
            gfx1152 Gfx11;
            gfx1200 Gfx12;
            gfx1201 Gfx12;
            gfx1030 Gfx10;
            gfx1031 Gfx10;
            gfx1032 Gfx10;
            gfx1034 Gfx10;
            gfx1035 Gfx10;
            gfx1036 Gfx10;
            gfx90a Gfx90a;
            gfx942 Gfx94;
        }
    };
}

/// One emulated processor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// LLVM's processor name, e.g. `gfx1151`.
    pub name: &'static str,
    /// Its instruction-set family.
    pub family: Family,
}

macro_rules! target_list {
    ($($name:ident $family:ident;)*) => {
        /// Every emulated processor, the default first.
        pub const TARGETS: &[Target] = &[
            $(Target { name: stringify!($name), family: Family::$family },)*
        ];
    };
}
for_each_target!(target_list);

/// Processors softgpu knows the family of but has no device profile for:
/// CDNA3's gfx940 and gfx941, MI300's earlier steppings, which LLVM
/// encodes as gfx942. Their code disassembles, and the executor runs it as
/// its family's (`softgpu run`); the runtime has no agent of them (a
/// gfx942 agent, as ROCm's, does not load their code objects).
pub const DECODED: &[(&str, Family)] = &[("gfx940", Family::Gfx94), ("gfx941", Family::Gfx94)];

/// The processor emulated when none is named: the table's first row
/// (gfx1151, Strix Halo's RDNA3.5 part).
pub const DEFAULT_TARGET: &str = TARGETS[0].name;

/// The table's row for `name`, if softgpu emulates it.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// Whether processor `name` runs wave64 only (CDNA's): its kernels are
/// wave64 whatever the compiler is asked, where RDNA's default to wave32.
/// False for a name softgpu does not know.
pub fn wave64_only(name: &str) -> bool {
    Family::of_target(name).is_some_and(Family::is_gcn)
}

/// A processor's version as ROCm numbers it (`oclc_isa_version_*`, HIP's
/// `gcnArch`): the decimal major, then one hex digit each of minor and
/// stepping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub stepping: u32,
}

/// The version of processor `name` (`gfx1151`: 11, 5, 1; `gfx90a`: 9, 0,
/// 10), whether or not softgpu emulates it; `None` for a name that is not
/// `gfx` followed by that form.
pub fn version(name: &str) -> Option<Version> {
    let digits = name.strip_prefix("gfx")?;
    if digits.len() < 3 || !digits.is_ascii() {
        return None;
    }
    let (major, rest) = digits.split_at(digits.len() - 2);
    if !major.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hex = |i: usize| (rest.as_bytes()[i] as char).to_digit(16);
    Some(Version {
        major: major.parse().ok()?,
        minor: hex(0)?,
        stepping: hex(1)?,
    })
}

/// The emulated processors' names in numeric order, comma-separated, for
/// "supported: …" messages.
pub fn supported() -> String {
    let mut names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
    names.sort_unstable();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_well_formed() {
        for (i, t) in TARGETS.iter().enumerate() {
            let digits = if t.family.is_gcn() { 6 } else { 7 };
            assert!(
                t.name.starts_with(t.family.name()) && t.name.len() == digits,
                "{}",
                t.name
            );
            assert!(TARGETS[..i].iter().all(|u| u.name != t.name), "{}", t.name);
        }
        assert_eq!(DEFAULT_TARGET, "gfx1151");
        assert_eq!(target("gfx1201").map(|t| t.family), Some(Family::Gfx12));
        assert_eq!(target("gfx1030").map(|t| t.family), Some(Family::Gfx10));
        assert_eq!(target("gfx1010"), None);
        assert_eq!(Family::of_target("gfx941"), Some(Family::Gfx94));
        assert!(DECODED.iter().all(|(n, _)| target(n).is_none()));
        assert_eq!(target("gfx90a").map(|t| t.family), Some(Family::Gfx90a));
        assert!(supported().starts_with("gfx1030, gfx1031, "));
        assert!(wave64_only("gfx90a") && wave64_only("gfx940") && !wave64_only("gfx1030"));
        let v = |major, minor, stepping| Version {
            major,
            minor,
            stepping,
        };
        assert_eq!(version("gfx1151"), Some(v(11, 5, 1)));
        assert_eq!(version("gfx90a"), Some(v(9, 0, 10)));
        assert_eq!(version("gfx942"), Some(v(9, 4, 2)));
        assert_eq!(version("gfx1x00"), None);
        assert_eq!(version("mi250x"), None);
    }
}
