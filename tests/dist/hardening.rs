//! What a node does with peers that misbehave: connections that
//! never authenticate are capped in number and time, refusals are logged with throttling,
//! and a peer that never reads its replies is disconnected once its output queue is full
//! instead of growing the node without bound. Harness: tests/dist/dist_common.rs.

use crate::dist_common;
use dist_common::*;

use std::io::Read;
use std::time::{Duration, Instant};

/// 32 connections may sit in the handshake; more are closed at once; the waiting ones are
/// closed after the handshake timeout; the node keeps serving.
#[test]
fn unauthenticated_connections_are_capped_in_number_and_time() {
    let epmd = Epmd::bt();
    let env = Env::new("unauth", epmd.port);
    let mut srv = env.serve("guarded@localhost", COOKIE, &[]);
    // The node's port, from the port mapper.
    let rt = bt::dist::net::current_thread().unwrap();
    let port = rt
        .block_on(bt::dist::epmd::lookup("127.0.0.1", epmd.port, "guarded"))
        .unwrap()
        .unwrap()
        .0;
    let idle: Vec<std::net::TcpStream> = (0..32)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // Once the node has accepted those, one more is refused: closed without a byte.
    let mut refused = false;
    for _ in 0..50 {
        let mut extra = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        extra
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let mut b = [0u8; 1];
        if let Ok(0) = extra.read(&mut b) {
            refused = true;
            break;
        }
    }
    assert!(refused, "a 33rd unauthenticated connection was not refused");
    // The idle ones are closed by the handshake timeout (5 s).
    let mut first = idle.into_iter().next().unwrap();
    first
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut b = [0u8; 1];
    assert!(matches!(first.read(&mut b), Ok(0) | Err(_)));
    // Still serving.
    let ping = env.script(
        "p.bt",
        "Transcript showCr: (Node named: #'guarded@localhost') value ping printString\n",
    );
    let (code, out, err) = env.run(COOKIE, &["--name", "friend@localhost", &ping]);
    assert_eq!((code, out.as_str()), (0, "true\n"), "{err}");
    let log = srv.kill();
    assert!(
        log.contains("too many unauthenticated connections"),
        "{log}"
    );
    // Throttled: far fewer lines than refusals.
    assert!(log.lines().count() < 20, "{log}");
}

/// A peer that sends requests and never reads the replies: the node disconnects it when
/// the connection's output queue passes its bound (here `BT_DIST_QUEUE_LIMIT` = 64 KiB).
#[test]
fn a_peer_that_never_reads_is_disconnected() {
    use bt::dist::net::{AsyncWriteExt, TcpStream, TokioAsyncReadCompatExt};
    use erl_dist::handshake::ClientSideHandshake;
    use erl_dist::node::{Creation, LocalNode};
    use erl_dist::term::{Atom, Pid, Reference, Term, Tuple};

    let epmd = Epmd::bt();
    let env = Env::new("noread", epmd.port);
    let file = env.script("serve.bt", "Transcript showCr: \"ready\"\n");
    let mut cmd = env.command(COOKIE, &["--name", "busy@localhost", "--serve", &file]);
    cmd.env("BT_DIST_QUEUE_LIMIT", "65536");
    let mut srv = Proc::start(cmd);
    srv.expect("ready");
    let rt = bt::dist::net::current_thread().unwrap();
    let sent = rt.block_on(async {
        let port = bt::dist::epmd::lookup("127.0.0.1", epmd.port, "busy")
            .await
            .unwrap()
            .unwrap()
            .0;
        let s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let me = LocalNode::new("greedy@localhost".parse().unwrap(), Creation::new(7));
        let mut hs = ClientSideHandshake::new(s.compat(), me, COOKIE);
        hs.execute_send_name(6).await.unwrap();
        let (s, _) = hs.execute_rest(true).await.unwrap();
        let mut s = s.into_inner();
        let from = Pid::new("greedy@localhost", 1, 0, 7);
        let call = |i: u32| {
            let r = Reference {
                node: Atom::from("greedy@localhost"),
                id: vec![i, 0, 0],
                creation: 7,
            };
            let msg = Term::from(Tuple::from(vec![
                Term::from(Atom::from("$gen_call")),
                Term::from(Tuple::from(vec![Term::from(from.clone()), Term::from(r)])),
                Term::from(Tuple::from(vec![
                    Term::from(Atom::from("is_auth")),
                    Term::from(Atom::from("greedy@localhost")),
                ])),
            ]));
            let m =
                erl_dist::message::Message::reg_send(from.clone(), Atom::from("net_kernel"), msg);
            bt::dist::conn::frame(m)
        };
        // Send until the node hangs up (at most 2M requests, ~200 MB of replies unread).
        let mut n = 0u32;
        let batch: Vec<u8> = (0..1000).flat_map(call).collect();
        while n < 2_000_000 {
            if s.write_all(&batch).await.is_err() {
                break;
            }
            n += 1000;
        }
        n
    });
    assert!(
        sent < 2_000_000,
        "the node never disconnected the greedy peer"
    );
    let log = srv.kill();
    assert!(log.contains("greedy@localhost stopped reading"), "{log}");
}

/// 100,000 casts of an unknown selector from a peer: each fails on the serving node, and
/// its log holds a bounded number of lines (a per-site budget per second and a count of the
/// rest), not one line per cast.
#[test]
fn a_flood_of_failing_casts_from_a_peer_writes_a_bounded_log() {
    let epmd = Epmd::bt();
    let env = Env::new("castflood", epmd.port);
    let server = "Actor subclass: Counter\n  state: n = 0\n  value => self.n\n\
                  Transcript showCr: \"ready\"\n";
    let mut srv = env.serve_src("flood@localhost", COOKIE, &[], server);
    let client = env.script(
        "client.bt",
        r#"Actor subclass: Counter
  state: n = 0
  value => self.n
n := (Node named: #'flood@localhost') unwrap
c := (Counter spawnOn: n) unwrap
100000 timesRepeat: [c noSuchThing!]
Transcript showCr: (c withTimeout: 120000) value printString
"#,
    );
    let started = Instant::now();
    let (code, out, err) = env.run(COOKIE, &["--name", "caster@localhost", &client]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "0");
    let log = srv.kill();
    let secs = started.elapsed().as_secs() + 2;
    let failed = log
        .lines()
        .filter(|l| l.contains("error in a cast from a peer"))
        .count();
    assert!(failed > 0, "{log}");
    // At most 20 lines per site and second, plus one count line per second.
    let bound = 21 * secs as usize;
    assert!(
        log.lines().count() <= bound,
        "{} lines in {secs} s (bound {bound}):\n{}",
        log.lines().count(),
        &log[..log.len().min(2000)]
    );
}

/// Sends one port-mapper request on a fresh connection and keeps the connection.
fn epmd_request(port: u16, req: &[u8]) -> std::net::TcpStream {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(LINE_LIMIT)).unwrap();
    let mut b = (req.len() as u16).to_be_bytes().to_vec();
    b.extend_from_slice(req);
    s.write_all(&b).unwrap();
    s
}

/// An `ALIVE2_REQ` for `name` at `port`.
fn alive2(name: &str, port: u16) -> Vec<u8> {
    let mut r = vec![120];
    r.extend_from_slice(&port.to_be_bytes());
    r.extend_from_slice(&[77, 0, 0, 6, 0, 5]);
    r.extend_from_slice(&(name.len() as u16).to_be_bytes());
    r.extend_from_slice(name.as_bytes());
    r.extend_from_slice(&[0, 0]);
    r
}

/// The whole answer of a one-shot request (the daemon closes the connection).
fn epmd_answer(port: u16, req: &[u8]) -> Vec<u8> {
    let mut s = epmd_request(port, req);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

/// `bt epmd` under a registration flood from one process: 1,100 registrations held open;
/// the daemon answers queries (`names` included) throughout, refuses registrations past its
/// bound instead of locking clients out, and refuses a kill request (`NO`, as epmd does)
/// while names are registered.
#[test]
fn bt_epmd_keeps_answering_under_a_registration_flood_and_refuses_kill() {
    let epmd = Epmd::bt();
    let mut held = Vec::new();
    let mut accepted = 0;
    for i in 0..1100u16 {
        let mut s = epmd_request(epmd.port, &alive2(&format!("flood{i}"), 20000 + i));
        let mut head = [0u8; 2];
        if s.read_exact(&mut head).is_ok() && head == [118, 0] {
            accepted += 1;
        }
        held.push(s);
    }
    assert!(accepted > 0);
    // Queries are answered while the registrations are held.
    let names = epmd_answer(epmd.port, &[110]);
    assert!(names.len() > 4, "no names answer");
    let text = String::from_utf8_lossy(&names[4..]).to_string();
    assert_eq!(text.lines().count(), accepted, "{accepted} accepted");
    assert!(text.contains("name flood0 at port 20000"));
    let port_please = epmd_answer(epmd.port, b"zflood0");
    assert_eq!(port_please.first(), Some(&119));
    // A kill request is refused while names are registered.
    assert_eq!(epmd_answer(epmd.port, &[107]), b"NO");
    assert_eq!(epmd_answer(epmd.port, &[110]).len(), names.len());
    // Once every registration is gone, a kill request is obeyed.
    drop(held);
    let mut left = usize::MAX;
    for _ in 0..10_000 {
        left = String::from_utf8_lossy(&epmd_answer(epmd.port, &[110])[4..])
            .lines()
            .count();
        if left == 0 {
            break;
        }
        std::thread::yield_now();
    }
    assert_eq!(left, 0);
    assert_eq!(epmd_answer(epmd.port, &[107]), b"OK");
}
