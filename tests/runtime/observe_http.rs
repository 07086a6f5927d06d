//! Robustness of the observer's HTTP endpoint (`bt run --observe`): malformed requests, a
//! 10 MB header, 500 concurrent clients, slowloris and idle clients holding connections
//! while others are answered, the connection cap, the Host check (DNS rebinding), GET only,
//! paging of large trees, and the event stream's diffs.
//!
//! No test waits on the wall clock: "others are answered while slow clients hold
//! connections" is shown by the slow connections being provably still open (their header
//! timeout is minutes) while the other requests complete.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use bt::observe::client::http_get;
use bt::observe::{ObserveConfig, ObserveServer, TreeSource};
use bt::runtime::snapshot::{NodeKind, NodeState, SnapNode, Snapshot, Status};
use bt::runtime::Pid;
use bt::value::{Sym, Value};

/// A source serving a snapshot the test sets.
struct Fake {
    snap: Mutex<Snapshot>,
}

impl TreeSource for Fake {
    fn snapshot(&self) -> Snapshot {
        self.snap.lock().clone()
    }
    fn status(&self, pid: Pid) -> Option<Status> {
        (pid.number == 2).then(|| Status {
            module: "App".into(),
            queue_length: 3,
            memory: 1024,
            dropped_casts: 0,
        })
    }
}

fn pid(n: u64) -> Pid {
    Pid {
        node: 0,
        number: n,
        service: false,
    }
}

fn actor(n: u64, class: &str) -> SnapNode {
    let mut s = SnapNode::new(
        None,
        NodeKind::BeamtalkActor,
        Value::sym(class),
        NodeState::Running,
    );
    s.pid = Some(pid(n));
    s
}

/// App supervising `workers` actors, plus `loose` unsupervised actors.
fn tree(workers: u64, loose: u64, restarts: u64) -> Snapshot {
    let mut root = SnapNode::new(
        None,
        NodeKind::BeamtalkSupervisor,
        Value::sym("App"),
        NodeState::Running,
    );
    root.pid = Some(pid(2));
    root.registered_name = Some(Sym::new("App"));
    root.children = (0..workers)
        .map(|i| {
            let mut w = actor(10 + i, "Worker");
            w.id = Some(Sym::new(&format!("w{i}")));
            w.restart_count = restarts;
            w
        })
        .collect();
    root.child_count = workers as usize;
    let mut roots = vec![root];
    roots.extend((0..loose).map(|i| actor(1000 + i, "Loose")));
    Snapshot {
        roots,
        captured_at: 0,
        node: "nonode@nohost".into(),
    }
}

fn server(cfg: ObserveConfig, snap: Snapshot) -> (ObserveServer, Arc<Fake>) {
    let fake = Arc::new(Fake {
        snap: Mutex::new(snap),
    });
    let s = ObserveServer::start("127.0.0.1:0", fake.clone(), cfg).unwrap();
    (s, fake)
}

/// Sends raw bytes, answers whatever comes back until the server closes (lossy UTF-8).
fn raw(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn ok(addr: SocketAddr) {
    let (status, body) = http_get(addr, "/runtime/processes").unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["schema"], "bt.processes/1");
}

#[test]
fn malformed_requests_get_errors_and_the_server_keeps_serving() {
    // A short header timeout: a request that never completes (blank lines only) is cut off.
    // Short, but long enough that the complete requests below are read within it on a
    // loaded machine (a starved server would answer them 408).
    let cfg = ObserveConfig {
        header_timeout: Duration::from_millis(1500),
        ..ObserveConfig::default()
    };
    let (srv, _) = server(cfg, tree(2, 0, 0));
    let a = srv.local_addr();
    let host = format!("Host: {a}\r\n");
    let cases: Vec<Vec<u8>> = vec![
        b"\r\n\r\n".to_vec(),
        b"GARBAGE\r\n\r\n".to_vec(),
        b"GET\r\n\r\n".to_vec(),
        b"GET / HTTP/9.9\r\n\r\n".to_vec(),
        b"G\x00T / HTTP/1.1\r\n\r\n".to_vec(),
        format!("GET / HTTP/1.1\r\n{host}Bad Header Line\r\n\r\n").into_bytes(),
        format!("GET / HTTP/1.1\r\n{host}Content-Length: -5\r\n\r\n").into_bytes(),
        vec![0xff; 4096],
    ];
    for c in &cases {
        let resp = raw(a, c);
        assert!(
            resp.is_empty() || resp.starts_with("HTTP/1.1 4"),
            "{:?} -> {resp}",
            String::from_utf8_lossy(c)
        );
    }
    // Well-formed but refused: other methods, a missing or foreign Host, unknown paths.
    let resp = raw(
        a,
        format!("POST /runtime/processes HTTP/1.1\r\n{host}Content-Length: 3\r\n\r\nabc")
            .as_bytes(),
    );
    assert!(resp.starts_with("HTTP/1.1 405"), "{resp}");
    assert!(resp.to_ascii_lowercase().contains("allow: get"), "{resp}");
    let resp = raw(a, b"GET /runtime/processes HTTP/1.1\r\n\r\n");
    assert!(resp.starts_with("HTTP/1.1 421"), "{resp}");
    let resp = raw(
        a,
        format!(
            "GET /runtime/processes HTTP/1.1\r\nHost: rebound.example:{}\r\n\r\n",
            a.port()
        )
        .as_bytes(),
    );
    assert!(resp.starts_with("HTTP/1.1 421"), "{resp}");
    let (status, _) = http_get(a, "/Cargo.toml").unwrap();
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    ok(a);
}

#[test]
fn a_10_mb_header_is_refused_without_growing_the_server() {
    let (srv, _) = server(ObserveConfig::default(), tree(2, 0, 0));
    let a = srv.local_addr();
    let mut req = format!("GET / HTTP/1.1\r\nHost: {a}\r\nX-Big: ").into_bytes();
    req.extend(std::iter::repeat_n(b'a', 10 * 1024 * 1024));
    req.extend(b"\r\n\r\n");
    let resp = raw(a, &req);
    assert!(
        resp.is_empty() || resp.starts_with("HTTP/1.1 431"),
        "{}",
        &resp[..resp.len().min(200)]
    );
    // Many headers, each small, adding up past the limit: the same.
    let mut req = format!("GET / HTTP/1.1\r\nHost: {a}\r\n").into_bytes();
    for i in 0..5000 {
        req.extend(format!("X-H{i}: v\r\n").as_bytes());
    }
    req.extend(b"\r\n");
    let resp = raw(a, &req);
    assert!(
        resp.is_empty() || resp.starts_with("HTTP/1.1 431"),
        "{resp}"
    );
    ok(a);
}

#[test]
fn five_hundred_concurrent_clients_are_all_answered() {
    let (srv, _) = server(ObserveConfig::default(), tree(20, 0, 0));
    let a = srv.local_addr();
    // All 500 connections are open before any request is sent.
    let mut conns: Vec<TcpStream> = (0..500).map(|_| TcpStream::connect(a).unwrap()).collect();
    let req = format!("GET /runtime/processes HTTP/1.1\r\nHost: {a}\r\nConnection: close\r\n\r\n");
    for c in &mut conns {
        c.write_all(req.as_bytes()).unwrap();
    }
    let mut answered = 0;
    for mut c in conns {
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
        assert!(out.contains("\"schema\":\"bt.processes/1\""));
        answered += 1;
    }
    assert_eq!(answered, 500);
}

#[test]
fn slowloris_and_idle_clients_do_not_hold_up_others() {
    let cfg = ObserveConfig {
        header_timeout: Duration::from_secs(600),
        request_deadline: Duration::from_secs(600),
        ..ObserveConfig::default()
    };
    let (srv, _) = server(cfg, tree(3, 0, 0));
    let a = srv.local_addr();
    // 50 slowloris clients: a request head started and never finished; 10 idle ones.
    let mut slow: Vec<TcpStream> = (0..50)
        .map(|_| {
            let mut s = TcpStream::connect(a).unwrap();
            s.write_all(format!("GET / HTTP/1.1\r\nHost: {a}\r\nX-Slow: ").as_bytes())
                .unwrap();
            s
        })
        .collect();
    let idle: Vec<TcpStream> = (0..10).map(|_| TcpStream::connect(a).unwrap()).collect();
    for round in 0..20 {
        // Drip one more byte into each slow client between the others' requests.
        for s in &mut slow {
            s.write_all(b"x").unwrap();
        }
        ok(a);
        if round % 5 == 0 {
            let (status, body) = http_get(a, "/").unwrap();
            assert_eq!(status, "HTTP/1.1 200 OK");
            assert!(body.contains("<title>bt observer</title>"));
        }
    }
    // The slow and idle connections are still open (no answer, no close) after all that.
    for s in slow.iter().chain(idle.iter()) {
        s.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 1];
        let r = (&*s).read(&mut buf);
        assert!(
            matches!(&r, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{r:?}"
        );
    }
}

#[test]
fn a_client_that_stalls_its_request_head_is_cut_off() {
    let cfg = ObserveConfig {
        header_timeout: Duration::from_millis(1000),
        ..ObserveConfig::default()
    };
    let (srv, _) = server(cfg, tree(1, 0, 0));
    let a = srv.local_addr();
    let mut s = TcpStream::connect(a).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut out = Vec::new();
    // The server closes it (hyper may first answer 408).
    s.read_to_end(&mut out).unwrap();
    let out = String::from_utf8_lossy(&out);
    assert!(out.is_empty() || out.starts_with("HTTP/1.1 408"), "{out}");
    ok(a);
}

#[test]
fn connections_past_the_cap_are_answered_503() {
    let cfg = ObserveConfig {
        max_connections: 4,
        ..ObserveConfig::default()
    };
    let (srv, _) = server(cfg, tree(1, 0, 0));
    let a = srv.local_addr();
    let held: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(a).unwrap()).collect();
    // Each held connection is accepted in order; the fifth is over the cap.
    let resp = raw(a, b"");
    assert!(resp.starts_with("HTTP/1.1 503"), "{resp}");
    drop(held);
    // Slots free up once the held connections are gone.
    let mut tries = 0;
    loop {
        let got = http_get(a, "/runtime/processes");
        if got
            .as_ref()
            .is_ok_and(|(status, _)| status == "HTTP/1.1 200 OK")
        {
            break;
        }
        tries += 1;
        assert!(tries < 100_000, "{got:?}");
        std::thread::yield_now();
    }
}

#[test]
fn large_trees_are_paged() {
    let (srv, _) = server(ObserveConfig::default(), tree(2, 2499, 0));
    let a = srv.local_addr();
    let (_, body) = http_get(a, "/runtime/processes").unwrap();
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["roots"].as_array().unwrap().len(), 1000);
    assert_eq!(v["page"]["totalRoots"], 2500);
    assert_eq!(v["totals"]["workers"], 2501, "totals count the whole tree");
    let (_, body) = http_get(a, "/runtime/processes?offset=2000&limit=1000").unwrap();
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["roots"].as_array().unwrap().len(), 500);
    assert_eq!(v["page"]["offset"], 2000);
    // A small tree is exactly `asJson` (no page key).
    let (srv2, _) = server(ObserveConfig::default(), tree(2, 3, 0));
    let (_, body) = http_get(srv2.local_addr(), "/runtime/processes").unwrap();
    assert!(!body.contains("\"page\""));
    assert_eq!(body, tree(2, 3, 0).to_json());
}

#[test]
fn status_is_lazy_and_null_for_dead_processes() {
    let (srv, _) = server(ObserveConfig::default(), tree(1, 0, 0));
    let a = srv.local_addr();
    let (_, body) = http_get(a, "/runtime/status?pid=0.2.0").unwrap();
    assert_eq!(
        body,
        "{\"pid\":\"<0.2.0>\",\"module\":\"App\",\"sysState\":\"running\",\"queueLength\":3}"
    );
    let (_, body) = http_get(a, "/runtime/status?pid=%3C0.77.0%3E").unwrap();
    assert_eq!(body, "null");
}

/// Reads one server-sent event (`event: tree` + `data: …`) from a streaming response.
fn next_event(r: &mut std::io::BufReader<TcpStream>) -> serde_json::Value {
    use std::io::BufRead;
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).unwrap() > 0, "stream ended");
        if let Some(data) = line.trim_end().strip_prefix("data: ") {
            return serde_json::from_str(data).unwrap();
        }
    }
}

#[test]
fn the_event_stream_sends_the_tree_then_diffs() {
    let cfg = ObserveConfig {
        interval: Duration::from_millis(20),
        ..ObserveConfig::default()
    };
    let (srv, fake) = server(cfg, tree(2, 0, 0));
    let a = srv.local_addr();
    let mut s = TcpStream::connect(a).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET /runtime/events HTTP/1.1\r\nHost: {a}\r\n\r\n").unwrap();
    let mut r = std::io::BufReader::new(s);
    let first = next_event(&mut r);
    assert_eq!(first["tree"]["roots"][0]["class"], "App");
    assert_eq!(first["idents"][1], "App/w0");
    assert!(first["diff"].is_null());
    // A restart and an added worker show up in the next event's diff.
    *fake.snap.lock() = tree(3, 0, 1);
    let second = next_event(&mut r);
    assert_eq!(second["diff"]["counts"]["added"], 1);
    assert_eq!(second["diff"]["added"][0]["path"], "App/w2");
    assert_eq!(second["diff"]["counts"]["restarted"], 2);
    assert_eq!(second["tree"]["totals"]["restarts"], 3);
}
