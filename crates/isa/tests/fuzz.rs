//! Random bytes never panic the decoder or the disassembler, and a decoded
//! instruction never claims more bytes than it was given.

use proptest::prelude::*;
use softgpu_isa::{decode, decode_all, disassemble, Family};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20000))]
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
        for family in Family::ALL {
            if let Ok(i) = decode(family, &bytes) {
                prop_assert!(i.size as usize <= bytes.len());
                let _ = disassemble(&i);
            }
        }
    }

    #[test]
    fn decode_all_walks_everything(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        for family in Family::ALL {
            for (_, r) in decode_all(family, &bytes) {
                if let Ok(i) = r {
                    let _ = disassemble(&i);
                }
            }
        }
    }
}
