//! Reliability suite: a time-bounded fuzz of the checker, the
//! evaluator and the wire decoder (the parser alone is `fuzz_parser.rs`). Deterministic
//! (fixed-seed xorshift), a few seconds each; `BT_FUZZ_SECS` runs longer, `BT_FUZZ_SEED`
//! explores other inputs.
//!
//! * checker: mutated example programs are parsed and checked in this process (a panic
//!   fails the test);
//! * evaluator: mutated example programs run as `bt run` child processes: any exit status is
//!   fine except 101 (a Rust panic) or death by a signal; a mutant that loops is killed at
//!   its deadline and counted apart;
//! * wire decoder: damaged encodings of a rich value decode to a value or a `CodecError`.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::rng;
use rng::Rng;

fn secs(default: u64) -> Duration {
    Duration::from_secs(
        std::env::var("BT_FUZZ_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default),
    )
}

fn seed() -> u64 {
    std::env::var("BT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0B7_F022)
        | 1
}

/// The example programs (whole programs with classes and statements).
fn examples() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("examples/").flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "bt") {
            out.push((
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).expect("read example"),
            ));
        }
    }
    out.sort();
    out
}

const SNIPPETS: &[&str] = &[
    " x",
    " := ",
    " ^",
    "[",
    "]",
    "(",
    ")",
    "#(",
    "#{",
    "{",
    "}",
    " !",
    ".",
    "\n",
    "\n  ",
    " ifTrue: [",
    " do: [:e |",
    " 0",
    " -1",
    " 1.5e300",
    " nil",
    " self",
    " super",
    " #foo",
    " \"s{1}\"",
    " $a",
    " => ",
    " :: Integer",
    " match: [",
    " -> ",
    " printString",
    " / 0",
    " Program exit: 0",
    " spawn",
    " kill",
    " ** 9",
    " at: 1",
    " 16rFF",
    " class",
];

/// A random edit of `src`: drop, duplicate or move a range of bytes, or insert a snippet.
fn mutate(rng: &mut Rng, src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    for _ in 0..1 + rng.below(3) {
        let n = out.len().max(1);
        let (i, j) = {
            let a = rng.below(n);
            let len = rng.below(40);
            (a, (a + len).min(out.len()))
        };
        match rng.below(4) {
            0 => {
                out.drain(i.min(out.len())..j);
            }
            1 => {
                let piece = out[i.min(out.len())..j].to_vec();
                let at = rng.below(out.len() + 1);
                out.splice(at..at, piece);
            }
            2 => {
                let s = SNIPPETS[rng.below(SNIPPETS.len())].as_bytes();
                let at = rng.below(out.len() + 1);
                out.splice(at..at, s.iter().copied());
            }
            _ => {
                // Re-indent a line.
                let at = rng.below(out.len() + 1);
                let spaces = vec![b' '; rng.below(6)];
                out.splice(at..at, spaces);
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn checker_never_panics_on_mutated_programs() {
    let sources = examples();
    assert!(!sources.is_empty());
    let checker = bt::interp::checker::standard_checker();
    let opts = bt::check::CheckOptions::default();
    let mut rng = Rng(seed());
    let deadline = Instant::now() + secs(3);
    let mut cases = 0;
    while Instant::now() < deadline || cases < 50 {
        let (name, src) = &sources[rng.below(sources.len())];
        let m = mutate(&mut rng, src);
        let (module, _diags) = bt::syntax::parse(&m);
        let file = bt::check::SourceFile {
            path: name,
            src: &m,
            module: &module,
        };
        let _ = checker.check_unit(&[file], &opts);
        cases += 1;
    }
    eprintln!("checker fuzz: {cases} mutants");
}

/// Runs one program; answers the exit code, or None when it had to be killed at the deadline.
/// Its temp directory is the mutant's own (removed with it): a mutated example that skips its
/// clean-up (examples/config.bt makes a directory under `File tempDirectory`) leaves nothing.
fn run_child(path: &std::path::Path) -> Result<Option<i32>, String> {
    let tmp = path.parent().unwrap_or(std::path::Path::new("."));
    let mut child = Command::new(env!("CARGO_BIN_EXE_bt"))
        .arg("run")
        .arg(path)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut se = child.stderr.take().unwrap();
    let t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = se.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            let err = t.join().unwrap_or_default();
            return match st.code() {
                Some(101) => Err(format!("exit 101 (panic):\n{err}")),
                Some(c) => Ok(Some(c)),
                None => Err(format!("killed by a signal ({st:?}):\n{err}")),
            };
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let _ = t.join();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn evaluator_never_crashes_on_mutated_programs() {
    let sources = examples();
    let dir = std::env::temp_dir().join(format!("bt-rely-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut rng = Rng(seed() ^ 0xE7A1);
    let deadline = Instant::now() + secs(8);
    let (mut cases, mut hung) = (0, 0);
    let mut failures = Vec::new();
    while (Instant::now() < deadline || cases < 8) && failures.is_empty() {
        let (name, src) = &sources[rng.below(sources.len())];
        let m = mutate(&mut rng, src);
        let path = dir.join(format!("m{cases}.bt"));
        std::fs::write(&path, &m).expect("write mutant");
        match run_child(&path) {
            Ok(Some(_)) => {}
            Ok(None) => hung += 1,
            Err(e) => failures.push(format!("mutant of {name}:\n{m}\n---\n{e}")),
        }
        let _ = std::fs::remove_file(&path);
        cases += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("evaluator fuzz: {cases} mutants, {hung} stopped at the deadline");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn wire_decoder_never_panics_on_damaged_input() {
    use bt::interp::{Interpreter as Vm, InterpreterOptions as VmOptions};
    let vm = Vm::new(VmOptions::default());
    vm.set_output(Box::new(|_| {}));
    let rep = vm.load_unit(&[(
        "fixture.bt".to_string(),
        "Value subclass: P\n  field: x = 0\n  field: y = #()\n".to_string(),
    )]);
    assert!(rep.error.is_none());
    let v = vm
        .eval(
            "fuzz",
            "#(1, -5, 2 raisedTo: 70, 1.5, $x, #sym, \"str\", #[1, 2], #{#a => (P x: 1 y: #(1, 2))}, \
             #(1) asSet, 1 to: 9 by: 2, (P x: #(#(#(3))) y: 2), Result ok: 1, Tuple withAll: #(1, 2))",
        )
        .expect("value");
    let base = vm.run(move |ctx, _| bt::codec::encode_in(ctx, &v, "arg1").expect("encode"));
    let budget = secs(2);
    let s = seed();
    let (ok, err) = vm.run(move |ctx, _| {
        let mut rng = Rng(s ^ 0xDEC0DE);
        let (mut ok, mut err) = (0u64, 0u64);
        let deadline = Instant::now() + budget;
        let mut n = 0;
        while Instant::now() < deadline || n < 500 {
            let mut b = base.clone();
            match rng.below(3) {
                0 => b.truncate(rng.below(b.len() + 1)),
                1 => {
                    for _ in 0..1 + rng.below(4) {
                        let i = rng.below(b.len());
                        b[i] = rng.next() as u8;
                    }
                }
                _ => {
                    let i = rng.below(b.len());
                    let extra: Vec<u8> = (0..rng.below(16)).map(|_| rng.next() as u8).collect();
                    b.splice(i..i, extra);
                }
            }
            match bt::codec::decode_local(ctx, &b, "arg1") {
                Ok(_) => ok += 1,
                Err(_) => err += 1,
            }
            n += 1;
        }
        (ok, err)
    });
    eprintln!("wire fuzz: {ok} decoded, {err} rejected");
    assert!(err > 0);
}
