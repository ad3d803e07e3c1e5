//! Clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`).

use crate::Error;

const MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
const COMPRESSED_MAGIC: &[u8] = b"CCOB";

/// Whether `bytes` starts with the uncompressed offload bundle magic `__CLANG_OFFLOAD_BUNDLE__`.
pub fn is_offload_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Whether `bytes` starts with the compressed offload bundle magic `CCOB`.
pub fn is_compressed_offload_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(COMPRESSED_MAGIC)
}

/// The largest bundle a compressed one may claim to hold.
const MAX_DECOMPRESSED: u64 = 1 << 30;

/// Decompresses a compressed offload bundle (`clang --offload-compress`):
/// `CCOB`, a u16 version, a u16 method, for version 2 a u32 total size of
/// the compressed bundle, then a u32 uncompressed size, a u64 hash, and
/// the compressed uncompressed bundle. Method 1 (zstd) is what clang
/// writes when LLVM has zstd, as Debian's clang-19 does; zlib (method 0)
/// is refused with a message. Returns the bundle and how many input bytes
/// the compressed one spans (version 2 says; version 1 spans all of
/// `bytes`).
pub fn decompress(bytes: &[u8]) -> Result<(Vec<u8>, usize), Error> {
    let bad = |why: String| Error::CompressedBundle(why);
    let u16_at = |at: usize| {
        bytes
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as u64)
    };
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
    };
    if !is_compressed_offload_bundle(bytes) {
        return Err(bad("missing CCOB magic".into()));
    }
    let short = || bad(format!("a {}-byte header is truncated", bytes.len()));
    let (version, method) = (u16_at(4).ok_or_else(short)?, u16_at(6).ok_or_else(short)?);
    let (total, size, start) = match version {
        1 => (bytes.len() as u64, u32_at(8).ok_or_else(short)?, 20),
        2 => (
            u32_at(8).ok_or_else(short)?,
            u32_at(12).ok_or_else(short)?,
            24,
        ),
        v => return Err(bad(format!("format version {v} is unknown"))),
    };
    if method != 1 {
        return Err(bad(format!(
            "compression method {method} is not supported (only zstd, method 1)"
        )));
    }
    if size > MAX_DECOMPRESSED || total > bytes.len() as u64 || (total as usize) < start {
        return Err(bad(format!(
            "sizes out of range: {total} compressed bytes of {} given, {size} uncompressed",
            bytes.len()
        )));
    }
    let mut input = &bytes[start..total as usize];
    let mut decoder = ruzstd::decoding::StreamingDecoder::new(&mut input)
        .map_err(|e| bad(format!("zstd frame: {e}")))?;
    let mut out = Vec::with_capacity(size as usize);
    // At most one byte beyond the promised size is read, so a stream that
    // decompresses to more is caught without expanding it.
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut decoder, size + 1), &mut out)
        .map_err(|e| bad(format!("zstd data: {e}")))?;
    if out.len() as u64 != size {
        return Err(bad(format!(
            "decompressed to {} bytes, the header says {size}",
            out.len()
        )));
    }
    Ok((out, total as usize))
}

/// One entry of an offload bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry<'a> {
    /// The entry ID, e.g. `"hipv4-amdgcn-amd-amdhsa--gfx1151"`.
    pub id: String,
    /// The entry's bytes.
    pub data: &'a [u8],
}

impl BundleEntry<'_> {
    /// For an `…-amdgcn-amd-amdhsa-[ENV]-TARGETID` entry, the target ID
    /// (e.g. `"gfx1151:xnack-"`); `None` for host or other entries.
    pub fn amdgcn_target_id(&self) -> Option<&str> {
        let (_kind, rest) = self.id.split_once('-')?;
        let rest = rest.strip_prefix("amdgcn-amd-amdhsa-")?;
        let (_env, tid) = rest.split_once('-')?;
        (!tid.is_empty()).then_some(tid)
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], Error> {
        let n = usize::try_from(n)
            .map_err(|_| Error::Bundle(format!("{what}: length {n} too large")))?;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| {
                Error::Bundle(format!(
                    "{what} at byte {} needs {n} bytes but the bundle is {} bytes long",
                    self.pos,
                    self.data.len()
                ))
            })?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// All entries of an uncompressed offload bundle.
pub fn bundle_entries(bytes: &[u8]) -> Result<Vec<BundleEntry<'_>>, Error> {
    if is_compressed_offload_bundle(bytes) {
        return Err(Error::CompressedBundle(
            "decompress it first (bundle::decompress)".into(),
        ));
    }
    if !is_offload_bundle(bytes) {
        return Err(Error::Bundle(
            "missing __CLANG_OFFLOAD_BUNDLE__ magic".to_string(),
        ));
    }
    let mut rd = Reader {
        data: bytes,
        pos: MAGIC.len(),
    };
    let count = rd.u64("entry count")?;
    let mut out = Vec::new();
    for i in 0..count {
        // Every entry header takes at least 24 bytes, so a bogus count fails here
        // before anything large is allocated.
        let off = rd.u64(&format!("entry {i} offset"))?;
        let size = rd.u64(&format!("entry {i} size"))?;
        let id_len = rd.u64(&format!("entry {i} id length"))?;
        let id = rd.take(id_len, &format!("entry {i} id"))?;
        let data = usize::try_from(off)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| Some(o..o.checked_add(s)?))
            .and_then(|r| bytes.get(r))
            .ok_or_else(|| {
                Error::Bundle(format!(
                    "entry {i} ({}) claims bytes {off:#x}+{size:#x} outside the {}-byte bundle",
                    String::from_utf8_lossy(id),
                    bytes.len()
                ))
            })?;
        out.push(BundleEntry {
            id: String::from_utf8_lossy(id).into_owned(),
            data,
        });
    }
    Ok(out)
}

/// The processor part of a target such as `"gfx1151:xnack-"` → `"gfx1151"`.
pub(crate) fn processor_of(target: &str) -> &str {
    target.split(':').next().unwrap_or(target)
}

/// The ELF for `target` (e.g. `"gfx1151"` or `"gfx90a:xnack-"`) inside an offload bundle.
///
/// Entries `KIND-amdgcn-amd-amdhsa-[ENV]-TARGETID` of any kind (`hip`, `hipv4`,
/// `openmp`, …) are candidates when their target ID fits `target` as ROCm's
/// loader matches them: the same processor, and every feature the entry
/// sets (`xnack+`, `sramecc-`) set alike by `target` or left unstated there
/// (an entry without the feature runs in either mode). Of those the entry
/// stating most of `target`'s features wins (an exact ID first), else the
/// first: so a device in `xnack-` mode takes a fat binary's `gfx90a:xnack-`
/// entry and never its `gfx90a:xnack+` one. The error lists every entry ID
/// when none fits.
pub fn unbundle<'a>(bytes: &'a [u8], target: &str) -> Result<&'a [u8], Error> {
    let entries = bundle_entries(bytes)?;
    let mut best: Option<((usize, bool), &BundleEntry<'a>)> = None;
    for e in &entries {
        let Some(tid) = e.amdgcn_target_id() else {
            continue;
        };
        let Some(alike) = fit(tid, target) else {
            continue;
        };
        let score = (alike, tid == target);
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, e));
        }
    }
    best.map(|(_, e)| e.data)
        .ok_or_else(|| Error::NoBundleEntry {
            target: target.to_string(),
            available: entries.iter().map(|e| e.id.clone()).collect(),
        })
}

/// How closely an entry's target ID fits `target`: `None` when it names
/// another processor or sets a feature the other way, else the number of
/// features both set alike.
fn fit(entry: &str, target: &str) -> Option<usize> {
    if processor_of(entry) != processor_of(target) {
        return None;
    }
    let wanted: Vec<&str> = target.split(':').skip(1).collect();
    let mut alike = 0;
    for f in entry.split(':').skip(1) {
        let name = f.trim_end_matches(['+', '-']);
        match wanted
            .iter()
            .find(|w| w.trim_end_matches(['+', '-']) == name)
        {
            Some(w) if *w == f => alike += 1,
            Some(_) => return None,
            None => {}
        }
    }
    Some(alike)
}
