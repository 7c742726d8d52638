//! The checker's type of each symbol while it checks: a vector indexed by
//! symbol number, not a hash map. Most symbols get a type (every global
//! assigned, every parameter), so a slot per symbol costs less than a map
//! entry per typed symbol (key, value and control byte at 7/8 load), and
//! it never rehashes: the map's last growth, holding the old and the new
//! table, was the peak of checking a big file (see bench/memory).
//! [`Checked::symbol_types`](super::Checked) is this vector too: building a
//! map from it at the end of every check was 3 % of a keystroke's analysis
//! on a 5,000-line file.

use super::Ty;

/// Type by symbol number (see the module doc).
#[derive(Debug, Default, Clone)]
pub struct SymbolTypes {
    slots: Vec<Option<Ty>>,
}

/// Equal when the same symbols have the same types (however many untyped
/// slots either has at its end).
impl PartialEq for SymbolTypes {
    fn eq(&self, other: &Self) -> bool {
        let typed = |t: &SymbolTypes| {
            t.slots
                .iter()
                .rposition(Option::is_some)
                .map_or(0, |i| i + 1)
        };
        self.slots[..typed(self)] == other.slots[..typed(other)]
    }
}

impl SymbolTypes {
    /// Room for `symbols` symbols, none typed yet.
    pub(super) fn with_symbols(symbols: usize) -> SymbolTypes {
        SymbolTypes {
            slots: vec![None; symbols],
        }
    }

    /// The type of symbol `id`, if it has one.
    pub fn get(&self, id: usize) -> Option<Ty> {
        self.slots.get(id).copied().flatten()
    }

    /// Sets `id`'s type (`replace`), or only if it has none yet.
    pub(super) fn set(&mut self, id: usize, ty: Ty, replace: bool) {
        if id >= self.slots.len() {
            self.slots.resize(id + 1, None);
        }
        let slot = &mut self.slots[id];
        if replace || slot.is_none() {
            *slot = Some(ty);
        }
    }

    /// The typed symbols and their types, by symbol number.
    pub fn iter(&self) -> impl Iterator<Item = (usize, Ty)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(id, ty)| ty.map(|ty| (id, ty)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_only_when_asked_and_equality_ignores_untyped_slots() {
        let mut t = SymbolTypes::with_symbols(3);
        t.set(1, Ty::Int, false);
        t.set(1, Ty::Bool, false);
        assert_eq!(t.get(1), Some(Ty::Int));
        t.set(1, Ty::Bool, true);
        assert_eq!(t.get(1), Some(Ty::Bool));
        // Past the symbols it was made for: grows, as a map would.
        t.set(7, Ty::Task, false);
        assert_eq!(
            (t.get(0), t.get(7), t.get(99)),
            (None, Some(Ty::Task), None)
        );
        assert_eq!(
            t.iter().collect::<Vec<_>>(),
            vec![(1, Ty::Bool), (7, Ty::Task)]
        );
        let mut u = SymbolTypes::with_symbols(20);
        u.set(7, Ty::Task, false);
        u.set(1, Ty::Bool, false);
        assert_eq!(t, u);
        u.set(2, Ty::Int, false);
        assert_ne!(t, u);
    }
}
