//! The hot path of frame bodies: `SEND`, `SEND_SENDER`, `REG_SEND`, `MONITOR_P` and
//! `DEMONITOR_P` with small terms, read and written through `codec::etf_fast` (no general
//! term reader, no per-byte writes). Anything else — other control messages, terms outside
//! the fast subset, trailing bytes, malformed input — is left to the general path
//! (`etf_check` then `erl_dist`), which [`read`] and [`write`] agree with on what they take.

use eetf::Term;
use erl_dist::message::{DemonitorP, Message, MonitorP, RegSend, Send, SendSender};
use erl_dist::term::PidOrAtom;

use crate::codec::etf_fast;

/// The message in a frame body (after the pass-through byte), when it is one of the common
/// kinds made of small terms and nothing follows it; else None (use the general path).
pub fn read(b: &[u8]) -> Option<Message> {
    let mut at = 0;
    let Term::Tuple(ctrl) = etf_fast::decode(b, &mut at)? else {
        return None;
    };
    let n = ctrl.elements.len();
    let mut e = ctrl.elements.into_iter();
    let Some(Term::FixInteger(op)) = e.next() else {
        return None;
    };
    let mut payload = || etf_fast::decode(b, &mut at);
    let m = match (op.value, n) {
        (2, 3) => {
            let (_, Term::Pid(to_pid)) = (e.next()?, e.next()?) else {
                return None;
            };
            Message::Send(Send {
                to_pid,
                message: payload()?,
            })
        }
        (22, 3) => {
            let (Term::Pid(from_pid), Term::Pid(to_pid)) = (e.next()?, e.next()?) else {
                return None;
            };
            Message::SendSender(SendSender {
                from_pid,
                to_pid,
                message: payload()?,
            })
        }
        (6, 4) => {
            let (Term::Pid(from_pid), _, Term::Atom(to_name)) = (e.next()?, e.next()?, e.next()?)
            else {
                return None;
            };
            Message::RegSend(RegSend {
                from_pid,
                to_name,
                message: payload()?,
            })
        }
        (op @ (19 | 20), 4) => {
            let (Term::Pid(from_pid), to, Term::Reference(reference)) =
                (e.next()?, e.next()?, e.next()?)
            else {
                return None;
            };
            let to_proc = match to {
                Term::Pid(p) => PidOrAtom::Pid(p),
                Term::Atom(a) => PidOrAtom::Atom(a),
                _ => return None,
            };
            if op == 19 {
                Message::MonitorP(MonitorP {
                    from_pid,
                    to_proc,
                    reference: *reference,
                })
            } else {
                Message::DemonitorP(DemonitorP {
                    from_pid,
                    to_proc,
                    reference: *reference,
                })
            }
        }
        _ => return None,
    };
    (at == b.len()).then_some(m)
}

/// Appends `m` as `erl_dist` writes it (control term, then the message) when it is one of
/// the kinds [`read`] takes and its terms are in the fast subset; else false, `out` as it was.
pub fn write(m: &Message, out: &mut Vec<u8>) -> bool {
    let mark = out.len();
    let ok = write_parts(m, out);
    if !ok {
        out.truncate(mark);
    }
    ok
}

fn write_parts(m: &Message, out: &mut Vec<u8>) -> bool {
    use etf_fast::{atom_into, encode, int_into, pid_into, reference_into, tuple_header};
    out.push(131);
    match m {
        Message::Send(s) => {
            tuple_header(3, out);
            int_into(2, out);
            tuple_header(0, out);
            pid_into(&s.to_pid, out) && encode(&s.message, out)
        }
        Message::SendSender(s) => {
            tuple_header(3, out);
            int_into(22, out);
            pid_into(&s.from_pid, out) && pid_into(&s.to_pid, out) && encode(&s.message, out)
        }
        Message::RegSend(s) => {
            tuple_header(4, out);
            int_into(6, out);
            pid_into(&s.from_pid, out)
                && {
                    tuple_header(0, out);
                    atom_into(&s.to_name.name, out)
                }
                && encode(&s.message, out)
        }
        Message::MonitorP(MonitorP {
            from_pid,
            to_proc,
            reference,
        })
        | Message::DemonitorP(DemonitorP {
            from_pid,
            to_proc,
            reference,
        }) => {
            tuple_header(4, out);
            int_into(
                if matches!(m, Message::MonitorP(_)) {
                    19
                } else {
                    20
                },
                out,
            );
            pid_into(from_pid, out)
                && match to_proc {
                    PidOrAtom::Pid(p) => pid_into(p, out),
                    PidOrAtom::Atom(a) => atom_into(&a.name, out),
                }
                && reference_into(reference, out)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::etf_check;
    use eetf::{Atom, BigInteger, FixInteger, List, Pid, Reference, Tuple};

    fn pid(n: u32) -> Pid {
        Pid::new("a@127.0.0.1", n, 0, 7)
    }
    fn reference(n: u32) -> Reference {
        Reference {
            node: Atom::from("b@127.0.0.1"),
            id: vec![n, 2, 3],
            creation: 9,
        }
    }

    /// A `gen_server` call as erl sends it (tag `[alias | Ref]`) or a reply.
    fn payloads() -> Vec<Term> {
        let t = |v: Vec<Term>| Term::from(Tuple::from(v));
        let a = |s: &str| Term::from(Atom::from(s));
        let tag = Term::from(eetf::ImproperList::from((
            vec![a("alias")],
            Term::from(reference(1)),
        )));
        vec![
            t(vec![
                a("$gen_call"),
                t(vec![Term::from(pid(1)), tag.clone()]),
                t(vec![
                    a("add:"),
                    Term::from(List::from(vec![Term::from(FixInteger::from(1))])),
                ]),
            ]),
            t(vec![tag, Term::from(FixInteger::from(-41))]),
            // Outside the fast subset: the frame goes the general way.
            t(vec![a("big"), Term::from(BigInteger::from(-(1i64 << 50)))]),
        ]
    }

    fn messages() -> Vec<Message> {
        let mut v = Vec::new();
        for p in payloads() {
            v.push(Message::send(pid(2), p.clone()));
            v.push(Message::send_sender(pid(3), pid(2), p.clone()));
            v.push(Message::reg_send(pid(3), Atom::from("echo"), p));
        }
        for to in [PidOrAtom::Pid(pid(4)), PidOrAtom::Atom(Atom::from("echo"))] {
            v.push(Message::monitor_p(pid(1), to.clone(), reference(5)));
            v.push(Message::demonitor_p(pid(1), to, reference(6)));
        }
        v.push(Message::link(pid(1), pid(2)));
        v.push(Message::monitor_p_exit(
            PidOrAtom::Pid(pid(1)),
            pid(2),
            reference(3),
            Term::from(Atom::from("noproc")),
        ));
        v
    }

    /// What the general path makes of a frame body: checked, then `erl_dist`.
    fn general(b: &[u8]) -> Option<Message> {
        match etf_check::scan_frame(b) {
            Ok(None) => Message::read_from(&mut &b[..]).ok(),
            _ => None,
        }
    }

    #[test]
    fn writes_what_erl_dist_writes_and_reads_what_it_reads() {
        let mut fast = 0;
        for m in messages() {
            let mut slow = Vec::new();
            m.clone().write_into(&mut slow).unwrap();
            let mut out = vec![112];
            if write(&m, &mut out) {
                assert_eq!(&out[1..], &slow[..], "{m:?}");
                fast += 1;
            } else {
                assert_eq!(out, [112]);
            }
            // (`[1]` comes back as the byte string it is written as, on both paths.)
            let g = general(&slow);
            assert!(g.is_some());
            match read(&slow) {
                Some(back) => assert_eq!(Some(back), g),
                None => assert!(!write(&m, &mut Vec::new()), "{m:?} is a fast kind"),
            }
        }
        assert_eq!(fast, 10);
    }

    /// Damaged frames: the fast reader declines or reads what the general path reads.
    #[test]
    fn damaged_frames_read_as_the_general_path_or_not_at_all() {
        let frames: Vec<Vec<u8>> = messages()
            .into_iter()
            .map(|m| {
                let mut b = Vec::new();
                m.write_into(&mut b).unwrap();
                b
            })
            .collect();
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let (mut read_ok, mut declined) = (0, 0);
        for i in 0..20_000 {
            let mut b = frames[i % frames.len()].clone();
            for _ in 0..1 + next() % 3 {
                if b.is_empty() {
                    break;
                }
                let at = (next() as usize) % b.len();
                match next() % 4 {
                    0 => b[at] = next() as u8,
                    1 => b[at] ^= 1 << (next() % 8),
                    2 => b.truncate(at),
                    _ => b.insert(at, next() as u8),
                }
            }
            match read(&b) {
                Some(m) => {
                    assert_eq!(general(&b).as_ref(), Some(&m), "{b:?}");
                    read_ok += 1;
                }
                None => declined += 1,
            }
        }
        assert!(read_ok > 1_000 && declined > 1_000, "{read_ok} {declined}");
    }

    #[test]
    fn trailing_bytes_and_odd_shapes_take_the_general_path() {
        let mut b = Vec::new();
        Message::monitor_p(pid(1), PidOrAtom::Pid(pid(2)), reference(3))
            .write_into(&mut b)
            .unwrap();
        b.extend([131, 97, 1]);
        assert_eq!(read(&b), None);
        for odd in [
            &[131u8, 104, 0][..],
            &[131, 104, 1, 97, 2],
            &[131, 104, 3, 100, 0, 1, b'x', 104, 0, 104, 0],
            &[131, 106],
            &[],
            &[131],
        ] {
            assert_eq!(read(odd), None, "{odd:?}");
        }
    }
}
