//! The checker's type of each symbol while it checks: a vector indexed by
//! symbol number, not a hash map. Most symbols get a type (every global
//! assigned, every parameter), so a slot per symbol costs less than a map
//! entry per typed symbol (key, value and control byte at 7/8 load), and
//! it never rehashes: the map's last growth, holding the old and the new
//! table, was the peak of checking a big file (see bench/memory).
//! [`Checked::symbol_types`](super::Checked) stays a map, built at the end.

use super::Ty;
use crate::fast_hash::{map_with_capacity, FastMap};

/// Type by symbol number (see the module doc).
#[derive(Debug, Default)]
pub(super) struct SymbolTypes {
    slots: Vec<Option<Ty>>,
}

impl SymbolTypes {
    /// Room for `symbols` symbols, none typed yet.
    pub(super) fn with_symbols(symbols: usize) -> SymbolTypes {
        SymbolTypes {
            slots: vec![None; symbols],
        }
    }

    pub(super) fn get(&self, id: usize) -> Option<Ty> {
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

    /// The typed symbols as the map [`super::Checked`] publishes.
    pub(super) fn into_map(self) -> FastMap<usize, Ty> {
        let typed = self.slots.iter().filter(|t| t.is_some()).count();
        let mut map = map_with_capacity(typed);
        for (id, ty) in self.slots.into_iter().enumerate() {
            if let Some(ty) = ty {
                map.insert(id, ty);
            }
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_only_when_asked_and_the_map_has_the_typed_symbols() {
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
        let map = t.into_map();
        assert_eq!(map.len(), 2);
        assert_eq!(
            (map.get(&1), map.get(&7)),
            (Some(&Ty::Bool), Some(&Ty::Task))
        );
    }
}
