//! Columns: one key read from every entity of a [`Store`] or a [`StoreView`], with a
//! [`KeyCursor`], in dense order, as the type the caller names ([`ColumnValue`]).

use super::Either;
use super::cursor::{KeyCursor, Source, Through};
use crate::blob::BlobRef;
use crate::blob::layout::{self, Probe, Shape};
use crate::blob::write::stored_value;
use crate::format::{LoadError, StoreView};
use crate::handle_map::Id;
use crate::key::Key;
use crate::store::Store;
use crate::value::{AsValue, OwnedValue, ValueType};

/// A type a column reads: one of [`Value`](crate::Value)'s four, `f32`, `bool`, `&str` or
/// `&[f32]`, named as [`Store::column`]'s type parameter. An entity whose value at the key is
/// of another type is skipped.
///
/// Sealed: the four are all there are. Each reads its value with the cursor's typed read
/// (`KeyCursor::get_float` for `f32`, and so on), so a column of one type compiles to the loop
/// that type's read alone would.
///
/// # Examples
///
/// ```
/// use datacomp::Store;
///
/// let mut world = Store::new();
/// let orc = world.insert_entries([("level", 3.0)]).unwrap();
/// world.insert_entries([("level", "three")]).unwrap();
/// assert_eq!(world.column::<f32>("level").collect::<Vec<_>>(), [(orc, 3.0)]);
/// ```
pub trait ColumnValue<'a>: sealed::Read<'a> + 'a {}

mod sealed {
    use crate::blob::BlobRef;
    use crate::query::cursor::{KeyCursor, Source};

    /// The typed read behind [`ColumnValue`](super::ColumnValue): private, so no other type
    /// can be one.
    pub trait Read<'a>: Sized + Copy {
        /// The value at `cursor`'s key in `entity` (a blob, or an entity read through its
        /// prototypes), if it is of this type.
        fn read(cursor: &KeyCursor, entity: impl Source<'a>) -> Option<Self>;

        /// The value of `blob`'s entry `found` (tag, header value), if it is of this type.
        fn of(blob: BlobRef<'a>, found: Option<(u8, u32)>) -> Option<Self>;
    }

    impl<'a> Read<'a> for f32 {
        #[inline]
        fn read(cursor: &KeyCursor, entity: impl Source<'a>) -> Option<f32> {
            entity.get_float(cursor)
        }

        #[inline]
        fn of(_blob: BlobRef<'a>, found: Option<(u8, u32)>) -> Option<f32> {
            BlobRef::float_of(found)
        }
    }

    impl<'a> Read<'a> for bool {
        #[inline]
        fn read(cursor: &KeyCursor, entity: impl Source<'a>) -> Option<bool> {
            entity.get_bool(cursor)
        }

        #[inline]
        fn of(_blob: BlobRef<'a>, found: Option<(u8, u32)>) -> Option<bool> {
            BlobRef::bool_of(found)
        }
    }

    impl<'a> Read<'a> for &'a str {
        #[inline]
        fn read(cursor: &KeyCursor, entity: impl Source<'a>) -> Option<&'a str> {
            entity.get_str(cursor)
        }

        #[inline]
        fn of(blob: BlobRef<'a>, found: Option<(u8, u32)>) -> Option<&'a str> {
            blob.str_of(found)
        }
    }

    impl<'a> Read<'a> for &'a [f32] {
        #[inline]
        fn read(cursor: &KeyCursor, entity: impl Source<'a>) -> Option<&'a [f32]> {
            entity.get_floats(cursor)
        }

        #[inline]
        fn of(blob: BlobRef<'a>, found: Option<(u8, u32)>) -> Option<&'a [f32]> {
            blob.floats_of(found)
        }
    }
}

impl ColumnValue<'_> for f32 {}
impl ColumnValue<'_> for bool {}
impl<'a> ColumnValue<'a> for &'a str {}
impl<'a> ColumnValue<'a> for &'a [f32] {}

/// The entities of `entities` that hold a `T` at `key`, with that value; read through their
/// prototypes when `store` is given (a store with links). The choice is made once, outside
/// the loop, so a store without links runs the blob loop alone.
fn column<'a, T: ColumnValue<'a>>(
    entities: impl Iterator<Item = (Id, BlobRef<'a>)>,
    key: Key,
    store: Option<&'a Store>,
) -> impl Iterator<Item = (Id, T)> {
    let cursor = KeyCursor::new(key);
    match store {
        None => {
            let mut probe = Probe::NONE;
            Either::Left(entities.filter_map(
                #[inline(always)]
                move |(id, blob)| {
                    Some((id, T::of(blob, probed(&mut probe, blob.as_words(), key))?))
                },
            ))
        }
        Some(store) => {
            // The store's slots and spans, not its handles and blobs: an instance read
            // through its filter and its prototype's remembered read makes neither.
            let mut through = Through::new(store, key, None);
            let index = store.index();
            Either::Right(index.slots_and_items().filter_map(
                #[inline(always)]
                move |(slot, &span)| {
                    let value =
                        through.read_slot(&cursor, slot, span, |found| T::read(&cursor, found))?;
                    Some((index.id_of_live_slot(slot), value))
                },
            ))
        }
    }
}

/// The key's entry in `words`: at `probe`, where it was found last, else by a scan whose
/// shape becomes the probe. A column's own cursor: where a [`KeyCursor`] keeps its position
/// in atomic words (loaded again for each entity, as another thread may move them) and
/// derives the header offsets from it each time, a column is the only reader of its probe,
/// which stays in registers with those offsets computed once a layout.
#[allow(clippy::inline_always)]
#[inline(always)]
fn probed(probe: &mut Probe, words: &[u32], key: Key) -> Option<(u8, u32)> {
    if let hit @ Some(_) = probe.entry(words, key) {
        return hit;
    }
    let (tag, raw, shape) = scan(words, key)?;
    *probe = Probe::new(shape).unwrap_or(Probe::NONE);
    Some((tag, raw))
}

/// The scan after a missed probe, out of line: it only reads, so the loop around it keeps the
/// arena and the probe in registers.
#[cold]
#[inline(never)]
fn scan(words: &[u32], key: Key) -> Option<(u8, u32, Shape)> {
    layout::lookup_shape(words, key)
}

/// The entities of `entities` whose value at `key` equals `value` (`None`: a value no entity
/// can hold, so none); read through their prototypes when `store` is given.
fn find<'a>(
    entities: impl Iterator<Item = (Id, BlobRef<'a>)>,
    key: Key,
    value: Option<OwnedValue>,
    store: Option<&'a Store>,
) -> impl Iterator<Item = Id> {
    let cursor = KeyCursor::new(key);
    let entities = entities.take(if value.is_some() { usize::MAX } else { 0 });
    match store {
        None => Either::Left(
            entities
                .filter_map(move |(id, blob)| equals(&cursor, blob, value.as_ref()?).then_some(id)),
        ),
        Some(store) => {
            let mut through = Through::new(store, key, false);
            Either::Right(entities.filter_map(move |(id, blob)| {
                let value = value.as_ref()?;
                through.read(&cursor, id, blob, |found| equals(&cursor, found, value)).then_some(id)
            }))
        }
    }
}

/// Whether `entity`'s value at `cursor`'s key is `value`. The common cases (a name, a
/// number) read their type alone, as a column of it does; a string compares its bytes, with
/// no UTF-8 check (equal bytes to valid text are valid).
#[inline]
#[allow(clippy::float_cmp)] // Equal as numbers: what a designer means by "level 3".
fn equals<'a>(cursor: &KeyCursor, entity: impl Source<'a>, value: &OwnedValue) -> bool {
    match value {
        OwnedValue::Str(s) => entity.entry(cursor).is_some_and(|(blob, tag, raw)| {
            tag == ValueType::Str as u8 && layout::str_bytes(blob.as_words(), raw) == s.as_bytes()
        }),
        OwnedValue::Float(x) => entity.get_float(cursor) == Some(*x),
        other => entity.get(cursor).is_some_and(|v| v == other.as_value()),
    }
}

/// The column reader of a [`Store`]: see also [`StoreView::column`].
impl Store {
    /// Every entity that holds a `T` at `key` (an `f32`, `bool`, `&str` or `&[f32]`: see
    /// [`ColumnValue`]), with that value, in dense order (memory order after
    /// [`compact`](Store::compact)). Entities without the key, or with another type at it,
    /// are skipped.
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
    /// let health: Vec<_> = world.column::<f32>("stats.health").collect();
    /// assert_eq!(health, [(orc, 30.0), (troll, 80.0)]);
    /// let total: f32 = world.column::<f32>("stats.health").map(|(_, h)| h).sum();
    /// assert_eq!(total, 110.0);
    /// ```
    ///
    /// Booleans, strings and float arrays, the last two borrowed from the store:
    ///
    /// ```
    /// use datacomp::{Blob, Store};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("poisoned", true)].into_iter().collect::<Blob>());
    /// let elf = world.insert(&[("poisoned", false)].into_iter().collect::<Blob>());
    /// let poisoned: Vec<_> = world.column::<bool>("poisoned").collect();
    /// assert_eq!(poisoned, [(orc, true), (elf, false)]);
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("name", "Orc")].into_iter().collect::<Blob>());
    /// assert_eq!(world.column::<&str>("name").collect::<Vec<_>>(), [(orc, "Orc")]);
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("position", [1.0, 2.0]).unwrap();
    /// let mut world = Store::new();
    /// let orc = world.insert(&sheet);
    /// let position: Vec<_> = world.column::<&[f32]>("position").collect();
    /// assert_eq!(position, [(orc, &[1.0, 2.0][..])]);
    /// ```
    pub fn column<'s, T: ColumnValue<'s>>(
        &'s self,
        key: impl Into<Key>,
    ) -> impl Iterator<Item = (Id, T)> + 's {
        let store = (!self.links().is_empty()).then_some(self);
        column(self.iter(), key.into(), store)
    }

    /// Every entity whose value at `key` equals `value`, in dense order: "the Orc", by name.
    /// One pass at a column's speed (one [`KeyCursor`], the value's type read alone), no
    /// allocation but a copy of a string `value`.
    ///
    /// Numbers compare as numbers (`0.0` finds `-0.0`, a NaN finds nothing); an integer
    /// `value` an `f32` cannot hold exactly finds nothing, as no entity can hold it. For
    /// other tests (`<`, `and`, `has`), see [`Query`](crate::Query).
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("name", "Orc"), ("level", "3")])?;
    /// let troll = world.insert_entries([("name", "Troll"), ("level", "3")])?;
    /// let boss = world.insert_entries([("name", "Orc"), ("level", "9")])?;
    /// assert_eq!(world.find("name", "Orc").collect::<Vec<_>>(), [orc, boss]);
    /// assert_eq!(world.find("name", "Elf").next(), None);
    ///
    /// world.get_mut(troll).unwrap().set("stats.health", 80)?;
    /// assert_eq!(world.find("stats.health", 80).collect::<Vec<_>>(), [troll]);
    /// assert_eq!(world.find("stats.health", "80").next(), None, "a string is not a number");
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn find(&self, key: impl Into<Key>, value: impl AsValue) -> impl Iterator<Item = Id> + '_ {
        let value = stored_value(&value).ok().map(|v| v.to_owned_value());
        let store = (!self.links().is_empty()).then_some(self);
        find(self.iter(), key.into(), value, store)
    }
}

/// The column reader of a [`StoreView`], as on [`Store`].
impl<'a> StoreView<'a> {
    /// Every entity that holds a `T` at `key` (see [`ColumnValue`]), with that value (a
    /// string or float array borrowed from the saved bytes), in the saved dense order. As
    /// [`Store::column`], for a save without prototype links.
    ///
    /// # Errors
    ///
    /// [`StoreError::LinkedView`](crate::format::StoreError::LinkedView) if an entity of the
    /// save has a prototype, as [`StoreView::query`].
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
    /// assert_eq!(view.column::<f32>("stats.health")?.collect::<Vec<_>>(), [(orc, 30.0)]);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    ///
    /// Booleans, strings and float arrays:
    ///
    /// ```
    /// use datacomp::{Blob, Store, StoreView};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("poisoned", true)].into_iter().collect::<Blob>());
    /// let bytes = world.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// assert_eq!(view.column::<bool>("poisoned")?.collect::<Vec<_>>(), [(orc, true)]);
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert(&[("name", "Orc")].into_iter().collect::<Blob>());
    /// let bytes = world.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// assert_eq!(view.column::<&str>("name")?.collect::<Vec<_>>(), [(orc, "Orc")]);
    ///
    /// let mut sheet = Blob::new();
    /// sheet.set("position", [1.0, 2.0]).unwrap();
    /// let mut world = Store::new();
    /// let orc = world.insert(&sheet);
    /// let bytes = world.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// let position: Vec<_> = view.column::<&[f32]>("position")?.collect();
    /// assert_eq!(position, [(orc, &[1.0, 2.0][..])]);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    pub fn column<T: ColumnValue<'a>>(
        &self,
        key: impl Into<Key>,
    ) -> Result<impl Iterator<Item = (Id, T)> + '_, LoadError> {
        self.check_unlinked()?;
        Ok(column(self.iter(), key.into(), None))
    }

    /// Every entity whose value at `key` equals `value`, in the saved dense order. As
    /// [`Store::find`], for a save without prototype links.
    ///
    /// # Errors
    ///
    /// [`StoreError::LinkedView`](crate::format::StoreError::LinkedView) if an entity of the
    /// save has a prototype, as [`StoreView::query`].
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::{Store, StoreView};
    ///
    /// let mut world = Store::new();
    /// let orc = world.insert_entries([("name", "Orc")])?;
    /// let bytes = world.to_bytes();
    /// let view = StoreView::new(&bytes)?;
    /// assert_eq!(view.find("name", "Orc")?.collect::<Vec<_>>(), [orc]);
    /// # Ok::<(), datacomp::Error>(())
    /// ```
    pub fn find(
        &self,
        key: impl Into<Key>,
        value: impl AsValue,
    ) -> Result<impl Iterator<Item = Id> + '_, LoadError> {
        self.check_unlinked()?;
        let value = stored_value(&value).ok().map(|v| v.to_owned_value());
        Ok(find(self.iter(), key.into(), value, None))
    }
}
