//! The delta file: a [`StorePatch`] written and read as the save's container with sections of
//! its own (`delta base`, `delta index header`, `delta slot changes`, `delta meta changes`,
//! `delta entities`, and `key tree` when the names changed). What a patch means and how it
//! applies is `crate::store::delta`'s; this file owns its bytes.

use std::io::Write;
use std::path::Path;

use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::container::{
    DELTA, DELTA_LIST, DELTA_WRITTEN, LIST_KIND, PROTOTYPES, file_len, parse, write_file,
};
use super::error::{LoadError, StoreError};
use super::version::{KEY_HASH_FX32_BYTES, KEY_HASH_FX32_EMPTY};
use crate::blob::{layout, patch};
use crate::error::Error;
use crate::file::write_atomically;
use crate::handle_map::{Id, RawHeader};
use crate::names::KeyNames;
use crate::store::STORE_TYPE_ID;
use crate::store::delta::{
    CHANGED, INSERTED, LinkChange, MetaChange, RECORD_HEAD, SlotChange, StorePatch,
};

/// Bytes of the `delta base` section: the base's crc32, the flags, the base's data version
/// (format 1.0 wrote the first two only).
const DELTA_BASE_BYTES: usize = 12;

impl StorePatch {
    /// Writes the delta file: the save file's header (with the target's data version) and
    /// checks, with the sections `delta base` (the base's crc32, flags and data version),
    /// `delta index header`, `delta slot changes`, `delta meta changes`, `delta entities` and
    /// `key tree` (`key names` for a delta read with the flat list of formats 1.0 and 1.1).
    ///
    /// # Errors
    ///
    /// Whatever `out` returns.
    pub fn write_to(&self, out: impl Write) -> std::io::Result<()> {
        let base = [self.base_crc, u32::from(self.names.is_none()), self.base_data_version];
        let encode = if self.list_names { KeyNames::encode_list } else { KeyNames::encode_tree };
        let names = self.names.as_ref().map(encode).unwrap_or_default();
        let sections = [
            base.as_bytes(),
            self.header.as_bytes(),
            self.slots.as_bytes(),
            self.meta.as_bytes(),
            self.entities.as_bytes(),
            &names,
        ];
        if self.list_names {
            // Read from a 1.1 delta: written back as it was, which had no links.
            return write_file(&DELTA_LIST, &sections, self.data_version, out);
        }
        let [base, header, slots, meta, entities, names] = sections;
        let sections = [base, header, slots, meta, entities, names, self.links.as_bytes()];
        write_file(&DELTA_WRITTEN, &sections, self.data_version, out)
    }

    /// The delta file as bytes.
    #[must_use]
    #[allow(clippy::missing_panics_doc)] // Writing to a Vec cannot fail.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.file_len());
        self.write_to(&mut bytes).expect("writing to a Vec cannot fail");
        bytes
    }

    /// The delta file's size in bytes.
    #[must_use]
    pub fn file_len(&self) -> usize {
        let [base, header, slots, meta, entities, names] = [
            DELTA_BASE_BYTES,
            size_of::<RawHeader>(),
            self.slots.as_bytes().len(),
            self.meta.as_bytes().len(),
            self.entities.len() * 4,
            self.names.as_ref().map_or(0, |names| {
                if self.list_names { names.list_len() } else { names.tree_len() }
            }),
        ];
        if self.list_names {
            return file_len([base, header, slots, meta, entities, names]);
        }
        let links = self.links.as_bytes().len();
        file_len([base, header, slots, meta, entities, names, links])
    }

    /// Saves the delta file to `path` atomically, as [`Store::save`](crate::Store::save) saves a
    /// store.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if any step fails; `path` is untouched.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        write_atomically(path.as_ref(), |out| self.write_to(out))
    }

    /// Loads a delta file saved with [`save`](StorePatch::save).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the file cannot be read, [`Error::Load`] if it is not a valid delta.
    pub fn load(path: impl AsRef<Path>) -> Result<StorePatch, Error> {
        Ok(StorePatch::from_bytes(&super::read::read_file(path)?)?)
    }

    /// Reads a delta file, checking the header, table, crcs and padding as a load does, that
    /// the changes are in order, and every record, blob and patch. What can only be checked
    /// against the base (the handle map, that each record's entity is where the target has
    /// it) [`apply`](StorePatch::apply) checks.
    ///
    /// # Errors
    ///
    /// A [`LoadError`] that names the section, entry or record at fault;
    /// [`FileError::FileKind`](crate::format::FileError::FileKind) for a full save;
    /// [`StoreError::DeltaKeyHash`] for a delta of key hash 1, whose keys no store of this build has
    /// (apply it to its base with the release that wrote it, then load that save here to
    /// upgrade it).
    pub fn from_bytes(bytes: &[u8]) -> Result<StorePatch, LoadError> {
        let parsed = parse(bytes, &DELTA)?;
        // Its keys, in patches, blobs and names, are of the delta's key hash: applied to a
        // store of another, its patches would set and remove keys the base does not have.
        let refused = LoadError::Store(StoreError::DeltaKeyHash { key_hash: parsed.key_hash() });
        if ![KEY_HASH_FX32_BYTES, KEY_HASH_FX32_EMPTY].contains(&parsed.key_hash()) {
            return Err(refused);
        }
        let [base, header, slots, meta, entities, names] = parsed.sections;
        let list_names = parsed.kinds[5] == LIST_KIND;
        let size = |section, expected: usize, found: &[u8]| {
            LoadError::Store(StoreError::SectionSize {
                section,
                expected: expected as u64,
                found: found.len() as u64,
            })
        };
        // Format 1.0 wrote the crc32 and flags only: its base had data version 0.
        let [crc, flags, base_data_version] = match base.len() {
            8 => <[U32; 2]>::read_from_bytes(base)
                .map(|[crc, flags]| [crc, flags, U32::ZERO])
                .map_err(drop),
            _ => <[U32; 3]>::read_from_bytes(base).map_err(drop),
        }
        .map_err(|()| size("delta base", DELTA_BASE_BYTES, base))?
        .map(U32::get);
        let base_names = match flags {
            0 => false,
            1 if names.is_empty() => true,
            1 => {
                let problem = "the names are the base's, yet the key names section is not empty";
                let problem = if list_names {
                    problem
                } else {
                    "the names are the base's, yet the key tree section is not empty"
                };
                return Err(LoadError::Store(StoreError::DeltaChange {
                    section: "delta base",
                    index: 1,
                    problem,
                }));
            }
            _ => {
                let problem = "flags other than bit 0 (names are the base's) are set";
                return Err(LoadError::Store(StoreError::DeltaChange {
                    section: "delta base",
                    index: 1,
                    problem,
                }));
            }
        };
        let header = RawHeader::read_from_bytes(header)
            .map_err(|_| size("delta index header", size_of::<RawHeader>(), header))?;
        if header.type_id.get() != STORE_TYPE_ID {
            let found = header.type_id.get();
            return Err(LoadError::Store(StoreError::TypeId { expected: STORE_TYPE_ID, found }));
        }
        let slots =
            ascending("delta slot changes", slots, |c: &SlotChange| u64::from(c.slot.get()))?;
        let meta =
            ascending("delta meta changes", meta, |c: &MetaChange| u64::from(c.dense.get()))?;
        let links = parsed.prototypes.unwrap_or_default();
        let links = ascending(PROTOTYPES.1, links, |c: &LinkChange| c.instance.get())?;
        let (entities, inserted, changed) = check_records(entities)?;
        Ok(StorePatch {
            base_data_version,
            data_version: parsed.data_version(),
            base_crc: crc,
            header,
            slots,
            meta,
            entities,
            inserted,
            changed,
            names: if base_names {
                None
            } else {
                let names = KeyNames::decode(names, parsed.kinds[5], parsed.key_hash())?;
                // Key hash 2 differs from 3 only in keys whose names hold an empty segment:
                // a delta that names none applies as it is.
                if parsed.key_hash() == KEY_HASH_FX32_BYTES
                    && !super::upgrade::hash2_changes(&names).is_empty()
                {
                    return Err(refused);
                }
                Some(names)
            },
            list_names,
            links,
        })
    }
}

/// The entries of a changes section, checked to be in strictly ascending order of `position`.
fn ascending<T: FromBytes + Immutable + KnownLayout + Unaligned + Copy>(
    section: &'static str,
    bytes: &[u8],
    position: impl Fn(&T) -> u64,
) -> Result<Vec<T>, LoadError> {
    let entries = <[T]>::ref_from_bytes(bytes).map_err(|_| {
        LoadError::Store(StoreError::SectionSize {
            section,
            expected: (bytes.len() / size_of::<T>() * size_of::<T>()) as u64,
            found: bytes.len() as u64,
        })
    })?;
    if let Some(i) = entries.windows(2).position(|w| position(&w[0]) >= position(&w[1])) {
        let problem = "not after the entry before it";
        return Err(LoadError::Store(StoreError::DeltaChange {
            section,
            index: i as u64 + 1,
            problem,
        }));
    }
    Ok(entries.to_vec())
}

/// The entities section as words, with each record's head, blob or patch checked; and the
/// number of records of each kind.
fn check_records(bytes: &[u8]) -> Result<(Vec<u32>, usize, usize), LoadError> {
    let bad = |offset: usize, problem| {
        LoadError::Store(StoreError::DeltaRecord { offset: offset as u64, problem })
    };
    let mut words = vec![0_u32; bytes.len() / 4];
    if !bytes.len().is_multiple_of(4) {
        return Err(bad(bytes.len() & !3, "the section is not a whole number of words"));
    }
    words.as_mut_bytes().copy_from_slice(bytes);
    let (mut inserted, mut changed) = (0, 0);
    let mut scratch = layout::Scratch::default();
    let mut at = 0;
    while at < words.len() {
        let Some(head) = words.get(at..at + RECORD_HEAD) else {
            return Err(bad(at * 4, "the record's head runs past the section"));
        };
        let id = Id::from_bits(u64::from(head[0]) | u64::from(head[1]) << 32);
        let (kind, len) = (head[2], head[3] as usize);
        let data_at = at + RECORD_HEAD;
        let Some(data) = words.get(data_at..data_at + len) else {
            return Err(bad(at * 4, "the record's data runs past the section"));
        };
        match kind {
            INSERTED => {
                layout::validate(data, &mut scratch)
                    .map_err(|error| LoadError::Store(StoreError::Blob { id, error }))?;
                inserted += 1;
            }
            CHANGED => {
                patch::validate(data, &mut scratch)
                    .map_err(|error| LoadError::Store(StoreError::DeltaPatch { id, error }))?;
                changed += 1;
            }
            _ => {
                return Err(bad(
                    at * 4,
                    "the record's kind is neither 1 (inserted) nor 2 (changed)",
                ));
            }
        }
        at = data_at + len;
    }
    Ok((words, inserted, changed))
}
