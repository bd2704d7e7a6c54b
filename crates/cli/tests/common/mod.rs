//! Running the `redcodec` binary the way a user does, for the CLI tests.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `redcodec ARGS` with `stdin` as its standard input and waits for it.
#[allow(dead_code)]
pub fn redcodec(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_redcodec"))
        .args(args)
        .env("REDCODEC_ABORT_ON_PANIC", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("binary finishes")
}

/// Output bytes as text.
#[allow(dead_code)]
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Copies a store directory, for tests that write to a copy of a fixture.
#[allow(dead_code)]
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Every file below `dir` with the SHA-256 of its bytes: equal before and
/// after a command that must change no file of a store.
#[allow(dead_code)]
pub fn file_hashes(dir: &Path) -> BTreeMap<PathBuf, String> {
    use sha2::{Digest, Sha256};
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                let bytes = std::fs::read(&path).expect("read file");
                out.insert(path, format!("{:x}", Sha256::digest(&bytes)));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

/// A store of the fixtures: `tests/fixtures/SYSTEM/NAME`.
#[allow(dead_code)]
pub fn fixture(system: &str, name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(system)
        .join(name)
}

/// A path as a command-line argument.
#[allow(dead_code)]
pub fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A `redcodec` command line built part by part: a command, then its
/// source and destination (a store of a format in a directory, or a
/// server's URL), then any other arguments. It reads as the slice of its
/// arguments.
#[allow(dead_code)]
pub struct Args<'a>(Vec<&'a str>);

#[allow(dead_code)]
impl<'a> Args<'a> {
    /// `redcodec COMMAND`.
    pub fn new(command: &'a str) -> Args<'a> {
        Args(vec![command])
    }

    /// `--format FORMAT --dir DIR`: the store a command reads or writes.
    pub fn store(self, format: &'a str, dir: &'a (impl AsRef<Path> + ?Sized)) -> Args<'a> {
        self.with(&["--format", format, "--dir", path(dir.as_ref())])
    }

    /// `--from FORMAT --src DIR`: a source store.
    pub fn src(self, format: &'a str, dir: &'a (impl AsRef<Path> + ?Sized)) -> Args<'a> {
        self.with(&["--from", format, "--src", path(dir.as_ref())])
    }

    /// `--to FORMAT --dst DIR`: a destination store.
    pub fn dst(self, format: &'a str, dir: &'a (impl AsRef<Path> + ?Sized)) -> Args<'a> {
        self.with(&["--to", format, "--dst", path(dir.as_ref())])
    }

    /// `--from URL`: a source server.
    pub fn src_url(self, url: &'a str) -> Args<'a> {
        self.with(&["--from", url])
    }

    /// `--to URL`: a destination server.
    pub fn dst_url(self, url: &'a str) -> Args<'a> {
        self.with(&["--to", url])
    }

    /// `--fixed-clock MS`: the clock the command runs at.
    pub fn fixed_clock(self, ms: &'a str) -> Args<'a> {
        self.with(&["--fixed-clock", ms])
    }

    /// Any other arguments, as given.
    pub fn with(mut self, more: &[&'a str]) -> Args<'a> {
        self.0.extend_from_slice(more);
        self
    }
}

impl<'a> std::ops::Deref for Args<'a> {
    type Target = [&'a str];

    fn deref(&self) -> &[&'a str] {
        &self.0
    }
}

/// Runs `redcodec ARGS`; returns (success, stdout, stderr).
#[allow(dead_code)]
pub fn run(args: &[&str], stdin: &str) -> (bool, String, String) {
    let out = redcodec(args, stdin);
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// Runs `redcodec ARGS` and checks it succeeded; its stdout.
#[allow(dead_code)]
pub fn ok(args: &[&str]) -> String {
    let out = redcodec(args, "");
    assert!(
        out.status.success(),
        "redcodec {args:?} failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs `exec` on a store at the fixed clock `clock` (ms), checks it
/// succeeded and returns what it printed.
#[allow(dead_code)]
pub fn exec_at(clock: &str, format: &str, dir: &Path, script: &str) -> String {
    let args = Args::new("exec").store(format, dir).fixed_clock(clock);
    let out = redcodec(&args, script);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// Runs `cmd` and checks it succeeded (`what` names it in a failure);
/// returns its output.
#[allow(dead_code)]
#[track_caller]
pub fn succeeded(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what} does not run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// Runs `redcodec compare` on a tiny workload (200 keys, collections of
/// 50 elements, a hash of 2,000 fields, 3 rounds), writing its files to
/// `out`; checks it succeeded and returns its output.
#[allow(dead_code)]
pub fn tiny_compare(out: &Path) -> Output {
    succeeded(
        binary()
            .args(["compare", "--keys", "200", "--elements", "50"])
            .args(["--big-hash", "2000", "--rounds", "3", "--out"])
            .arg(out),
        "redcodec compare",
    )
}

/// The `redcodec` binary as a command to complete.
#[allow(dead_code)]
pub fn binary() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_redcodec"));
    cmd.env("REDCODEC_ABORT_ON_PANIC", "1");
    cmd
}

/// Starts `cmd` (a migration with `--pause-after-commits N`), waits until
/// it reports the pause after commit `commit`, then kills it between two
/// commits, as Ctrl-C or `kill -9` would.
#[allow(dead_code)]
pub fn kill_when_paused(cmd: &mut Command, commit: u64) {
    use std::io::{BufRead, BufReader};
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    let pause = format!("paused after commit {commit}");
    loop {
        line.clear();
        let n = stderr.read_line(&mut line).expect("read stderr");
        assert!(n > 0, "the migration ended before pausing");
        if line.contains(&pause) {
            break;
        }
    }
    child.kill().expect("kill");
    child.wait().expect("reaped");
}

/// Asserts that `text` (a command's output) contains `part`; the message
/// is the whole text.
#[allow(dead_code)]
#[track_caller]
pub fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "{text}");
}

/// A Redis command from its words, as on a `redis-cli` line.
#[allow(dead_code)]
pub fn command(words: &[&str]) -> redis::Cmd {
    let mut cmd = redis::cmd(words[0]);
    for word in &words[1..] {
        cmd.arg(*word);
    }
    cmd
}
