//! Instance layouts: where element `(i, j)` of field `f` of a region piece
//! lives in its buffer, for every layout a mapper can ask for.
//!
//! All fields the backend's kernels use are 8 bytes wide (`f64` values,
//! indices stored as `f64`-sized integers), so a layout is described in
//! elements of 8 bytes: element `(i, j)` of field `f` is at
//! `field_offset[f] + i * strides[0] + j * strides[1]`. That one formula is
//! what every kernel (CUDA or host) evaluates, so the decisions change the
//! real buffer layout and the real indexing, never the code:
//! - SOA (struct of arrays): one array per field; `field_offset[f]` is `f`
//!   arrays further on (each array padded to the alignment), the innermost
//!   stride is 1.
//! - AOS (array of structs): fields interleaved; `field_offset[f] = f`, the
//!   innermost stride is the number of fields.
//! - C order: the last dimension is fastest; F order: the first one.
//! - `Align OP N`: SOA field arrays start on multiples of the alignment, and
//!   the allocation's base is moved to one (see [`align_up`]).
//!
//! Nothing here depends on CUDA: the layout, stride, indexing and
//! allocation-size logic is tested on every machine.

use mapwright_grammar::ast::AlignOp;

use crate::decisions::{LayoutDecision, Order};

/// Bytes of one element of one field.
pub const ELEM_BYTES: u64 = 8;

/// Alignment of an instance without an `Align` constraint: Legion aligns
/// instances to 16 bytes by default.
pub const DEFAULT_ALIGN: u64 = 16;

/// Most fields one instance may have (the kernels' parameter blocks hold
/// this many field offsets).
pub const MAX_FIELDS: usize = 8;

/// The concrete layout of one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceLayout {
    /// Extents of dimensions 0 and 1 (a 1-D piece has `extents[1] == 1`).
    pub extents: [u64; 2],
    /// Number of fields.
    pub fields: usize,
    pub soa: bool,
    pub order: Order,
    /// Alignment in bytes (a multiple of 8) of the base and, for SOA, of
    /// every field array.
    pub align: u64,
    /// Element offset of each field.
    pub field_offset: Vec<u64>,
    /// Element stride of dimension 0 and dimension 1.
    pub strides: [u64; 2],
    /// Bytes the instance spans from its (aligned) base.
    pub size_bytes: u64,
}

/// Why a layout cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("an instance needs 1 to {MAX_FIELDS} fields, not {0}")]
    Fields(usize),
    #[error("instance of {0:?} elements is too large")]
    TooLarge([u64; 2]),
}

/// The alignment, in bytes, an `Align OP N` constraint gives (None:
/// Legion's default). Always a multiple of 8, the element size:
/// - `== N`, `>= N`: the least common multiple of N and 8;
/// - `> N`: the smallest power of two above N (at least 8);
/// - `< N`, `<= N`: the default 16 where allowed, else 8;
/// - `!= N`: the default, or 32 when N is 16.
pub fn alignment(align: Option<(AlignOp, i64)>) -> u64 {
    let Some((op, n)) = align else {
        return DEFAULT_ALIGN;
    };
    let n = n.max(0) as u64;
    match op {
        AlignOp::Eq | AlignOp::Ge => {
            if n == 0 {
                DEFAULT_ALIGN
            } else {
                lcm(n, ELEM_BYTES)
            }
        }
        AlignOp::Gt => (n + 1).next_power_of_two().max(ELEM_BYTES),
        AlignOp::Lt => {
            if DEFAULT_ALIGN < n {
                DEFAULT_ALIGN
            } else {
                ELEM_BYTES
            }
        }
        AlignOp::Le => {
            if DEFAULT_ALIGN <= n {
                DEFAULT_ALIGN
            } else {
                ELEM_BYTES
            }
        }
        AlignOp::Ne => {
            if n == DEFAULT_ALIGN {
                2 * DEFAULT_ALIGN
            } else {
                DEFAULT_ALIGN
            }
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> u64 {
    a / gcd(a, b) * b
}

/// The first address at or after `addr` that is a multiple of `align`.
pub fn align_up(addr: u64, align: u64) -> u64 {
    let align = align.max(1);
    addr.div_ceil(align) * align
}

impl InstanceLayout {
    /// The layout of a piece of `extents` (1 or 2 dimensions; a missing
    /// second extent is 1) with `fields` fields, as `decision` asks.
    pub fn new(
        extents: &[u64],
        fields: usize,
        decision: &LayoutDecision,
    ) -> Result<InstanceLayout, LayoutError> {
        InstanceLayout::with(
            extents,
            fields,
            decision.soa,
            decision.order,
            alignment(decision.align),
        )
    }

    /// The layout from its parts (`align` in bytes, rounded up to a
    /// multiple of 8).
    pub fn with(
        extents: &[u64],
        fields: usize,
        soa: bool,
        order: Order,
        align: u64,
    ) -> Result<InstanceLayout, LayoutError> {
        if fields == 0 || fields > MAX_FIELDS {
            return Err(LayoutError::Fields(fields));
        }
        let e = [
            extents.first().copied().unwrap_or(1).max(1),
            extents.get(1).copied().unwrap_or(1).max(1),
        ];
        let align = lcm(align.max(ELEM_BYTES), ELEM_BYTES);
        let points = e[0].checked_mul(e[1]).ok_or(LayoutError::TooLarge(e))?;
        let nf = fields as u64;
        // The stride of the fastest dimension, and the number of elements
        // one "row" of the fastest dimension spans.
        let inner = if soa { 1 } else { nf };
        let strides = match order {
            Order::F => [inner, inner * e[0]],
            Order::C => [inner * e[1], inner],
        };
        let (field_offset, total_elems) = if soa {
            let align_elems = align / ELEM_BYTES;
            let padded = align_up(points, align_elems);
            let offsets: Vec<u64> = (0..nf).map(|f| f * padded).collect();
            let total = padded.checked_mul(nf).ok_or(LayoutError::TooLarge(e))?;
            (offsets, total)
        } else {
            let total = points.checked_mul(nf).ok_or(LayoutError::TooLarge(e))?;
            ((0..nf).collect(), total)
        };
        let size_bytes = total_elems
            .checked_mul(ELEM_BYTES)
            .ok_or(LayoutError::TooLarge(e))?;
        Ok(InstanceLayout {
            extents: e,
            fields,
            soa,
            order,
            align,
            field_offset,
            strides,
            size_bytes,
        })
    }

    /// Points in the piece.
    pub fn points(&self) -> u64 {
        self.extents[0] * self.extents[1]
    }

    /// Element index of `(i, j)` of field `f`.
    #[inline]
    pub fn index(&self, f: usize, i: u64, j: u64) -> usize {
        (self.field_offset[f] + i * self.strides[0] + j * self.strides[1]) as usize
    }

    /// Bytes to allocate so that an aligned base fits whatever alignment the
    /// allocator gives (at least 8): the span plus the alignment slack.
    pub fn alloc_bytes(&self) -> u64 {
        self.size_bytes + self.align.saturating_sub(ELEM_BYTES)
    }

    /// Byte offset from an allocation at `addr` to the instance's aligned
    /// base.
    pub fn base_offset(&self, addr: u64) -> u64 {
        align_up(addr, self.align) - addr
    }

    /// The kernel parameter block for an instance whose base is `base`
    /// (a device or host address).
    pub fn params(&self, base: u64) -> InstParams {
        let mut f = [0i64; MAX_FIELDS];
        for (k, off) in self.field_offset.iter().enumerate() {
            f[k] = *off as i64;
        }
        InstParams {
            base,
            s0: self.strides[0] as i64,
            s1: self.strides[1] as i64,
            n0: self.extents[0] as i64,
            n1: self.extents[1] as i64,
            f,
        }
    }

    /// Whether two layouts place every element identically (so a raw byte
    /// copy moves one into the other).
    pub fn same_placement(&self, other: &InstanceLayout) -> bool {
        self.extents == other.extents
            && self.fields == other.fields
            && self.field_offset == other.field_offset
            && self.strides == other.strides
            && self.size_bytes == other.size_bytes
    }
}

/// What a kernel is given for each instance it accesses: the base address
/// and the indexing of [`InstanceLayout::index`]. `#[repr(C)]` and laid out
/// like the `Inst` struct of the CUDA sources (`runtime/src/cuda/kernels.rs`),
/// which take it by value.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InstParams {
    pub base: u64,
    pub s0: i64,
    pub s1: i64,
    pub n0: i64,
    pub n1: i64,
    pub f: [i64; MAX_FIELDS],
}

/// A rectangle of points of a piece: origin and extent per dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub lo: [u64; 2],
    pub len: [u64; 2],
}

impl Rect {
    /// The whole of a piece.
    pub fn whole(layout: &InstanceLayout) -> Rect {
        Rect {
            lo: [0, 0],
            len: layout.extents,
        }
    }

    /// Rows `lo..lo+n` of dimension 0, all of dimension 1.
    pub fn rows(layout: &InstanceLayout, lo: u64, n: u64) -> Rect {
        Rect {
            lo: [lo, 0],
            len: [n, layout.extents[1]],
        }
    }

    pub fn points(&self) -> u64 {
        self.len[0] * self.len[1]
    }

    /// Whether the rectangle lies inside the piece.
    pub fn inside(&self, layout: &InstanceLayout) -> bool {
        (0..2).all(|d| self.lo[d] + self.len[d] <= layout.extents[d])
    }
}

/// Index, in a packed buffer, of point `(a, b)` (relative to a rectangle's
/// origin) of the `k`-th packed field: packed buffers are field-major, the
/// rectangle's dimension 1 fastest. Host and CUDA pack/unpack use it.
#[inline]
pub fn packed_index(rect: &Rect, k: usize, a: u64, b: u64) -> usize {
    (k as u64 * rect.points() + a * rect.len[1] + b) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lay(ext: &[u64], nf: usize, soa: bool, order: Order, align: u64) -> InstanceLayout {
        InstanceLayout::with(ext, nf, soa, order, align).unwrap()
    }

    #[test]
    fn soa_f_order_is_field_major_first_dimension_fastest() {
        // 3 x 2 points, 2 fields, 8-byte alignment: no padding.
        let l = lay(&[3, 2], 2, true, Order::F, 8);
        assert_eq!(l.strides, [1, 3]);
        assert_eq!(l.field_offset, vec![0, 6]);
        assert_eq!(l.size_bytes, 12 * 8);
        assert_eq!(l.index(0, 2, 1), 5);
        assert_eq!(l.index(1, 0, 1), 9);
    }

    #[test]
    fn soa_c_order_makes_the_last_dimension_fastest() {
        let l = lay(&[3, 2], 2, true, Order::C, 8);
        assert_eq!(l.strides, [2, 1]);
        assert_eq!(l.index(0, 2, 1), 5);
        assert_eq!(l.index(0, 1, 0), 2);
    }

    #[test]
    fn aos_interleaves_fields() {
        let l = lay(&[3, 2], 2, false, Order::F, 8);
        assert_eq!(l.field_offset, vec![0, 1]);
        assert_eq!(l.strides, [2, 6]);
        // (1, 0) field 1: second struct, second field.
        assert_eq!(l.index(1, 1, 0), 3);
        let c = lay(&[3, 2], 2, false, Order::C, 8);
        assert_eq!(c.strides, [4, 2]);
        assert_eq!(c.index(1, 0, 1), 3);
        assert_eq!(c.size_bytes, 12 * 8);
    }

    #[test]
    fn every_layout_is_a_bijection_onto_its_span() {
        for soa in [true, false] {
            for order in [Order::C, Order::F] {
                for align in [8, 16, 128, 48] {
                    let l = lay(&[5, 3], 3, soa, order, align);
                    let mut seen = std::collections::HashSet::new();
                    for f in 0..3 {
                        for i in 0..5 {
                            for j in 0..3 {
                                let x = l.index(f, i, j);
                                assert!((x as u64) < l.size_bytes / 8);
                                assert!(seen.insert(x), "{soa} {order:?} {align}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn soa_field_arrays_start_on_the_alignment() {
        // 5 points of 8 bytes = 40 bytes; align 128 pads each array to 128.
        let l = lay(&[5], 2, true, Order::F, 128);
        assert_eq!(l.field_offset, vec![0, 16]);
        assert_eq!(l.size_bytes, 256);
        assert_eq!(l.alloc_bytes(), 256 + 120);
        for off in &l.field_offset {
            assert_eq!((off * 8) % 128, 0);
        }
        // A non-power-of-two alignment still holds: 48 bytes = 6 elements.
        let l = lay(&[5], 2, true, Order::F, 48);
        assert_eq!(l.field_offset, vec![0, 6]);
        assert_eq!(l.base_offset(1000), 8); // 1008 = 21 * 48
    }

    #[test]
    fn align_constraints_resolve_to_multiples_of_eight() {
        assert_eq!(alignment(None), 16);
        assert_eq!(alignment(Some((AlignOp::Eq, 128))), 128);
        assert_eq!(alignment(Some((AlignOp::Eq, 4))), 8);
        assert_eq!(alignment(Some((AlignOp::Eq, 12))), 24);
        assert_eq!(alignment(Some((AlignOp::Ge, 64))), 64);
        assert_eq!(alignment(Some((AlignOp::Gt, 64))), 128);
        assert_eq!(alignment(Some((AlignOp::Le, 8))), 8);
        assert_eq!(alignment(Some((AlignOp::Lt, 64))), 16);
        assert_eq!(alignment(Some((AlignOp::Ne, 16))), 32);
        assert_eq!(align_up(17, 16), 32);
        assert_eq!(align_up(32, 16), 32);
    }

    #[test]
    fn params_carry_the_indexing() {
        let l = lay(&[4, 4], 3, false, Order::C, 16);
        let p = l.params(0x1000);
        assert_eq!((p.s0, p.s1, p.n0, p.n1), (12, 3, 4, 4));
        assert_eq!(&p.f[..3], &[0, 1, 2]);
        assert_eq!(std::mem::size_of::<InstParams>(), 8 * (5 + MAX_FIELDS));
    }

    #[test]
    fn bad_field_counts_are_errors() {
        assert!(InstanceLayout::with(&[4], 0, true, Order::F, 8).is_err());
        assert!(InstanceLayout::with(&[4], 9, true, Order::F, 8).is_err());
        assert!(InstanceLayout::with(&[u64::MAX, 4], 1, true, Order::F, 8).is_err());
    }

    #[test]
    fn packed_buffers_are_field_major() {
        let r = Rect {
            lo: [1, 0],
            len: [2, 3],
        };
        assert_eq!(packed_index(&r, 0, 0, 0), 0);
        assert_eq!(packed_index(&r, 0, 1, 2), 5);
        assert_eq!(packed_index(&r, 1, 0, 0), 6);
    }
}
