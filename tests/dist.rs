//! Distribution foundation (LANGUAGE.md 8.1, 8.2, 8.8, 8.11): real `bt` processes on
//! 127.0.0.1 with a temporary name registry (`BT_NODE_DIR`) and a test cookie
//! (`BT_COOKIE`). Every wait is on a line of a child's output (a serving node's script
//! prints `ready` once its listener is registered, since `--name` takes effect before
//! any statement runs), never on a sleep; children are killed by a guard.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use bt::dist::frame::{read_frame, write_frame, Frame};
use bt::dist::handshake::{self, Me};
use bt::dist::net;

const BT: &str = env!("CARGO_BIN_EXE_bt");
const COOKIE: &str = "test-cookie-4f9a";
/// A safety net against a hung child, not a synchronisation device.
const LINE_LIMIT: Duration = Duration::from_secs(60);

/// A temporary directory holding the registry, the config dir and the scripts.
struct Env {
    dir: PathBuf,
}

impl Env {
    fn new(tag: &str) -> Env {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("bt-dist-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("config")).unwrap();
        Env { dir }
    }

    fn nodes(&self) -> PathBuf {
        self.dir.join("nodes")
    }

    fn script(&self, name: &str, src: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, src).unwrap();
        p.display().to_string()
    }

    fn command(&self, cookie: &str, args: &[&str]) -> Command {
        let mut c = Command::new(BT);
        c.arg("run")
            .args(args)
            .env("BT_NODE_DIR", self.nodes())
            .env("BT_CONFIG_DIR", self.dir.join("config"))
            .env("BT_COOKIE", cookie)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs `bt run ARGS` to completion: (status, stdout, stderr).
    fn run(&self, cookie: &str, args: &[&str]) -> (i32, String, String) {
        let out = self.command(cookie, args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Starts `bt run ARGS` in the background, reading its stdout line by line.
    fn spawn(&self, cookie: &str, args: &[&str]) -> Proc {
        let mut child = self.command(cookie, args).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(l) = line else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Proc { child, lines: rx }
    }

    /// Starts a serving node named `name` and waits until it is registered.
    fn serve(&self, name: &str, cookie: &str, extra: &[&str]) -> Proc {
        let file = self.script("serve.bt", "Transcript showCr: \"ready\"\n");
        let mut args = vec!["--name", name, "--serve"];
        args.extend_from_slice(extra);
        args.push(&file);
        let mut p = self.spawn(cookie, &args);
        p.expect("ready");
        p
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A child `bt` process, killed when dropped.
struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Proc {
    fn line(&mut self) -> String {
        match self.lines.recv_timeout(LINE_LIMIT) {
            Ok(l) => l,
            Err(_) => {
                let _ = self.child.kill();
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                panic!("no more output from the child; stderr:\n{err}");
            }
        }
    }

    fn expect(&mut self, want: &str) {
        let got = self.line();
        assert_eq!(got, want);
    }

    /// Kills the process and answers what it wrote to stderr.
    fn kill(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        err
    }

    /// Waits for a normal exit: (status, remaining stdout lines).
    fn finish(&mut self) -> (i32, Vec<String>) {
        let status = self.child.wait().unwrap().code().unwrap_or(-1);
        let rest = self.lines.iter().collect();
        (status, rest)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

#[test]
fn connect_ping_list_and_disconnect() {
    let env = Env::new("basic");
    let _a = env.serve("alpha@localhost", COOKIE, &[]);
    let _b = env.serve("beta@localhost", COOKIE, &[]);
    let _h = env.serve("tool@localhost", COOKIE, &["--hidden"]);
    let client = env.script(
        "client.bt",
        r#"a := (Node named: #'alpha@localhost') value
b := (Node named: #'beta@localhost') value
h := (Node named: #'tool@localhost') value
Transcript showCr: Node current printString
Transcript showCr: a isConnected printString
Transcript showCr: (b connect) printString
Transcript showCr: (a connect) printString
Transcript showCr: (a connect) isOk printString
Transcript showCr: a isConnected printString
Transcript showCr: a ping printString
Transcript showCr: (h connect) printString
Transcript showCr: h isConnected printString
Transcript showCr: Node connected printString
Transcript showCr: a disconnect printString
Transcript showCr: a isConnected printString
Transcript showCr: a disconnect printString
Transcript showCr: Node connected printString
Transcript showCr: a ping printString
Transcript showCr: Node connected printString
Transcript showCr: Node current ping printString
Transcript showCr: (Node current connect) printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "client@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "Node(client@localhost)",
            "false",
            "Result ok: Node(beta@localhost)",
            "Result ok: Node(alpha@localhost)",
            "true",
            "true",
            "true",
            "Result ok: Node(tool@localhost)",
            "true",
            // Hidden nodes are not listed; the order is the connection index, not the name.
            "#(Node(beta@localhost), Node(alpha@localhost))",
            "true",
            "false",
            "false",
            "#(Node(beta@localhost))",
            // ping reconnects; alpha keeps its first connection index.
            "true",
            "#(Node(beta@localhost), Node(alpha@localhost))",
            "true",
            "Result ok: Node(client@localhost)",
        ]
    );
    // The client unregistered on exit; the servers are still registered.
    let mut names: Vec<String> = std::fs::read_dir(env.nodes())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["alpha@localhost", "beta@localhost", "tool@localhost"]
    );
}

#[test]
fn wrong_cookie_is_refused() {
    let env = Env::new("cookie");
    let mut srv = env.serve("vault@localhost", COOKIE, &[]);
    let client = env.script(
        "client.bt",
        r#"n := (Node named: #'vault@localhost') value
r := n connect
Transcript showCr: r error kind printString
Transcript showCr: r error message
Transcript showCr: r error hint
Transcript showCr: n ping printString
Transcript showCr: n isConnected printString
"#,
    );
    let (code, out, err) = env.run("not-the-cookie", &["--name", "thief@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "#node_down",
            "vault@localhost refused the connection: authentication failed",
            "both nodes need the same cookie (BT_COOKIE, or the file ~/.config/bt/cookie)",
            "false",
            "false",
        ]
    );
    let err = srv.kill();
    assert!(err.contains("the cookie does not match"), "{err}");
}

#[test]
fn an_unnamed_node_cannot_connect() {
    let env = Env::new("unnamed");
    let _srv = env.serve("alpha@localhost", COOKIE, &[]);
    let client = env.script(
        "client.bt",
        r#"n := (Node named: #'alpha@localhost') value
r := n connect
Transcript showCr: Node current printString
Transcript showCr: r error kind printString
Transcript showCr: r error hint
Transcript showCr: n ping printString
Transcript showCr: n disconnect printString
Transcript showCr: Node connected printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &[&client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "Node(nonode@nohost)",
            "#node_down",
            "start bt with --name to enable distribution",
            "false",
            "false",
            "#()",
        ]
    );
}

#[test]
fn a_killed_peer_is_down() {
    let env = Env::new("killed");
    let mut srv = env.serve("doomed@localhost", COOKIE, &[]);
    let client = env.script(
        "client.bt",
        r#"n := (Node named: #'doomed@localhost') value
Transcript showCr: (n connect) isOk printString
Transcript showCr: "up"
[n ping] whileTrue: [Timer sleep: 10]
Transcript showCr: n isConnected printString
Transcript showCr: Node connected printString
Transcript showCr: (n connect) error kind printString
Transcript showCr: n ping printString
"#,
    );
    let mut c = env.spawn(COOKIE, &["--name", "watcher@localhost", &client]);
    c.expect("true");
    c.expect("up");
    srv.kill();
    let (code, rest) = c.finish();
    assert_eq!(code, 0);
    assert_eq!(rest, ["false", "#()", "#node_down", "false"]);
    // The killed node's entry is stale (its process is gone): ignored and removed. (The
    // client may have looked before the test reaped the zombie, so look again here.)
    assert_eq!(
        bt::dist::registry::lookup_in(&env.nodes(), "doomed@localhost"),
        None
    );
    assert!(!env.nodes().join("doomed@localhost").exists());
}

#[test]
fn names_hosts_and_flags() {
    let env = Env::new("flags");
    let _srv = env.serve("taken@localhost", COOKIE, &[]);
    let script = env.script("s.bt", "Transcript showCr: Node current printString\n");
    // A name held by a live node is refused.
    let (code, _, err) = env.run(COOKIE, &["--name", "taken@localhost", &script]);
    assert_eq!(code, 2);
    assert!(err.contains("already in use"), "{err}");
    // Invalid names and flags without --name are usage errors.
    let (code, _, err) = env.run(COOKIE, &["--name", "bad", &script]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid node name 'bad'"), "{err}");
    for flag in ["--serve", "--hidden"] {
        let (code, _, err) = env.run(COOKIE, &[flag, &script]);
        assert_eq!(code, 2);
        assert!(err.contains("needs --name"), "{err}");
    }
    // Non-loopback hosts need TLS; unknown nodes are down.
    let client = env.script(
        "client.bt",
        r#"r := (Node named: #'x@10.1.2.3') value connect
Transcript showCr: r error kind printString
Transcript showCr: r error hint
r := (Node named: #'ghost@localhost') value connect
Transcript showCr: r error kind printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "c@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "#insecure_distribution",
            "configure TLS distribution or use a tunnel",
            "#node_down",
        ]
    );
}

#[test]
fn the_cookie_file_is_created_when_missing() {
    let env = Env::new("cookiefile");
    let script = env.script("s.bt", "Transcript showCr: Node current printString\n");
    let out = env
        .command("", &["--name", "first@localhost", &script])
        .env_remove("BT_COOKIE")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Node(first@localhost)\n"
    );
    let path = env.dir.join("config").join("cookie");
    let cookie = std::fs::read_to_string(&path).unwrap();
    assert_eq!(cookie.len(), 40);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// Speaks the protocol directly: the cookie never crosses the wire, frames in an unknown
/// wire version are refused, pings are answered.
#[test]
fn raw_protocol() {
    let env = Env::new("raw");
    let _srv = env.serve("raw@localhost", COOKIE, &[]);
    let port = bt::dist::registry::lookup_in(&env.nodes(), "raw@localhost")
        .unwrap()
        .port;
    let rt = net::current_thread().unwrap();
    rt.block_on(async {
        use net::{AsyncReadExt, AsyncWriteExt, TcpStream};
        // A Hello in wire version 9 is refused with wire_version_unsupported.
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let hello = Frame::Hello {
            name: "probe@localhost".into(),
            to: "raw@localhost".into(),
            hidden: true,
            versions: vec![1],
        };
        write_frame(&mut s, &hello, 9).await.unwrap();
        match read_frame(&mut s).await.unwrap() {
            Some(Ok(Frame::Refuse { kind, .. })) => assert_eq!(kind, "wire_version_unsupported"),
            other => panic!("{other:?}"),
        }
        // Offering only unknown versions is refused too.
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let hello9 = Frame::Hello {
            name: "probe@localhost".into(),
            to: "raw@localhost".into(),
            hidden: true,
            versions: vec![9],
        };
        write_frame(&mut s, &hello9, 1).await.unwrap();
        match read_frame(&mut s).await.unwrap() {
            Some(Ok(Frame::Refuse { kind, .. })) => assert_eq!(kind, "wire_version_unsupported"),
            other => panic!("{other:?}"),
        }
        // An oversized length prefix before the handshake: the node just closes.
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(&u32::MAX.to_be_bytes()).await.unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest).await;
        assert!(rest.is_empty());
        // A full handshake; everything the node sends is recorded.
        let s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let mut s = Recording {
            s,
            seen: Vec::new(),
        };
        let me = Me {
            name: "probe@localhost",
            hidden: true,
            cookie: COOKIE.as_bytes(),
        };
        let agreed = handshake::initiate(&mut s, &me, "raw@localhost")
            .await
            .unwrap();
        assert_eq!((agreed.name.as_str(), agreed.version), ("raw@localhost", 1));
        write_frame(&mut s, &Frame::Ping { id: 7 }, 9)
            .await
            .unwrap();
        write_frame(&mut s, &Frame::Ping { id: 8 }, 1)
            .await
            .unwrap();
        let mut got = Vec::new();
        for _ in 0..2 {
            got.push(read_frame(&mut s).await.unwrap().unwrap().unwrap());
        }
        assert_eq!(
            got,
            [Frame::Unsupported { version: 9 }, Frame::Pong { id: 8 }]
        );
        let seen = &s.seen;
        assert!(!seen.windows(COOKIE.len()).any(|w| w == COOKIE.as_bytes()));
        // Disconnect: the node closes its side.
        write_frame(&mut s, &Frame::Disconnect, 1).await.unwrap();
        let mut rest = Vec::new();
        s.s.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
    });
}

/// A stream that records the bytes it reads.
struct Recording {
    s: net::TcpStream,
    seen: Vec<u8>,
}

impl net::AsyncRead for Recording {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut net::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let me = &mut *self;
        let r = std::pin::Pin::new(&mut me.s).poll_read(cx, buf);
        me.seen.extend_from_slice(&buf.filled()[before..]);
        r
    }
}

impl net::AsyncWrite for Recording {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        b: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.s).poll_write(cx, b)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.s).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.s).poll_shutdown(cx)
    }
}

/// The accepting side sees the link too (and can use it back); hidden nodes stay invisible
/// to the node they connect to.
#[test]
fn incoming_links_are_listed_but_hidden_ones_are_not() {
    let env = Env::new("incoming");
    let b_src = env.script(
        "b.bt",
        r#"Transcript showCr: "ready"
[Node connected isEmpty] whileTrue: [Timer sleep: 5]
Transcript showCr: Node connected printString
a := Node connected first
Transcript showCr: a isConnected printString
Transcript showCr: a ping printString
"#,
    );
    let mut b = env.spawn(COOKIE, &["--name", "b@localhost", &b_src]);
    b.expect("ready");
    let h_src = env.script(
        "h.bt",
        r#"n := (Node named: #'b@localhost') value
Transcript showCr: n ping printString
Transcript showCr: Node connected printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "h@localhost", "--hidden", &h_src]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines(&out), ["true", "#(Node(b@localhost))"]);
    let a_src = env.script(
        "a.bt",
        r#"n := (Node named: #'b@localhost') value
Transcript showCr: (n connect) isOk printString
[n isConnected] whileTrue: [Timer sleep: 5]
Transcript showCr: "b went away"
"#,
    );
    let mut a = env.spawn(COOKIE, &["--name", "a@localhost", &a_src]);
    a.expect("true");
    // b ignored the hidden node and saw a.
    let (code, rest) = b.finish();
    assert_eq!(code, 0);
    assert_eq!(rest, ["#(Node(a@localhost))", "true", "true"]);
    let (code, rest) = a.finish();
    assert_eq!(
        (code, rest.as_slice()),
        (0, &["b went away".to_string()][..])
    );
}

/// A node that accepts connections but never answers: `connect` times out as `node_down`
/// after 5 s, and processes waiting on the network do not hold worker threads (the main
/// process runs on while three actors — more than the two workers — wait).
#[test]
fn a_silent_peer_times_out_without_blocking_workers() {
    let env = Env::new("silent");
    let silent = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = silent.local_addr().unwrap().port();
    std::fs::create_dir_all(env.nodes()).unwrap();
    std::fs::write(
        env.nodes().join("silent@localhost"),
        format!("{port} {}\n", std::process::id()),
    )
    .unwrap();
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Dialer
  dial: n => Transcript showCr: (n connect) error message
  done => #done

n := (Node named: #'silent@localhost') value
ds := #(1, 2, 3) collect: [:i | Dialer spawn]
ds do: [:d | d dial: n!]
Transcript showCr: "main runs on"
ds do: [:d | (d withTimeout: 60000) done]
Transcript showCr: n isConnected printString
"#,
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "eager@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    let msg = "cannot connect to silent@localhost: no answer within 5000 ms";
    assert_eq!(lines(&out), ["main runs on", msg, msg, msg, "false"]);
    drop(silent);
}

/// The runtime hook the Node primitives wait with: a process suspends until another OS
/// thread completes it, or times out.
#[test]
fn wait_external_resumes_from_another_thread() {
    use bt::runtime::{CallError, Config, Runtime, Timeout};
    use bt::Value;
    let rt = Runtime::new(Config::default()).unwrap();
    let got = rt
        .block_on(|cx| {
            cx.wait_external(Timeout::Infinity, |c| {
                std::thread::spawn(move || {
                    c.complete(Value::Int(42));
                    c.complete(Value::Int(7)); // later completions are ignored
                });
            })
        })
        .unwrap();
    assert!(matches!(got, Ok(Value::Int(42))), "{got:?}");
    // Completed before the process even suspends.
    let got = rt
        .block_on(|cx| cx.wait_external(Timeout::Infinity, |c| c.complete(Value::Nil)))
        .unwrap();
    assert!(matches!(got, Ok(Value::Nil)), "{got:?}");
    // Never completed: the timeout answers.
    let got = rt
        .block_on(|cx| cx.wait_external(Timeout::Ms(20), |_| {}))
        .unwrap();
    assert!(matches!(got, Err(CallError::Timeout)), "{got:?}");
}

/// 8.9: a node announces NodeUp / NodeDown of its visible peers on `SystemAnnouncer current`
/// (reasons: `disconnect` when it closed the link, `connectionClosed` when the peer died).
#[test]
fn node_up_and_down_are_announced() {
    let env = Env::new("announce");
    let mut srv = env.serve("peer@localhost", COOKIE, &[]);
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Log
  state: items = #()
  add: x => self.items := self.items add: x
  items => self.items
  size => self.items size

log := Log spawn
SystemAnnouncer current when: NodeUp do: [:e | log add: "up {e node name}"]
SystemAnnouncer current when: NodeDown do: [:e | log add: "down {e node name} {e reason}"]
n := (Node named: #'peer@localhost') value
Transcript showCr: (n connect) isOk printString
[log size < 1] whileTrue: [Timer sleep: 5]
Transcript showCr: (log items at: 1)
n disconnect
[log size < 2] whileTrue: [Timer sleep: 5]
Transcript showCr: (log items at: 2)
Transcript showCr: (n connect) isOk printString
[log size < 3] whileTrue: [Timer sleep: 5]
Transcript showCr: (log items at: 3)
[log size < 4] whileTrue: [Timer sleep: 5]
Transcript showCr: (log items at: 4)
"#,
    );
    let mut c = env.spawn(COOKIE, &["--name", "watcher@localhost", &client]);
    c.expect("true");
    c.expect("up peer@localhost");
    c.expect("down peer@localhost disconnect");
    c.expect("true");
    c.expect("up peer@localhost");
    srv.kill();
    c.expect("down peer@localhost connectionClosed");
    let (code, _) = c.finish();
    assert_eq!(code, 0);
}
