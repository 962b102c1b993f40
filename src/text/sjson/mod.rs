//! SJSON ("simplified JSON"), the form the Bitsquid and Stingray engines write their data in
//! (what it accepts is in the docs of `crate::text`): a reader that feeds the JSON importer
//! (the same rules, policies and errors), and a writer of the JSON export's entity tree.
//!
//! The reader is this crate's own (`read.rs`): a tokenizer that is a serde `Deserializer`, so
//! that values go straight into blobs through the JSON importer. The `serde_sjson` crate was
//! weighed (1.2.2) and left: it reads no number with a fraction or an exponent (`0.5` stops
//! at `.`, so a sheet with `color = [0 0.5]` fails), no `:`, no braced or array top level (so
//! no JSON document), decodes no escapes, has no nesting limit (deep input overflows the
//! stack), and is GPL-3.0, which this crate's MIT/Apache users could not take.

pub(super) mod read;
pub(super) mod write;
