//! A generated corpus of game-data JSON in the shapes designers' files have (monster sheets,
//! spells, items, classes, levels): nested objects, strings, booleans, whole and fractional
//! numbers, float arrays, and, in documents of their own, the array shapes a store records as
//! arrays (arrays of objects, of strings, mixed, nested and empty ones).
//!
//! Documents are built as [`J`] trees and written in the forms the export writes (compact, and
//! pretty as designers write fixtures), with every number in its shortest `f32` form, so that
//! a round trip can be checked byte for byte. [`J::parse`] reads any JSON back with its member
//! order, for comparisons with numbers rounded to `f32`.
//!
//! Shared by `tests/roundtrip.rs`, the command's tests (`cli/tests/cli.rs`) and
//! `benches/json.rs`.

#![allow(dead_code)] // Each test file uses its own part.

use std::fmt::{self, Write as _};

/// A JSON value with its member order, numbers as their text.
#[derive(Clone, Debug, PartialEq)]
pub enum J {
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    Str(String),
    /// A number as written.
    Num(String),
    Bool(bool),
}

fn obj(members: Vec<(&str, J)>) -> J {
    J::Obj(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

fn s(text: &str) -> J {
    J::Str(text.to_owned())
}

fn n(whole: i64) -> J {
    J::Num(whole.to_string())
}

/// A fraction in hundredths, as written in its shortest form (`0.25`, `-3.5`, `12`): at most
/// six significant digits, so the text is also the shortest form of its `f32`.
fn hundredths(h: i64) -> J {
    let (sign, h) = if h < 0 { ("-", -h) } else { ("", h) };
    let (int, frac) = (h / 100, h % 100);
    let text = match frac {
        0 => format!("{sign}{int}"),
        f if f % 10 == 0 => format!("{sign}{int}.{}", f / 10),
        f => format!("{sign}{int}.{f:02}"),
    };
    J::Num(text)
}

fn floats(hs: &[i64]) -> J {
    J::Arr(hs.iter().map(|&h| hundredths(h)).collect())
}

/// splitmix64: the same corpus on every run and platform.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> i64 {
        (self.next() % n) as i64
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent as i64
    }
}

const NAMES: [&str; 12] = [
    "Aboleth",
    "Owlbear",
    "Cave Troll",
    "Adult Black Dragon",
    "Gelatinous Cube",
    "Éttin",
    "Mind Flayer",
    "Kobold",
    "Lich",
    "Will-o'-Wisp",
    "Dragon Turtle",
    "Goblin \"Boss\"",
];
const SIZES: [&str; 6] = ["Tiny", "Small", "Medium", "Large", "Huge", "Gargantuan"];
const TYPES: [&str; 6] = ["aberration", "beast", "dragon", "giant", "undead", "humanoid"];
const ABILITIES: [&str; 6] =
    ["strength", "dexterity", "constitution", "intelligence", "wisdom", "charisma"];
/// Challenge ratings in hundredths (0.125, which is not, comes apart).
const CHALLENGE: [i64; 8] = [0, 12, 25, 50, 100, 500, 1400, 2100];

/// One monster sheet in the shapes the format holds.
fn monster(rng: &mut Rng, i: usize) -> J {
    let name = format!("{} {}", NAMES[i % NAMES.len()], i);
    let index = name.to_lowercase().replace([' ', '"', '\''], "-");
    let mut members: Vec<(&str, J)> = vec![
        ("index", J::Str(index)),
        ("name", J::Str(name)),
        ("size", s(rng.pick(&SIZES))),
        ("type", s(rng.pick(&TYPES))),
        ("alignment", s(rng.pick(&["chaotic evil", "lawful good", "unaligned", "neutral"]))),
        ("armor_class", n(rng.range(10, 22))),
        ("hit_points", n(rng.range(1, 676))),
        (
            "hit_dice",
            J::Str(format!("{}d{}", rng.range(1, 33), rng.pick(&["6", "8", "10", "12", "20"]))),
        ),
        (
            "speed",
            obj(vec![
                ("walk", J::Str(format!("{} ft.", 5 * rng.range(0, 12)))),
                ("swim", J::Str(format!("{} ft.", 5 * rng.range(0, 12)))),
                ("hover", J::Bool(rng.chance(10))),
            ]),
        ),
    ];
    let abilities: Vec<(&str, J)> = ABILITIES.iter().map(|&a| (a, n(rng.range(1, 30)))).collect();
    members.push(("abilities", obj(abilities)));
    members.push((
        "senses",
        obj(vec![
            ("darkvision", J::Str(format!("{} ft.", 30 * rng.range(0, 4)))),
            ("passive_perception", n(rng.range(8, 30))),
        ]),
    ));
    members.push((
        "languages",
        s(rng.pick(&["Common, Draconic", "Deep Speech, telepathy 120 ft.", "—", ""])),
    ));
    let cr = CHALLENGE[rng.below(CHALLENGE.len() as u64) as usize];
    members.push((
        "challenge_rating",
        if rng.chance(20) { J::Num("0.125".into()) } else { hundredths(cr) },
    ));
    members.push(("xp", n(rng.range(0, 155_000))));
    members.push(("legendary", J::Bool(rng.chance(15))));
    members
        .push(("position", floats(&[rng.range(-100_000, 100_000), 0, rng.range(-5_000, 5_000)])));
    members.push((
        "loot_weights",
        floats(&(0..rng.below(5)).map(|_| rng.range(0, 100)).collect::<Vec<_>>()),
    ));
    if rng.chance(30) {
        members.push((
            "lair",
            obj(vec![
                ("name", s("A cave where \"nothing\" echoes\nback: \\ / \t ok")),
                (
                    "regional_effects",
                    obj(vec![("fog", J::Bool(true)), ("radius_miles", hundredths(150))]),
                ),
            ]),
        ));
    }
    obj(members)
}

fn spell(rng: &mut Rng, i: usize) -> J {
    let slots: Vec<(String, J)> = (rng.range(1, 3)..=rng.range(4, 9))
        .map(|level| (level.to_string(), J::Str(format!("{}d6", level + 2))))
        .collect();
    obj(vec![
        ("index", J::Str(format!("spell-{i}"))),
        ("name", J::Str(format!("Fireball {i}"))),
        ("level", n(rng.range(0, 9))),
        ("ritual", J::Bool(rng.chance(20))),
        ("concentration", J::Bool(rng.chance(40))),
        ("components", s("V, S, M")),
        ("range", s(rng.pick(&["150 feet", "Self", "Touch"]))),
        ("casting_time", s("1 action")),
        ("school", obj(vec![("index", s("evocation")), ("name", s("Evocation"))])),
        // Member names that are numbers: an object still, not an array.
        ("damage", obj(vec![("damage_at_slot_level", J::Obj(slots))])),
        ("area_of_effect", obj(vec![("type", s("sphere")), ("size", n(20))])),
    ])
}

fn item(rng: &mut Rng, i: usize) -> J {
    obj(vec![
        ("index", J::Str(format!("item-{i}"))),
        ("name", J::Str(format!("Potion of Healing ({i})"))),
        (
            "cost",
            obj(vec![
                ("quantity", n(rng.range(0, 5000))),
                ("unit", s(rng.pick(&["cp", "sp", "gp"]))),
            ]),
        ),
        ("weight", hundredths(rng.range(0, 2000))),
        ("rarity", obj(vec![("name", s(rng.pick(&["Common", "Rare", "Legendary"])))])),
        (
            "properties",
            obj(vec![("finesse", J::Bool(rng.chance(50))), ("light", J::Bool(rng.chance(50)))]),
        ),
        ("color", floats(&[rng.range(0, 100), rng.range(0, 100), rng.range(0, 100), 100])),
        ("tiny", J::Num("1e-7".into())),
        ("huge", J::Num("1e+20".into())),
        ("big_whole", J::Num("123456790".into())),
    ])
}

fn level(rng: &mut Rng, i: usize) -> J {
    obj(vec![
        ("level", n(i as i64 + 1)),
        ("ability_score_bonuses", n(rng.range(0, 5))),
        ("prof_bonus", n(2 + i as i64 / 4)),
        (
            "class_specific",
            obj(vec![
                ("rage_count", n(rng.range(2, 6))),
                ("rage_damage_bonus", n(rng.range(2, 4))),
                ("brutal_critical_dice", n(0)),
            ]),
        ),
        (
            "spellcasting",
            obj(vec![
                ("cantrips_known", n(rng.range(2, 5))),
                ("spell_slots_level_1", n(rng.range(0, 4))),
                ("spell_slots_level_2", n(0)),
            ]),
        ),
        ("index", J::Str(format!("barbarian-{}", i + 1))),
    ])
}

/// The documents of the corpus in the shapes the format holds, by name: one entity each, or
/// arrays of them (`monsters` has 334, as the public dataset that found issue 16).
pub fn documents() -> Vec<(&'static str, J)> {
    let mut rng = Rng::new(16);
    vec![
        ("monster", monster(&mut rng, 0)),
        ("monsters", J::Arr((0..334).map(|i| monster(&mut rng, i)).collect())),
        ("spells", J::Arr((0..40).map(|i| spell(&mut rng, i)).collect())),
        ("items", J::Arr((0..60).map(|i| item(&mut rng, i)).collect())),
        ("levels", J::Arr((0..20).map(|i| level(&mut rng, i)).collect())),
        (
            "class",
            obj(vec![
                ("index", s("barbarian")),
                ("hit_die", n(12)),
                ("saving_throws", obj(vec![("str", J::Bool(true)), ("con", J::Bool(true))])),
                ("starting_gold", obj(vec![("dice", s("2d4")), ("multiplier", n(10))])),
                ("empty", J::Arr(Vec::new())),
                (
                    "deep",
                    obj(vec![("a", obj(vec![("b", obj(vec![("c", obj(vec![("d", n(1))]))]))]))]),
                ),
            ]),
        ),
    ]
}

/// `count` monster sheets in one array, as [`documents`]' `monsters` (for benchmarks).
pub fn monsters(count: usize) -> J {
    let mut rng = Rng::new(16);
    J::Arr((0..count).map(|i| monster(&mut rng, i)).collect())
}

/// Documents with the array shapes designers' files have, which a blob holds as keys by index
/// and a store records as arrays: arrays of objects, of strings, of booleans, mixed, nested
/// and empty arrays among them.
pub fn array_documents() -> Vec<(&'static str, J)> {
    let monster = obj(vec![
        ("name", s("Adult Black Dragon")),
        ("armor_class", J::Arr(vec![obj(vec![("type", s("natural")), ("value", n(19))])])),
        (
            "proficiencies",
            J::Arr(vec![
                obj(vec![
                    ("value", n(7)),
                    (
                        "proficiency",
                        obj(vec![
                            ("index", s("saving-throw-dex")),
                            ("name", s("Saving Throw: DEX")),
                        ]),
                    ),
                ]),
                obj(vec![
                    ("value", n(11)),
                    ("proficiency", obj(vec![("index", s("skill-perception"))])),
                ]),
            ]),
        ),
        ("damage_vulnerabilities", J::Arr(Vec::new())),
        ("damage_immunities", J::Arr(vec![s("acid")])),
        ("condition_immunities", J::Arr(Vec::new())),
        (
            "actions",
            J::Arr(vec![obj(vec![
                ("name", s("Multiattack")),
                (
                    "actions",
                    J::Arr(vec![obj(vec![
                        ("action_name", s("Bite")),
                        ("count", n(1)),
                        ("type", s("melee")),
                    ])]),
                ),
                ("dc", obj(vec![("dc_value", n(18)), ("success_type", s("half"))])),
            ])]),
        ),
    ]);
    let shapes = obj(vec![
        ("strings", J::Arr(vec![s("Common"), s("Draconic")])),
        ("booleans", J::Arr(vec![J::Bool(true), J::Bool(false)])),
        (
            "mixed",
            J::Arr(vec![n(1), s("two"), J::Bool(true), floats(&[350]), obj(vec![("x", n(1))])]),
        ),
        ("nested", J::Arr(vec![floats(&[100, 200]), floats(&[300]), J::Arr(Vec::new())])),
        ("empty_in_object", obj(vec![("list", J::Arr(Vec::new())), ("n", n(0))])),
        ("objects_then_numbers", J::Arr(vec![obj(vec![("a", n(1))]), n(2)])),
    ]);
    vec![("monster_with_arrays", monster), ("array_shapes", shapes)]
}

impl J {
    /// The text on one line, as `Store::export` writes it.
    pub fn compact(&self) -> String {
        let mut out = String::new();
        self.write_compact(&mut out);
        out
    }

    fn write_compact(&self, out: &mut String) {
        match self {
            J::Obj(members) => {
                out.push('{');
                for (i, (name, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&quoted(name));
                    out.push(':');
                    value.write_compact(out);
                }
                out.push('}');
            }
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_compact(out);
                }
                out.push(']');
            }
            J::Str(text) => out.push_str(&quoted(text)),
            J::Num(text) => out.push_str(text),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        }
    }

    /// The text as `Store::export` writes (pretty) an entity at `depth` (0, or 1 inside
    /// `export_all`'s array): a member a line, two spaces a level, arrays of
    /// numbers on one line.
    pub fn pretty(&self, depth: usize) -> String {
        let mut out = String::new();
        self.write_pretty(depth, &mut out);
        out
    }

    fn write_pretty(&self, depth: usize, out: &mut String) {
        match self {
            J::Obj(members) if members.is_empty() => out.push_str("{}"),
            J::Obj(members) => {
                out.push('{');
                for (i, (name, value)) in members.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    out.push_str(&"  ".repeat(depth + 1));
                    let _ = write!(out, "{}: ", quoted(name));
                    value.write_pretty(depth + 1, out);
                }
                out.push('\n');
                out.push_str(&"  ".repeat(depth));
                out.push('}');
            }
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_compact(out);
                }
                out.push(']');
            }
            other => other.write_compact(out),
        }
    }

    /// A document of entities as `Store::export_all` writes it, pretty.
    pub fn pretty_all(entities: &[J]) -> String {
        if entities.is_empty() {
            return "[]".into();
        }
        let inner: Vec<String> = entities.iter().map(|e| e.pretty(1)).collect();
        format!("[\n  {}\n]", inner.join(",\n  "))
    }

    /// The entities of a document: the items of a top-level array, or the object itself.
    pub fn entities(&self) -> Vec<J> {
        match self {
            J::Arr(items) => items.clone(),
            other => vec![other.clone()],
        }
    }

    /// Reads JSON with its member order kept.
    pub fn parse(text: &str) -> J {
        serde_json::from_str(text).expect("valid JSON")
    }

    /// Whether two documents are the same with numbers compared after rounding to `f32` and
    /// member order kept.
    pub fn same_as_f32(&self, other: &J) -> bool {
        match (self, other) {
            (J::Obj(a), J::Obj(b)) => {
                a.len() == b.len()
                    && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && va.same_as_f32(vb))
            }
            (J::Arr(a), J::Arr(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_as_f32(y))
            }
            (J::Num(a), J::Num(b)) => {
                let f = |t: &str| t.parse::<f64>().map(|x| x as f32).ok();
                f(a).is_some() && f(a) == f(b)
            }
            (a, b) => a == b,
        }
    }
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

impl fmt::Display for J {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.compact())
    }
}

impl<'de> serde::Deserialize<'de> for J {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<J, D::Error> {
        deserializer.deserialize_any(JVisitor)
    }
}

struct JVisitor;

impl<'de> serde::de::Visitor<'de> for JVisitor {
    type Value = J;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON without null")
    }

    fn visit_bool<E>(self, b: bool) -> Result<J, E> {
        Ok(J::Bool(b))
    }

    fn visit_u64<E>(self, n: u64) -> Result<J, E> {
        Ok(J::Num(n.to_string()))
    }

    fn visit_i64<E>(self, n: i64) -> Result<J, E> {
        Ok(J::Num(n.to_string()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<J, E> {
        Ok(J::Num(format!("{n:e}")))
    }

    fn visit_str<E>(self, text: &str) -> Result<J, E> {
        Ok(J::Str(text.to_owned()))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<J, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(J::Arr(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<J, A::Error> {
        let mut members = Vec::new();
        while let Some((name, value)) = map.next_entry::<String, J>()? {
            members.push((name, value));
        }
        Ok(J::Obj(members))
    }
}
