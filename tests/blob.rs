//! `Blob`: a model test against a `HashMap`, the byte layout, exact errors, and truncation and
//! corruption sweeps of `from_bytes`.

use std::collections::HashMap;

use datacomp::blob::RegionKind;
use datacomp::{Blob, BlobError, BlobRef, Id, Key, OwnedValue, Store, Value, ValueType};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Model test

#[derive(Clone, Debug)]
enum Op {
    Set(usize, OwnedValue),
    Remove(usize),
    Compact,
    ShrinkToFit,
    Reserve(usize),
    Clear,
    /// `as_bytes` -> `from_bytes`.
    RoundTrip,
    Clone,
}

/// A small pool, so that sets overwrite and removes hit.
const KEY_POOL: usize = 12;

fn pool_key(i: usize) -> Key {
    Key::path(&["pool", ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"][i]])
}

fn float() -> impl Strategy<Value = f32> {
    // Every bit pattern, NaNs and signed zeros included: a blob stores bits.
    any::<u32>().prop_map(f32::from_bits)
}

fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        2 => any::<bool>().prop_map(OwnedValue::Bool),
        2 => float().prop_map(OwnedValue::Float),
        3 => "\\PC{0,20}".prop_map(OwnedValue::Str),
        1 => (0..10_000usize, any::<char>())
            .prop_map(|(n, c)| OwnedValue::Str(c.to_string().repeat(n / c.len_utf8()))),
        2 => prop::collection::vec(float(), 0..16).prop_map(OwnedValue::Floats),
        1 => (0..2_500usize).prop_map(|n| OwnedValue::Floats((0..n).map(|i| i as f32).collect())),
        1 => Just(OwnedValue::Null),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (0..KEY_POOL, value()).prop_map(|(k, v)| Op::Set(k, v)),
        4 => (0..KEY_POOL).prop_map(Op::Remove),
        1 => Just(Op::Compact),
        1 => Just(Op::ShrinkToFit),
        1 => (0..4096usize).prop_map(Op::Reserve),
        1 => Just(Op::Clear),
        2 => Just(Op::RoundTrip),
        1 => Just(Op::Clone),
    ]
}

/// The model: values by key, and the keys in insertion order (a blob keeps that order).
#[derive(Default)]
struct Model {
    values: HashMap<Key, OwnedValue>,
    order: Vec<Key>,
}

impl Model {
    fn set(&mut self, key: Key, value: OwnedValue) {
        if self.values.insert(key, value).is_none() {
            self.order.push(key);
        }
    }

    fn remove(&mut self, key: Key) -> bool {
        self.order.retain(|&k| k != key);
        self.values.remove(&key).is_some()
    }
}

/// `regions()` tiles the buffer in address order, one payload block per string or float array,
/// and its sums agree with the byte counters.
fn assert_regions_add_up(blob: BlobRef<'_>) {
    let regions = blob.regions();
    let mut at = 0;
    let mut sums = HashMap::new();
    let mut payload_keys = Vec::new();
    for &(kind, offset, len) in &regions {
        assert_eq!(offset, at, "{regions:?} leaves a gap or overlaps at byte {at}");
        assert!(len > 0, "{regions:?} has an empty region");
        at += len;
        match kind {
            RegionKind::Payload(key) => {
                payload_keys.push(key);
                *sums.entry("payload").or_default() += len;
            }
            RegionKind::Header => *sums.entry("header").or_default() += len,
            RegionKind::Free => *sums.entry("free").or_default() += len,
            RegionKind::Hole => *sums.entry("hole").or_default() += len,
        }
    }
    assert_eq!(at, blob.byte_len());
    let sum = |name| sums.get(name).copied().unwrap_or(0);
    assert_eq!(sum("header"), blob.header_bytes());
    assert_eq!(sum("free"), blob.free_bytes());
    assert_eq!(sum("hole"), blob.hole_bytes());
    assert_eq!(sum("payload") + sum("hole"), blob.payload_bytes());
    payload_keys.sort();
    let mut with_payload: Vec<Key> = blob
        .iter()
        .filter(|(_, value)| matches!(value, Value::Str(_) | Value::Floats(_)))
        .map(|(key, _)| key)
        .collect();
    with_payload.sort();
    assert_eq!(payload_keys, with_payload);
}

fn assert_matches(blob: &Blob, model: &Model) {
    assert_eq!(blob.len(), model.values.len());
    assert_eq!(blob.is_empty(), model.values.is_empty());
    assert_eq!(blob.keys().collect::<Vec<_>>(), model.order, "keys in insertion order");
    for (key, value) in blob.iter() {
        let expected = &model.values[&key];
        assert!(value.is_identical(&expected.as_value()), "{key}: {value:?} != {expected:?}");
    }
    for i in 0..KEY_POOL {
        let key = pool_key(i);
        let expected = model.values.get(&key);
        assert_eq!(blob.contains_key(key), expected.is_some());
        match (blob.get(key), expected) {
            (None, None) => {}
            (Some(got), Some(want)) => assert!(got.is_identical(&want.as_value())),
            (got, want) => panic!("{key}: {got:?} != {want:?}"),
        }
        // The typed getters agree with `get`.
        let got = blob.get(key);
        assert_eq!(blob.get_bool(key), got.and_then(|v| v.as_bool()));
        assert_eq!(blob.get_str(key), got.and_then(|v| v.as_str()));
        assert_eq!(
            blob.get_floats(key).map(<[f32]>::len),
            got.and_then(|v| v.as_floats()).map(<[f32]>::len)
        );
    }
    // The regions account for every byte, and the bytes are a valid blob.
    assert_regions_add_up(blob.as_blob_ref());
    assert_eq!(blob.used_bytes(), blob.byte_len() - blob.free_bytes() - blob.hole_bytes());
    let reread = Blob::from_bytes(blob.as_bytes()).expect("a blob's own bytes are valid");
    assert_eq!(&reread, blob);
}

proptest! {
    #[test]
    fn blob_matches_a_hashmap_model(ops in prop::collection::vec(op(), 1..60)) {
        let mut blob = Blob::new();
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Set(k, value) => {
                    blob.set(pool_key(k), &value).unwrap();
                    model.set(pool_key(k), value);
                }
                Op::Remove(k) => prop_assert_eq!(blob.remove(pool_key(k)), model.remove(pool_key(k))),
                Op::Compact => {
                    let (len, free, holes) = (blob.byte_len(), blob.free_bytes(), blob.hole_bytes());
                    blob.compact();
                    prop_assert_eq!(blob.hole_bytes(), 0);
                    prop_assert_eq!(blob.byte_len(), len);
                    prop_assert_eq!(blob.free_bytes(), free + holes);
                }
                Op::ShrinkToFit => {
                    let used = blob.used_bytes();
                    blob.shrink_to_fit();
                    prop_assert_eq!(blob.byte_len(), used);
                    prop_assert_eq!(blob.free_bytes(), 0);
                }
                Op::Reserve(n) => {
                    blob.reserve(n);
                    prop_assert!(blob.free_bytes() >= n);
                }
                Op::Clear => {
                    blob.clear();
                    model = Model::default();
                }
                Op::RoundTrip => blob = Blob::from_bytes(blob.as_bytes()).unwrap(),
                Op::Clone => blob = blob.clone(),
            }
            assert_matches(&blob, &model);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Layout

fn word(bytes: &[u8], index: usize) -> u32 {
    u32::from_le_bytes(bytes[4 * index..4 * index + 4].try_into().unwrap())
}

/// The classic sheet with exactly the room it needs: 48 bytes, laid out as
/// `[n=3][pstart=36][3 keys][tags 3,2,1,pad][value 36][100.0][1][len 7]["The One\0"]`.
fn classic() -> Blob {
    let name = Value::Str("The One");
    let mut blob = Blob::with_capacity(3, name.payload_bytes());
    blob.set("name", name).unwrap();
    blob.set("stats.health", 100.0).unwrap();
    blob.set("status_effects.drunk", true).unwrap();
    blob
}

#[test]
fn keys_sit_at_the_front_and_payloads_at_the_back() {
    let blob = classic();
    let bytes = blob.as_bytes();
    assert_eq!(bytes.len(), 48);
    assert_eq!(word(bytes, 0), 3, "key count");
    assert_eq!(word(bytes, 1), 36, "payload start");
    let keys: Vec<u32> = (2..5).map(|i| word(bytes, i)).collect();
    let expected = ["name", "stats.health", "status_effects.drunk"].map(|p| Key::parse(p).raw());
    assert_eq!(keys, expected, "keys: one contiguous array right after the counts");
    assert_eq!(&bytes[20..24], &[3, 2, 1, 0], "tags: string, float, bool, padding");
    assert_eq!(word(bytes, 6), 36, "the string's value is its payload offset");
    assert_eq!(f32::from_bits(word(bytes, 7)), 100.0, "floats are inline");
    assert_eq!(word(bytes, 8), 1, "booleans are inline");
    assert_eq!(word(bytes, 9), 7, "payload block: length first");
    assert_eq!(&bytes[40..48], b"The One\0", "then the bytes, zero-padded, at the very end");
}

#[test]
fn payloads_grow_down_and_the_header_grows_up_into_shared_free_space() {
    let mut blob = Blob::with_capacity(8, 64);
    let len = blob.byte_len();
    blob.set("a", "aaaa").unwrap();
    blob.set("b", "bbbb").unwrap();
    let bytes = blob.as_bytes();
    assert_eq!(
        &bytes[len - 8..],
        &[4, 0, 0, 0, b'a', b'a', b'a', b'a'],
        "first payload at the end"
    );
    assert_eq!(&bytes[len - 16..len - 8], &[4, 0, 0, 0, b'b', b'b', b'b', b'b'], "second below it");
    let free = blob.free_bytes();
    blob.set("c", 1.0).unwrap();
    assert_eq!(blob.free_bytes(), free - 8, "a new inline key takes header room from free space");
    assert_eq!(blob.byte_len(), len, "no growth while both fit");
}

#[test]
fn float_arrays_are_lent_from_the_buffer_without_copying() {
    let mut blob = Blob::new();
    blob.set("position", [1.0, 2.0, 3.0]).unwrap();
    let floats = blob.get_floats("position").unwrap();
    let bytes = blob.as_bytes().as_ptr_range();
    assert!(bytes.contains(&floats.as_ptr().cast()), "the slice points into the blob");
    assert_eq!(floats, [1.0, 2.0, 3.0]);
}

#[test]
fn an_overwrite_that_fits_reuses_its_place() {
    let mut blob = Blob::new();
    blob.set("name", "The One and Only").unwrap();
    blob.set("title", "Sir").unwrap();
    let before = blob.get_str("name").unwrap().as_ptr();
    blob.set("name", "The One").unwrap();
    assert_eq!(blob.get_str("name").unwrap().as_ptr(), before, "same place");
    assert_eq!(blob.hole_bytes(), 8, "the tail of the old block");
    // A block's size is its current length: the 8 bytes left over are a hole, not spare room.
    blob.set("name", [1.0, 2.0]).unwrap();
    assert_eq!(blob.get_floats("name").unwrap().as_ptr().cast(), before, "another type fits too");
}

#[test]
fn a_larger_overwrite_leaves_a_hole_that_compact_reclaims() {
    let mut blob = Blob::with_capacity(2, 256);
    blob.set("name", "The One").unwrap();
    blob.set("title", "Sir").unwrap();
    blob.set("name", "The One and Only").unwrap();
    assert_eq!(blob.hole_bytes(), 12);
    blob.compact();
    assert_eq!(blob.hole_bytes(), 0);
    assert_eq!(blob.get_str("name"), Some("The One and Only"));
    assert_eq!(blob.get_str("title"), Some("Sir"));
}

#[test]
fn growing_repacks_geometrically_and_drops_holes() {
    let mut blob = Blob::with_capacity(2, 24);
    assert_eq!(blob.byte_len(), 28 + 24);
    blob.set("a", "0123456789ab").unwrap();
    blob.set("b", "x").unwrap();
    blob.remove("a"); // a's block is not the lowest: a hole
    assert_eq!(blob.hole_bytes(), 16);
    blob.set("c", "0123456789abcdef").unwrap(); // needs 28 bytes, 8 are free: repacks
    assert_eq!(blob.byte_len(), 2 * 52, "doubled");
    assert_eq!(blob.hole_bytes(), 0, "the hole did not survive the repack");
    assert_eq!(blob.get_str("b"), Some("x"));
    assert_eq!(blob.get_str("c"), Some("0123456789abcdef"));
}

#[test]
fn removing_keeps_the_order_of_the_rest() {
    let mut blob: Blob = (0..10).map(|i| (Key::from_raw(i), i as f32)).collect();
    assert!(blob.remove(Key::from_raw(0)));
    assert!(blob.remove(Key::from_raw(5)));
    assert!(blob.remove(Key::from_raw(9)));
    let keys: Vec<u32> = blob.keys().map(Key::raw).collect();
    assert_eq!(keys, [1, 2, 3, 4, 6, 7, 8]);
    assert_eq!(blob.get_float(Key::from_raw(8)), Some(8.0));
}

#[test]
fn one_megabyte_string_needs_no_64k_limit() {
    let big = "x".repeat(1 << 20);
    let mut blob = Blob::new();
    blob.set("big", big.as_str()).unwrap();
    blob.set("after", 1.0).unwrap();
    assert_eq!(blob.get_str("big").map(str::len), Some(1 << 20));
    assert_eq!(Blob::from_bytes(blob.as_bytes()).unwrap(), blob);
}

#[test]
fn values_convert_from_the_usual_types() {
    let mut blob = Blob::new();
    let owned = String::from("owned");
    let floats = vec![1.5_f32];
    blob.set("f64", 0.1_f64).unwrap();
    blob.set("i32", -7).unwrap();
    blob.set("string", &owned).unwrap();
    blob.set("vec", &floats).unwrap();
    blob.set("slice", &floats[..]).unwrap();
    blob.set("array", [2.5_f32; 2]).unwrap();
    assert_eq!(blob.get_float("f64"), Some(0.1_f32));
    assert_eq!(blob.get_float("i32"), Some(-7.0));
    assert_eq!(blob.get_str("string"), Some("owned"));
    assert_eq!(blob.get_floats("vec"), Some(&[1.5][..]));
    assert_eq!(blob.get_floats("slice"), Some(&[1.5][..]));
    assert_eq!(blob.get_floats("array"), Some(&[2.5, 2.5][..]));
}

#[test]
fn equality_is_by_entries_not_bytes() {
    let mut a = Blob::with_capacity(10, 100);
    a.set("x", 1.0).unwrap();
    a.set("y", "why").unwrap();
    let mut b = Blob::new();
    b.set("y", "why").unwrap();
    b.set("x", 1.0).unwrap();
    assert_ne!(a.as_bytes(), b.as_bytes());
    assert_eq!(a, b);
    b.set("x", f32::NAN).unwrap();
    assert_ne!(a, b);
    a.set("x", f32::NAN).unwrap();
    assert_eq!(a, b, "floats compare by bits, so NaN equals NaN");
}

#[test]
fn debug_shows_keys_and_values() {
    let mut blob = Blob::new();
    blob.set("stats.health", 100).unwrap();
    blob.set("name", "The One").unwrap();
    assert_eq!(format!("{blob:?}"), r#"{#761767e6: Float(100.0), #de9577cc: Str("The One")}"#);
}

#[test]
fn try_set_past_four_gigabytes_fails_and_changes_nothing() {
    let mut blob = classic();
    let before = blob.as_bytes().to_vec();
    // Zeroed memory is mapped lazily: this costs address space, not 4 GiB of writes.
    let huge = vec![0.0_f32; 1 << 30];
    let err = blob.set("huge", &huge).unwrap_err();
    // 48 bytes in use, 8 more of header for a fourth key, 4 of length and 4 GiB of floats.
    assert_eq!(err, BlobError::TooLarge { required: 48 + 8 + 4 + (4 << 30) });
    assert_eq!(blob.as_bytes(), before);
}

#[test]
#[should_panic(
    expected = "Blob::extend: blob would need 4294967320 bytes, past the format's limit"
)]
fn extend_past_four_gigabytes_panics_with_the_reason() {
    let huge = vec![0.0_f32; 1 << 30];
    Blob::new().extend([("huge", &huge)]);
}

#[test]
#[should_panic(expected = "exceeds the format's limit")]
fn with_capacity_past_four_gigabytes_panics_with_the_reason() {
    let _ = Blob::with_capacity(1 << 30, 0);
}

// ---------------------------------------------------------------------------------------------
// Untrusted bytes: exact errors

fn with_word(bytes: &[u8], index: usize, value: u32) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[4 * index..4 * index + 4].copy_from_slice(&value.to_le_bytes());
    bytes
}

#[test]
fn each_malformation_gets_its_own_error() {
    let good = classic();
    let bytes = good.as_bytes();
    let name = Key::parse("name");
    let health = Key::parse("stats.health");
    let drunk = Key::parse("status_effects.drunk");
    let cases: Vec<(Vec<u8>, BlobError)> = vec![
        (bytes[..6].to_vec(), BlobError::Truncated { byte_len: 6 }),
        (bytes[..10].to_vec(), BlobError::UnalignedLength { byte_len: 10 }),
        (
            with_word(bytes, 0, 200),
            BlobError::HeaderOutOfBounds {
                keys: 200,
                header_end: 8 + 800 + 200 + 800,
                byte_len: 48,
            },
        ),
        (
            with_word(bytes, 1, 38),
            BlobError::BadPayloadStart { payload_start: 38, header_end: 36, byte_len: 48 },
        ),
        (
            with_word(bytes, 1, 32),
            BlobError::BadPayloadStart { payload_start: 32, header_end: 36, byte_len: 48 },
        ),
        (
            with_word(bytes, 1, 52),
            BlobError::BadPayloadStart { payload_start: 52, header_end: 36, byte_len: 48 },
        ),
        (
            with_word(bytes, 5, u32::from_le_bytes([3, 9, 1, 0])),
            BlobError::UnknownTag { index: 1, key: health, tag: 9 },
        ),
        (with_word(bytes, 8, 2), BlobError::InvalidBool { index: 2, key: drunk, raw: 2 }),
        // Health's tag made a null's (5): its header value must be 0, not 100.0's bits.
        (
            with_word(bytes, 5, u32::from_le_bytes([3, 5, 1, 0])),
            BlobError::InvalidNull { index: 1, key: health, raw: 100.0_f32.to_bits() },
        ),
        (
            with_word(bytes, 6, 38),
            BlobError::PayloadOutOfBounds {
                index: 0,
                key: name,
                offset: 38,
                end: 42,
                payload_start: 36,
                byte_len: 48,
            },
        ),
        (
            with_word(bytes, 6, 44),
            BlobError::PayloadOutOfBounds {
                index: 0,
                key: name,
                offset: 44,
                // The "length" read there is the string's last word.
                end: 48 + u64::from(u32::from_le_bytes(*b"One\0")).next_multiple_of(4),
                payload_start: 36,
                byte_len: 48,
            },
        ),
        (
            with_word(bytes, 6, 48),
            BlobError::PayloadOutOfBounds {
                index: 0,
                key: name,
                offset: 48,
                end: 52,
                payload_start: 36,
                byte_len: 48,
            },
        ),
        (
            with_word(bytes, 9, 9),
            BlobError::PayloadOutOfBounds {
                index: 0,
                key: name,
                offset: 36,
                end: 52,
                payload_start: 36,
                byte_len: 48,
            },
        ),
        (
            with_word(bytes, 10, u32::from_le_bytes([b'T', 0xff, b'e', b' '])),
            BlobError::InvalidUtf8 { index: 0, key: name, offset: 36, valid_up_to: 1 },
        ),
        (
            with_word(bytes, 4, name.raw()),
            BlobError::DuplicateKey { key: name, first: 0, second: 2 },
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(Blob::from_bytes(&input), Err(expected.clone()), "{expected}");
    }
}

#[test]
fn overlapping_payloads_are_rejected() {
    let mut blob = Blob::with_capacity(2, 16);
    blob.set("a", "abcd").unwrap();
    blob.set("b", "efgh").unwrap();
    // Point b's value (word 2 + 2 keys + 1 tag word + 1) at a's block.
    let a_offset = 4 * (blob.byte_len() / 4 - 2) as u32;
    let bad = with_word(blob.as_bytes(), 6, a_offset);
    assert_eq!(
        Blob::from_bytes(&bad),
        Err(BlobError::OverlappingPayloads { first: 0, second: 1, offset: a_offset })
    );
}

#[test]
fn uniqueness_and_overlap_are_checked_on_both_sides_of_the_stack_limit() {
    // Up to 32 keys validation sorts on the stack, past that in scratch buffers.
    for n in [2, 31, 32, 33, 40] {
        let blob: Blob = (0..n).map(|i| (Key::from_raw(i), "abcd")).collect();
        let bytes = blob.as_bytes();
        let n = n as usize;
        let (first_key, first_value) = (2, 2 + n + n.div_ceil(4));
        let last_key = first_key + n - 1;
        let last_value = first_value + n - 1;

        let duplicate = with_word(bytes, last_key, 0);
        let expected = BlobError::DuplicateKey { key: Key::from_raw(0), first: 0, second: n - 1 };
        assert_eq!(Blob::from_bytes(&duplicate), Err(expected), "{n} keys");

        let shared = word(bytes, first_value);
        let overlap = with_word(bytes, last_value, shared);
        let expected = BlobError::OverlappingPayloads { first: 0, second: n - 1, offset: shared };
        assert_eq!(Blob::from_bytes(&overlap), Err(expected), "{n} keys");
    }
}

#[test]
fn error_messages_say_what_and_where() {
    let bytes = with_word(classic().as_bytes(), 8, 7);
    let err = Blob::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.to_string(), "entry 2 (key #8b91e3ff): boolean stored as 7, not 0 or 1");
    let bytes = with_word(classic().as_bytes(), 9, 9);
    let err = Blob::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        err.to_string(),
        "entry 0 (key #de9577cc): payload at bytes 36..52 is not a 4-aligned range inside the \
         payload region 36..48"
    );
}

// ---------------------------------------------------------------------------------------------
// Untrusted bytes: sweeps

/// A blob with every type, holes and free space: the input for the sweeps.
fn rich() -> Blob {
    let mut blob = Blob::with_capacity(4, 64);
    blob.set("name", "The One").unwrap();
    blob.set("stats.health", 100.0).unwrap();
    blob.set("stats.mana", 200.0).unwrap();
    blob.set("status_effects.drunk", true).unwrap();
    blob.set("position", [1.0, 2.0, 3.0]).unwrap();
    blob.set("bio", "Once upon a time, in a buffer far away").unwrap();
    blob.set("name", "The One and Only, longer").unwrap();
    blob.remove("stats.mana");
    blob
}

/// What any input must give: an error, or a blob that reads fully and writes back the bytes it
/// was read from.
fn check_untrusted(bytes: &[u8]) {
    if let Ok(blob) = Blob::from_bytes(bytes) {
        assert_eq!(blob.as_bytes(), bytes);
        for (key, value) in blob.iter() {
            // Floats compare by bits: a corrupted float may well be a NaN.
            assert!(blob.get(key).is_some_and(|v| v.is_identical(&value)), "{key}: {value:?}");
        }
        assert_regions_add_up(blob.as_blob_ref());
        let mut blob = blob;
        blob.set("after", "a write to an accepted blob keeps it valid").unwrap();
        assert!(Blob::from_bytes(blob.as_bytes()).is_ok());
    }
}

#[test]
fn every_truncation_is_an_error_or_a_valid_blob() {
    let blob = rich();
    let bytes = blob.as_bytes();
    for len in 0..bytes.len() {
        check_untrusted(&bytes[..len]);
    }
    for len in 0..blob.header_bytes() {
        assert!(Blob::from_bytes(&bytes[..len]).is_err(), "cut inside the header at {len}");
    }
}

#[test]
fn every_single_byte_corruption_is_an_error_or_a_valid_blob() {
    let blob = rich();
    let bytes = blob.as_bytes().to_vec();
    for at in 0..bytes.len() {
        for flip in [0x01, 0x02, 0x10, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[at] ^= flip;
            check_untrusted(&bad);
        }
    }
}

#[test]
fn a_float_corrupted_into_a_nan_still_reads_back() {
    // Found by the random corruption sweep: the check compared NaN with `==`.
    let bytes = with_word(classic().as_bytes(), 7, 0x7fc0_0001);
    let blob = Blob::from_bytes(&bytes).expect("any bit pattern is a float");
    assert_eq!(blob.get_float("stats.health").map(f32::to_bits), Some(0x7fc0_0001));
    check_untrusted(&bytes);
}

proptest! {
    #[test]
    fn arbitrary_bytes_are_an_error_or_a_valid_blob(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        check_untrusted(&bytes);
    }

    #[test]
    fn random_multi_byte_corruptions_are_an_error_or_a_valid_blob(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let mut bytes = rich().as_bytes().to_vec();
        for (at, value) in edits {
            let at = at.index(bytes.len());
            bytes[at] = value;
        }
        check_untrusted(&bytes);
    }
}

// ---------------------------------------------------------------------------------------------
// Many entries at once

fn wide_entries(max: usize) -> impl Strategy<Value = Vec<(Key, OwnedValue)>> {
    // A pool of 100 keys: blobs past the 32 keys below which keys are found by a scan, and
    // repeated keys in one `extend`.
    let key = (0..100_usize).prop_map(|i| Key::path(&["wide", &i.to_string()]));
    prop::collection::vec((key, value()), 0..max)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `extend` and `collect` set many entries at once, and leave exactly what setting them in
    /// turn leaves: the same entries in the same order (a later value of a key in the place
    /// of its first).
    #[test]
    fn extend_and_collect_leave_what_setting_in_turn_leaves(
        base in wide_entries(60),
        more in wide_entries(150),
    ) {
        let mut in_turn = Blob::new();
        for (key, value) in base.iter().chain(&more) {
            in_turn.set(*key, value).unwrap();
        }
        let mut extended: Blob = base.iter().map(|(k, v)| (*k, v)).collect();
        extended.extend(more.iter().map(|(k, v)| (*k, v)));
        prop_assert_eq!(&extended, &in_turn);
        prop_assert_eq!(extended.keys().collect::<Vec<_>>(), in_turn.keys().collect::<Vec<_>>());
        prop_assert_eq!(Blob::from_bytes(extended.as_bytes()).unwrap(), extended);
    }
}

// ---------------------------------------------------------------------------------------------
// One read API: `Blob`, `BlobRef` and `BlobMut` answer alike

/// Every read method of the three owners of one blob's entries gives the same answer: the owned
/// blob `blob`, the store's entity through `BlobMut` (`entity`), and through `BlobRef`.
fn assert_reads_agree(blob: &Blob, store: &mut Store, id: Id, model: &Model) {
    assert_matches(blob, model);
    let entity = store.get_mut(id).unwrap();
    let view = entity.as_blob_ref();
    // The entity's own three ways to read agree to the byte (one buffer).
    assert_eq!(entity.as_bytes(), view.as_bytes());
    assert_eq!(entity.regions(), view.regions());
    assert_eq!(
        (entity.byte_len(), entity.header_bytes(), entity.free_bytes()),
        (view.byte_len(), view.header_bytes(), view.free_bytes())
    );
    assert_eq!(
        (entity.payload_bytes(), entity.hole_bytes(), entity.used_bytes()),
        (view.payload_bytes(), view.hole_bytes(), view.used_bytes())
    );
    // And with the owned blob, entry by entry (their buffers grow by different rules).
    assert_eq!((entity.len(), entity.is_empty()), (blob.len(), blob.is_empty()));
    assert_eq!(entity.keys().collect::<Vec<_>>(), blob.keys().collect::<Vec<_>>());
    assert_eq!(entity.iter().len(), blob.iter().len());
    for ((k1, v1), (k2, v2)) in entity.iter().zip(blob.iter()) {
        assert_eq!(k1, k2);
        assert!(v1.is_identical(&v2), "{k1}: {v1:?} != {v2:?}");
    }
    assert_eq!(entity.used_bytes(), blob.used_bytes());
    assert_eq!(entity.header_bytes(), blob.header_bytes());
    for i in 0..KEY_POOL {
        let key = pool_key(i);
        assert_eq!(entity.contains_key(key), blob.contains_key(key));
        assert_eq!(entity.get(key).is_some(), blob.get(key).is_some());
        if let (Some(a), Some(b)) = (entity.get(key), blob.get(key)) {
            assert!(a.is_identical(&b), "{key}: {a:?} != {b:?}");
        }
        assert_eq!(entity.get_bool(key), blob.get_bool(key));
        assert_eq!(entity.get_float(key).map(f32::to_bits), blob.get_float(key).map(f32::to_bits));
        assert_eq!(entity.get_str(key), blob.get_str(key));
        assert_eq!(
            entity.get_floats(key).map(|f| f.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
            blob.get_floats(key).map(|f| f.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
        );
    }
    assert_eq!(entity.to_blob(), *blob);
    assert_eq!(view, *blob);
}

proptest! {
    /// The same writes to a `Blob` and to a store's entity (between two other entities, so that
    /// growing moves it to the arena's end) leave the same entries, read alike through all
    /// three types, checked after every step against a `HashMap` model.
    #[test]
    fn blob_blobref_and_blobmut_read_alike(ops in prop::collection::vec(op(), 1..40)) {
        let mut blob = Blob::new();
        let mut model = Model::default();
        let mut store = Store::new();
        let before = store.insert_entries([("neighbour", 1.0)]).unwrap();
        let id = store.insert_empty();
        let after = store.insert_entries([("neighbour", 2.0)]).unwrap();
        for op in ops {
            match op {
                Op::Set(k, value) => {
                    blob.set(pool_key(k), &value).unwrap();
                    store.get_mut(id).unwrap().set(pool_key(k), &value).unwrap();
                    model.set(pool_key(k), value);
                }
                Op::Remove(k) => {
                    let removed = model.remove(pool_key(k));
                    prop_assert_eq!(blob.remove(pool_key(k)), removed);
                    prop_assert_eq!(store.get_mut(id).unwrap().remove(pool_key(k)), removed);
                }
                Op::Clear => {
                    blob.clear();
                    for key in model.order.drain(..) {
                        prop_assert!(store.get_mut(id).unwrap().remove(key));
                    }
                    model = Model::default();
                }
                Op::Compact => store.compact(),
                Op::ShrinkToFit | Op::Reserve(_) | Op::RoundTrip | Op::Clone => {}
            }
            assert_reads_agree(&blob, &mut store, id, &model);
        }
        prop_assert_eq!(store.get(before).unwrap().get_float("neighbour"), Some(1.0));
        prop_assert_eq!(store.get(after).unwrap().get_float("neighbour"), Some(2.0));
    }
}

// ---------------------------------------------------------------------------------------------
// Integers

/// Every integer type is a value, stored as its `f32` when that holds it exactly; one it does
/// not hold is refused whole, the blob unchanged, rather than rounded.
#[test]
#[allow(clippy::needless_borrows_for_generic_args)] // Through references is the point.
fn integers_are_stored_exactly_or_refused() {
    fn check<T: datacomp::AsValue + Copy + std::fmt::Display>(held: &[T], refused: &[T]) {
        for &n in held {
            let mut sheet = Blob::new();
            sheet.set("n", n).unwrap();
            let stored = sheet.get_float("n").unwrap();
            assert_eq!(format!("{stored:.0}"), n.to_string(), "{n} is held exactly");
        }
        for &n in refused {
            let mut sheet = Blob::new();
            sheet.set("n", 1.5).unwrap();
            let before = sheet.as_bytes().to_vec();
            let err = sheet.set("n", n).unwrap_err();
            assert_eq!(err, BlobError::InexactInteger { integer: n.to_string() });
            assert_eq!(sheet.as_bytes(), before, "{n}: nothing written");
        }
    }
    const P24: i64 = 1 << 24;
    check(&[i8::MIN, 0, i8::MAX], &[]);
    check(&[u8::MIN, u8::MAX], &[]);
    check(&[i16::MIN, i16::MAX], &[]);
    check(&[u16::MAX], &[]);
    check(
        &[i32::MIN, -(1 << 24), 1 << 24, (1 << 24) + 2, 1 << 30],
        &[(1 << 24) + 1, -(1 << 24) - 1, i32::MAX],
    );
    check(&[1_u32 << 24, 1 << 31], &[(1 << 24) + 1, u32::MAX]);
    check(&[i64::MIN, P24, 1 << 62, -(1 << 40)], &[P24 + 1, i64::MAX, -(1 << 40) - 1]);
    check(&[1_u64 << 63, u64::from(u32::MAX) + 1], &[u64::MAX, (1 << 53) + 1]);
    check(&[isize::MIN, 1 << 24], &[isize::MAX]);
    check(&[0_usize, 1 << 24], &[usize::MAX, (1 << 24) + 1]);

    // The message says what the number would have become.
    let err = Blob::new().set("gold", 16_777_217_u32).unwrap_err();
    assert_eq!(
        err.to_string(),
        "16777217 is not held exactly by an f32, the type numbers are stored as (it would \
         become 16777216); every whole number up to 16777216 is"
    );
    // Through a reference, as a `Value` (already an f32: no check), and many at once.
    let mut sheet = Blob::new();
    let gold: u32 = 250;
    sheet.set("gold", gold).unwrap();
    sheet.set("gold.ref", &gold).unwrap();
    assert_eq!(sheet.get_float("gold.ref"), Some(250.0));
    let err = sheet.set("x", &&u64::MAX).unwrap_err();
    assert_eq!(err.to_string().split(' ').next(), Some("18446744073709551615"));
    let before = sheet.as_bytes().to_vec();
    let err = sheet.try_extend([("a", 1_u64), ("b", u64::MAX), ("c", 3)]).unwrap_err();
    assert_eq!(err, BlobError::InexactInteger { integer: u64::MAX.to_string() });
    assert_eq!(sheet.as_bytes(), before, "try_extend is all or nothing");
    sheet.try_extend([("a", 1_u64), ("c", 3)]).unwrap();
    assert_eq!((sheet.get_float("a"), sheet.get_float("c")), (Some(1.0), Some(3.0)));
}

#[test]
#[should_panic(expected = "Blob::extend: 16777217 is not held exactly by an f32")]
fn extend_with_an_inexact_integer_panics_with_the_reason() {
    let _: Blob = [("gold", 16_777_217_i64)].into_iter().collect();
}

/// A null is a value (issue 29): present, typed, compared, diffed and merged like any other,
/// and it takes no payload bytes.
#[test]
fn a_null_is_a_value_with_no_payload() {
    let mut sheet = Blob::new();
    sheet.set("hp", 3.0).unwrap();
    sheet.set("firmness", Value::Null).unwrap();
    assert_eq!(sheet.get("firmness"), Some(Value::Null));
    assert!(sheet.contains_key("firmness"));
    assert_eq!((sheet.get_float("firmness"), sheet.get_str("firmness")), (None, None));
    assert_eq!(sheet.get("firmness").map(|v| v.value_type()), Some(ValueType::Null));
    assert_eq!(sheet.payload_bytes(), 0, "no payload for a null");
    assert_eq!(sheet.header_bytes(), 8 + 2 * 4 + 4 + 2 * 4, "counts, keys, a tag word, values");
    assert_eq!(Blob::from_bytes(sheet.as_bytes()).unwrap(), sheet);

    // A null and a zero differ; a patch turns one into the other, both ways.
    let mut zero = sheet.clone();
    zero.set("firmness", 0.0).unwrap();
    assert_ne!(zero, sheet);
    let mut copy = sheet.clone();
    Blob::diff(&sheet, &zero).apply(&mut copy);
    assert_eq!(copy, zero);
    Blob::diff(&zero, &sheet).apply(&mut copy);
    assert_eq!(copy, sheet);
    // Removed, it is absent: not the same as null.
    copy.remove("firmness");
    assert_eq!(copy.get("firmness"), None);
    assert_ne!(copy, sheet);
}
