//! The standard input/output transport of `bt lsp`: the base protocol of LSP (header lines,
//! a blank line, a body of `Content-Length` bytes holding a JSON-RPC message), read with
//! bounds so that no input stops the server.
//!
//! | input | answer (JSON-RPC error, `id` null unless the message had one) |
//! |---|---|
//! | a body that is not JSON, not UTF-8, or nested deeper than serde_json's 128 levels | `-32700` parse error |
//! | a header block without `Content-Length`, a length that is not a byte count, a header line longer than [`MAX_HEADER_LINE`] or without `:`, more than [`MAX_HEADER_LINES`] lines | `-32700`; a valid length's body is skipped |
//! | JSON that is not a request, response or notification (an array, a number as method, an id that is neither an integer nor a string) | `-32600` invalid request |
//! | a body longer than [`MAX_BODY`] | `-32600` at once; the body is then read and dropped, never kept |
//!
//! Everything read is bounded: a header line is kept up to [`MAX_HEADER_LINE`] bytes (the rest
//! is read and dropped), a body up to [`MAX_BODY`]. Replies and the server's messages are
//! written whole, one frame at a time, under the lock of standard output.

use std::io::{self, BufRead, Read, Write};

use lsp_server::{Connection, ErrorCode, Message};
use lsp_types::notification::{Exit, Notification as _};
use serde_json::{json, Value as Json};

/// The longest message body read (a document of a few megabytes fits many times).
const MAX_BODY: u64 = 32 << 20;
/// The longest header line kept (`Content-Length: …` and `Content-Type: …` are short).
const MAX_HEADER_LINE: usize = 1024;
/// The most header lines of one message.
const MAX_HEADER_LINES: usize = 32;

/// JSON-RPC's "parse error" (-32700).
const PARSE_ERROR: i32 = ErrorCode::ParseError as i32;
/// JSON-RPC's "invalid request" (-32600).
const INVALID_REQUEST: i32 = ErrorCode::InvalidRequest as i32;

/// What one frame of input was.
#[derive(Debug)]
enum Frame {
    Message(Message),
    /// Not a message: the error to answer, then how many body bytes to skip.
    Error {
        reply: Json,
        skip: u64,
    },
}

/// A JSON-RPC error response (by hand: its id may be null, which lsp-server's `Response`
/// cannot hold).
fn error(id: Json, code: i32, message: String) -> Json {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// One header line without its line end; `Err(length)` for a line longer than
/// [`MAX_HEADER_LINE`] (read to its end, not kept). None at the end of the input.
fn header_line(r: &mut impl BufRead) -> io::Result<Option<Result<Vec<u8>, usize>>> {
    let mut line = Vec::new();
    let mut total = 0usize;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok((total > 0).then_some(if total > MAX_HEADER_LINE {
                Err(total)
            } else {
                Ok(line)
            }));
        }
        let (n, end) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let part = &buf[..if end { n - 1 } else { n }];
        let room = (MAX_HEADER_LINE + 1).saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        total += part.len();
        r.consume(n);
        if end {
            if line.last() == Some(&b'\r') {
                line.pop();
                total -= 1;
            }
            return Ok(Some(if total > MAX_HEADER_LINE {
                Err(total)
            } else {
                Ok(line)
            }));
        }
    }
}

/// Reads the next frame; None at the end of the input.
fn read_frame(r: &mut impl BufRead) -> io::Result<Option<Frame>> {
    let mut length: Option<Result<u64, String>> = None;
    let mut problem: Option<String> = None;
    let mut lines = 0usize;
    loop {
        let line = match header_line(r)? {
            None => return Ok(None),
            Some(Err(n)) => {
                problem.get_or_insert(format!(
                    "a header line of {n} bytes (at most {MAX_HEADER_LINE})"
                ));
                lines += 1;
                continue;
            }
            Some(Ok(l)) => l,
        };
        if line.is_empty() {
            if lines == 0 {
                continue; // blank lines between messages
            }
            break;
        }
        lines += 1;
        if lines > MAX_HEADER_LINES {
            problem.get_or_insert(format!("more than {MAX_HEADER_LINES} header lines"));
            continue;
        }
        let line = String::from_utf8_lossy(&line);
        match line.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                let v = value.trim();
                length = Some(
                    v.parse::<u64>()
                        .map_err(|_| crate::diagnostic::cap_quote(v, 40).into_owned()),
                );
            }
            Some(_) => {} // Content-Type and other headers
            None => {
                problem.get_or_insert(format!(
                    "a header line without `:`: {:?}",
                    crate::diagnostic::cap_quote(&line, 40)
                ));
            }
        }
    }
    let skip = match &length {
        Some(Ok(n)) => *n,
        _ => 0,
    };
    if let Some(p) = problem {
        let reply = error(Json::Null, PARSE_ERROR, format!("bad message header: {p}"));
        return Ok(Some(Frame::Error { reply, skip }));
    }
    let n = match length {
        None => {
            let reply = error(
                Json::Null,
                PARSE_ERROR,
                "bad message header: no Content-Length".to_string(),
            );
            return Ok(Some(Frame::Error { reply, skip: 0 }));
        }
        Some(Err(v)) => {
            let reply = error(
                Json::Null,
                PARSE_ERROR,
                format!("bad message header: Content-Length `{v}` is not a byte count"),
            );
            return Ok(Some(Frame::Error { reply, skip: 0 }));
        }
        Some(Ok(n)) if n > MAX_BODY => {
            let reply = error(
                Json::Null,
                INVALID_REQUEST,
                format!("a message of {n} bytes is longer than the limit ({MAX_BODY} bytes); it is skipped"),
            );
            return Ok(Some(Frame::Error { reply, skip: n }));
        }
        Some(Ok(n)) => n,
    };
    let mut body = Vec::with_capacity(n.min(1 << 16) as usize);
    r.by_ref().take(n).read_to_end(&mut body)?;
    if (body.len() as u64) < n {
        return Ok(None); // the input ended inside the body
    }
    Ok(Some(parse_body(&body)))
}

/// A message, or the error for a body that is not one.
fn parse_body(body: &[u8]) -> Frame {
    let v: Json = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            let reply = error(
                Json::Null,
                PARSE_ERROR,
                format!("the message is not JSON: {e}"),
            );
            return Frame::Error { reply, skip: 0 };
        }
    };
    let id = match v.get("id") {
        Some(i @ (Json::Number(_) | Json::String(_))) => i.clone(),
        _ => Json::Null,
    };
    if !v.is_object() {
        let reply = error(
            id,
            INVALID_REQUEST,
            "a JSON-RPC message is an object".to_string(),
        );
        return Frame::Error { reply, skip: 0 };
    }
    // Message's serde is untagged: `{"id": 7, "method": 5}` would pass as a response.
    let shaped = match v.get("method") {
        Some(m) => m.is_string(),
        None => v.get("result").is_some() || v.get("error").is_some(),
    };
    match serde_json::from_value::<Message>(v) {
        Ok(m) if shaped => Frame::Message(m),
        _ => {
            let reply = error(
                id,
                INVALID_REQUEST,
                "not a JSON-RPC request, response or notification (`method` a string, `id` an integer or a string)".to_string(),
            );
            Frame::Error { reply, skip: 0 }
        }
    }
}

/// Reads and drops `n` bytes (a body not kept); false when the input ended first.
fn skip(r: &mut impl BufRead, n: u64) -> io::Result<bool> {
    Ok(io::copy(&mut r.by_ref().take(n), &mut io::sink())? == n)
}

/// Writes one frame holding `text`.
fn write_text(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    write!(out, "Content-Length: {}\r\n\r\n", text.len())?;
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// The connection over standard input/output: a reader thread (frames → messages, errors
/// answered by itself) and a writer thread (the server's messages → frames). Answers the
/// connection and the writer, to be joined once the connection is dropped.
pub(crate) fn stdio() -> (Connection, std::thread::JoinHandle<()>) {
    let (server, io_side) = Connection::memory();
    let Connection {
        sender: to_server,
        receiver: from_server,
    } = io_side;
    std::thread::spawn(move || {
        let mut input = io::stdin().lock();
        loop {
            match read_frame(&mut input) {
                Ok(Some(Frame::Message(m))) => {
                    let exit = matches!(&m, Message::Notification(n) if n.method == Exit::METHOD);
                    if to_server.send(m).is_err() || exit {
                        return;
                    }
                }
                Ok(Some(Frame::Error { reply, skip: n })) => {
                    if write_text(&reply.to_string()).is_err() {
                        return;
                    }
                    if !matches!(skip(&mut input, n), Ok(true)) {
                        return;
                    }
                }
                Ok(None) | Err(_) => return,
            }
        }
    });
    let writer = std::thread::spawn(move || {
        for m in from_server {
            if m.write(&mut io::stdout().lock()).is_err() {
                return;
            }
        }
    });
    (server, writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Result<String, (Json, i64, u64)>> {
        let mut r = io::BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        while let Some(f) = read_frame(&mut r).unwrap() {
            match f {
                Frame::Message(m) => out.push(Ok(match m {
                    Message::Request(q) => q.method,
                    Message::Notification(n) => n.method,
                    Message::Response(_) => "response".to_string(),
                })),
                Frame::Error { reply, skip: n } => {
                    out.push(Err((
                        reply["id"].clone(),
                        reply["error"]["code"].as_i64().unwrap(),
                        n,
                    )));
                    assert!(skip(&mut r, n).unwrap());
                }
            }
        }
        out
    }

    #[test]
    fn frames_and_their_errors() {
        let ok = b"{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}";
        let mut input = Vec::new();
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", ok.len()).as_bytes());
        input.extend_from_slice(ok);
        input.extend_from_slice(b"\r\ncontent-length:3\nContent-Type: x\n\n[1]");
        input.extend_from_slice(b"Content-Length: 5\r\nbroken\r\n\r\nabcde");
        input.extend_from_slice(format!("X: {}\r\n\r\n", "a".repeat(5000)).as_bytes());
        input.extend_from_slice(b"Content-Length: 24\r\n\r\n{\"id\":\"q\",\"result\":null}");
        input.extend_from_slice(b"Content-Length: 10\r\n\r\n{\"id\":\"q\"}");
        input.extend_from_slice(b"Content-Length: 40\r\n\r\n{\"id\":");
        assert_eq!(
            frames(&input),
            vec![
                Ok("initialized".to_string()),
                Err((Json::Null, -32600, 0)),
                Err((Json::Null, -32700, 5)),
                Err((Json::Null, -32700, 0)),
                Ok("response".to_string()),
                Err((json!("q"), -32600, 0)),
            ]
        );
        let mut big = format!("Content-Length: {}\r\n\r\n", MAX_BODY + 3).into_bytes();
        big.resize(big.len() + MAX_BODY as usize + 3, b' ');
        big.extend_from_slice(&input[..ok.len() + 22]);
        assert_eq!(
            frames(&big),
            vec![
                Err((Json::Null, -32600, MAX_BODY + 3)),
                Ok("initialized".to_string())
            ]
        );
    }
}
