//! [`Defs`]: where a symbol is defined, the first definition held in
//! place.

use std::ops::{Deref, DerefMut};

use serde::{Serialize, Serializer};

use crate::Span;

/// Where a symbol is defined, in source order (first = declaration), read
/// as a slice of spans. Most symbols are defined once: that definition is
/// kept inside the symbol rather than in an allocation of its own. Why:
/// an edit's resolution walks every symbol's definitions (to move those
/// after the edit, to find where each global is first defined), and in a
/// language server, whose caches are cold by the next keystroke, each
/// allocation read was a cache miss per symbol of the file.
#[derive(Clone)]
pub struct Defs(Repr);

#[derive(Clone)]
enum Repr {
    One(Span),
    Many(Vec<Span>),
}

impl Defs {
    /// A symbol's first definition.
    pub fn one(span: Span) -> Defs {
        Defs(Repr::One(span))
    }

    /// Adds a later definition.
    pub fn push(&mut self, span: Span) {
        match &mut self.0 {
            Repr::One(first) => self.0 = Repr::Many(vec![*first, span]),
            Repr::Many(all) => all.push(span),
        }
    }
}

impl Default for Defs {
    fn default() -> Defs {
        Defs(Repr::Many(Vec::new()))
    }
}

impl Deref for Defs {
    type Target = [Span];

    fn deref(&self) -> &[Span] {
        match &self.0 {
            Repr::One(first) => std::slice::from_ref(first),
            Repr::Many(all) => all,
        }
    }
}

impl DerefMut for Defs {
    fn deref_mut(&mut self) -> &mut [Span] {
        match &mut self.0 {
            Repr::One(first) => std::slice::from_mut(first),
            Repr::Many(all) => all,
        }
    }
}

impl<'a> IntoIterator for &'a Defs {
    type Item = &'a Span;
    type IntoIter = std::slice::Iter<'a, Span>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Equal when they list the same spans, however they are held.
impl PartialEq for Defs {
    fn eq(&self, other: &Defs) -> bool {
        **self == **other
    }
}

impl Eq for Defs {}

/// As the list of spans (what a `Vec<Span>` printed).
impl std::fmt::Debug for Defs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// As the list of spans (what a `Vec<Span>` wrote).
impl Serialize for Defs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defs_read_as_the_spans_pushed_however_they_are_held() {
        let (a, b, c) = (Span::new(1, 2), Span::new(5, 6), Span::new(9, 12));
        let mut defs = Defs::one(a);
        assert_eq!(&*defs, &[a]);
        assert_eq!(format!("{defs:?}"), format!("{:?}", vec![a]));
        defs.push(b);
        defs.push(c);
        assert_eq!(&*defs, &[a, b, c]);
        defs[1] = c;
        assert_eq!(&*defs, &[a, c, c]);
        assert_eq!(Defs::default().len(), 0);
        let mut again = Defs::one(a);
        again.push(c);
        again.push(c);
        assert_eq!(again, defs);
        assert_ne!(Defs::one(a), defs);
        assert_eq!(
            serde_json::to_string(&defs).unwrap(),
            serde_json::to_string(&vec![a, c, c]).unwrap()
        );
    }
}
