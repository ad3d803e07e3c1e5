//! What the call-sequence fuzz targets (`api`, `hip`) and their stable
//! tests share: the fuzz input read as choices, the count of calls made,
//! the pseudo-random generator the stable tests draw inputs from, and
//! running a sequence call by call with a check after each.

/// The fuzz input, read a byte per choice.
pub struct Input<'a>(pub &'a [u8]);

impl Input<'_> {
    /// The next byte; `None` when the input ran out.
    pub fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    /// One of `from`, chosen by the next byte.
    pub fn pick<T: Copy>(&mut self, from: &[T]) -> Option<T> {
        Some(from[self.byte()? as usize % from.len()])
    }
}

/// What one sequence did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub calls: u64,
    /// Calls the library refused with an error.
    pub refused: u64,
}

/// A library under a call-sequence fuzz.
pub trait Target {
    /// Makes the call the input chooses: `None` when the input ran out,
    /// else whether the library accepted the call.
    fn step(&mut self, input: &mut Input) -> Option<bool>;

    /// Checks that valid state stayed valid after a call.
    fn check(&self) -> Result<(), String>;
}

/// Makes the calls `data` chooses, checking `target` after each.
pub fn run(target: &mut impl Target, data: &[u8]) -> Result<Counts, String> {
    let mut input = Input(data);
    let mut counts = Counts::default();
    while let Some(ok) = target.step(&mut input) {
        counts.calls += 1;
        counts.refused += u64::from(!ok);
        target.check()?;
    }
    Ok(counts)
}

/// Whether the canary's bytes, read back into `back`, still all hold
/// `pattern`.
pub fn canary_holds(back: &[u8], pattern: u8) -> Result<(), String> {
    match back.iter().position(|&b| b != pattern) {
        Some(i) => Err(format!("canary byte {i} changed to {:#x}", back[i])),
        None => Ok(()),
    }
}

/// xorshift64*: a fixed seed, so a failure repeats.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// `len` pseudo-random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}
