//! Placing the image in device memory.

use crate::{Error, Image, RelocKind, Relocation};

impl Image {
    /// Copy `len` bytes at image offset `offset` if they lie inside one segment's
    /// memory range (bytes past the segment's file data read as zero).
    pub fn read(&self, offset: u64, len: u64) -> Option<Vec<u8>> {
        let end = offset.checked_add(len)?;
        let seg = self
            .segments
            .iter()
            .find(|s| s.offset <= offset && end <= s.offset + s.mem_size)?;
        let len = usize::try_from(len).ok()?;
        let mut out = vec![0u8; len];
        let start = usize::try_from(offset - seg.offset).ok()?;
        if start < seg.data.len() {
            let avail = (seg.data.len() - start).min(len);
            out[..avail].copy_from_slice(&seg.data[start..start + avail]);
        }
        Some(out)
    }

    /// The segment containing image offset `offset`, if any.
    pub fn segment_at(&self, offset: u64) -> Option<&crate::Segment> {
        self.segments
            .iter()
            .find(|s| s.offset <= offset && offset < s.offset + s.mem_size)
    }

    /// The bytes of the image as placed at device address `base`, zero-filled beyond
    /// each segment's file size, with every dynamic relocation applied.
    ///
    /// An unresolvable relocation (undefined symbol, unsupported type, target bytes
    /// outside the image, value not fitting its field) is an error naming it.
    pub fn place(&self, base: u64) -> Result<Vec<u8>, Error> {
        let size = usize::try_from(self.size)
            .ok()
            .filter(|_| self.size <= crate::MAX_IMAGE_SIZE)
            .ok_or_else(|| Error::Image(format!("image size {:#x} too large", self.size)))?;
        let mut out = vec![0u8; size];
        for s in &self.segments {
            let start = usize::try_from(s.offset).ok();
            let end = start.and_then(|st| st.checked_add(s.data.len()));
            match (start, end) {
                (Some(st), Some(e)) if e <= size && s.data.len() as u64 <= s.mem_size => {
                    out[st..e].copy_from_slice(&s.data)
                }
                _ => {
                    return Err(Error::Image(format!(
                        "segment at {:#x} with {:#x} file bytes does not fit the {:#x}-byte image",
                        s.offset,
                        s.data.len(),
                        self.size
                    )))
                }
            }
        }
        for r in &self.relocations {
            apply(&mut out, base, r)?;
        }
        Ok(out)
    }
}

fn apply(out: &mut [u8], base: u64, r: &Relocation) -> Result<(), Error> {
    let fail = |detail: String| Error::Relocation {
        kind: format!("{} ({})", r.kind.name(), r.kind.raw()),
        offset: r.offset,
        symbol: r.symbol_name.clone(),
        detail,
    };
    let sym = || -> Result<u64, Error> {
        let v = r.symbol_value.ok_or_else(|| {
            fail(if r.symbol_name.is_empty() {
                "relocation needs a symbol but has none".to_string()
            } else {
                "symbol is undefined (nothing in the code object defines it)".to_string()
            })
        })?;
        Ok(base.wrapping_add(v))
    };
    let place = base.wrapping_add(r.offset);
    let (value, width): (u64, usize) = match r.kind {
        RelocKind::Other(0) => return Ok(()),
        RelocKind::Relative64 => (base.wrapping_add(r.addend as u64), 8),
        RelocKind::Abs64 => (sym()?.wrapping_add(r.addend as u64), 8),
        RelocKind::Abs32Lo => (sym()?.wrapping_add(r.addend as u64) & 0xffff_ffff, 4),
        RelocKind::Abs32Hi => (sym()?.wrapping_add(r.addend as u64) >> 32, 4),
        RelocKind::Abs32 => {
            let v = sym()?.wrapping_add(r.addend as u64);
            if v > u64::from(u32::MAX) {
                return Err(fail(format!(
                    "value {v:#x} does not fit 32 bits (place the image below 4 GiB)"
                )));
            }
            (v, 4)
        }
        RelocKind::Other(5) => (sym()?.wrapping_add(r.addend as u64).wrapping_sub(place), 8),
        RelocKind::Other(4) => {
            let v = sym()?.wrapping_add(r.addend as u64).wrapping_sub(place) as i64;
            if i32::try_from(v).is_err() {
                return Err(fail(format!(
                    "pc-relative value {v:#x} does not fit 32 bits"
                )));
            }
            (v as u64 & 0xffff_ffff, 4)
        }
        RelocKind::Other(10) => (
            sym()?.wrapping_add(r.addend as u64).wrapping_sub(place) & 0xffff_ffff,
            4,
        ),
        RelocKind::Other(11) => (
            sym()?.wrapping_add(r.addend as u64).wrapping_sub(place) >> 32,
            4,
        ),
        RelocKind::Other(_) => {
            return Err(fail("unsupported relocation type".to_string()));
        }
    };
    let start = usize::try_from(r.offset)
        .ok()
        .filter(|&s| s.checked_add(width).is_some_and(|e| e <= out.len()))
        .ok_or_else(|| {
            fail(format!(
                "{width} target bytes lie outside the {:#x}-byte image",
                out.len()
            ))
        })?;
    out[start..start + width].copy_from_slice(&value.to_le_bytes()[..width]);
    Ok(())
}
