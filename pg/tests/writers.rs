//! Many writers on one world through `commit_merging`: the final world is a serial replay of
//! the accepted commits, and every edit that was not reported as a conflict is in the world
//! at the seq its commit got (no lost update). Against PostgreSQL (4 writers x 1,000 commits,
//! with a follower) and against files (2 x 100).

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{Rng, connect, params, unique};
use datacomp::handle_map::Id;
use datacomp::{Key, Store, StorePatch};
use datacomp_pg::{FileWorlds, Follower, PgWorlds, Seq, WorldId, Worlds};

const ENTITIES: usize = 4;
const KEYS: usize = 16;

/// One accepted commit of a writer: its seq, its edits (the last value of each key), and the
/// keys reported as conflicts.
struct Accepted {
    seq: Seq,
    edits: HashMap<(Id, Key), f32>,
    conflicts: Vec<(Id, Key)>,
}

fn key(k: usize) -> String {
    format!("stats.k{k}")
}

/// Seeds the world with the shared entities; returns them and the seq.
fn seed(worlds: &mut impl Worlds, w: WorldId) -> Vec<Id> {
    let (empty, seq) = worlds.load(w).unwrap();
    let mut local = empty.clone();
    let ids: Vec<Id> = (0..ENTITIES)
        .map(|e| {
            let id = local.insert_entries([("name", format!("shared {e}").as_str())]).unwrap();
            for k in 0..KEYS {
                local.get_mut(id).unwrap().set(key(k).as_str(), 0.0).unwrap();
            }
            id
        })
        .collect();
    assert_eq!(worlds.commit(w, seq, &StorePatch::diff(&empty, &local)).unwrap(), Seq(1));
    ids
}

/// One writer: `commits` commits of 1 to 3 random per-key edits of the shared entities.
fn writer(
    worlds: &mut impl Worlds,
    w: WorldId,
    ids: &[Id],
    writer: u64,
    commits: u64,
) -> Vec<Accepted> {
    let mut rng = Rng(0x9e37_79b9 ^ ((writer + 1) * 0x1000_0001));
    let (mut base, mut seq) = worlds.load(w).unwrap();
    let mut accepted = Vec::new();
    for i in 0..commits {
        let mut local = base.clone();
        let mut edits = HashMap::new();
        for j in 0..1 + rng.below(3) {
            let id = ids[rng.below(ENTITIES as u64) as usize];
            let name = key(rng.below(KEYS as u64) as usize);
            // Distinct among all writers' edits, and exact in an f32 (below 2^24).
            let value = ((writer * commits + i) * 4 + j + 1) as f32;
            local.get_mut(id).unwrap().set(name.as_str(), value).unwrap();
            edits.insert((id, name.parse::<Key>().unwrap()), value);
        }
        let (got, conflicts) = worlds.commit_merging(w, &base, seq, &local).unwrap();
        assert!(got > seq);
        assert!(conflicts.moved.is_empty());
        let conflicts = conflicts.keys.iter().map(|(id, c)| (*id, c.key)).collect();
        accepted.push(Accepted { seq: got, edits, conflicts });
        for (at, patch) in worlds.changes_since(w, seq).unwrap() {
            patch.apply_to_equal(&mut base).unwrap();
            seq = at;
        }
        assert!(seq >= got);
    }
    accepted
}

/// Replays the feed serially from an empty store, checking each accepted commit's edits at
/// its seq; returns the replay and the number of conflicting edits.
fn check(
    worlds: &mut impl Worlds,
    w: WorldId,
    empty: Store,
    accepted: &[Accepted],
) -> (Store, usize) {
    let by_seq: HashMap<Seq, &Accepted> = accepted.iter().map(|a| (a.seq, a)).collect();
    assert_eq!(by_seq.len(), accepted.len(), "two commits got one seq");
    let feed = worlds.changes_since(w, Seq(0)).unwrap();
    assert_eq!(feed.len(), accepted.len() + 1, "every commit accepted once, after the seed");
    let mut replay = empty;
    let mut conflicting = 0;
    for (i, (seq, patch)) in feed.iter().enumerate() {
        assert_eq!(seq.0, i as u64 + 1);
        patch.apply_to_equal(&mut replay).unwrap();
        let Some(commit) = by_seq.get(seq) else { continue };
        for (&(id, key), &value) in &commit.edits {
            if commit.conflicts.contains(&(id, key)) {
                conflicting += 1;
                continue;
            }
            let found = replay.get(id).unwrap().get_float(key);
            assert_eq!(found, Some(value), "seq {seq}: entity {id} key {key}: a lost update");
        }
    }
    (replay, conflicting)
}

#[test]
fn four_writers_a_thousand_commits_each_lose_nothing() {
    const WRITERS: u64 = 4;
    const COMMITS: u64 = 1000;
    let mut worlds = connect();
    let w = worlds.create_world(&unique("writers")).unwrap();
    let (empty, _) = worlds.load(w).unwrap();
    let ids = seed(&mut worlds, w);

    // A follower beside the writers, until it reaches the last seq.
    let last = Arc::new(AtomicU64::new(u64::MAX));
    let follow = {
        let last = Arc::clone(&last);
        let mut follower = Follower::new(&params(), w).unwrap();
        std::thread::spawn(move || {
            let start = Instant::now();
            while follower.seq().0 < last.load(Ordering::Acquire) {
                follower.wait(Duration::from_millis(200)).unwrap();
                assert!(start.elapsed() < Duration::from_secs(1200), "the follower is stuck");
            }
            follower
        })
    };
    let threads: Vec<_> = (0..WRITERS)
        .map(|n| {
            let ids = ids.clone();
            std::thread::spawn(move || {
                let mut worlds = PgWorlds::connect(&params()).unwrap();
                writer(&mut worlds, w, &ids, n, COMMITS)
            })
        })
        .collect();
    let accepted: Vec<Accepted> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    assert_eq!(accepted.len() as u64, WRITERS * COMMITS);

    let (replay, conflicting) = check(&mut worlds, w, empty, &accepted);
    let (now, seq) = worlds.load(w).unwrap();
    assert_eq!(seq, Seq(WRITERS * COMMITS + 1));
    assert_eq!(now, replay);
    last.store(seq.0, Ordering::Release);
    let follower = follow.join().unwrap();
    assert_eq!(follower.seq(), seq);
    assert_eq!(follower.store(), &now);
    let (mut a, mut b) = (follower.store().clone(), now.clone());
    a.compact();
    b.compact();
    assert_eq!(a.to_bytes(), b.to_bytes());
    let edits: usize = accepted.iter().map(|a| a.edits.len()).sum();
    eprintln!("{edits} edits in {} commits, {conflicting} reported as conflicts", accepted.len());
}

#[test]
fn file_worlds_two_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut worlds = FileWorlds::open(dir.path()).unwrap();
    let w = worlds.create_world("writers").unwrap();
    let (empty, _) = worlds.load(w).unwrap();
    let ids = seed(&mut worlds, w);
    let threads: Vec<_> = (0..2)
        .map(|n| {
            let (ids, path) = (ids.clone(), dir.path().to_path_buf());
            std::thread::spawn(move || {
                writer(&mut FileWorlds::open(path).unwrap(), w, &ids, n, 100)
            })
        })
        .collect();
    let accepted: Vec<Accepted> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    let (replay, _) = check(&mut worlds, w, empty, &accepted);
    let (now, seq) = worlds.load(w).unwrap();
    assert_eq!((seq, now), (Seq(201), replay));
}
