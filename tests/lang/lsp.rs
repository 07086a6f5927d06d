//! `bt lsp` driven over standard input/output as an editor would: initialize, open a document
//! with an error (diagnostics published), hover, go to definition (also of locals and into
//! the library), completion, signature help, references, highlights, rename, document
//! symbols, workspace symbols, formatting, shutdown; and half-typed code at every cut, which
//! must never stop the server. Each server writes the library's sources under its own temporary `XDG_CACHE_HOME`.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

mod sig;

struct Server {
    child: Child,
    /// The server's `XDG_CACHE_HOME` (where it writes the library's sources), removed on drop.
    cache: std::path::PathBuf,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next: i64,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.cache);
    }
}

impl Server {
    fn start() -> Server {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let cache = std::env::temp_dir().join(format!(
            "bt-lsp-cache-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let mut child = Command::new(env!("CARGO_BIN_EXE_bt"))
            .arg("lsp")
            .env("XDG_CACHE_HOME", &cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(out);
            loop {
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Server {
            child,
            cache,
            stdin,
            rx,
            next: 1,
        }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and answers its result (other messages in between are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let m = self.answer(method, params);
        assert!(m.get("error").is_none(), "{m}");
        m["result"].clone()
    }

    /// Sends a request and answers the whole response (result or error).
    fn answer(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m["id"] == json!(id) {
                return m;
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "bt", "version": 1, "text": text}}),
        );
        let _ = self.diagnostics();
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) -> Value {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
        self.diagnostics()
    }

    fn initialize(&mut self) {
        let _ = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        self.notify("initialized", json!({}));
    }

    fn shutdown(mut self) {
        assert!(self.request("shutdown", Value::Null).is_null());
        self.notify("exit", Value::Null);
        assert!(self.child.wait().unwrap().success());
    }

    fn recv(&mut self) -> Value {
        self.rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server answers")
    }

    /// The next `publishDiagnostics` notification.
    fn diagnostics(&mut self) -> Value {
        loop {
            let m = self.recv();
            if m["method"] == "textDocument/publishDiagnostics" {
                return m["params"].clone();
            }
        }
    }
}

const URI: &str = "file:///tmp/bt-lsp-test/shapes.bt";

const SRC: &str = "/// A point in the plane.
Value subclass: Point
  field: x = 0
  field: y = 0

  /// The distance from the origin.
  length -> Float => ((self.x * self.x) + (self.y * self.y)) sqrt
  + other => Point x: self.x + other x y: self.y + other y

p := Point x: 3 y: 4
q := p length
z := undefinedThing + 1
";

fn pos(line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}})
}

#[test]
fn an_editor_session() {
    let mut s = Server::start();
    let init = s.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    let caps = &init["capabilities"];
    assert_eq!(caps["hoverProvider"], json!(true), "{init}");
    assert_eq!(caps["definitionProvider"], json!(true));
    assert!(caps["completionProvider"].is_object());
    s.notify("initialized", json!({}));

    // didOpen with an error: the checker's diagnostic arrives, at the right place.
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "bt", "version": 1, "text": SRC}}),
    );
    let d = s.diagnostics();
    assert_eq!(d["uri"], URI);
    let items = d["diagnostics"].as_array().unwrap();
    let err = items
        .iter()
        .find(|i| i["severity"] == 1)
        .unwrap_or_else(|| panic!("no error in {d}"));
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("Undefined variable: undefinedThing"),
        "{err}"
    );
    assert_eq!(err["range"]["start"], json!({"line": 11, "character": 5}));

    // Hover: a class shows its declaration and doc comment.
    let h = s.request("textDocument/hover", pos(9, 6));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.contains("Value subclass: Point"), "{text}");
    assert!(text.contains("A point in the plane."), "{text}");
    // … a variable its inferred class; a selector its header and doc.
    let h = s.request("textDocument/hover", pos(10, 0));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.contains("q :: Float"), "{text}");
    let h = s.request("textDocument/hover", pos(9, 0));
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("p :: Point"),
        "{h}"
    );
    let h = s.request("textDocument/hover", pos(10, 9));
    let text = h["contents"]["value"].as_str().unwrap();
    assert!(text.contains("Point >> length"), "{text}");
    assert!(text.contains("The distance from the origin."), "{text}");

    // Definition: a method, a class, a field.
    let loc = s.request("textDocument/definition", pos(10, 9));
    assert_eq!(loc["uri"], URI, "{loc}");
    assert_eq!(loc["range"]["start"], json!({"line": 6, "character": 2}));
    let loc = s.request("textDocument/definition", pos(7, 15));
    assert_eq!(
        loc["range"]["start"],
        json!({"line": 1, "character": 16}),
        "{loc}"
    );
    let loc = s.request("textDocument/definition", pos(6, 28));
    assert_eq!(
        loc["range"]["start"],
        json!({"line": 2, "character": 9}),
        "{loc}"
    );

    // Completion by receiver type: after `p ` (a Point) its selectors, inherited ones too.
    let text2 = format!("{SRC}p le");
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": text2}]}),
    );
    let _ = s.diagnostics();
    let c = s.request("textDocument/completion", pos(12, 4));
    let labels: Vec<&str> = c["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, vec!["length"], "{c}");
    let text3 = format!("{SRC}\"abc\" rev");
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 3}, "contentChanges": [{"text": text3}]}),
    );
    let _ = s.diagnostics();
    let c = s.request("textDocument/completion", pos(12, 9));
    let labels: Vec<&str> = c["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"reversed"), "{labels:?}");
    assert!(!labels.contains(&"length"), "{labels:?}");

    // Document symbols and formatting.
    let sy = s.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": URI}}),
    );
    assert_eq!(sy[0]["name"], "Point");
    let kids: Vec<&str> = sy[0]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(kids, vec!["x", "y", "length", "+"]);
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 4}, "contentChanges": [{"text": "Object subclass: A\n      m => 1   \n"}]}),
    );
    let _ = s.diagnostics();
    let edits = s.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": URI}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert_eq!(
        edits[0]["newText"], "Object subclass: A\n  m => 1\n",
        "{edits}"
    );
    // A document that does not parse is not formatted (as `bt fmt` refuses it).
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 5}, "contentChanges": [{"text": "x := (   \n\n\n"}]}),
    );
    let _ = s.diagnostics();
    let edits = s.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": URI}, "options": {"tabSize": 2, "insertSpaces": true}}),
    );
    assert_eq!(edits, json!([]), "{edits}");

    let r = s.request("shutdown", Value::Null);
    assert!(r.is_null());
    s.notify("exit", Value::Null);
    let status = s.child.wait().unwrap();
    assert!(status.success());
}

fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

/// `(line, character)` of every location's start, in order.
fn starts(locs: &Value) -> Vec<(u64, u64)> {
    locs.as_array()
        .unwrap_or_else(|| panic!("not a list: {locs}"))
        .iter()
        .map(|l| {
            let s = &l["range"]["start"];
            (
                s["line"].as_u64().unwrap(),
                s["character"].as_u64().unwrap(),
            )
        })
        .collect()
}

const COUNTER: &str = "Actor subclass: Counter
  state: count = 0

  add: n to: m -> Integer => n + m
  bump => self.count := self.count + (self add: 1 to: 2)

c := Counter spawn
total := c add: 1 to: 2
c bump
total printString
";

/// References, highlights, rename and the definition of a local variable, as an editor's
/// "find all references" / "rename symbol" / "go to definition" use them.
#[test]
fn references_rename_and_local_definitions() {
    let tmp = TempDir::new("refs");
    let dir = &tmp.0;
    // A file beside the open one that uses the class: references and rename reach it.
    std::fs::write(dir.join("other.bt"), "k := Counter spawn\nk add: 5 to: 6\n").unwrap();
    let uri = format!("file://{}/counter.bt", dir.display());
    let other = format!("file://{}/other.bt", dir.display());
    let mut s = Server::start();
    s.initialize();
    s.open(&uri, COUNTER);
    let caps_ok = s.answer("textDocument/references", json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}, "context": {"includeDeclaration": true}}));
    assert!(caps_ok.get("error").is_none(), "{caps_ok}");

    // The keyword selector `add:to:` from its `to:` part: every part of every send and the
    // header, in both files.
    let r = s.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": {"line": 7, "character": 19}, "context": {"includeDeclaration": true}}),
    );
    let here: Vec<(u64, u64)> = r
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["uri"] == uri.as_str())
        .map(|l| {
            (
                l["range"]["start"]["line"].as_u64().unwrap(),
                l["range"]["start"]["character"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        here,
        vec![(3, 2), (3, 9), (4, 43), (4, 50), (7, 11), (7, 18)],
        "{r}"
    );
    assert_eq!(
        r.as_array()
            .unwrap()
            .iter()
            .filter(|l| l["uri"] == other.as_str())
            .count(),
        2,
        "{r}"
    );
    // Without the declaration.
    let r = s.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": {"line": 7, "character": 12}, "context": {"includeDeclaration": false}}),
    );
    assert_eq!(r.as_array().unwrap().len(), 6, "{r}");

    // A field: its declaration and `self.count` reads and writes; highlights the same.
    let h = s.request("textDocument/documentHighlight", at(&uri, 4, 16));
    assert_eq!(starts(&h), vec![(1, 9), (4, 15), (4, 29)], "{h}");

    // A local variable: go to its first binding; references stay in its scope (the method's
    // `n` is not the top level's).
    let d = s.request("textDocument/definition", at(&uri, 9, 2));
    assert_eq!(
        d["range"]["start"],
        json!({"line": 7, "character": 0}),
        "{d}"
    );
    let d = s.request("textDocument/definition", at(&uri, 3, 29));
    assert_eq!(
        d["range"]["start"],
        json!({"line": 3, "character": 7}),
        "{d}"
    );
    let h = s.request("textDocument/hover", at(&uri, 3, 29));
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("bound on line 4"),
        "{h}"
    );

    // Rename: a class across files; a keyword selector part by part; a bad name refused;
    // a library selector refused.
    let p = s.request("textDocument/prepareRename", at(&uri, 6, 6));
    assert_eq!(p["start"], json!({"line": 6, "character": 5}), "{p}");
    let e = s.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri}, "position": {"line": 6, "character": 6}, "newName": "Tally"}),
    );
    assert_eq!(
        e["changes"][uri.as_str()].as_array().unwrap().len(),
        2,
        "{e}"
    );
    assert_eq!(e["changes"][other.as_str()][0]["newText"], "Tally", "{e}");
    let e = s.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 3}, "newName": "plus:and:"}),
    );
    let texts: Vec<&str> = e["changes"][uri.as_str()]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["newText"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        vec!["plus:", "and:", "plus:", "and:", "plus:", "and:"],
        "{e}"
    );
    let bad = s.answer(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 3}, "newName": "plus:"}),
    );
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("part"),
        "{bad}"
    );
    let lib = s.answer("textDocument/prepareRename", at(&uri, 9, 8));
    assert!(
        lib["error"]["message"]
            .as_str()
            .unwrap()
            .contains("library"),
        "{lib}"
    );
    s.shutdown();
}

/// Go to definition of a library class or method opens the library's source, written to the
/// cache directory; a send whose receiver's class is known goes to that class's method.
#[test]
fn definition_into_the_library() {
    let mut s = Server::start();
    let cache = s.cache.clone();
    s.initialize();
    let uri = "file:///tmp/bt-lsp-lib-test/a.bt";
    s.open(
        uri,
        "s := \"abc\" reversed\nn := 3 factorial\nd := Dictionary new\n",
    );
    let d = s.request("textDocument/definition", at(uri, 2, 6));
    let target = d["uri"].as_str().unwrap_or_else(|| panic!("{d}"));
    assert!(target.ends_with("/Dictionary.bt"), "{d}");
    let path = target.strip_prefix("file://").unwrap();
    assert!(path.starts_with(cache.to_str().unwrap()), "{d}");
    let src = std::fs::read_to_string(path).unwrap();
    let line = d["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(
        src.lines()
            .nth(line)
            .unwrap()
            .contains("subclass: Dictionary"),
        "{d}"
    );
    // `3 factorial`: Integer's method, not another class's.
    let d = s.request("textDocument/definition", at(uri, 1, 9));
    assert!(
        d["uri"]
            .as_str()
            .unwrap_or_else(|| panic!("{d}"))
            .ends_with("/Integer.bt"),
        "{d}"
    );
    s.shutdown();
}

/// Half-typed code never stops the server: every prefix of some example programs (and a
/// non-ASCII character just before the cursor, which once made completion panic) gets an
/// answer to every request, and a client that forgets `initialized` is served too.
#[test]
fn half_typed_code_never_stops_the_server() {
    let mut s = Server::start();
    let _ = s.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    // No `initialized`: the document is served all the same.
    let uri = "file:///tmp/bt-lsp-fuzz/a.bt";
    s.open(uri, "x := 1\n");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts = vec!["/// cost `ceiling(initial × coe".to_string()];
    for f in [
        "examples/bank.bt",
        "examples/matching.bt",
        "stdlib/RetryPolicy.bt",
    ] {
        let src = std::fs::read_to_string(root.join(f)).unwrap();
        let mut cut = 0;
        while cut < src.len() {
            if src.is_char_boundary(cut) {
                texts.push(src[..cut].to_string());
            }
            cut += 97;
        }
    }
    let methods = [
        "textDocument/hover",
        "textDocument/completion",
        "textDocument/definition",
        "textDocument/references",
        "textDocument/documentHighlight",
        "textDocument/documentSymbol",
        "textDocument/formatting",
        "textDocument/signatureHelp",
        "workspace/symbol",
    ];
    for (v, text) in texts.iter().enumerate() {
        s.change(uri, v as i64 + 2, text);
        let line = text.lines().count().saturating_sub(1) as u32;
        let col = text.lines().last().map_or(0, |l| l.encode_utf16().count()) as u32;
        for m in methods {
            // One params object valid for every method: `context` is a references context, a
            // completion context and a signature-help context at once.
            let context =
                json!({"includeDeclaration": true, "triggerKind": 1, "isRetrigger": false});
            let a = s.answer(m, json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": col}, "context": context, "options": {"tabSize": 2, "insertSpaces": true}, "query": "a"}));
            assert!(a.get("error").is_none(), "{m} at the end of {text:?}: {a}");
        }
    }
    s.shutdown();
}

/// A scratch directory removed when dropped (also when the test fails).
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("bt-lsp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Completion where the receiver's class is unknown offers every selector; where an
/// expression starts, the document's variables and the classes.
#[test]
fn completion_without_a_known_receiver() {
    let mut s = Server::start();
    s.initialize();
    let uri = "file:///tmp/bt-lsp-complete/a.bt";
    let labels = |c: &Value| -> Vec<String> {
        c["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_string())
            .collect()
    };
    s.open(uri, "total := 3\nmystery printS");
    let c = s.request("textDocument/completion", at(uri, 1, 14));
    let l = labels(&c);
    assert!(l.contains(&"printString".to_string()), "{l:?}");
    assert!(l.iter().all(|x| x.starts_with("printS")), "{l:?}");
    s.change(uri, 2, "total := 3\nto");
    let c = s.request("textDocument/completion", at(uri, 1, 2));
    assert_eq!(labels(&c), vec!["total".to_string()], "{c}");
    s.change(uri, 3, "total := 3\nDiction");
    let c = s.request("textDocument/completion", at(uri, 1, 7));
    assert_eq!(labels(&c), vec!["Dictionary".to_string()], "{c}");
    s.shutdown();
}

/// The limit of a message body (`Content-Length`) that `bt lsp` reads; longer bodies are
/// skipped without being kept.
const MAX_BODY: usize = 32 << 20;

impl Server {
    fn raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message that is not a notification: an answer or an error.
    fn reply(&mut self) -> Value {
        loop {
            let m = self.recv();
            if m.get("method").is_none() {
                return m;
            }
        }
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    f.extend_from_slice(body);
    f
}

/// Frames that are not messages get JSON-RPC errors and the server goes on: a body that is
/// not JSON (-32700), not UTF-8 (-32700), nested 100,000 deep (-32700), JSON that is not a
/// message (-32600, with its id when it has one), headers without a length or with a negative
/// one, a header line of a megabyte, a body over the limit (skipped, not kept: -32600). After
/// each, a request is answered.
#[test]
fn malformed_frames_are_answered_and_the_server_goes_on() {
    let mut s = Server::start();
    s.initialize();
    s.open(URI, SRC);
    let error_of = |m: &Value| (m["id"].clone(), m["error"]["code"].as_i64());
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"textDocument/hover\",\"params\":{}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let long_header = format!("X-Long: {}\r\n\r\n", "y".repeat(1 << 20));
    let cases: Vec<(&str, Vec<u8>, Value, i64)> = vec![
        ("not JSON", frame(b"hello there"), Value::Null, -32700),
        (
            "not UTF-8",
            frame(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\"}"),
            Value::Null,
            -32700,
        ),
        (
            "nested 100,000 deep",
            frame(deep.as_bytes()),
            Value::Null,
            -32700,
        ),
        ("an array", frame(b"[1, 2]"), Value::Null, -32600),
        (
            "a method that is not a string",
            frame(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":5}"),
            json!(7),
            -32600,
        ),
        (
            "no Content-Length",
            b"Content-Type: application/json\r\n\r\n".to_vec(),
            Value::Null,
            -32700,
        ),
        (
            "a negative Content-Length",
            b"Content-Length: -5\r\n\r\n".to_vec(),
            Value::Null,
            -32700,
        ),
        (
            "a header line of a megabyte",
            long_header.into_bytes(),
            Value::Null,
            -32700,
        ),
    ];
    for (what, bytes, id, code) in cases {
        s.raw(&bytes);
        let m = s.reply();
        assert_eq!(error_of(&m), (id, Some(code)), "{what}: {m}");
        let h = s.request("textDocument/hover", pos(9, 0));
        assert!(h["contents"]["value"].is_string(), "{what}: then {h}");
    }
    // A body over the limit: answered at once, then read and dropped.
    s.raw(format!("Content-Length: {}\r\n\r\n", MAX_BODY + 1).as_bytes());
    let m = s.reply();
    assert_eq!(error_of(&m), (Value::Null, Some(-32600)), "{m}");
    s.raw(&vec![b' '; MAX_BODY + 1]);
    let h = s.request("textDocument/hover", pos(9, 0));
    assert!(h["contents"]["value"].is_string(), "after a long body: {h}");
    s.shutdown();
}

/// A length the server could not allocate (`99999999999`) is answered at once, without
/// waiting for the body; the end of the input without `exit` ends the server with status 1,
/// not 0.
#[test]
fn an_impossible_length_is_answered_and_a_closed_input_is_an_error() {
    let mut s = Server::start();
    s.initialize();
    s.raw(b"Content-Length: 99999999999\r\n\r\n{}");
    let m = s.reply();
    assert_eq!(m["error"]["code"], json!(-32600), "{m}");
    assert!(m["id"].is_null(), "{m}");
    drop(s);
    let cache = std::env::temp_dir().join(format!("bt-lsp-eof-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_bt"))
        .arg("lsp")
        .env("XDG_CACHE_HOME", &cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let init =
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}});
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(&frame(init.to_string().as_bytes()))
        .unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&cache);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("without `exit`"), "{err}");
}

/// A request whose params are not that request's (a field missing or of the wrong type, a
/// URI that is not one, no params at all) is answered with a JSON-RPC `InvalidParams` error
/// (-32602) carrying its id, and the server goes on; a notification with such params is
/// dropped (the document is not opened).
#[test]
fn malformed_params_are_answered_with_invalid_params() {
    let mut s = Server::start();
    s.initialize();
    s.open(URI, SRC);
    let p = json!({"line": 9, "character": 0});
    let cases: Vec<(&str, Value)> = vec![
        (
            "textDocument/hover",
            json!({"textDocument": 5, "position": p}),
        ),
        ("textDocument/hover", json!({"textDocument": {"uri": URI}})),
        (
            "textDocument/definition",
            json!({"textDocument": {"uri": URI}, "position": {"line": "nine", "character": 0}}),
        ),
        (
            "textDocument/references",
            json!({"textDocument": {"uri": URI}, "position": p}),
        ),
        (
            "textDocument/documentHighlight",
            json!({"textDocument": {"uri": "not a uri"}, "position": p}),
        ),
        ("textDocument/prepareRename", json!([])),
        (
            "textDocument/rename",
            json!({"textDocument": {"uri": URI}, "position": p, "newName": 7}),
        ),
        ("textDocument/completion", Value::Null),
        (
            "textDocument/signatureHelp",
            json!({"textDocument": {"uri": URI}, "position": {"line": 9, "character": -1}}),
        ),
        ("workspace/symbol", json!({"query": 3})),
        ("textDocument/documentSymbol", json!({})),
        (
            "textDocument/formatting",
            json!({"textDocument": {"uri": URI}}),
        ),
    ];
    for (method, params) in cases {
        let id = s.next;
        let m = s.answer(method, params.clone());
        assert_eq!(m["id"], json!(id), "{method} {params}: {m}");
        assert_eq!(m["error"]["code"], json!(-32602), "{method} {params}: {m}");
        let h = s.request("textDocument/hover", pos(9, 0));
        assert!(h["contents"]["value"].is_string(), "after {method}: {h}");
    }
    // A didOpen whose document has no text: not opened, nothing answered, the server goes on.
    let other = "file:///tmp/bt-lsp-test/other.bt";
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": other, "languageId": "bt", "version": 1}}),
    );
    let h = s.request("textDocument/hover", at(other, 0, 0));
    assert!(h.is_null(), "{h}");
    let h = s.request("textDocument/hover", pos(9, 0));
    assert!(h["contents"]["value"].is_string(), "{h}");
    s.shutdown();
}
