//! What a finished `datacomp` run must look like, shared by the command's test files (each runs
//! the binary its own way).

use std::process::Output;

/// The stdout of a run of `args` that must succeed with nothing on stderr.
pub fn succeeded(args: &[&str], out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    assert_eq!(stderr, "", "{args:?}");
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The one stderr line of a run of `args` that must fail with exit code 1 (and no panic),
/// without its `datacomp: ` prefix.
pub fn failed(args: &[&str], out: Output) -> String {
    failed_with(1, args, out)
}

/// As [`failed`], for a run that must exit with `code` (2: the command line is wrong).
pub fn failed_with(code: i32, args: &[&str], out: Output) -> String {
    let stderr = String::from_utf8(out.stderr).expect("UTF-8 errors");
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    let line = stderr.strip_suffix('\n').unwrap_or_else(|| panic!("{args:?}: {stderr:?}"));
    assert!(!line.contains('\n'), "{args:?}: more than one line: {stderr}");
    line.strip_prefix("datacomp: ").unwrap_or_else(|| panic!("{args:?}: {stderr}")).to_owned()
}
