//! CDNA words (gfx90a, gfx94): GCN's encodings. The SOP* and VOP1/VOP2/VOPC
//! words have gfx11's layouts; VOP3 (0xD0, a 10-bit opcode space holding
//! VOPC, VOP2, VOP1, the VOP3-only ops and, from 0x380, VOP3P and
//! VOP3P-MAI), SMEM (0xC0) and the memory words ([`super::gfx9_mem`]) have
//! GCN's own field positions. Scalar register codes are turned into
//! gfx11's numbering (gfx9's m0 is 124; it has no null), AccVGPRs into
//! `Vgpr(AGPR_BASE + n)`.

use super::{Reader, Result};
use crate::{DecodeError, Inst};

impl Reader<'_> {
    /// One gfx90a or gfx94 instruction whose first word is `w0`.
    pub(super) fn gfx9(&mut self, w0: u32) -> Result<Inst> {
        match w0 >> 26 {
            0b110110 => self.ds9(w0),
            0b110111 => self.flat9(w0),
            0b111000 => self.mubuf9(w0),
            0b111010 => self.mtbuf9(w0),
            0b111100 => self.mimg9(w0),
            _ => Err(DecodeError::Invalid {
                word: w0,
                why: "CDNA (gfx90a, gfx94) ALU and SMEM words are not decoded yet",
            }),
        }
    }
}
