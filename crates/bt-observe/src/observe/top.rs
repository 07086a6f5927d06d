//! `bt top ADDR` (also `bt observe --tty ADDR`): the supervision tree of a program run with
//! `bt run --observe ADDR`, as a text tree redrawn whenever it changes — for servers without
//! a browser. It follows the same event stream as the page (`/runtime/events`), so each
//! redraw marks what changed since the previous one: `+` added, `↻` restarted, `Δ` state
//! changed; removed nodes are listed under the tree.
//!
//! When the observed program ends the observer sends a last `end` event: the tree is drawn
//! once more with [`ENDED`] under it and `bt top` exits with status 0; a connection closed
//! without it is an error (status 1, the last frame stays on the screen).
//!
//! `--once` prints the current tree once and exits (scripts, tests). An observer served with
//! `--observe-tls` is read over HTTPS (`https://ADDR`, `--ca FILE`, `--tls CONFIG`,
//! `--server-name NAME`: `super::tls_client`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde_json::Value;

use super::tls_client::{self, ClientTls};

const USAGE: &str = "usage: bt top [https://]ADDR [--once] [--ca FILE] [--tls CONFIG] \
                     [--server-name NAME]   (ADDR as given to `bt run --observe ADDR`)";

/// Under the last frame, when the observer said the program ended.
pub(crate) const ENDED: &str = "the program ended; these are its processes' last states\n";

/// A connection to the observer, plain or TLS.
trait Conn: Read + Write {}
impl<T: Read + Write> Conn for T {}

/// Entry point of `bt top` / `bt observe --tty`; answers the exit code.
pub fn main(args: &[String]) -> i32 {
    let mut addr = None;
    let mut once = false;
    let mut tls = ClientTls::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |what: &str| match it.next() {
            Some(v) => Ok(v.clone()),
            None => Err(format!("bt top: {a} needs {what}\n{USAGE}")),
        };
        let set = match a.as_str() {
            "--ca" => value("a FILE").map(|v| tls.ca = Some(v.into())),
            "--tls" => value("a CONFIG file").map(|v| tls.config = Some(v.into())),
            "--server-name" => value("a NAME").map(|v| tls.server_name = Some(v)),
            _ => Ok(()),
        };
        if let Err(e) = set {
            eprintln!("{e}");
            return 2;
        }
        match a.as_str() {
            "--ca" | "--tls" | "--server-name" => {}
            "--once" => once = true,
            "--tty" => {}
            "-h" | "--help" => {
                println!("{USAGE}");
                return 0;
            }
            s if s.starts_with('-') => {
                eprintln!("bt top: unknown option {s}\n{USAGE}");
                return 2;
            }
            s => addr = Some(s.to_string()),
        }
    }
    let Some(addr) = addr else {
        eprintln!("{USAGE}");
        return 2;
    };
    let https = addr.starts_with("https://") || tls.any();
    let addr = addr
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .trim_end_matches('/')
        .to_string();
    let Some(sock) = addr.to_socket_addrs().ok().and_then(|mut a| a.next()) else {
        eprintln!("bt top: cannot resolve {addr}");
        return 2;
    };
    let tls = if https {
        // The name the certificate must carry: --server-name, else ADDR's host.
        let host = addr.rsplit_once(':').map_or(addr.as_str(), |(h, _)| h);
        let name = tls.server_name.clone().unwrap_or_else(|| host.to_string());
        match tls.client_config() {
            Ok(cfg) => Some((cfg, name)),
            Err(e) => {
                eprintln!("{e}");
                return 2;
            }
        }
    } else {
        None
    };
    match follow(sock, tls, once) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("bt top: {addr}: {e}");
            1
        }
    }
}

/// Reads `/runtime/events` (over TLS to the server named in `tls` when given) and draws
/// each `tree` event.
fn follow(
    addr: SocketAddr,
    tls: Option<(rustls::ClientConfig, String)>,
    once: bool,
) -> std::io::Result<()> {
    let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    let (mut s, host): (Box<dyn Conn>, String) = match tls {
        None => (Box::new(tcp), addr.to_string()),
        Some((cfg, name)) => {
            let s = tls_client::connect(cfg, &name, tcp).map_err(std::io::Error::other)?;
            let host = if name.contains(':') && !name.starts_with('[') {
                format!("[{name}]:{}", addr.port())
            } else {
                format!("{name}:{}", addr.port())
            };
            (Box::new(s), host)
        }
    };
    write!(
        s,
        "GET /runtime/events HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n"
    )?;
    s.flush()?;
    let mut r = BufReader::new(s);
    let mut status = String::new();
    r.read_line(&mut status)?;
    if !status.starts_with("HTTP/1.1 200") {
        return Err(std::io::Error::other(format!(
            "no event stream: {}",
            status.trim_end()
        )));
    }
    let tty = std::io::stdout().is_terminal() && !once;
    let mut line = String::new();
    // The name of the event whose data comes next (`tree`, or `end` when the program ended).
    let mut kind = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::Error::other(
                "the observer closed the connection without saying the program ended (it was \
                 killed, or the network failed); the states above are the last ones seen",
            ));
        }
        let l = line.trim_end();
        if let Some(k) = l.strip_prefix("event: ") {
            kind = k.to_string();
            continue;
        }
        // Chunked transfer: the size lines are not JSON and are skipped with the rest.
        let Some(data) = l.strip_prefix("data: ") else {
            continue;
        };
        let Ok(ev) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        let ended = kind == "end";
        let mut text = render(&ev);
        if ended {
            text.push_str(ENDED);
        }
        let mut out = std::io::stdout().lock();
        if tty {
            // Home the cursor and clear the screen, then draw.
            write!(out, "\x1b[H\x1b[2J")?;
        }
        write!(out, "{text}")?;
        out.flush()?;
        if once || ended {
            return Ok(());
        }
    }
}

fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

fn num(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(0)
}

/// One event (`{"tree":…,"idents":[…],"diff":…}`) as text.
pub fn render(ev: &Value) -> String {
    let tree = &ev["tree"];
    let t = &tree["totals"];
    let mut out = format!(
        "bt top · {} · {} supervisors, {} workers, {} running, {} exited, {} restarts\n",
        str_of(tree, "node").unwrap_or("?"),
        num(t, "supervisors"),
        num(t, "workers"),
        num(t, "running"),
        num(t, "exited"),
        num(t, "restarts"),
    );
    let mut marks: HashMap<&str, char> = HashMap::new();
    let diff = &ev["diff"];
    for (key, mark) in [("stateChanged", 'Δ'), ("restarted", '↻'), ("added", '+')] {
        for e in diff[key].as_array().into_iter().flatten() {
            if let Some(p) = str_of(e, "path") {
                marks.insert(p, mark);
            }
        }
    }
    let idents: Vec<&str> = ev["idents"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut i = 0;
    let roots = tree["roots"].as_array().cloned().unwrap_or_default();
    for r in &roots {
        line(&mut out, r, "", "", &idents, &mut i, &marks);
    }
    if roots.is_empty() {
        out.push_str("(no processes)\n");
    }
    if let Some(page) = tree.get("page") {
        out.push_str(&format!(
            "… showing {} of {} roots\n",
            roots.len(),
            num(page, "totalRoots")
        ));
    }
    let removed: Vec<&str> = diff["removed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| str_of(e, "path"))
        .collect();
    if !removed.is_empty() {
        out.push_str(&format!("removed: {}\n", removed.join(", ")));
    }
    out
}

fn line(
    out: &mut String,
    n: &Value,
    lead: &str,
    branch: &str,
    idents: &[&str],
    i: &mut usize,
    marks: &HashMap<&str, char>,
) {
    let ident = idents.get(*i).copied().unwrap_or("");
    *i += 1;
    let mark = marks.get(ident).copied().unwrap_or(' ');
    let label = str_of(n, "class")
        .or_else(|| str_of(n, "registeredName"))
        .or_else(|| str_of(n, "kind"))
        .unwrap_or("?");
    let mut s = format!("{mark} {lead}{branch}{label}");
    if let Some(name) = str_of(n, "registeredName").filter(|r| *r != label) {
        s.push_str(&format!(" #{name}"));
    }
    s.push_str(&format!(" {}", str_of(n, "pid").unwrap_or("restarting")));
    if let Some(sup) = n.get("supervision").filter(|v| v.is_object()) {
        s.push_str(&format!(
            " [{} · {} children]",
            str_of(sup, "strategy").unwrap_or("?"),
            num(n, "childCount")
        ));
    }
    let state = str_of(n, "state").unwrap_or("?");
    s.push_str(&format!(" {state} ↻{}", num(n, "restartCount")));
    if let Some(last) = n["restartHistory"].as_array().and_then(|h| h.last()) {
        s.push_str(&format!(
            " (last: {} {})",
            str_of(last, "kind").unwrap_or("?"),
            str_of(last, "reason").unwrap_or("?")
        ));
    }
    if n["truncated"] == Value::Bool(true) {
        s.push_str(" (truncated)");
    }
    out.push_str(&s);
    out.push('\n');
    let children = n["children"].as_array().cloned().unwrap_or_default();
    let next_lead = match branch {
        "" => lead.to_string(),
        "├─ " => format!("{lead}│  "),
        _ => format!("{lead}   "),
    };
    for (k, c) in children.iter().enumerate() {
        let b = if k + 1 == children.len() {
            "└─ "
        } else {
            "├─ "
        };
        line(out, c, &next_lead, b, idents, i, marks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_tree_with_change_marks() {
        let ev: Value = serde_json::from_str(
            r#"{"tree":{"node":"n@h","totals":{"supervisors":1,"workers":2,"running":2,"exited":1,"restarts":2},
              "roots":[{"pid":"<0.2.0>","registeredName":"App","kind":"beamtalkSupervisor","class":"App","state":"running","restartCount":0,"childCount":2,"truncated":false,
                "supervision":{"strategy":"oneForOne"},"restartHistory":[],"children":[
                {"pid":"<0.5.0>","registeredName":null,"kind":"beamtalkActor","class":"Logger","state":"running","restartCount":2,"childCount":0,"truncated":false,"supervision":null,
                 "restartHistory":[{"at":1,"reason":"killed","kind":"exit","generation":1,"pid":"<0.3.0>"}],"children":[]},
                {"pid":"<0.4.0>","registeredName":null,"kind":"beamtalkActor","class":"Once","state":"exited","restartCount":0,"childCount":0,"truncated":false,"supervision":null,"restartHistory":[],"children":[]}]}]},
             "idents":["App","App/Logger","App/Once"],
             "diff":{"added":[],"removed":[{"path":"App/Gone"}],"restarted":[{"path":"App/Logger","count":2}],"stateChanged":[{"path":"App/Once"}]}}"#,
        )
        .unwrap();
        let want = [
            "bt top · n@h · 1 supervisors, 2 workers, 2 running, 1 exited, 2 restarts",
            "  App <0.2.0> [oneForOne · 2 children] running ↻0",
            "↻ ├─ Logger <0.5.0> running ↻2 (last: exit killed)",
            "Δ └─ Once <0.4.0> exited ↻0",
            "removed: App/Gone",
            "",
        ];
        assert_eq!(render(&ev), want.join("\n"));
    }
}
