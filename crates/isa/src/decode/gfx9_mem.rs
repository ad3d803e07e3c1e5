//! CDNA's memory words (gfx90a, gfx94): DS, FLAT/GLOBAL/SCRATCH, MUBUF,
//! MTBUF and MIMG in GCN's field positions.

use super::{Reader, Result};
use crate::{DecodeError, Inst};

fn not_yet(word: u32) -> DecodeError {
    DecodeError::Invalid {
        word,
        why: "CDNA (gfx90a, gfx94) memory words are not decoded yet",
    }
}

impl Reader<'_> {
    /// A DS word.
    pub(super) fn ds9(&mut self, w0: u32) -> Result<Inst> {
        Err(not_yet(w0))
    }

    /// A FLAT, GLOBAL or SCRATCH word.
    pub(super) fn flat9(&mut self, w0: u32) -> Result<Inst> {
        Err(not_yet(w0))
    }

    /// A MUBUF word.
    pub(super) fn mubuf9(&mut self, w0: u32) -> Result<Inst> {
        Err(not_yet(w0))
    }

    /// An MTBUF word.
    pub(super) fn mtbuf9(&mut self, w0: u32) -> Result<Inst> {
        Err(not_yet(w0))
    }

    /// A MIMG word (gfx90a; gfx94 has no images).
    pub(super) fn mimg9(&mut self, w0: u32) -> Result<Inst> {
        Err(not_yet(w0))
    }
}
