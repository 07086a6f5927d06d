//! `bt lsp` driven over standard input/output as an editor would: initialize, open a document
//! with an error (diagnostics published), hover, go to definition, completion, document
//! symbols, formatting, shutdown.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

struct Server {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next: i64,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bt"))
            .arg("lsp")
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
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m["id"] == json!(id) {
                assert!(m.get("error").is_none(), "{m}");
                return m["result"].clone();
            }
        }
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

    let r = s.request("shutdown", Value::Null);
    assert!(r.is_null());
    s.notify("exit", Value::Null);
    let status = s.child.wait().unwrap();
    assert!(status.success());
}
