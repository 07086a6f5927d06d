//! File and Erlang are capabilities: an embedded script is denied `File` (`Erlang`) until the host
//! grants `Capability::File` (`Capability::Erlang`); the denial is a `capability_denied` exception.

use crate::scoped_tree::Tree;
use bt::interp::capability::Capability;
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
    // The message names the send once, with its own colon.
    assert!(
        err.message
            .starts_with("File readAll: needs the File capability, which is not granted"),
        "{err:?}"
    );
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
/// The kind a send ends with (`ok` when it answered).
fn kind_of(e: &Engine, src: &str) -> String {
    match e.eval(src) {
        Ok(_) => "ok".into(),
        Err(err) => err.kind.to_string(),
    }
}

#[test]
fn allow_read_confines_reading_to_the_directory_through_dotdot_absolute_paths_and_symlinks() {
    let t = Tree::new("read");
    let e = Engine::builder().allow_read(t.path("in")).build();
    let inside = format!("(File readAll: \"{}\") unwrap", t.path("in/ok.txt"));
    assert_eq!(e.eval(&inside).unwrap().as_str(), Some("fine"));
    for outside in [
        t.path("in/../out/secret.txt"),
        t.path("out/secret.txt"),
        t.path("in/link.txt"),
        t.path("in/door/secret.txt"),
        t.path("in/nothing/../../out/secret.txt"),
        "/etc/passwd".to_string(),
    ] {
        let err = e.eval(&format!("File readAll: \"{outside}\"")).unwrap_err();
        assert_eq!(err.kind, "capability_denied", "{outside}: {err:?}");
        assert!(err.message.contains("--allow-read"), "{}", err.message);
        assert!(err.message.contains("file-read"), "{}", err.message);
    }
    // Listing, probing and opening lines are reads too.
    assert_eq!(
        kind_of(
            &e,
            &format!("File listDirectory: \"{}\"", t.path("in/door"))
        ),
        "capability_denied"
    );
    assert_eq!(
        kind_of(
            &e,
            &format!("File exists: \"{}\"", t.path("out/secret.txt"))
        ),
        "capability_denied"
    );
    assert_eq!(
        kind_of(
            &e,
            &format!("(File lines: \"{}\") unwrap asList", t.path("in/link.txt"))
        ),
        "capability_denied"
    );
    assert_eq!(
        kind_of(&e, &format!("File listDirectory: \"{}\"", t.path("in"))),
        "ok"
    );
    // Reading does not grant writing.
    let err = e
        .eval(&format!(
            "File writeAll: \"{}\" contents: \"x\"",
            t.path("in/new.txt")
        ))
        .unwrap_err();
    assert_eq!(err.kind, "capability_denied");
    assert!(err.message.contains("--allow-write"), "{}", err.message);
}

#[test]
fn allow_write_confines_writing_and_a_symlink_cannot_carry_a_write_out() {
    let t = Tree::new("write");
    let e = Engine::builder().allow_write(t.path("in")).build();
    let write = |p: &str| {
        kind_of(
            &e,
            &format!("(File writeAll: \"{p}\" contents: \"x\") unwrap"),
        )
    };
    assert_eq!(write(&t.path("in/new.txt")), "ok");
    assert_eq!(std::fs::read_to_string(t.path("in/new.txt")).unwrap(), "x");
    assert_eq!(write(&t.path("in/sub/deeper.txt")), "ok");
    for outside in [
        t.path("in/../out/new.txt"),
        t.path("out/new.txt"),
        t.path("in/door/new.txt"),
    ] {
        assert_eq!(write(&outside), "capability_denied", "{outside}");
    }
    // Appending through the link would write the secret: refused.
    let append = format!(
        "File appendAll: \"{}\" contents: \"x\"",
        t.path("in/link.txt")
    );
    assert_eq!(kind_of(&e, &append), "capability_denied");
    assert_eq!(
        std::fs::read_to_string(t.path("out/secret.txt")).unwrap(),
        "secret"
    );
    let rename = format!(
        "File rename: \"{}\" to: \"{}\"",
        t.path("in/new.txt"),
        t.path("out/moved.txt")
    );
    assert_eq!(kind_of(&e, &rename), "capability_denied");
    assert!(!std::path::Path::new(&t.path("out/moved.txt")).exists());
    // Writing does not grant reading.
    assert_eq!(
        kind_of(&e, &format!("File readAll: \"{}\"", t.path("in/new.txt"))),
        "capability_denied"
    );
}

#[test]
fn environment_and_host_facts_are_capabilities_of_their_own() {
    let e = Engine::new();
    for src in [
        "System getEnv: \"PATH\"",
        "System getEnv: \"PATH\" default: 1",
        "System hostname",
        "System pid",
    ] {
        let err = e.eval(src).unwrap_err();
        assert_eq!(err.kind, "capability_denied", "{src}: {err:?}");
    }
    let err = e.eval("System getEnv: \"PATH\"").unwrap_err();
    assert!(err.message.contains("environment"), "{}", err.message);
    assert!(
        err.hint.as_deref().unwrap_or("").contains("--allow-env"),
        "{err:?}"
    );
    let err = e.eval("System hostname").unwrap_err();
    assert!(err.message.contains("host facts"), "{}", err.message);
    assert!(
        err.hint.as_deref().unwrap_or("").contains("--allow-sys"),
        "{err:?}"
    );
    // By name: only that variable.
    let e = Engine::builder().allow_env("PATH").build();
    assert_eq!(kind_of(&e, "System getEnv: \"PATH\""), "ok");
    assert_eq!(kind_of(&e, "System getEnv: \"HOME\""), "capability_denied");
    let e = Engine::builder()
        .grant(Capability::Env)
        .grant(Capability::Sys)
        .build();
    assert_eq!(kind_of(&e, "System getEnv: \"HOME\""), "ok");
    assert_eq!(kind_of(&e, "System hostname size"), "ok");
    assert_eq!(
        e.eval("System pid").unwrap().as_i64(),
        Some(std::process::id() as i64)
    );
}
