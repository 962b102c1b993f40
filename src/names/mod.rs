//! A store's key names: the path of every key it was given as text, one name per key.
//!
//! Blobs hold only hashes. The store keeps each key's name (from a JSON import, from a write
//! with a key given as text, or given by hand), so that export nests keys again, tools show
//! them by name, and a save of an older key hash is rehashed from them. The names are a tree
//! of segments ([`KeyNames`]): a prefix that many keys share is stored once, and a member name
//! that holds a `.` stays one segment.

mod tree;

pub(crate) use tree::{ARRAY, KeyNames, ROOT, label};
