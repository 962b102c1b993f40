//! Columns: one key read from every entity of a [`Store`] or a [`StoreView`], with a
//! [`KeyCursor`], in dense order.

use super::cursor::KeyCursor;
use crate::blob::BlobRef;
use crate::format::StoreView;
use crate::handle_map::Id;
use crate::key::Key;
use crate::store::Store;

/// The entities of `entities` that hold a value `read` accepts at `key`, with that value.
fn column<'a, T>(
    entities: impl Iterator<Item = (Id, BlobRef<'a>)>,
    key: Key,
    read: impl Fn(&KeyCursor, BlobRef<'a>) -> Option<T>,
) -> impl Iterator<Item = (Id, T)> {
    let cursor = KeyCursor::new(key);
    entities.filter_map(move |(id, blob)| Some((id, read(&cursor, blob)?)))
}

/// Column readers of a [`Store`]: see also the same methods on [`StoreView`].
impl Store {
    /// Every entity that holds a float at `key`, with that float, in dense order (memory order
    /// after [`compact`](Store::compact)). Entities without the key, or with another type at
    /// it, are skipped.
    ///
    /// The key is found with one [`KeyCursor`], so entities that share a layout cost one
    /// compare each to find it.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("stats.health", 30.0)].into_iter().collect::<Blob>());
    /// world.insert(&[("name", "a chest")].into_iter().collect::<Blob>());
    /// let troll = world.insert(&[("stats.health", 80.0)].into_iter().collect::<Blob>());
    ///
    /// let health: Vec<_> = world.column_f32("stats.health").collect();
    /// assert_eq!(health, [(orc, 30.0), (troll, 80.0)]);
    /// let total: f32 = world.column_f32("stats.health").map(|(_, h)| h).sum();
    /// assert_eq!(total, 110.0);
    /// ```
    pub fn column_f32(&self, key: impl Into<Key>) -> impl Iterator<Item = (Id, f32)> + '_ {
        column(self.iter(), key.into(), KeyCursor::get_float)
    }

    /// Every entity that holds a boolean at `key`, with that boolean, in dense order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("poisoned", true)].into_iter().collect::<Blob>());
    /// let elf = world.insert(&[("poisoned", false)].into_iter().collect::<Blob>());
    /// let poisoned: Vec<_> = world.column_bool("poisoned").collect();
    /// assert_eq!(poisoned, [(orc, true), (elf, false)]);
    /// ```
    pub fn column_bool(&self, key: impl Into<Key>) -> impl Iterator<Item = (Id, bool)> + '_ {
        column(self.iter(), key.into(), KeyCursor::get_bool)
    }

    /// Every entity that holds a string at `key`, with that string, in dense order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("name", "Orc")].into_iter().collect::<Blob>());
    /// assert_eq!(world.column_str("name").collect::<Vec<_>>(), [(orc, "Orc")]);
    /// ```
    pub fn column_str(&self, key: impl Into<Key>) -> impl Iterator<Item = (Id, &str)> + '_ {
        column(self.iter(), key.into(), KeyCursor::get_str)
    }

    /// Every entity that holds a float array at `key`, with that array, in dense order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store};
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("position", [1.0, 2.0]);
    /// let mut world = Store::new();
    /// let orc = world.insert(&sheet);
    /// assert_eq!(world.column_floats("position").collect::<Vec<_>>(), [(orc, &[1.0, 2.0][..])]);
    /// ```
    pub fn column_floats(&self, key: impl Into<Key>) -> impl Iterator<Item = (Id, &[f32])> + '_ {
        column(self.iter(), key.into(), KeyCursor::get_floats)
    }
}

/// Column readers of a [`StoreView`], as on [`Store`].
impl<'a> StoreView<'a> {
    /// Every entity that holds a float at `key`, with that float, in the saved dense order.
    /// As [`Store::column_f32`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store, StoreView};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("stats.health", 30.0)].into_iter().collect::<Blob>());
    /// let bytes = world.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// assert_eq!(view.column_f32("stats.health").collect::<Vec<_>>(), [(orc, 30.0)]);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn column_f32(&self, key: impl Into<Key>) -> impl Iterator<Item = (Id, f32)> + '_ {
        column(self.iter(), key.into(), KeyCursor::get_float)
    }

    /// Every entity that holds a boolean at `key`, with that boolean, in the saved dense
    /// order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store, StoreView};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("poisoned", true)].into_iter().collect::<Blob>());
    /// let bytes = world.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// assert_eq!(view.column_bool("poisoned").collect::<Vec<_>>(), [(orc, true)]);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn column_bool(&self, key: impl Into<Key>) -> impl Iterator<Item = (Id, bool)> + '_ {
        column(self.iter(), key.into(), KeyCursor::get_bool)
    }

    /// Every entity that holds a string at `key`, with that string (borrowed from the saved
    /// bytes), in the saved dense order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store, StoreView};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("name", "Orc")].into_iter().collect::<Blob>());
    /// let bytes = world.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// assert_eq!(view.column_str("name").collect::<Vec<_>>(), [(orc, "Orc")]);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn column_str(&self, key: impl Into<Key>) -> impl Iterator<Item = (Id, &'a str)> + '_ {
        column(self.iter(), key.into(), KeyCursor::get_str)
    }

    /// Every entity that holds a float array at `key`, with that array (borrowed from the
    /// saved bytes), in the saved dense order.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Blob, Store, StoreView};
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("position", [1.0, 2.0]);
    /// let mut world = Store::new();
    /// let orc = world.insert(&sheet);
    /// let bytes = world.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// assert_eq!(view.column_floats("position").collect::<Vec<_>>(), [(orc, &[1.0, 2.0][..])]);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn column_floats(&self, key: impl Into<Key>) -> impl Iterator<Item = (Id, &'a [f32])> + '_ {
        column(self.iter(), key.into(), KeyCursor::get_floats)
    }
}
