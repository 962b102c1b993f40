//! Data versions and migrations: a store's [`data_version`](Store::data_version), and
//! [`Migrations`] that take a store's entities from one version of the game's data to a later
//! one.

use crate::Store;

impl Store {
    /// The version of the game's data the store's entities follow: 0 for a new store and for
    /// a save written before saves had one (format 1.0); set by
    /// [`set_data_version`](Store::set_data_version) or by a migration. Saved with the store.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut store = Store::new();
    /// assert_eq!(store.data_version(), 0);
    /// store.set_data_version(3);
    /// let loaded = Store::from_bytes(&store.to_bytes())?;
    /// assert_eq!(loaded.data_version(), 3);
    /// # Ok::<(), datacomp::LoadError>(())
    /// ```
    #[must_use]
    pub fn data_version(&self) -> u32 {
        self.data_version
    }

    /// Sets the data version without changing any entity: for a store built by this version of
    /// the game (a new world, a JSON import of current fixtures). To bring older data up to
    /// date, migrate it instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use datacomp::Store;
    ///
    /// let mut store = Store::new();
    /// store.set_data_version(7);
    /// assert_eq!(store.data_version(), 7);
    /// ```
    pub fn set_data_version(&mut self, version: u32) {
        self.data_version = version;
    }
}
