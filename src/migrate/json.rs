//! [`Migrations::from_json`]: the migrations format, read strictly, with each error's line,
//! column and step.
//!
//! The reader is `serde_json` driven by hand-written visitors, so that objects keep their
//! members in document order (a step's renames, defaults and sets), every field is checked
//! against the format's, and an error knows the step it is in.

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{self, DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};

use super::{MigrateError, MigrationStep, Migrations};
use crate::text::read::without_bom;
use crate::value::OwnedValue;

impl Migrations {
    /// Reads migrations from JSON:
    ///
    /// ```json
    /// {"version": 3,
    ///  "steps": [
    ///    {"to": 2, "rename": {"hp": "stats.health", "inventory": "items"}},
    ///    {"to": 3, "remove": ["legacy"], "default": {"stats.luck": 1, "flags.tutorial_done": true},
    ///     "set": {"schema": "v3"}}
    ///  ]}
    /// ```
    ///
    /// `version` and `steps` are required, and `to` in each step; `rename` (an object, from
    /// path to path), `remove` (an array of paths), `default` and `set` (objects, from path to
    /// value) are optional. A value is a boolean, a number (stored as the nearest `f32`), a
    /// string or an array of numbers. Members keep their order. Any other field, a value of
    /// another kind, a number past `f32`'s range, steps out of order, or paths that overlap
    /// where that is ambiguous (see [`MigrationStep`]) is an error. Nesting is limited to 128
    /// levels, by the JSON reader. A leading byte order mark is skipped.
    ///
    /// # Errors
    ///
    /// [`MigrateError::Json`], [`UnknownField`](MigrateError::UnknownField) and
    /// [`Value`](MigrateError::Value) with the line, column and step;
    /// [`StepOrder`](MigrateError::StepOrder), [`StepPastVersion`](MigrateError::StepPastVersion),
    /// [`BadPath`](MigrateError::BadPath) and [`Overlap`](MigrateError::Overlap) with the step.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Migrations;
    /// use datacomp::migrate::MigrateError;
    ///
    /// let migrations = Migrations::from_json(r#"{"version": 2, "steps": [{"to": 2, "remove": ["x"]}]}"#)?;
    /// assert_eq!(migrations.version(), 2);
    ///
    /// let err = Migrations::from_json(r#"{"version": 2, "steps": [{"to": 2, "set": {"x": {}}}]}"#)
    ///     .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "migrations, line 1 column 51, steps[0]: the value for x: a value is a boolean, a \
    ///      number, a string, an array of numbers or null"
    /// );
    /// # Ok::<(), MigrateError>(())
    /// ```
    pub fn from_json(text: &str) -> Result<Migrations, MigrateError> {
        let context = Context::default();
        let mut reader = serde_json::Deserializer::from_str(without_bom(text));
        let read =
            Document(&context).deserialize(&mut reader).and_then(|m| reader.end().map(|()| m));
        let migrations = read.map_err(|e| context.error(&e))?;
        migrations.check()?;
        Ok(migrations)
    }
}

/// What the visitors know when `serde_json` returns an error: the step being read, and the
/// error in this crate's terms when a visitor raised it.
#[derive(Default)]
struct Context {
    step: Cell<Option<usize>>,
    problem: RefCell<Option<Problem>>,
}

/// An error a visitor raised, before `serde_json` gives it a place.
enum Problem {
    UnknownField(String),
    Value { path: String, problem: &'static str },
}

impl Context {
    /// The error `serde_json` returned, in this crate's terms, with its place.
    fn error(&self, e: &serde_json::Error) -> MigrateError {
        let (line, column, step) = (e.line(), e.column(), self.step.get());
        match self.problem.take() {
            Some(Problem::UnknownField(field)) => {
                MigrateError::UnknownField { line, column, step, field }
            }
            Some(Problem::Value { path, problem }) => {
                MigrateError::Value { line, column, step: step.unwrap_or(0), path, problem }
            }
            None => {
                let text = e.to_string();
                let place = format!(" at line {line} column {column}");
                let message = text.strip_suffix(&place).unwrap_or(&text).to_owned();
                MigrateError::Json { line, column, step, message }
            }
        }
    }

    /// Records `problem` and returns the error that stops `serde_json`.
    fn raise<E: de::Error>(&self, problem: Problem) -> E {
        let message = match &problem {
            Problem::UnknownField(field) => format!("unknown field {field:?}"),
            Problem::Value { problem, .. } => (*problem).to_owned(),
        };
        self.problem.replace(Some(problem));
        E::custom(message)
    }
}

/// The top-level object.
struct Document<'c>(&'c Context);

impl<'de> DeserializeSeed<'de> for Document<'_> {
    type Value = Migrations;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Migrations, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Document<'_> {
    type Value = Migrations;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with version and steps")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Migrations, A::Error> {
        let (mut version, mut steps) = (None, None);
        while let Some(field) = map.next_key::<String>()? {
            match field.as_str() {
                "version" if version.is_none() => version = Some(map.next_value::<u32>()?),
                "steps" if steps.is_none() => steps = Some(map.next_value_seed(Steps(self.0))?),
                "version" | "steps" => {
                    return Err(A::Error::custom(format!("duplicate field {field:?}")));
                }
                _ => return Err(self.0.raise(Problem::UnknownField(field))),
            }
        }
        let version = version.ok_or_else(|| A::Error::missing_field("version"))?;
        let steps = steps.ok_or_else(|| A::Error::missing_field("steps"))?;
        Ok(Migrations { version, steps, max_output: Migrations::DEFAULT_MAX_OUTPUT })
    }
}

/// The `steps` array.
struct Steps<'c>(&'c Context);

impl<'de> DeserializeSeed<'de> for Steps<'_> {
    type Value = Vec<MigrationStep>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Steps<'_> {
    type Value = Vec<MigrationStep>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of steps")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut steps = Vec::new();
        loop {
            self.0.step.set(Some(steps.len()));
            match seq.next_element_seed(Step(self.0))? {
                Some(step) => steps.push(step),
                None => break,
            }
        }
        self.0.step.set(None);
        Ok(steps)
    }
}

/// One step's object.
struct Step<'c>(&'c Context);

impl<'de> DeserializeSeed<'de> for Step<'_> {
    type Value = MigrationStep;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<MigrationStep, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Step<'_> {
    type Value = MigrationStep;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a step: an object with to, and rename, remove, default or set")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MigrationStep, A::Error> {
        let mut to = None;
        let mut step = MigrationStep::to(0);
        let mut seen = [false; 4];
        while let Some(field) = map.next_key::<String>()? {
            let slot = match field.as_str() {
                "to" if to.is_none() => {
                    to = Some(map.next_value::<u32>()?);
                    continue;
                }
                "rename" => 0,
                "remove" => 1,
                "default" => 2,
                "set" => 3,
                "to" => usize::MAX,
                _ => return Err(self.0.raise(Problem::UnknownField(field))),
            };
            if seen.get(slot).is_none_or(|&seen| seen) {
                return Err(A::Error::custom(format!("duplicate field {field:?}")));
            }
            seen[slot] = true;
            match slot {
                0 => step.renames = map.next_value_seed(Renames)?,
                1 => step.removes = map.next_value::<Vec<String>>()?,
                2 => step.defaults = map.next_value_seed(Values(self.0))?,
                _ => step.sets = map.next_value_seed(Values(self.0))?,
            }
        }
        step.to = to.ok_or_else(|| A::Error::missing_field("to"))?;
        Ok(step)
    }
}

/// A `rename` object: paths to paths, in document order.
struct Renames;

impl<'de> DeserializeSeed<'de> for Renames {
    type Value = Vec<(String, String)>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Renames {
    type Value = Vec<(String, String)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object from path to new path")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut renames = Vec::new();
        while let Some(entry) = map.next_entry::<String, String>()? {
            renames.push(entry);
        }
        Ok(renames)
    }
}

/// A `default` or `set` object: paths to values, in document order.
struct Values<'c>(&'c Context);

impl<'de> DeserializeSeed<'de> for Values<'_> {
    type Value = Vec<(String, OwnedValue)>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Values<'_> {
    type Value = Vec<(String, OwnedValue)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object from path to value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut values = Vec::new();
        while let Some((path, value)) = map.next_entry::<String, serde_json::Value>()? {
            match owned_value(&value) {
                Ok(value) => values.push((path, value)),
                Err(problem) => return Err(self.0.raise(Problem::Value { path, problem })),
            }
        }
        Ok(values)
    }
}

/// A JSON value as a key holds it.
fn owned_value(value: &serde_json::Value) -> Result<OwnedValue, &'static str> {
    use serde_json::Value as J;
    let float = |n: &serde_json::Number| {
        let wide = n.as_f64().ok_or("a number past the range of f32")?;
        #[allow(clippy::cast_possible_truncation)] // The nearest f32, checked for range next.
        let narrow = wide as f32;
        if narrow.is_finite() { Ok(narrow) } else { Err("a number past the range of f32") }
    };
    match value {
        J::Bool(b) => Ok(OwnedValue::Bool(*b)),
        J::Number(n) => float(n).map(OwnedValue::Float),
        J::String(s) => Ok(OwnedValue::Str(s.clone())),
        J::Array(items) => items
            .iter()
            .map(|item| match item {
                J::Number(n) => float(n),
                _ => Err("an array holds numbers only"),
            })
            .collect::<Result<Vec<f32>, _>>()
            .map(OwnedValue::Floats),
        J::Null => Ok(OwnedValue::Null),
        J::Object(_) => {
            Err("a value is a boolean, a number, a string, an array of numbers or null")
        }
    }
}
