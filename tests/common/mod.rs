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

/// The file `bytes` with the sections of `replace` swapped in (by kind), laid out again
/// (8-aligned), its header's minor version set to `minor` if given, the arena's chunk crcs
/// recomputed for the new arena, and every crc resealed.
pub fn rebuild(bytes: &[u8], replace: &[(u32, Vec<u8>)], minor: Option<u16>) -> Vec<u8> {
    let entries = table(bytes);
    let mut sections: Vec<(u32, Vec<u8>)> = entries
        .iter()
        .map(|&(kind, offset, len)| {
            let new = replace.iter().find(|(k, _)| *k == kind).map(|(_, b)| b.clone());
            (kind, new.unwrap_or_else(|| bytes[offset..offset + len].to_vec()))
        })
        .collect();
    // A delta has no arena (nor chunk crcs).
    let arena = sections.iter().find(|s| s.0 == 5).map(|s| s.1.clone()).unwrap_or_default();
    if let Some(crcs) = sections.iter_mut().find(|s| s.0 == 12) {
        let chunk = u32_at(&crcs.1, 0) as usize;
        let mut section = (chunk as u32).to_le_bytes().to_vec();
        for c in arena.chunks(chunk) {
            section.extend_from_slice(&crc32fast::hash(c).to_le_bytes());
        }
        crcs.1 = section;
    }
    let mut out = bytes[..32].to_vec();
    if let Some(minor) = minor {
        out[10..12].copy_from_slice(&minor.to_le_bytes());
    }
    let table_end = 32 + 24 * sections.len();
    let mut at = table_end.next_multiple_of(8);
    let mut entries_out = Vec::new();
    for (kind, data) in &sections {
        entries_out.push((*kind, at, data.len()));
        at = (at + data.len()).next_multiple_of(8);
    }
    out.resize(at, 0);
    for (i, ((kind, offset, len), (_, data))) in entries_out.iter().zip(&sections).enumerate() {
        let e = 32 + 24 * i;
        out[e..e + 4].copy_from_slice(&kind.to_le_bytes());
        out[e + 8..e + 16].copy_from_slice(&(*offset as u64).to_le_bytes());
        out[e + 16..e + 24].copy_from_slice(&(*len as u64).to_le_bytes());
        out[*offset..offset + len].copy_from_slice(data);
    }
    let file_len = out.len() as u64;
    out[16..24].copy_from_slice(&file_len.to_le_bytes());
    reseal(&mut out);
    out
}
