//! File and Erlang are capabilities: an embedded script is denied `File` (`Erlang`) until the host
//! grants `Capability::File` (`Capability::Erlang`); the denial is a `capability_denied` exception.

use bt::interp::prims::capability::Capability;
use bt::Engine;

#[test]
fn file_is_denied_until_granted() {
    let e = Engine::new();
    let err = e.eval("File exists: \".\"").unwrap_err();
    assert_eq!(err.kind, "capability_denied", "{err:?}");
    let err = e.eval("File cwd").unwrap_err();
    assert_eq!(err.kind, "capability_denied");
    let err = e.eval("File readAll: \"Cargo.toml\"").unwrap_err();
    assert_eq!(err.kind, "capability_denied");
    e.grant(Capability::File);
    let v = e.eval("File isDirectory: \".\"").unwrap();
    assert_eq!(v.as_bool(), Some(true));
    let v = e.eval("(File readAll: \"Cargo.toml\") isOk").unwrap();
    assert_eq!(v.as_bool(), Some(true));
}

#[test]
fn erlang_is_denied_until_granted() {
    let e = Engine::new();
    for src in [
        "Erlang lists",
        "Erlang lists reverse: #(1, 2)",
        "Erlang timer sleep: 1",
    ] {
        let err = e.eval(src).unwrap_err();
        assert_eq!(err.kind, "capability_denied", "{src}: {err:?}");
        assert!(err.message.contains("Erlang"), "{src}: {}", err.message);
    }
    e.grant(Capability::Erlang);
    let v = e.eval("Erlang lists sum: #(1, 2, 3)").unwrap();
    assert_eq!(v.as_i64(), Some(6));
}
