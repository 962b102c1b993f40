//! Helpers shared by the save-file tests: reading a file's section table and re-sealing a
//! corrupted file (recomputing every checksum), so that the checks behind the crc32s are
//! reached.
#![allow(dead_code)] // Each test file uses its own part.

pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

pub fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// (kind, offset, len) of each section, from the table at byte 32, as far as the file holds it.
pub fn table(bytes: &[u8]) -> Vec<(u32, usize, usize)> {
    let count = usize::from(u16::from_le_bytes([bytes[14], bytes[15]]));
    (0..count)
        .take_while(|i| 32 + 24 * (i + 1) <= bytes.len())
        .map(|i| {
            let at = 32 + 24 * i;
            let offset = usize::try_from(u64_at(bytes, at + 8)).unwrap_or(usize::MAX);
            let len = usize::try_from(u64_at(bytes, at + 16)).unwrap_or(usize::MAX);
            (u32_at(bytes, at), offset, len)
        })
        .collect()
}

/// Recomputes every checksum that the (possibly corrupted) table lets us find: first the
/// arena's chunk crcs (format 1.1) where its sections and chunk size are sound, then each
/// section's, then the header's.
pub fn reseal(bytes: &mut [u8]) {
    let entries = table(bytes);
    let section = |kind: u32| {
        let (_, offset, len) = *entries.iter().find(|e| e.0 == kind)?;
        Some(offset..offset.checked_add(len).filter(|&end| end <= bytes.len())?)
    };
    if let (Some(arena), Some(crcs)) = (section(5), section(12))
        && crcs.len() >= 4
    {
        let chunk = u32_at(bytes, crcs.start) as usize;
        if chunk.is_power_of_two() && crcs.len() == 4 + 4 * arena.len().div_ceil(chunk) {
            let sums: Vec<u32> = bytes[arena].chunks(chunk).map(crc32fast::hash).collect();
            for (i, sum) in sums.into_iter().enumerate() {
                let at = crcs.start + 4 + 4 * i;
                bytes[at..at + 4].copy_from_slice(&sum.to_le_bytes());
            }
        }
    }
    for (i, &(_, offset, len)) in entries.iter().enumerate() {
        let Some(section) = offset.checked_add(len).and_then(|end| bytes.get(offset..end)) else {
            continue;
        };
        let crc = crc32fast::hash(section);
        bytes[32 + 24 * i + 4..32 + 24 * i + 8].copy_from_slice(&crc.to_le_bytes());
    }
    bytes[24..28].fill(0);
    let crc = crc32fast::hash(&bytes[..32 + 24 * entries.len()]);
    bytes[24..28].copy_from_slice(&crc.to_le_bytes());
}
