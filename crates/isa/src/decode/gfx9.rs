//! CDNA words (gfx90a, gfx94): GCN's encodings. Not decoded yet: every
//! word is refused by name until the readers land.

use super::{Reader, Result};
use crate::{DecodeError, Inst};

impl Reader<'_> {
    /// One gfx90a or gfx94 instruction whose first word is `w0`.
    pub(super) fn gfx9(&mut self, w0: u32) -> Result<Inst> {
        Err(DecodeError::Invalid {
            word: w0,
            why: "CDNA (gfx90a, gfx94) words are not decoded yet",
        })
    }
}
