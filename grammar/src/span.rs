//! [`Span`]: a half-open byte range `[start, end)` in the source text.
//!
//! Every token, tree node, symbol and diagnostic carries one, so its size
//! multiplies with the input: the offsets are stored as two `u32` (8 bytes,
//! not 16). Offsets past `u32::MAX` (texts over 4 GiB, which no caller
//! reads) saturate rather than wrap or panic. Callers see `usize` through
//! [`Span::start`], [`Span::end`] and [`Span::range`]; serialized, a span is
//! still `{"start": S, "end": E}`.

use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` in the source text.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub struct Span {
    // Field order is (start, end): the derived `Ord` sorts by start first.
    #[serde(rename = "start")]
    lo: u32,
    #[serde(rename = "end")]
    hi: u32,
}

/// `offset` as stored in a span: saturated at `u32::MAX`.
fn narrow(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

impl Span {
    /// The empty span at offset 0 (a constant [`Span::at`]`(0)`).
    pub const START: Span = Span { lo: 0, hi: 0 };

    pub fn new(start: usize, end: usize) -> Span {
        Span {
            lo: narrow(start),
            hi: narrow(end),
        }
    }

    /// An empty span at `offset` (an insertion point).
    pub fn at(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    /// The first byte's offset.
    pub fn start(&self) -> usize {
        self.lo as usize
    }

    /// The offset just past the last byte.
    pub fn end(&self) -> usize {
        self.hi as usize
    }

    /// `start()..end()`, for slicing the source.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start()..self.end()
    }

    /// The same span with its start moved to `start`.
    pub fn with_start(self, start: usize) -> Span {
        Span::new(start, self.end())
    }

    /// The same span with its end moved to `end`.
    pub fn with_end(self, end: usize) -> Span {
        Span::new(self.start(), end)
    }

    pub fn len(&self) -> usize {
        self.hi.saturating_sub(self.lo) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    pub fn contains(&self, offset: usize) -> bool {
        self.start() <= offset && offset < self.end()
    }

    /// The source text under the span, or `""` if it is out of range.
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        source.get(self.range()).unwrap_or("")
    }
}

impl From<std::ops::Range<usize>> for Span {
    fn from(r: std::ops::Range<usize>) -> Span {
        Span::new(r.start, r.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_two_u32() {
        assert_eq!(std::mem::size_of::<Span>(), 8);
    }

    #[test]
    fn accessors_and_serialization_keep_the_usize_view() {
        let s = Span::new(3, 10);
        assert_eq!((s.start(), s.end(), s.range(), s.len()), (3, 10, 3..10, 7));
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"start":3,"end":10}"#
        );
        let back: Span = serde_json::from_str(r#"{"start":3,"end":10}"#).unwrap();
        assert_eq!(back, s);
        assert!(Span::new(1, 9) < Span::new(2, 3));
    }

    #[test]
    fn offsets_past_u32_saturate() {
        let s = Span::new(usize::MAX, usize::MAX);
        assert_eq!(s.start(), u32::MAX as usize);
        assert!(s.is_empty());
    }
}
