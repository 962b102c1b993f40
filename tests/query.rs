//! `KeyCursor`, columns and `Query`: model tests against plain `get` on random stores whose
//! entities have different layouts and are edited between reads, and a model evaluator.

use datacomp::query::KeyCursor;
use datacomp::{Blob, BlobRef, Id, Key, OwnedValue, Query, Store, StoreView, Value};
use proptest::prelude::*;

const KEYS: usize = 6;

fn name(k: usize) -> String {
    format!("k{k}.v")
}

fn key(k: usize) -> Key {
    Key::parse(&name(k))
}

/// Values with few distinct strings and floats, so that equality tests hit.
fn value() -> impl Strategy<Value = OwnedValue> {
    prop_oneof![
        any::<bool>().prop_map(OwnedValue::Bool),
        prop::sample::select(vec![-1.0, 0.0, 1.5, 2.0, 1e3, f32::NAN]).prop_map(OwnedValue::Float),
        prop::sample::select(vec!["", "a", "b c", "\"q\\"]).prop_map(|s| OwnedValue::Str(s.into())),
        prop::collection::vec(-2.0f32..2.0, 0..4).prop_map(OwnedValue::Floats),
        Just(OwnedValue::Null),
    ]
}

/// Entities with keys in random order: many layouts in one store.
fn entity() -> impl Strategy<Value = Vec<(usize, OwnedValue)>> {
    prop::collection::vec((0..KEYS, value()), 0..KEYS + 2)
}

// ---------------------------------------------------------------------------------------------
// The model of a query, printed as text for `Query::parse`, evaluated with plain `get`.

#[derive(Clone, Debug)]
enum ModelExpr {
    And(Vec<ModelExpr>),
    Or(Vec<ModelExpr>),
    Not(Box<ModelExpr>),
    IsTrue(usize),
    Has(usize),
    Float(usize, &'static str, f32),
    Bool(usize, bool, bool),
    Str(usize, bool, &'static str),
    /// `KEY == null` (true) or `KEY != null`.
    Null(usize, bool),
}

fn leaf() -> impl Strategy<Value = ModelExpr> {
    let ops = vec!["<", "<=", ">", ">=", "==", "!="];
    prop_oneof![
        (0..KEYS).prop_map(ModelExpr::IsTrue),
        (0..KEYS).prop_map(ModelExpr::Has),
        (0..KEYS, prop::sample::select(ops), prop::sample::select(vec![-1.0, 0.0, 1.5, 2.0, 1e3]))
            .prop_map(|(k, op, x)| ModelExpr::Float(k, op, x)),
        (0..KEYS, any::<bool>(), any::<bool>()).prop_map(|(k, eq, b)| ModelExpr::Bool(k, eq, b)),
        (0..KEYS, any::<bool>(), prop::sample::select(vec!["", "a", "b c", "\"q\\"]))
            .prop_map(|(k, eq, s)| ModelExpr::Str(k, eq, s)),
        (0..KEYS, any::<bool>()).prop_map(|(k, eq)| ModelExpr::Null(k, eq)),
    ]
}

fn expr() -> impl Strategy<Value = ModelExpr> {
    leaf().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(ModelExpr::And),
            prop::collection::vec(inner.clone(), 2..4).prop_map(ModelExpr::Or),
            inner.prop_map(|e| ModelExpr::Not(Box::new(e))),
        ]
    })
}

/// How a key is written: its dotted path, its JSON Pointer or its raw hash.
fn spell(k: usize, style: usize) -> String {
    match style % 3 {
        0 => name(k),
        1 => format!("/k{k}/v"),
        _ => key(k).to_string(),
    }
}

impl ModelExpr {
    /// The query text, with every operand in parentheses; `style` varies keys and spacing.
    fn print(&self, style: usize) -> String {
        let eq = |equal: bool| if equal { "==" } else { "!=" };
        let join = |all: &[ModelExpr], word: &str| {
            let parts: Vec<String> =
                all.iter().enumerate().map(|(i, e)| format!("({})", e.print(style + i))).collect();
            parts.join(word)
        };
        match self {
            ModelExpr::And(all) => join(all, " and "),
            // `(a)or(b)`: parentheses end words without spaces.
            ModelExpr::Or(all) => join(all, if style.is_multiple_of(2) { " or " } else { "or" }),
            ModelExpr::Not(e) => format!("not ({})", e.print(style + 1)),
            ModelExpr::IsTrue(k) => spell(*k, style),
            ModelExpr::Has(k) => format!("has {}", spell(*k, style)),
            ModelExpr::Float(k, op, x) if style.is_multiple_of(2) => {
                format!("{}{op}{x:?}", spell(*k, style))
            }
            ModelExpr::Float(k, op, x) => format!("{} {op} {x}", spell(*k, style)),
            ModelExpr::Bool(k, equal, b) => format!("{} {} {b}", spell(*k, style), eq(*equal)),
            ModelExpr::Str(k, equal, s) => {
                let quoted = s.replace('\\', "\\\\").replace('"', "\\\"");
                format!("{} {} \"{quoted}\"", spell(*k, style), eq(*equal))
            }
            ModelExpr::Null(k, equal) => format!("{} {} null", spell(*k, style), eq(*equal)),
        }
    }

    fn eval(&self, blob: BlobRef<'_>) -> bool {
        match self {
            ModelExpr::And(all) => all.iter().all(|e| e.eval(blob)),
            ModelExpr::Or(all) => all.iter().any(|e| e.eval(blob)),
            ModelExpr::Not(e) => !e.eval(blob),
            ModelExpr::IsTrue(k) => blob.get(key(*k)) == Some(Value::Bool(true)),
            ModelExpr::Has(k) => blob.get(key(*k)).is_some(),
            ModelExpr::Float(k, op, x) => match blob.get(key(*k)) {
                Some(Value::Float(v)) => match *op {
                    "<" => v < *x,
                    "<=" => v <= *x,
                    ">" => v > *x,
                    ">=" => v >= *x,
                    "==" => v == *x,
                    _ => v != *x,
                },
                _ => false,
            },
            ModelExpr::Bool(k, equal, b) => {
                matches!(blob.get(key(*k)), Some(Value::Bool(v)) if (v == *b) == *equal)
            }
            ModelExpr::Str(k, equal, s) => {
                matches!(blob.get(key(*k)), Some(Value::Str(v)) if (v == *s) == *equal)
            }
            // Present, and null (or not).
            ModelExpr::Null(k, equal) => {
                blob.get(key(*k)).is_some_and(|v| (v == Value::Null) == *equal)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The model test

#[derive(Clone, Debug)]
enum Step {
    /// Sets a key of the entity at this position of the dense order.
    Set(prop::sample::Index, usize, OwnedValue),
    RemoveKey(prop::sample::Index, usize),
    Insert(Vec<(usize, OwnedValue)>),
    Remove(prop::sample::Index),
    /// Every cursor reads every entity, in this rotation of the dense order.
    Read(prop::sample::Index),
    Columns,
    /// A new query (kept and rechecked at every later `Query`), printed in this style.
    Query(ModelExpr, usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (any::<prop::sample::Index>(), 0..KEYS, value()).prop_map(|(e, k, v)| Step::Set(e, k, v)),
        2 => (any::<prop::sample::Index>(), 0..KEYS).prop_map(|(e, k)| Step::RemoveKey(e, k)),
        1 => entity().prop_map(Step::Insert),
        1 => any::<prop::sample::Index>().prop_map(Step::Remove),
        3 => any::<prop::sample::Index>().prop_map(Step::Read),
        2 => Just(Step::Columns),
        3 => (expr(), 0..6usize).prop_map(|(e, s)| Step::Query(e, s)),
    ]
}

fn insert(store: &mut Store, entries: &[(usize, OwnedValue)]) {
    let mut blob = Blob::new();
    for (k, v) in entries {
        blob.set(key(*k), v.as_value()).unwrap();
    }
    store.insert(&blob);
}

fn nth_id(store: &Store, at: &prop::sample::Index) -> Option<Id> {
    (!store.is_empty()).then(|| store.iter().nth(at.index(store.len())).map(|(id, _)| id))?
}

fn same(a: Option<Value<'_>>, b: Option<Value<'_>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.is_identical(&b),
        (None, None) => true,
        _ => false,
    }
}

/// Every read of `cursor` on `blob` agrees with `get`.
fn check_cursor(cursor: &KeyCursor, blob: BlobRef<'_>) {
    let k = cursor.key();
    assert!(
        same(cursor.get(blob), blob.get(k)),
        "{k}: {:?} vs {:?}",
        cursor.get(blob),
        blob.get(k)
    );
    assert_eq!(cursor.get_float(blob).map(f32::to_bits), blob.get_float(k).map(f32::to_bits));
    assert_eq!(cursor.get_bool(blob), blob.get_bool(k));
    assert_eq!(cursor.get_str(blob), blob.get_str(k));
    assert_eq!(
        cursor.get_floats(blob).map(|f| f.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
        blob.get_floats(k).map(|f| f.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
    );
    assert_eq!(cursor.contains_key(blob), blob.contains_key(k));
}

fn bits(column: impl Iterator<Item = (Id, f32)>) -> Vec<(Id, u32)> {
    column.map(|(id, x)| (id, x.to_bits())).collect()
}

/// Every column of `entities` (a store's or a view's) agrees with `get` in dense order.
fn check_columns<'a>(
    entities: &[(Id, BlobRef<'a>)],
    f32s: impl Fn(Key) -> Vec<(Id, u32)>,
    bools: impl Fn(Key) -> Vec<(Id, bool)>,
    strs: impl Fn(Key) -> Vec<(Id, String)>,
    floats: impl Fn(Key) -> Vec<(Id, Vec<u32>)>,
) {
    for k in (0..KEYS).map(key) {
        let expect_f32: Vec<_> =
            entities.iter().filter_map(|(id, b)| Some((*id, b.get_float(k)?.to_bits()))).collect();
        assert_eq!(f32s(k), expect_f32);
        let expect_bool: Vec<_> =
            entities.iter().filter_map(|(id, b)| Some((*id, b.get_bool(k)?))).collect();
        assert_eq!(bools(k), expect_bool);
        let expect_str: Vec<_> =
            entities.iter().filter_map(|(id, b)| Some((*id, b.get_str(k)?.to_owned()))).collect();
        assert_eq!(strs(k), expect_str);
        let expect_floats: Vec<_> = entities
            .iter()
            .filter_map(|(id, b)| {
                Some((*id, b.get_floats(k)?.iter().map(|x| x.to_bits()).collect()))
            })
            .collect();
        assert_eq!(floats(k), expect_floats);
    }
}

fn check_queries(store: &Store, queries: &[(Query, ModelExpr, String)]) {
    let bytes = store.to_bytes();
    let view = StoreView::new(&bytes).expect("a store's bytes load");
    for (query, model, text) in queries {
        let expected: Vec<Id> =
            store.iter().filter(|(_, b)| model.eval(*b)).map(|(id, _)| id).collect();
        let got: Vec<Id> = store.query(query).map(|(id, _)| id).collect();
        assert_eq!(got, expected, "{text}");
        let got: Vec<Id> = view.query(query).unwrap().map(|(id, _)| id).collect();
        assert_eq!(got, expected, "{text} over a view");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn cursors_columns_and_queries_agree_with_get(
        start in prop::collection::vec(entity(), 0..12),
        steps in prop::collection::vec(step(), 1..40),
    ) {
        let mut store = Store::new();
        for entries in &start {
            insert(&mut store, entries);
        }
        // Cursors and queries live across every edit: their cached positions go stale.
        let cursors: Vec<KeyCursor> = (0..KEYS).map(|k| KeyCursor::new(key(k))).collect();
        let mut queries: Vec<(Query, ModelExpr, String)> = Vec::new();
        for step in steps {
            match step {
                Step::Set(at, k, v) => {
                    if let Some(id) = nth_id(&store, &at) {
                        store.get_mut(id).unwrap().set(key(k), v.as_value()).unwrap();
                    }
                }
                Step::RemoveKey(at, k) => {
                    if let Some(id) = nth_id(&store, &at) {
                        store.get_mut(id).unwrap().remove(key(k));
                    }
                }
                Step::Insert(entries) => insert(&mut store, &entries),
                Step::Remove(at) => {
                    if let Some(id) = nth_id(&store, &at) {
                        store.remove(id);
                    }
                }
                Step::Read(at) => {
                    let blobs: Vec<BlobRef<'_>> = store.iter().map(|(_, b)| b).collect();
                    let skip = if blobs.is_empty() { 0 } else { at.index(blobs.len()) };
                    for blob in blobs.iter().cycle().skip(skip).take(blobs.len()) {
                        for cursor in &cursors {
                            check_cursor(cursor, *blob);
                        }
                    }
                }
                Step::Columns => {
                    let entities: Vec<_> = store.iter().collect();
                    check_columns(
                        &entities,
                        |k| bits(store.column::<f32>(k)),
                        |k| store.column::<bool>(k).collect(),
                        |k| store.column::<&str>(k).map(|(id, s)| (id, s.to_owned())).collect(),
                        |k| store.column::<&[f32]>(k).map(|(id, f)| (id, f.iter().map(|x| x.to_bits()).collect())).collect(),
                    );
                    let bytes = store.to_bytes();
                    let view = StoreView::new(&bytes).expect("a store's bytes load");
                    let entities: Vec<_> = view.iter().collect();
                    check_columns(
                        &entities,
                        |k| bits(view.column::<f32>(k).unwrap()),
                        |k| view.column::<bool>(k).unwrap().collect(),
                        |k| view.column::<&str>(k).unwrap().map(|(id, s)| (id, s.to_owned())).collect(),
                        |k| view.column::<&[f32]>(k).unwrap().map(|(id, f)| (id, f.iter().map(|x| x.to_bits()).collect())).collect(),
                    );
                }
                Step::Query(model, style) => {
                    let text = model.print(style);
                    let query = Query::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                    queries.push((query, model, text));
                    check_queries(&store, &queries);
                }
            }
        }
        check_queries(&store, &queries);
    }
}

// ---------------------------------------------------------------------------------------------
// Exact cases

#[test]
fn a_cursor_follows_its_key_through_layouts_and_edits() {
    let a: Blob = [("x", 1.0), ("y", 2.0), ("z", 3.0)].into_iter().collect();
    let b: Blob = [("z", 30.0), ("x", 10.0)].into_iter().collect();
    let z = KeyCursor::new("z");
    assert_eq!(z.get_float(&a), Some(3.0));
    assert_eq!(z.position(), 2);
    assert_eq!(z.get_float(&b), Some(30.0));
    assert_eq!(z.position(), 0);
    // Position 0 of `a` holds "x": the cursor must not answer with x's value.
    assert_eq!(z.get_float(&a), Some(3.0));
    assert_eq!(z.position(), 2);
}

#[test]
fn columns_skip_entities_without_the_key_or_of_another_type() {
    let mut world = Store::new();
    let a = world.insert(&[("hp", 1.0)].into_iter().collect::<Blob>());
    world.insert(&[("hp", "full")].into_iter().collect::<Blob>());
    world.insert(&Blob::new());
    let d = world.insert(&[("mp", 0.0), ("hp", 4.0)].into_iter().collect::<Blob>());
    assert_eq!(world.column::<f32>("hp").collect::<Vec<_>>(), [(a, 1.0), (d, 4.0)]);
    assert_eq!(world.column::<&str>("hp").count(), 1);
    assert_eq!(world.column::<bool>("hp").count(), 0);
}

#[test]
fn comparisons_hold_only_for_values_of_the_literals_type() {
    let hp: Blob = [("hp", 3.0)].into_iter().collect();
    let named: Blob = [("hp", "three")].into_iter().collect();
    let none = Blob::new();
    let q = |text: &str| Query::parse(text).unwrap();
    let cases = [
        ("hp != 4", [true, false, false]),
        ("not hp == 4", [true, true, true]),
        ("hp == 3", [true, false, false]),
        (r#"hp == "three""#, [false, true, false]),
        (r#"hp != "three""#, [false, false, false]),
        ("has hp", [true, true, false]),
        ("hp", [false, false, false]),
        ("hp > 2 and hp < 4 or has mp", [true, false, false]),
        ("not has hp or hp >= 3", [true, false, true]),
        ("hp == true", [false, false, false]),
    ];
    for (text, expected) in cases {
        let got = [&hp, &named, &none].map(|b| q(text).matches(b));
        assert_eq!(got, expected, "{text}");
    }
}

#[test]
fn precedence_is_not_then_and_then_or() {
    let t: Blob = [("a", true), ("b", false), ("c", true)].into_iter().collect();
    let q = |text: &str| Query::parse(text).unwrap().matches(&t);
    assert!(q("a or b and not c")); // a or (b and (not c))
    assert!(!q("(a or b) and not c"));
    assert!(q("not b and c"));
    assert!(!q("not (b or c)"));
}

#[test]
fn huge_and_hostile_queries_fail_fast_or_run() {
    // 100k nested parentheses: refused at the limit, not by overflowing the stack.
    let deep = "(".repeat(100_000) + "a" + &")".repeat(100_000);
    let err = Query::parse(&deep).unwrap_err();
    assert_eq!(err.column(), Query::MAX_DEPTH + 1);
    let nots = "not ".repeat(100_000) + "a";
    assert_eq!(Query::parse(&nots).unwrap_err().column(), 4 * Query::MAX_DEPTH + 1);
    // A 100 KB query of 12,500 tests parses and runs.
    let long: Vec<String> = (0..12_500).map(|i| format!("k{} < 1", i % 10)).collect();
    let long = long.join(" or ");
    assert!(long.len() > 100_000);
    let sheet: Blob = [("k7", 0.5)].into_iter().collect();
    assert!(Query::parse(&long).unwrap().matches(&sheet));
    // A key of 10,000 segments.
    let path = vec!["s"; 10_000].join(".");
    let mut blob = Blob::new();
    blob.set(path.as_str(), true).unwrap();
    assert!(Query::parse(&path).unwrap().matches(&blob));
    assert!(Query::parse(&format!("has {path}x")).is_ok_and(|q| !q.matches(&blob)));
}

#[test]
fn fuzz_crash_an_error_quoting_a_newline_stays_one_line() {
    // query_parse found this: the quoted string held a newline, and the message broke in two.
    let text = "\u{1}\0\0\u{1}\u{1}\0\"\n\0\"\n";
    let err = Query::parse(text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "column 7: expected 'and', 'or' or the end of the query, found \"\\n\\0\""
    );
}

#[test]
fn fuzz_crash_an_escape_of_a_newline_stays_one_line() {
    let err = Query::parse("a == \"\\\n\"").unwrap_err();
    assert_eq!(
        err.to_string(),
        "column 7: unknown escape '\\\\n' (a string knows only \\\" and \\\\)"
    );
}

#[test]
fn keys_come_in_text_order_with_character_columns() {
    // Columns count characters, not bytes: `é` is two bytes and one column.
    let query = Query::parse(r#"name == "é" and (has /a.b~1c or not #0000002a) and stats.hp < 1"#)
        .expect("parses");
    let keys: Vec<(usize, &str)> = query.keys().collect();
    assert_eq!(keys, [(1, "name"), (22, "/a.b~1c"), (37, "#0000002a"), (52, "stats.hp")]);
    // A key named 12,500 times: each is listed (the CLI checks each against the save).
    let text = vec!["k < 1"; 12_500].join(" or ");
    let query = Query::parse(&text).expect("parses");
    assert_eq!(query.keys().len(), 12_500);
    assert_eq!(query.keys().last(), Some((12_499 * 9 + 1, "k")));
}

// ---------------------------------------------------------------------------------------------
// Find by value, and sharing a query between threads

/// `find` against a model: a scan of every entity's value at the key, compared as `Value`s.
#[test]
fn find_gives_the_entities_holding_the_value_in_dense_order() {
    let mut world = Store::new();
    let values = [
        OwnedValue::Str("Orc".into()),
        OwnedValue::Str("Troll".into()),
        OwnedValue::Float(3.0),
        OwnedValue::Float(-0.0),
        OwnedValue::Bool(true),
        OwnedValue::Floats(vec![1.0, 2.0]),
    ];
    let mut ids = Vec::new();
    for i in 0..60 {
        let mut sheet = Blob::new();
        // Layouts differ (a key before, or not), so the cursor both hits and misses.
        if i % 3 == 0 {
            sheet.set("pad", i).unwrap();
        }
        if i % 7 != 0 {
            sheet.set("v", &values[i % values.len()]).unwrap();
        }
        ids.push(world.insert(&sheet));
    }
    world.remove(ids[5]);
    let bytes = world.to_bytes();
    let view = StoreView::new(&bytes).unwrap();
    for target in &values {
        let model: Vec<Id> = world
            .iter()
            .filter(|(_, blob)| blob.get("v").is_some_and(|v| v == target.as_value()))
            .map(|(id, _)| id)
            .collect();
        assert!(!model.is_empty(), "{target:?}");
        assert_eq!(world.find("v", target).collect::<Vec<_>>(), model, "{target:?}");
        assert_eq!(view.find("v", target).unwrap().collect::<Vec<_>>(), model, "{target:?}");
    }
    // Numbers compare as numbers, of any type given; what no f32 holds finds nothing.
    let threes = world.find("v", 3.0).collect::<Vec<_>>();
    assert_eq!(world.find("v", 3_u8).collect::<Vec<_>>(), threes);
    assert_eq!(world.find("v", 0.0).collect::<Vec<_>>(), world.find("v", -0.0).collect::<Vec<_>>());
    assert_eq!(world.find("v", 16_777_217_i32).count(), 0);
    assert_eq!(world.find("v", f32::NAN).count(), 0);
    assert_eq!(world.find("v", "3").count(), 0, "a string is not a number");
    assert_eq!(world.find("missing", 3.0).count(), 0);
}

/// A parsed query (and a cursor) lives in shared state: `Send + Sync`, checked at compile time,
/// and used from several threads at once with the same answers.
#[test]
fn a_query_is_send_and_sync() {
    const fn shared<T: Send + Sync>() {}
    const _: () = shared::<Query>();
    const _: () = shared::<KeyCursor>();

    let mut world = Store::new();
    for i in 0..200_u16 {
        world.insert_entries([("stats.health", f32::from(i))]).unwrap();
    }
    let weak = Query::parse("stats.health < 20").unwrap();
    let health = KeyCursor::new("stats.health");
    let counts: Vec<(usize, f32)> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let found = world.query(&weak).count();
                    let sum = world.iter().filter_map(|(_, b)| health.get_float(b)).sum();
                    (found, sum)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(counts, [(20, 19_900.0); 4]);
}
