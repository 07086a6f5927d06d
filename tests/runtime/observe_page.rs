//! The observer's live page in headless Chromium (installed by .ci/run from Debian): runs
//! `bt run examples/observer.bt --observe 127.0.0.1:0`, loads the page, and checks the DOM —
//! supervisors, workers, restart counts — then crashes children through the program's
//! standard input and sees the page update without a reload, with the changes highlighted;
//! the node panel shows status and restart history; the class filter hides the rest. A
//! screenshot is saved as `observer_page.png` in Cargo's per-test temporary directory.
//!
//! Chromium is driven through the DevTools protocol over a WebSocket. Every wait is on an
//! event in the page (a MutationObserver resolving a promise), never on a timer.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

/// The Chromium binary: `$BT_CHROMIUM`, else the first of the usual names on PATH (`None`
/// when there is none: the test is skipped outside CI, see `tools::have`).
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BT_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    const NAMES: [&str; 4] = ["chromium", "chromium-browser", "google-chrome", "chrome"];
    if crate::tools::have("headless Chromium", &NAMES, "apt-get install chromium") {
        crate::tools::find(&NAMES)
    } else {
        None
    }
}

/// Kills and reaps the processes this test started, and removes its temporary directory,
/// even when an assertion fails.
struct Guard {
    children: Vec<Child>,
    dir: PathBuf,
}

impl Drop for Guard {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads `r` line by line until one contains `marker`; answers the rest of that line.
fn read_until(r: &mut impl BufRead, marker: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        let n = r.read_line(&mut line).unwrap();
        assert!(n > 0, "ended before `{marker}`");
        if let Some(i) = line.find(marker) {
            return line[i + marker.len()..].trim().to_string();
        }
    }
}

struct Cdp {
    ws: WebSocket<TcpStream>,
    next: u64,
}

impl Cdp {
    fn connect(url: &str) -> Cdp {
        let rest = url.strip_prefix("ws://").unwrap();
        let host = rest.split('/').next().unwrap();
        let stream = TcpStream::connect(host).unwrap();
        // A wait that never resolves fails the test instead of hanging it.
        stream
            .set_read_timeout(Some(Duration::from_secs(90)))
            .unwrap();
        let (ws, _) = tungstenite::client(url, stream).unwrap();
        Cdp { ws, next: 1 }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let msg = json!({"id": id, "method": method, "params": params});
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let m = self.ws.read().unwrap();
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["id"] == id {
                assert!(v["error"].is_null(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// Reads messages until the event `method` arrives.
    fn event(&mut self, method: &str) -> Value {
        loop {
            let Message::Text(t) = self.ws.read().unwrap() else {
                continue;
            };
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["method"] == method {
                return v["params"].clone();
            }
        }
    }

    /// Evaluates `expr` in the page (awaiting a promise) and answers its JSON value.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r["exceptionDetails"].is_null(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Waits until the JS expression `cond` is truthy (re-checked on every DOM change) and
    /// answers its value.
    fn wait(&mut self, cond: &str) -> Value {
        self.eval(&format!(
            "new Promise((resolve) => {{
               const check = () => {{ try {{ const v = ({cond}); if (v) {{ resolve(v); return true; }} }} catch (e) {{}} return false; }};
               if (!check()) new MutationObserver((_, o) => {{ if (check()) o.disconnect(); }})
                 .observe(document.documentElement, {{subtree: true, childList: true, attributes: true, characterData: true}});
             }})"
        ))
    }
}

/// `[class, isSupervisor, restarts, state, visible]` of every drawn node, in page order.
const NODES: &str = "JSON.stringify([...document.querySelectorAll('li.node')].map(li => \
    [li.dataset.class, li.classList.contains('supervisor'), Number(li.dataset.restarts), \
     li.dataset.state, !li.classList.contains('hidden')]))";

fn nodes(cdp: &mut Cdp) -> Vec<(String, bool, u64, String, bool)> {
    let s = cdp.eval(NODES);
    serde_json::from_str(s.as_str().unwrap()).unwrap()
}

fn send(stdin: &mut ChildStdin, line: &str) {
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => 0,
        }
    };
    let bytes: Vec<u8> = s
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= val(c) << (18 - 6 * i);
        }
        out.push((n >> 16) as u8);
        if chunk.len() > 2 {
            out.push((n >> 8) as u8);
        }
        if chunk.len() > 3 {
            out.push(n as u8);
        }
    }
    out
}

#[test]
fn the_live_page_draws_the_tree_and_follows_crashes_without_reloading() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("bt-observe-page-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut guard = Guard {
        children: Vec::new(),
        dir: dir.clone(),
    };

    // The running example, observed on a free loopback port.
    let mut bt = Command::new(env!("CARGO_BIN_EXE_bt"))
        .args(["run", "examples/observer.bt", "--observe", "127.0.0.1:0"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = bt.stdin.take().unwrap();
    let mut bt_err = BufReader::new(bt.stderr.take().unwrap());
    guard.children.push(bt);
    let base = read_until(&mut bt_err, "observing on ");
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    // Keep draining bt's stderr so it can never block on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while bt_err.read_line(&mut sink).unwrap_or(0) > 0 {
            sink.clear();
        }
    });

    let mut chrome = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--remote-debugging-port=0",
            "--window-size=1280,800",
        ])
        .arg(format!("--user-data-dir={}", dir.display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ch_err = BufReader::new(chrome.stderr.take().unwrap());
    guard.children.push(chrome);
    let browser_ws = read_until(&mut ch_err, "DevTools listening on ");
    std::thread::spawn(move || {
        let mut sink = String::new();
        while ch_err.read_line(&mut sink).unwrap_or(0) > 0 {
            sink.clear();
        }
    });
    // The blank page target, then the observer's page loaded into it.
    let devtools = browser_ws
        .strip_prefix("ws://")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (_, list) = bt::observe::client::http_get(devtools, "/json/list").unwrap();
    let targets: Vec<Value> = serde_json::from_str(&list).unwrap();
    let page = targets
        .iter()
        .find(|t| t["type"] == "page")
        .expect("a page target");
    let mut cdp = Cdp::connect(page["webSocketDebuggerUrl"].as_str().unwrap());
    cdp.call("Page.enable", json!({}));
    cdp.call("Page.navigate", json!({ "url": base }));
    cdp.event("Page.loadEventFired");

    // The first update drew the tree: three supervisors, six workers, no restarts.
    cdp.wait(
        "document.body.dataset.updates >= 1 && document.querySelectorAll('li.node').length >= 9",
    );
    let title = cdp.eval("document.title");
    assert_eq!(title, "bt observer");
    let n = nodes(&mut cdp);
    let sups: Vec<&str> = n.iter().filter(|x| x.1).map(|x| x.0.as_str()).collect();
    assert_eq!(sups, ["App", "Storage", "WorkerPool"]);
    let workers: Vec<&str> = n.iter().filter(|x| !x.1).map(|x| x.0.as_str()).collect();
    assert_eq!(
        workers,
        ["Logger", "Cache", "Index", "Worker", "Worker", "Worker"]
    );
    assert!(n.iter().all(|x| x.2 == 0 && x.3 == "running"), "{n:?}");
    let summary = cdp.eval("document.getElementById('summary').textContent");
    assert!(
        summary
            .as_str()
            .unwrap()
            .starts_with("3 supervisors, 6 workers"),
        "{summary}"
    );

    // Crash the logger: the same page (marker kept, no reload) shows the restart.
    cdp.eval("window.__notReloaded = 42");
    send(&mut stdin, "crash");
    cdp.wait("document.querySelector('li.node[data-class=\"Logger\"]').dataset.restarts === '1'");
    assert_eq!(cdp.eval("window.__notReloaded"), json!(42));
    let hl = cdp.eval(
        "document.querySelector('li.node[data-class=\"Logger\"]').classList.contains('chg-restarted')",
    );
    assert_eq!(hl, json!(true), "the restarted node is highlighted");

    // Crash the cache: its one-for-all group restarts together, both highlighted.
    send(&mut stdin, "crash cache");
    cdp.wait("document.querySelector('li.node[data-class=\"Index\"]').dataset.restarts === '1'");
    let both = cdp.eval(
        "['Cache','Index'].every(c => document.querySelector(`li.node[data-class=\"${c}\"]`).classList.contains('chg-restarted'))",
    );
    assert_eq!(both, json!(true));
    assert_eq!(
        cdp.eval("document.querySelector('li.node[data-class=\"Logger\"]').classList.contains('chg-restarted')"),
        json!(false),
        "only what changed since the last update is highlighted"
    );

    // The panel of the logger: its restart history and its live status (queue length).
    cdp.eval("document.querySelector('li.node[data-class=\"Logger\"] > .row').click()");
    let hist = cdp.wait(
        "document.querySelector('#history') && document.querySelector('#history').textContent",
    );
    let hist = hist.as_str().unwrap();
    assert!(hist.contains("killed") && hist.contains("exit"), "{hist}");
    let queue = cdp.wait("document.querySelector('#status .queue') && document.querySelector('#status .queue').textContent");
    assert_eq!(queue, json!("0"));

    // A screenshot of the page after the crashes (the restarted group highlighted).
    let shot = cdp.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = base64_decode(shot["data"].as_str().unwrap());
    assert_eq!(&png[1..4], b"PNG");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("observer_page.png");
    std::fs::write(&out, &png).unwrap();
    eprintln!("screenshot: {}", out.display());

    // Stop a pool worker for good (a dynamic child is dropped: the diff reports it removed).
    send(&mut stdin, "stop");
    let changes = cdp.wait(
        "document.querySelectorAll('li.node[data-class=\"Worker\"]').length === 2 && document.getElementById('changes').textContent",
    );
    assert!(
        changes
            .as_str()
            .unwrap()
            .contains("removed: App/WorkerPool/Worker#2"),
        "{changes}"
    );

    // Filter by class name: only Cache and its supervisors stay visible.
    cdp.eval(
        "const f = document.getElementById('filter'); f.value = 'cache'; f.dispatchEvent(new Event('input'))",
    );
    let visible: Vec<String> = nodes(&mut cdp)
        .into_iter()
        .filter(|x| x.4)
        .map(|x| x.0)
        .collect();
    assert_eq!(visible, ["App", "Storage", "Cache"]);
    cdp.eval(
        "const g = document.getElementById('filter'); g.value = ''; g.dispatchEvent(new Event('input'))",
    );

    let _ = cdp.call("Browser.close", json!({}));
    send(&mut stdin, "quit");
    drop(guard);
}
