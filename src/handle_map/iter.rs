//! [`HandleMap`]'s iterators: [`Iter`], [`IterMut`], [`Drain`], each in dense order.

use std::fmt;

use super::{HandleMap, Id, Slot};

/// Iterator over `(Id, &T)` in dense order: returned by [`HandleMap::iter`].
pub struct Iter<'a, T> {
    pub(super) ids: IdsOf<'a>,
    // Slices zipped, not indices: no bounds check per item, so a caller that drops the
    // handles (a column's sum) loads neither `meta` nor the slots.
    pub(super) inner: std::iter::Zip<std::slice::Iter<'a, u32>, std::slice::Iter<'a, T>>,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = (Id, &'a T);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (&slot, item) = self.inner.next()?;
        Some((self.ids.id(slot), item))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (&slot, item) = self.inner.next_back()?;
        Some((self.ids.id(slot), item))
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}
impl<T> std::iter::FusedIterator for Iter<'_, T> {}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter { ids: self.ids, inner: self.inner.clone() }
    }
}

impl<T: fmt::Debug> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// What [`IterMut`] needs to rebuild handles while the items are borrowed mutably.
#[derive(Clone, Copy)]
pub(super) struct IdsOf<'a> {
    pub(super) slots: &'a [Slot],
    pub(super) base: u32,
}

impl IdsOf<'_> {
    /// The handle of live slot `slot`. Without a panic path (a slot past the end, which the
    /// map's invariant rules out, gives [`Id::NULL`]), so that an unused handle costs nothing.
    #[inline]
    fn id(&self, slot: u32) -> Id {
        self.slots.get(slot as usize).map_or(Id::NULL, |s| s.id(self.base + slot))
    }
}

/// Iterator over `(Id, &mut T)` in dense order: returned by [`HandleMap::iter_mut`].
pub struct IterMut<'a, T> {
    pub(super) ids: IdsOf<'a>,
    pub(super) inner: std::iter::Zip<std::slice::Iter<'a, u32>, std::slice::IterMut<'a, T>>,
}

impl<'a, T> Iterator for IterMut<'a, T> {
    type Item = (Id, &'a mut T);

    fn next(&mut self) -> Option<Self::Item> {
        let (&slot, item) = self.inner.next()?;
        Some((self.ids.id(slot), item))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<T> DoubleEndedIterator for IterMut<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (&slot, item) = self.inner.next_back()?;
        Some((self.ids.id(slot), item))
    }
}

impl<T> ExactSizeIterator for IterMut<'_, T> {}
impl<T> std::iter::FusedIterator for IterMut<'_, T> {}

impl<T: fmt::Debug> fmt::Debug for IterMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IterMut").field("remaining", &self.inner.len()).finish()
    }
}

/// The items of a map, taken out with their handles: returned by [`HandleMap::drain`] and by
/// the map's `into_iter`.
pub struct Drain<T> {
    pub(super) inner: std::iter::Zip<std::vec::IntoIter<Id>, std::vec::IntoIter<T>>,
}

impl<T> Iterator for Drain<T> {
    type Item = (Id, T);

    fn next(&mut self) -> Option<(Id, T)> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<T> DoubleEndedIterator for Drain<T> {
    fn next_back(&mut self) -> Option<(Id, T)> {
        self.inner.next_back()
    }
}

impl<T> ExactSizeIterator for Drain<T> {}
impl<T> std::iter::FusedIterator for Drain<T> {}

impl<T: fmt::Debug> fmt::Debug for Drain<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Drain").field("remaining", &self.inner.len()).finish()
    }
}

impl<'a, T> IntoIterator for &'a HandleMap<T> {
    type Item = (Id, &'a T);
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut HandleMap<T> {
    type Item = (Id, &'a mut T);
    type IntoIter = IterMut<'a, T>;

    fn into_iter(self) -> IterMut<'a, T> {
        self.iter_mut()
    }
}

impl<T> IntoIterator for HandleMap<T> {
    type Item = (Id, T);
    type IntoIter = Drain<T>;

    fn into_iter(mut self) -> Drain<T> {
        self.drain()
    }
}
