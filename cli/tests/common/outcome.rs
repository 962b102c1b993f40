//! What a finished `datacomp` run must look like, shared by the command's test files (each runs
//! the binary its own way).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

/// Runs the built command with `args`, killing it (and failing) if it runs past `hang`: an
/// input that once hung or took minutes fails its test rather than stalling the run. Its
/// output is read as it comes (a run that prints more than a pipe holds would otherwise wait
/// on the pipe, and look hung).
#[allow(dead_code)] // Not every test file runs the command with a limit.
pub fn run_within(args: &[&str], hang: Duration) -> Output {
    use std::io::Read;

    let mut child = Command::new(env!("CARGO_BIN_EXE_datacomp"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).expect("the output reads");
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > hang {
            child.kill().unwrap();
            panic!("{:?} still running after {hang:?}", &args[..args.len().min(2)]);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}
