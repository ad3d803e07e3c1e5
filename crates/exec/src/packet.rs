//! The HSA queue descriptor and the AQL packets as `#[repr(C)]` structs.
//!
//! Each struct mirrors its C type in `hsa.h` (the large model every 64-bit
//! HSA runtime uses: pointers are 8 bytes, so no padding word beside them)
//! field for field, and the runtime's `tests/packet_layout.rs` checks every size and
//! offset against the system's header compiled by a C compiler. The structs
//! never alias device memory: `to_bytes` and `from_bytes` copy them out of
//! and into the little-endian bytes a queue's ring (or descriptor) holds,
//! field by field at the offsets `offset_of!` gives, so no byte offset is
//! written by hand and no `unsafe` is needed.

use std::mem::{offset_of, size_of};

/// AQL packet types (the header's low byte, `hsa_packet_type_t`).
pub mod packet_type {
    /// `HSA_PACKET_TYPE_VENDOR_SPECIFIC`.
    pub const VENDOR_SPECIFIC: u8 = 0;
    /// `HSA_PACKET_TYPE_INVALID`: a free ring slot.
    pub const INVALID: u8 = 1;
    /// `HSA_PACKET_TYPE_KERNEL_DISPATCH`.
    pub const KERNEL_DISPATCH: u8 = 2;
    /// `HSA_PACKET_TYPE_BARRIER_AND`.
    pub const BARRIER_AND: u8 = 3;
    /// `HSA_PACKET_TYPE_AGENT_DISPATCH`.
    pub const AGENT_DISPATCH: u8 = 4;
    /// `HSA_PACKET_TYPE_BARRIER_OR`.
    pub const BARRIER_OR: u8 = 5;
}

/// Bytes of one AQL packet.
pub const PACKET_BYTES: usize = 64;
/// Bytes of an `hsa_queue_t`.
pub const QUEUE_DESCRIPTOR_BYTES: usize = 40;

/// The 16-bit header every AQL packet starts with (`hsa_packet_header_t`
/// describes its bit fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// The packet type ([`packet_type`]): bits 0..8.
    pub packet_type: u8,
    /// The barrier bit: the packet starts only once every earlier packet
    /// of the queue has completed. Bit 8.
    pub barrier: bool,
    /// The acquire fence scope (0 none, 1 agent, 2 system): bits 9..11.
    pub acquire_scope: u8,
    /// The release fence scope: bits 11..13.
    pub release_scope: u8,
}

impl Header {
    /// Splits a header word into its fields (bits 13..16 are reserved).
    pub fn from_bits(bits: u16) -> Header {
        Header {
            packet_type: bits as u8,
            barrier: bits >> 8 & 1 != 0,
            acquire_scope: (bits >> 9 & 3) as u8,
            release_scope: (bits >> 11 & 3) as u8,
        }
    }

    /// The header word (scopes are cut to their two bits).
    pub fn bits(self) -> u16 {
        u16::from(self.packet_type)
            | u16::from(self.barrier) << 8
            | u16::from(self.acquire_scope & 3) << 9
            | u16::from(self.release_scope & 3) << 11
    }

    /// The header word of a packet's bytes.
    pub fn word_of(packet: &[u8; PACKET_BYTES]) -> u16 {
        u16::from_le_bytes([packet[0], packet[1]])
    }
}

/// The completion signal handle of any AQL packet: every packet type keeps
/// it in its last 8 bytes, so the processor reads it before it knows (or
/// accepts) the type.
pub fn completion_signal_of(packet: &[u8; PACKET_BYTES]) -> u64 {
    const AT: usize = offset_of!(KernelDispatchPacket, completion_signal);
    u64::get(&packet[AT..])
}

/// `hsa_queue_t`: the queue descriptor a client gets from
/// `hsa_queue_create` and a kernel reaches through its queue pointer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueDescriptor {
    /// `type`: `hsa_queue_type32_t` (0 multiple, 1 single producer).
    pub queue_type: u32,
    /// `features`: `hsa_queue_feature_t` bits (1: kernel dispatch).
    pub features: u32,
    /// `base_address`: the packet ring.
    pub base_address: u64,
    /// `doorbell_signal`: the handle of the doorbell signal.
    pub doorbell_signal: u64,
    /// `size`: ring slots (a power of two).
    pub size: u32,
    /// `reserved1`: must be 0.
    pub reserved1: u32,
    /// `id`: unique among the process's queues.
    pub id: u64,
}

/// `hsa_kernel_dispatch_packet_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelDispatchPacket {
    /// The packet header word ([`Header`]).
    pub header: u16,
    /// Bits 0..2: dimensions of the grid (1 to 3); the rest reserved.
    pub setup: u16,
    /// Work-items per workgroup in x.
    pub workgroup_size_x: u16,
    /// Work-items per workgroup in y.
    pub workgroup_size_y: u16,
    /// Work-items per workgroup in z.
    pub workgroup_size_z: u16,
    /// Must be 0.
    pub reserved0: u16,
    /// Work-items in the grid in x.
    pub grid_size_x: u32,
    /// Work-items in the grid in y.
    pub grid_size_y: u32,
    /// Work-items in the grid in z.
    pub grid_size_z: u32,
    /// Private (scratch) bytes per work-item.
    pub private_segment_size: u32,
    /// Group (LDS) bytes per workgroup.
    pub group_segment_size: u32,
    /// The kernel object: the address of the kernel descriptor.
    pub kernel_object: u64,
    /// The address of the kernel arguments.
    pub kernarg_address: u64,
    /// Must be 0.
    pub reserved2: u64,
    /// The completion signal handle (0: none).
    pub completion_signal: u64,
}

impl KernelDispatchPacket {
    /// The packet with its workgroup and grid sizes set. Each workgroup
    /// dimension must fit the 16-bit field (launches check it first).
    pub fn with_shape(self, block: [u32; 3], grid: [u32; 3]) -> Self {
        KernelDispatchPacket {
            workgroup_size_x: block[0] as u16,
            workgroup_size_y: block[1] as u16,
            workgroup_size_z: block[2] as u16,
            grid_size_x: grid[0],
            grid_size_y: grid[1],
            grid_size_z: grid[2],
            ..self
        }
    }

    /// The grid's dimension count (`setup`'s low two bits).
    pub fn dimensions(&self) -> u16 {
        self.setup & 3
    }

    /// Workgroup sizes, x y z.
    pub fn workgroup_size(&self) -> [u32; 3] {
        [
            u32::from(self.workgroup_size_x),
            u32::from(self.workgroup_size_y),
            u32::from(self.workgroup_size_z),
        ]
    }

    /// Grid sizes, x y z.
    pub fn grid_size(&self) -> [u32; 3] {
        [self.grid_size_x, self.grid_size_y, self.grid_size_z]
    }
}

/// `hsa_agent_dispatch_packet_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentDispatchPacket {
    /// The packet header word ([`Header`]).
    pub header: u16,
    /// The function the agent is to run (application-defined).
    pub dispatch_type: u16,
    /// Must be 0.
    pub reserved0: u32,
    /// Where the function's result goes.
    pub return_address: u64,
    /// The function's arguments.
    pub arg: [u64; 4],
    /// Must be 0.
    pub reserved2: u64,
    /// The completion signal handle (0: none).
    pub completion_signal: u64,
}

/// `hsa_barrier_and_packet_t` and `hsa_barrier_or_packet_t`, which share
/// one layout and differ only in their header's packet type.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BarrierPacket {
    /// The packet header word ([`Header`]).
    pub header: u16,
    /// Must be 0.
    pub reserved0: u16,
    /// Must be 0.
    pub reserved1: u32,
    /// Dependency signal handles (0: none).
    pub dep_signal: [u64; 5],
    /// Must be 0.
    pub reserved2: u64,
    /// The completion signal handle (0: none).
    pub completion_signal: u64,
}

/// `hsa_barrier_and_packet_t`: waits for every dependency.
pub type BarrierAndPacket = BarrierPacket;
/// `hsa_barrier_or_packet_t`: waits for any dependency.
pub type BarrierOrPacket = BarrierPacket;

/// softgpu's own vendor-specific packet, which runs a registered host
/// operation in its turn on the queue (see `queue::HOST_OP_MAGIC`). Not an
/// HSA type; it keeps the header and completion signal where every AQL
/// packet has them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostOpPacket {
    /// The packet header word; type [`packet_type::VENDOR_SPECIFIC`].
    pub header: u16,
    /// Must be 0.
    pub reserved0: u16,
    /// `queue::HOST_OP_MAGIC`, which tells it from other vendors' packets.
    pub magic: u32,
    /// The id of the host operation on the queue.
    pub id: u64,
    /// Must be 0.
    pub reserved1: [u64; 5],
    /// The completion signal handle (0: none).
    pub completion_signal: u64,
}

/// A field stored little-endian at its offset.
trait Field: Sized {
    /// Writes the field at the start of `out`.
    fn put(&self, out: &mut [u8]);
    /// Reads the field from the start of `bytes`.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! scalar_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            fn put(&self, out: &mut [u8]) {
                out[..size_of::<$t>()].copy_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut le = [0u8; size_of::<$t>()];
                le.copy_from_slice(&bytes[..size_of::<$t>()]);
                <$t>::from_le_bytes(le)
            }
        }
    )*};
}
scalar_field!(u16, u32, u64);

impl<const N: usize> Field for [u64; N] {
    fn put(&self, out: &mut [u8]) {
        for (k, v) in self.iter().enumerate() {
            v.put(&mut out[8 * k..]);
        }
    }
    fn get(bytes: &[u8]) -> Self {
        std::array::from_fn(|k| u64::get(&bytes[8 * k..]))
    }
}

/// `to_bytes` and `from_bytes` for a struct, over every field it lists.
/// The struct literal in `from_bytes` fails to compile if a field is left
/// out, and the size assertion if the struct is not `$bytes` long, so the
/// slicing in [`Field`] can never fall outside the buffer.
macro_rules! wire_format {
    ($ty:ident, $bytes:expr, { $($field:ident),* $(,)? }) => {
        const _: () = assert!(size_of::<$ty>() == $bytes);

        impl $ty {
            /// The little-endian bytes device memory holds.
            pub fn to_bytes(&self) -> [u8; $bytes] {
                let mut out = [0u8; $bytes];
                $( self.$field.put(&mut out[offset_of!($ty, $field)..]); )*
                out
            }

            /// Reads the struct from the little-endian bytes of device
            /// memory.
            pub fn from_bytes(bytes: &[u8; $bytes]) -> $ty {
                $ty {
                    $( $field: Field::get(&bytes[offset_of!($ty, $field)..]), )*
                }
            }
        }
    };
}

wire_format!(QueueDescriptor, QUEUE_DESCRIPTOR_BYTES, {
    queue_type, features, base_address, doorbell_signal, size, reserved1, id,
});
wire_format!(KernelDispatchPacket, PACKET_BYTES, {
    header, setup, workgroup_size_x, workgroup_size_y, workgroup_size_z, reserved0,
    grid_size_x, grid_size_y, grid_size_z, private_segment_size, group_segment_size,
    kernel_object, kernarg_address, reserved2, completion_signal,
});
wire_format!(AgentDispatchPacket, PACKET_BYTES, {
    header, dispatch_type, reserved0, return_address, arg, reserved2, completion_signal,
});
wire_format!(BarrierPacket, PACKET_BYTES, {
    header, reserved0, reserved1, dep_signal, reserved2, completion_signal,
});
wire_format!(HostOpPacket, PACKET_BYTES, {
    header, reserved0, magic, id, reserved1, completion_signal,
});

/// The packet's dimensions field (`setup`) for a grid of `grid`
/// work-items: the highest dimension larger than one, at least 1. The
/// kernarg's `hidden_grid_dims` is the same number.
pub fn dimensions(grid: [u32; 3]) -> u16 {
    if grid[2] > 1 {
        3
    } else if grid[1] > 1 {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_round_trip_through_their_bytes() {
        let dispatch = KernelDispatchPacket {
            header: 0x1502,
            setup: 3,
            workgroup_size_x: 1,
            workgroup_size_y: 2,
            workgroup_size_z: 3,
            reserved0: 4,
            grid_size_x: 5,
            grid_size_y: 6,
            grid_size_z: 7,
            private_segment_size: 8,
            group_segment_size: 9,
            kernel_object: 10,
            kernarg_address: 11,
            reserved2: 12,
            completion_signal: 0x0102_0304_0506_0708,
        };
        let bytes = dispatch.to_bytes();
        assert_eq!(KernelDispatchPacket::from_bytes(&bytes), dispatch);
        assert_eq!(&bytes[56..], &[8, 7, 6, 5, 4, 3, 2, 1], "little-endian");
        assert_eq!(completion_signal_of(&bytes), dispatch.completion_signal);
        let barrier = BarrierPacket {
            header: 3,
            dep_signal: [1, 2, 3, 4, 5],
            completion_signal: 6,
            ..Default::default()
        };
        assert_eq!(BarrierPacket::from_bytes(&barrier.to_bytes()), barrier);
        let agent = AgentDispatchPacket {
            header: 4,
            arg: [7, 8, 9, 10],
            return_address: 11,
            ..Default::default()
        };
        assert_eq!(AgentDispatchPacket::from_bytes(&agent.to_bytes()), agent);
        let queue = QueueDescriptor {
            queue_type: 1,
            features: 1,
            base_address: 2,
            doorbell_signal: 3,
            size: 64,
            reserved1: 0,
            id: 9,
        };
        assert_eq!(QueueDescriptor::from_bytes(&queue.to_bytes()), queue);
    }

    #[test]
    fn the_host_op_packet_keeps_the_aql_header_and_completion_signal() {
        assert_eq!(offset_of!(HostOpPacket, header), 0);
        assert_eq!(
            offset_of!(HostOpPacket, completion_signal),
            offset_of!(KernelDispatchPacket, completion_signal)
        );
        let op = HostOpPacket {
            id: 5,
            magic: 6,
            completion_signal: 7,
            ..Default::default()
        };
        assert_eq!(HostOpPacket::from_bytes(&op.to_bytes()), op);
        assert_eq!(completion_signal_of(&op.to_bytes()), 7);
    }

    #[test]
    fn header_fields_round_trip() {
        let h = Header {
            packet_type: packet_type::BARRIER_OR,
            barrier: true,
            acquire_scope: 2,
            release_scope: 1,
        };
        assert_eq!(h.bits(), 5 | 1 << 8 | 2 << 9 | 1 << 11);
        assert_eq!(Header::from_bits(h.bits()), h);
    }
}
