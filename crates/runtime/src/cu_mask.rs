//! CU masks: which compute units a queue's dispatches may use.
//!
//! Two sources, combined as ROCr combines them (`AqlQueue::SetCUMasking`
//! in `amd_aql_queue.cpp`, `Flag::parse_masks` in `flag.cpp`): the
//! process-wide `HSA_CU_MASK` environment variable (per GPU), and the mask
//! a client sets on a queue (`hsa_amd_queue_cu_set_mask`). The executor
//! then places each workgroup on one unit of the result
//! (`softgpu_exec::placement`), which kernels can observe through
//! `s_getreg(HW_REG_HW_ID1)`.

use std::collections::BTreeMap;

use crate::error::{invalid, Result};

/// A queue's mask as set: one bit per compute unit, `ceil(units / 32)`
/// words, bits past the last unit clear.
pub type Mask = Vec<u32>;

/// How a requested mask was applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// As asked (within the agent's units).
    Exactly,
    /// Units the process-wide mask disables were asked for and stay off
    /// (`HSA_STATUS_CU_MASK_REDUCED`).
    Reduced,
}

/// The mask a queue gets when `requested` (None: ROCr's reset to every
/// unit) meets the process-wide mask `global` (empty: none) on an agent
/// with `units` compute units. Refused, as on gfx10 and later, when the
/// result turns on only one CU of a WGP's pair.
pub fn apply(requested: Option<&[u32]>, global: &[u32], units: u32) -> Result<(Mask, Applied)> {
    let (mask, applied) = apply_unchecked(requested, global, units);
    if let Some(pair) = (0..units / 2).find(|&p| {
        let bits = mask[(2 * p / 32) as usize] >> (2 * p % 32) & 3;
        bits == 1 || bits == 2
    }) {
        return Err(invalid(format!(
            "CU mask turns on only one of compute units {} and {}: on gfx11 they form one WGP and are enabled together",
            2 * pair,
            2 * pair + 1
        )));
    }
    Ok((mask, applied))
}

/// [`apply`] without the WGP pair rule.
pub fn apply_unchecked(requested: Option<&[u32]>, global: &[u32], units: u32) -> (Mask, Applied) {
    let words = units.div_ceil(32) as usize;
    let mut mask: Mask = match requested {
        None => vec![u32::MAX; words],
        Some(r) => r.to_vec(),
    };
    let mut reduced = false;
    if !global.is_empty() {
        let limit = global.len().min(mask.len()).min(words);
        reduced |= mask[limit..].iter().any(|&w| w != 0);
        mask.truncate(limit);
        for (m, g) in mask.iter_mut().zip(global) {
            reduced |= *m & !g != 0;
            *m &= g;
        }
    }
    // Words the request left out are units off; bits past the last unit
    // are dropped.
    mask.resize(words, 0);
    if !units.is_multiple_of(32) {
        mask[words - 1] &= (1 << (units % 32)) - 1;
    }
    let applied = if reduced {
        Applied::Reduced
    } else {
        Applied::Exactly
    };
    (mask, applied)
}

/// The process-wide masks `HSA_CU_MASK` sets, by GPU index (0 is the
/// first GPU agent), for `gpus` GPUs of `units` compute units each.
///
/// The syntax is ROCr's: `GPUs:CUs[; GPUs:CUs]*`, each list of decimal
/// ids and ranges (`0,2-4`), the CUs alternatively as a hex bitmask
/// (`0x337F`), whitespace ignored. Ids past the last GPU or unit are
/// dropped. Like ROCr, parsing stops at the first malformed set (a
/// repeated GPU or CU, an inverted range, an empty mask...); the sets
/// before it apply, and the error says where it stopped.
pub fn parse_global(text: &str, gpus: u32, units: u32) -> (BTreeMap<u32, Mask>, Option<String>) {
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut masks = BTreeMap::new();
    if text.is_empty() {
        return (masks, None);
    }
    for set in text.split(';') {
        let parsed = parse_set(set, gpus, units).and_then(|(ids, mask)| {
            match ids.iter().find(|id| masks.contains_key(*id)) {
                Some(id) => Err(format!("GPU {id} is given a mask twice")),
                None => Ok((ids, mask)),
            }
        });
        match parsed {
            Ok((ids, mask)) => {
                for id in ids {
                    masks.insert(id, mask.clone());
                }
            }
            Err(why) => {
                let error = format!("HSA_CU_MASK: ignored from {set:?} on: {why}");
                return (masks, Some(error));
            }
        }
    }
    (masks, None)
}

/// One `GPUs:CUs` set: the GPU indices and their mask.
fn parse_set(set: &str, gpus: u32, units: u32) -> std::result::Result<(Vec<u32>, Mask), String> {
    let Some((gpu_list, cu_list)) = set.split_once(':') else {
        return Err("expected GPUs:CUs".into());
    };
    let mask = match cu_list
        .strip_prefix("0x")
        .or_else(|| cu_list.strip_prefix("0X"))
    {
        Some(hex) => hex_mask(hex, units)?,
        None => {
            let mut mask = Mask::new();
            for cu in ids(cu_list, units.saturating_sub(1))? {
                let word = (cu / 32) as usize;
                if mask.len() <= word {
                    mask.resize(word + 1, 0);
                }
                mask[word] |= 1 << (cu % 32);
            }
            mask
        }
    };
    if mask.iter().all(|&w| w == 0) {
        return Err("the mask enables no compute unit".into());
    }
    let gpu_ids = ids(gpu_list, gpus.saturating_sub(1))?;
    if gpu_ids.is_empty() {
        return Err("no GPU index within range".into());
    }
    Ok((gpu_ids, mask))
}

/// A hex bitmask, least significant digit unit 0; words past the agent's
/// units dropped.
fn hex_mask(hex: &str, units: u32) -> std::result::Result<Mask, String> {
    if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("{hex:?} is not a hex mask"));
    }
    let digits = hex.as_bytes();
    let mut mask: Mask = digits
        .rchunks(8)
        .map(|chunk| {
            let chunk = std::str::from_utf8(chunk).expect("ASCII hex digits");
            u32::from_str_radix(chunk, 16).expect("checked hex digits")
        })
        .collect();
    mask.truncate((units / 32 + 1) as usize);
    Ok(mask)
}

/// A list of decimal ids and inclusive ranges, sorted; ids above `max`
/// are dropped, a repeated id is an error.
fn ids(list: &str, max: u32) -> std::result::Result<Vec<u32>, String> {
    let number = |s: &str| {
        s.parse::<u32>()
            .map_err(|_| format!("{s:?} is not a decimal id"))
    };
    let mut out = Vec::new();
    for item in list.split(',') {
        let (first, last) = match item.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(item)?, number(item)?),
        };
        if last < first {
            return Err(format!("range {item} runs backwards"));
        }
        out.extend(first..=last.min(max));
    }
    out.sort_unstable();
    if let Some(w) = out.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("id {} is given twice", w[0]));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_held_to_the_agents_units() {
        // 40 units: two words, the second's bits 8.. dropped.
        let (mask, applied) = apply(Some(&[0x0000_f00f, u32::MAX, 7]), &[], 40).unwrap();
        assert_eq!(mask, vec![0x0000_f00f, 0xff]);
        assert_eq!(applied, Applied::Exactly);
        // A short request leaves the rest off; None is every unit.
        assert_eq!(apply(Some(&[3]), &[], 40).unwrap().0, vec![3, 0]);
        assert_eq!(apply(None, &[], 40).unwrap().0, vec![u32::MAX, 0xff]);
    }

    #[test]
    fn a_split_wgp_pair_is_refused() {
        let e = apply(Some(&[0b0110]), &[], 40).unwrap_err();
        assert!(e.to_string().contains("units 0 and 1"), "{e}");
        assert!(apply(Some(&[0b1100, 0]), &[], 40).is_ok());
    }

    #[test]
    fn the_global_mask_reduces_a_request() {
        let global = [0x0000_00ff];
        let (mask, applied) = apply(Some(&[0x0000_0ff0, 0]), &global, 40).unwrap();
        assert_eq!((mask, applied), (vec![0xf0, 0], Applied::Reduced));
        // Asking for units in a word the global mask does not cover.
        let (mask, applied) = apply(Some(&[0x3, 0x3]), &global, 40).unwrap();
        assert_eq!((mask, applied), (vec![0x3, 0], Applied::Reduced));
        let (mask, applied) = apply(None, &global, 40).unwrap();
        assert_eq!((mask, applied), (vec![0xff, 0], Applied::Reduced));
        assert_eq!(
            apply(Some(&[0xf]), &global, 40).unwrap().1,
            Applied::Exactly
        );
    }

    #[test]
    fn hsa_cu_mask_syntax() {
        let (masks, error) = parse_global(" 0 : 0-3, 8 ; 1,2:0x3F00000001 ", 3, 40);
        assert_eq!(error, None);
        assert_eq!(masks[&0], vec![0x10f]);
        assert_eq!(masks[&1], vec![1, 0x3f]);
        assert_eq!(masks[&2], masks[&1]);
        // Ids past the last GPU or unit are dropped.
        let (masks, error) = parse_global("0,7:38-45", 2, 40);
        assert_eq!(error, None);
        assert_eq!(masks.keys().copied().collect::<Vec<_>>(), vec![0]);
        assert_eq!(masks[&0], vec![0, 0xc0]);
    }

    #[test]
    fn parsing_stops_at_the_first_bad_set() {
        for (text, why) in [
            ("0:1-3;1:5-4", "runs backwards"),
            ("0:1-3;1:2,2", "given twice"),
            ("0:1-3;0:4", "GPU 0 is given a mask twice"),
            ("0:1-3;1:0x0", "no compute unit"),
            ("0:1-3;1:0xZ", "not a hex mask"),
            ("0:1-3;1", "expected GPUs:CUs"),
            ("0:1-3;x:1", "not a decimal id"),
        ] {
            let (masks, error) = parse_global(text, 2, 40);
            assert_eq!(masks.len(), 1, "{text}");
            let error = error.unwrap();
            assert!(error.contains(why), "{text}: {error}");
        }
    }
}
