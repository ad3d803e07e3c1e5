//! Generation-checked handles.
//!
//! A handle packs a kind tag, a generation and a slot index into 64 bits.
//! Every insertion and removal draws the slot's generation from one
//! process-wide counter, so a stale handle (even
//! one from before a shutdown and re-init), a handle of another kind or a
//! made-up number is refused instead of reaching the wrong object.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};

/// Source of fresh generations for every table ever made in this process.
static GENERATIONS: AtomicU32 = AtomicU32::new(1);
const GENERATION_MASK: u32 = 0xFF_FFFF;

/// A generation no live or stale handle of this process has had recently
/// (the counter wraps only after 16 million removals).
fn fresh_generation() -> u32 {
    GENERATIONS.fetch_add(1, Ordering::Relaxed) & GENERATION_MASK
}

struct Slot<T> {
    generation: u32,
    value: Option<Arc<T>>,
}

/// Objects of one kind, addressed by handle.
pub struct Handles<T> {
    kind: &'static str,
    tag: u8,
    slots: RwLock<(Vec<Slot<T>>, Vec<u32>)>,
}

impl<T> Handles<T> {
    /// A table whose handles carry `tag` (distinct per kind).
    pub fn new(kind: &'static str, tag: u8) -> Handles<T> {
        Handles {
            kind,
            tag,
            slots: RwLock::new((Vec::new(), Vec::new())),
        }
    }

    /// Stores `value`; returns its handle (never 0).
    pub fn insert(&self, value: Arc<T>) -> u64 {
        let mut guard = self.slots.write().unwrap_or_else(|e| e.into_inner());
        let (slots, free) = &mut *guard;
        let index = match free.pop() {
            Some(i) => i,
            None => {
                let generation = fresh_generation();
                slots.push(Slot {
                    generation,
                    value: None,
                });
                (slots.len() - 1) as u32
            }
        };
        let slot = &mut slots[index as usize];
        slot.value = Some(value);
        self.encode(index, slot.generation)
    }

    /// The object behind `handle`.
    pub fn get(&self, handle: u64) -> Result<Arc<T>> {
        let guard = self.slots.read().unwrap_or_else(|e| e.into_inner());
        self.decode(handle)
            .and_then(|(index, generation)| {
                let slot = guard.0.get(index as usize)?;
                (slot.generation == generation).then_some(())?;
                slot.value.clone()
            })
            .ok_or(self.invalid(handle))
    }

    /// Removes the object behind `handle`; its handle becomes stale.
    pub fn remove(&self, handle: u64) -> Result<Arc<T>> {
        let mut guard = self.slots.write().unwrap_or_else(|e| e.into_inner());
        let (slots, free) = &mut *guard;
        let (index, generation) = self.decode(handle).ok_or(self.invalid(handle))?;
        let slot = slots
            .get_mut(index as usize)
            .filter(|s| s.generation == generation && s.value.is_some())
            .ok_or(self.invalid(handle))?;
        slot.generation = fresh_generation();
        free.push(index);
        Ok(slot.value.take().expect("checked above"))
    }

    /// Every live object with its handle, in slot order.
    pub fn all(&self) -> Vec<(u64, Arc<T>)> {
        let guard = self.slots.read().unwrap_or_else(|e| e.into_inner());
        guard
            .0
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((self.encode(i as u32, s.generation), s.value.clone()?)))
            .collect()
    }

    /// Removes every object (runtime shutdown).
    pub fn clear(&self) -> Vec<Arc<T>> {
        let mut guard = self.slots.write().unwrap_or_else(|e| e.into_inner());
        let (slots, free) = &mut *guard;
        let mut out = Vec::new();
        for (i, s) in slots.iter_mut().enumerate() {
            if let Some(v) = s.value.take() {
                s.generation = fresh_generation();
                free.push(i as u32);
                out.push(v);
            }
        }
        out
    }

    fn encode(&self, index: u32, generation: u32) -> u64 {
        (self.tag as u64) << 56 | (generation as u64) << 32 | (index as u64 + 1)
    }

    fn decode(&self, handle: u64) -> Option<(u32, u32)> {
        let index = (handle as u32).checked_sub(1)?;
        let generation = (handle >> 32) as u32 & GENERATION_MASK;
        ((handle >> 56) as u8 == self.tag).then_some((index, generation))
    }

    fn invalid(&self, handle: u64) -> Error {
        Error::InvalidHandle {
            kind: self.kind,
            handle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_forged_and_foreign_handles_are_refused() {
        let a: Handles<u32> = Handles::new("signal", 1);
        let b: Handles<u32> = Handles::new("queue", 2);
        let h = a.insert(Arc::new(7));
        assert_eq!(*a.get(h).unwrap(), 7);
        assert!(b.get(h).is_err(), "another kind's handle");
        assert!(a.get(h + 1).is_err(), "forged index");
        assert!(a.get(h ^ (1 << 40)).is_err(), "forged generation");
        assert!(a.get(0).is_err());
        a.remove(h).unwrap();
        assert!(a.get(h).is_err(), "stale");
        assert!(a.remove(h).is_err(), "double remove");
        let h2 = a.insert(Arc::new(8));
        assert_ne!(h, h2, "a reused slot gets a new generation");
        assert!(a.get(h).is_err());
        let fresh: Handles<u32> = Handles::new("signal", 1);
        fresh.insert(Arc::new(1));
        assert!(fresh.get(h2).is_err(), "a new table refuses old handles");
    }
}
