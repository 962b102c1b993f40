//! [`Seq`] and [`WorldId`]: the two numbers every other module names (errors included), in a
//! module of their own so that they import nothing.

use std::fmt;

/// A world's sequence number: 0 when created, one more for each accepted commit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seq(pub u64);

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A world's id, given by [`Worlds::create_world`](crate::Worlds::create_world) and found by
/// [`Worlds::world`](crate::Worlds::world).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorldId(pub i64);

impl fmt::Display for WorldId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
