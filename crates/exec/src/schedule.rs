//! Seeded schedules (`SOFTGPU_SCHEDULE=SEED`): the order workgroups are
//! taken in, and which wave of a workgroup runs next and for how long, all
//! drawn from the seed. With one worker thread a seed gives the same
//! interleaving every run, and different seeds give different ones, so a
//! race between waves or workgroups can be found and then reproduced.

/// SplitMix64's output function: a bijective 64-bit mix.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A small pseudo-random generator (SplitMix64): a few cycles per draw,
/// and a good spread even for neighbouring seeds.
pub(crate) struct Rng(u64);

impl Rng {
    /// The generator of workgroup `group` (its linear index) under `seed`.
    pub fn for_group(seed: u64, group: u64) -> Rng {
        Rng(mix(seed ^ mix(group.wrapping_add(0x9e37_79b9_7f4a_7c15))))
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// A value in `0..n` (`n` > 0; the tiny bias of a modulo is harmless
    /// for a schedule).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// The length of a wave's turn, 1..=`max` instructions, spread evenly
    /// over powers of two: short turns (which interleave waves tightly)
    /// come up as often as long ones.
    pub fn turn(&mut self, max: u64) -> u64 {
        let r = self.next();
        let bits = (r % (u64::BITS - max.leading_zeros()) as u64) as u32;
        let len = 1 + ((r >> 8) & ((1u64 << bits) - 1));
        len.min(max)
    }
}

/// A seeded permutation of `0..n`, computed per index without a table
/// (grids may have billions of workgroups): a bijection on the smallest
/// power-of-two range holding `n`, applied again until it lands below `n`
/// (cycle walking, fewer than two rounds on average).
pub(crate) struct Permutation {
    n: u64,
    mask: u64,
    keys: [u64; 3],
}

impl Permutation {
    pub fn new(seed: u64, n: u64) -> Permutation {
        let bits = u64::BITS - n.saturating_sub(1).leading_zeros();
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut rng = Rng(mix(seed ^ 0x5eed));
        Permutation {
            n,
            mask,
            keys: [rng.next(), rng.next(), rng.next()],
        }
    }

    /// Rounds of odd multiplication, key addition and xor-shift, each a
    /// bijection on `mask + 1` values.
    fn scramble(&self, mut x: u64) -> u64 {
        let shift = (self.mask.count_ones() / 2).max(1);
        for key in self.keys {
            x = x.wrapping_mul(key | 1).wrapping_add(key >> 7) & self.mask;
            x ^= x >> shift;
        }
        x
    }

    /// The `i`-th index of the permuted order (`i` < n).
    pub fn at(&self, i: u64) -> u64 {
        let mut x = self.scramble(i);
        while x >= self.n {
            x = self.scramble(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_bijections_and_differ_by_seed() {
        for n in [1u64, 2, 3, 7, 8, 100, 1000] {
            for seed in 0..4 {
                let p = Permutation::new(seed, n);
                let mut seen: Vec<u64> = (0..n).map(|i| p.at(i)).collect();
                seen.sort_unstable();
                assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n {n} seed {seed}");
            }
        }
        let order = |seed| {
            (0..100)
                .map(|i| Permutation::new(seed, 100).at(i))
                .collect::<Vec<_>>()
        };
        assert_ne!(order(0), order(1));
        assert_eq!(order(5), order(5));
    }

    #[test]
    fn turns_cover_short_and_long_lengths() {
        let mut rng = Rng::for_group(7, 3);
        let turns: Vec<u64> = (0..10_000).map(|_| rng.turn(4096)).collect();
        assert!(turns.iter().all(|&t| (1..=4096).contains(&t)));
        assert!(turns.iter().filter(|&&t| t <= 4).count() > 1000);
        assert!(turns.iter().filter(|&&t| t > 1024).count() > 300);
        assert_eq!(Rng::for_group(7, 3).turn(4096), turns[0]);
        assert_eq!(Rng::for_group(1, 0).turn(1), 1);
    }
}
