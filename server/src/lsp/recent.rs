//! A process-wide list of the most recently used shared values.
//!
//! Documents hold what they computed (analyses, mapping resolutions)
//! weakly; the strong references live in one of these lists, so only the
//! few values an editor keeps asking about stay in memory. A value a request
//! still holds stays alive whatever the list says.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The strong references to the most recently used values (front: newest).
pub struct RecentlyUsed<T> {
    list: Mutex<VecDeque<Arc<T>>>,
}

impl<T> Default for RecentlyUsed<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> RecentlyUsed<T> {
    /// An empty list (usable in a `static`).
    pub const fn new() -> Self {
        RecentlyUsed {
            list: Mutex::new(VecDeque::new()),
        }
    }

    /// Marks `value` as just used, then keeps the first `how_many(list)` of
    /// the list, newest first; the rest is returned, taken out under the
    /// lock (its memory is freed when the caller drops it and no request
    /// holds it).
    pub fn touch(
        &self,
        value: &Arc<T>,
        how_many: impl FnOnce(&VecDeque<Arc<T>>) -> usize,
    ) -> VecDeque<Arc<T>> {
        {
            let mut recent = self.list.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = recent.iter().position(|x| Arc::ptr_eq(x, value)) {
                recent.remove(i);
            }
            recent.push_front(value.clone());
            let keep = how_many(&recent).min(recent.len());
            recent.split_off(keep)
        }
    }

    /// Takes `value` out of the list, if it is there (its last user is
    /// about to consume it).
    pub fn take(&self, value: &Arc<T>) -> Option<Arc<T>> {
        let mut recent = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let i = recent.iter().position(|x| Arc::ptr_eq(x, value))?;
        recent.remove(i)
    }
}
