//! Debugging options of a dispatch: the opt-in sanitizers, the watchdog and
//! the wave schedule. Each is chosen per device (the machine's
//! `Settings`, which `softgpu-env` fills from the environment) and
//! changeable at run time (`Device::set_checks`).

use std::time::Duration;

/// The opt-in sanitizers (`SOFTGPU_CHECK=init,race,sync`). With none on, a
/// dispatch runs the plain executor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checks {
    /// initcheck: reads of device memory, LDS or scratch bytes never
    /// written.
    pub init: bool,
    /// racecheck: conflicting accesses of different waves not ordered by
    /// a barrier or an atomic.
    pub race: bool,
    /// synccheck: barriers some live waves of the workgroup never reach.
    pub sync: bool,
    /// Run a launch to its end past every error that can be contained,
    /// collecting each (as compute-sanitizer does within a launch): a
    /// refused load reads zeros, a refused store or atomic changes
    /// nothing, and an initcheck or racecheck finding lets the access
    /// happen. Off, the first error stops the dispatch.
    pub contain: bool,
}

impl Checks {
    /// Parses a comma-separated list: `init`, `race`, `sync`, `all` (the
    /// three), `contain`, or `none` (an empty list is none too).
    pub fn parse(spec: &str) -> Result<Checks, String> {
        let mut checks = Checks::default();
        for word in spec.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "init" | "initcheck" => checks.init = true,
                "race" | "racecheck" => checks.race = true,
                "sync" | "synccheck" => checks.sync = true,
                "contain" => checks.contain = true,
                "all" => {
                    checks = Checks {
                        init: true,
                        race: true,
                        sync: true,
                        ..checks
                    }
                }
                "none" => checks = Checks::default(),
                other => {
                    return Err(format!(
                        "unknown check {other:?} (known: init, race, sync, all, contain, none)"
                    ))
                }
            }
        }
        Ok(checks)
    }

    /// Whether any sanitizer is on.
    pub fn any(self) -> bool {
        self.init || self.race || self.sync
    }

    /// The checks as bits, for keeping them in an atomic.
    pub fn bits(self) -> u8 {
        self.init as u8
            | (self.race as u8) << 1
            | (self.sync as u8) << 2
            | (self.contain as u8) << 3
    }

    /// The checks [`Checks::bits`] gave.
    pub fn from_bits(bits: u8) -> Checks {
        Checks {
            init: bits & 1 != 0,
            race: bits & 2 != 0,
            sync: bits & 4 != 0,
            contain: bits & 8 != 0,
        }
    }
}

impl std::fmt::Display for Checks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = [
            (self.init, "init"),
            (self.race, "race"),
            (self.sync, "sync"),
            (self.contain, "contain"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(","))
        }
    }
}

/// The default wall-clock limit of one dispatch (`SOFTGPU_TIMEOUT`, in
/// seconds): generous, but a hung kernel still ends with a report.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How the waves and workgroups of a dispatch take turns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// Workgroups in order on every worker thread; waves round-robin.
    #[default]
    InOrder,
    /// `SOFTGPU_SCHEDULE=SEED`: workgroups and waves interleave in an
    /// order drawn from this seed, the same order every run (with one
    /// worker thread), so a race can be reproduced.
    Seeded(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_refuses_unknown_names() {
        let c = Checks::parse("init, sync").unwrap();
        assert!(c.init && c.sync && !c.race);
        assert_eq!(Checks::parse("").unwrap(), Checks::default());
        assert_eq!(Checks::parse("all").unwrap().bits(), 7);
        let kept = Checks::parse("contain,race").unwrap();
        assert_eq!(Checks::from_bits(kept.bits()), kept);
        assert_eq!(kept.to_string(), "race,contain");
        assert_eq!(
            Checks::from_bits(Checks::parse("race").unwrap().bits()).to_string(),
            "race"
        );
        assert!(Checks::parse("bounds").unwrap_err().contains("bounds"));
    }
}
