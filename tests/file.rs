//! Saving through the file system: symbolic links, planted files, permissions, errors, stale
//! temporary files, concurrent savers, and `SaveFile`'s lock around a read-modify-write.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use datacomp::{Blob, Error, SaveFile, Store, file};
use tempfile::TempDir;

/// A store of one entity named `name`.
fn named(name: &str) -> Store {
    let mut store = Store::new();
    store.insert(&[("name", name)].into_iter().collect::<Blob>());
    store
}

fn name_of(path: &Path) -> String {
    let store = Store::load(path).unwrap();
    let (_, blob) = store.iter().next().unwrap();
    blob.get_str("name").unwrap().to_owned()
}

/// Every file in `dir`, by name.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[cfg(unix)]
#[test]
fn a_link_planted_at_a_temporary_name_is_never_written_through() {
    let dir = TempDir::new().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    let path = dir.path().join("world.dcmp");
    // Every name this process will try first (names are `<name>.tmp-<pid>-<n>`; this test
    // file makes fewer than 500 temporary files in all).
    let pid = std::process::id();
    let planted: Vec<PathBuf> =
        (0..500).map(|n| dir.path().join(format!("world.dcmp.tmp-{pid}-{n}"))).collect();
    for link in &planted {
        std::os::unix::fs::symlink(&victim, link).unwrap();
    }
    named("Bob").save(&path).unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert_eq!(name_of(&path), "Bob");
    for link in &planted {
        assert!(std::fs::symlink_metadata(link).unwrap().file_type().is_symlink());
    }
}

#[cfg(unix)]
#[test]
fn saving_through_a_symlink_replaces_its_target_and_keeps_the_link() {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("saves")).unwrap();
    let target = dir.path().join("saves/real.dcmp");
    named("old").save(&target).unwrap();
    // A link to a link, relative, from another directory.
    let middle = dir.path().join("saves/middle.dcmp");
    std::os::unix::fs::symlink("real.dcmp", &middle).unwrap();
    let link = dir.path().join("world.dcmp");
    std::os::unix::fs::symlink("saves/middle.dcmp", &link).unwrap();

    named("new").save(&link).unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::symlink_metadata(&middle).unwrap().file_type().is_symlink());
    assert_eq!(name_of(&target), "new");
    assert_eq!(listing(&dir.path().join("saves")), ["middle.dcmp", "real.dcmp"]);

    // A dangling link: the save creates its target.
    let dangling = dir.path().join("dangling.dcmp");
    std::os::unix::fs::symlink("saves/created.dcmp", &dangling).unwrap();
    named("created").save(&dangling).unwrap();
    assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
    assert_eq!(name_of(&dir.path().join("saves/created.dcmp")), "created");

    // A loop is an error, and writes nothing.
    let a = dir.path().join("a.dcmp");
    std::os::unix::fs::symlink("b.dcmp", &a).unwrap();
    std::os::unix::fs::symlink("a.dcmp", dir.path().join("b.dcmp")).unwrap();
    let err = named("x").save(&a).unwrap_err();
    assert_eq!(err.to_string(), "too many levels of symbolic links");
}

#[cfg(unix)]
#[test]
fn a_save_keeps_the_old_files_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("world.dcmp");
    named("a").save(&path).unwrap();
    for mode in [0o600, 0o640, 0o664, 0o444] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        named("b").save(&path).unwrap();
        let kept = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(kept, mode, "{mode:o}");
    }
}

#[test]
fn a_failed_write_leaves_no_temporary_file_and_the_old_file_whole() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("world.dcmp");
    named("old").save(&path).unwrap();
    let err = file::write_atomically(&path, |out| {
        out.write_all(b"half")?;
        Err(std::io::Error::other("disk on fire"))
    })
    .unwrap_err();
    assert!(matches!(&err, Error::Io(e) if e.to_string() == "disk on fire"), "{err}");
    assert_eq!(listing(dir.path()), ["world.dcmp"]);
    assert_eq!(name_of(&path), "old");

    // A panic in the writer too.
    let panicked = std::panic::catch_unwind(|| {
        file::write_atomically(&path, |_| panic!("writer panics")).unwrap();
    });
    assert!(panicked.is_err());
    assert_eq!(listing(dir.path()), ["world.dcmp"]);

    // A directory in the way: the rename fails.
    let in_the_way = dir.path().join("dir.dcmp");
    std::fs::create_dir(&in_the_way).unwrap();
    assert!(matches!(named("x").save(&in_the_way), Err(Error::Io(_))));
    assert_eq!(listing(dir.path()), ["dir.dcmp", "world.dcmp"]);
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_is_an_error_that_changes_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("world.dcmp");
    named("old").save(&path).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root writes into read-only directories: the check means nothing there.
    let root = std::fs::File::create(dir.path().join("probe")).is_ok();
    let result = named("new").save(&path);
    let lock = SaveFile::lock(&path);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if root {
        return;
    }
    let err = result.unwrap_err();
    assert!(matches!(&err, Error::Io(e) if e.kind() == std::io::ErrorKind::PermissionDenied));
    assert!(matches!(lock, Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::PermissionDenied));
    assert_eq!(listing(dir.path()), ["world.dcmp"]);
    assert_eq!(name_of(&path), "old");
}

/// A device, or a link to one (`/dev/stdout`), is written in place: there is nothing to
/// rename over, and no lock file is made beside it.
#[cfg(unix)]
#[test]
fn a_device_is_written_in_place() {
    let dir = TempDir::new().unwrap();
    let link = dir.path().join("null.dcmp");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    for path in [Path::new("/dev/null"), &link] {
        let file = SaveFile::lock(path).unwrap();
        file.save(&named("x")).unwrap();
        assert_eq!(file.path(), path);
    }
    assert!(!Path::new("/dev/null.lock").exists());
    assert_eq!(listing(dir.path()), ["null.dcmp"]);
}

#[cfg(unix)]
#[test]
fn stale_temporary_files_are_listed_and_removed_by_the_next_save() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("world.dcmp");
    named("a").save(&path).unwrap();
    // Left by a killed writer: nobody holds them.
    let stale =
        [dir.path().join("world.dcmp.tmp-4000000-0"), dir.path().join("world.dcmp.tmp-7-12")];
    for temp in &stale {
        std::fs::write(temp, b"half a save").unwrap();
    }
    // Being written: its writer holds its lock.
    let busy = dir.path().join("world.dcmp.tmp-7-13");
    let held = std::fs::File::create(&busy).unwrap();
    held.lock().unwrap();
    // Not ours: another save's, another pattern, a link.
    let others = ["other.dcmp.tmp-7-1", "world.dcmp.tmp-x", "world.dcmp.tmp-7-1-2"];
    for other in others {
        std::fs::write(dir.path().join(other), b"keep").unwrap();
    }
    std::os::unix::fs::symlink("world.dcmp", dir.path().join("world.dcmp.tmp-8-0")).unwrap();

    assert_eq!(file::stale_temps(&path).unwrap(), stale);
    named("b").save(&path).unwrap();
    let mut kept = listing(dir.path());
    kept.retain(|name| name != "world.dcmp");
    assert_eq!(
        kept,
        [
            "other.dcmp.tmp-7-1",
            "world.dcmp.tmp-7-1-2",
            "world.dcmp.tmp-7-13",
            "world.dcmp.tmp-8-0",
            "world.dcmp.tmp-x"
        ]
    );
    assert!(file::stale_temps(&path).unwrap().is_empty());
    drop(held);
    assert_eq!(file::stale_temps(&path).unwrap(), [busy]);
}

/// Reproduces the lost save of two threads saving one path (one of them failed with
/// NotFound, or a file failed its crc although both returned `Ok`).
#[test]
fn two_threads_saving_one_path_both_succeed_and_leave_a_whole_file() {
    let dir = TempDir::new().unwrap();
    let path = Arc::new(dir.path().join("world.dcmp"));
    let (a, b) = (named("a"), named("b"));
    for _ in 0..100 {
        let barrier = Arc::new(Barrier::new(2));
        let other = {
            let (path, barrier, b) = (Arc::clone(&path), Arc::clone(&barrier), b.clone());
            std::thread::spawn(move || {
                barrier.wait();
                b.save(&*path)
            })
        };
        barrier.wait();
        a.save(&*path).unwrap();
        other.join().unwrap().unwrap();
        let name = name_of(&path);
        assert!(name == "a" || name == "b", "{name}");
    }
    assert_eq!(listing(dir.path()), ["world.dcmp"]);
}

/// Two writers each add 100 entities, one load-change-save at a time: with the lock, none is
/// lost.
#[test]
fn savefile_orders_read_modify_writes() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("world.dcmp");
    Store::new().save(&path).unwrap();
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|writer| {
            let path = path.clone();
            std::thread::spawn(move || {
                for i in 0..100 {
                    let file = SaveFile::lock(&path).unwrap();
                    let mut store = file.load().unwrap();
                    store.insert(
                        &[("name", format!("{writer}{i}").as_str())].into_iter().collect::<Blob>(),
                    );
                    file.save(&store).unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let store = Store::load(&path).unwrap();
    let mut names: Vec<String> =
        store.iter().map(|(_, b)| b.get_str("name").unwrap().to_owned()).collect();
    names.sort();
    let mut expected: Vec<String> =
        ["a", "b"].iter().flat_map(|w| (0..100).map(move |i| format!("{w}{i}"))).collect();
    expected.sort();
    assert_eq!(names, expected);
    // Each writer removed the lock file as it let go: the saves' only trace is the save.
    assert_eq!(listing(dir.path()), ["world.dcmp"]);
}

#[cfg(unix)]
#[test]
fn a_symlinked_lock_file_is_refused_and_links_share_one_lock() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("world.dcmp");
    Store::new().save(&path).unwrap();
    let link = dir.path().join("link.dcmp");
    std::os::unix::fs::symlink("world.dcmp", &link).unwrap();
    let file = SaveFile::lock(&link).unwrap();
    assert_eq!(file.path(), path);
    drop(file);
    assert_eq!(listing(dir.path()), ["link.dcmp", "world.dcmp"]);

    let other = dir.path().join("other.dcmp");
    std::os::unix::fs::symlink("elsewhere", dir.path().join("other.dcmp.lock")).unwrap();
    let err = SaveFile::lock(&other).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the lock file {} is a symbolic link; refusing to lock through it",
            dir.path().join("other.dcmp.lock").display()
        )
    );
}

/// Attack: as a user who may write a save but not its directory, `datacomp set` said only
/// "cannot lock: Permission denied" and "cannot write: Permission denied" about a file the
/// user can write. The errors name what could not be made, and where. (A missing directory
/// stands in for a read-only one, which root, running these tests here, writes anyway.)
#[test]
fn errors_making_the_lock_or_the_temporary_file_name_them() {
    let dir = TempDir::new().unwrap();
    let missing = dir.path().join("no-such-dir");
    let path = missing.join("world.dcmp");
    let err = SaveFile::lock(&path).unwrap_err();
    let Error::Io(io) = &err else { panic!("{err:?}") };
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(
        err.to_string(),
        format!(
            "the lock file {} cannot be created or opened: No such file or directory (os error \
             2)",
            missing.join("world.dcmp.lock").display()
        )
    );
    let err = named("x").save(&path).unwrap_err();
    let Error::Io(io) = &err else { panic!("{err:?}") };
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(
        err.to_string(),
        format!(
            "a temporary file cannot be created in {}, to replace world.dcmp with: No such file \
             or directory (os error 2)",
            missing.display()
        )
    );
    assert_eq!(listing(dir.path()), Vec::<String>::new());
}

/// A lock file left by a killed writer (a lock dies with its process, the file does not) is
/// taken by the next writer and removed when it lets go; a writer that waited on a lock file
/// the holder removed takes a new one, and still waits for the holder.
#[test]
fn lock_files_live_only_as_long_as_their_lock() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("world.dcmp");
    Store::new().save(&path).unwrap();
    std::fs::write(dir.path().join("world.dcmp.lock"), b"").unwrap();
    let file = SaveFile::lock(&path).unwrap();
    assert_eq!(listing(dir.path()), ["world.dcmp", "world.dcmp.lock"]);
    // A second writer waits while the first holds the lock, then removes the file as well.
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = {
        let path = path.clone();
        std::thread::spawn(move || {
            let second = SaveFile::lock(&path).unwrap();
            tx.send(()).unwrap();
            drop(second);
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(rx.try_recv().is_err(), "the second writer waits for the first");
    drop(file);
    rx.recv().unwrap();
    waiter.join().unwrap();
    assert_eq!(listing(dir.path()), ["world.dcmp"]);
}
