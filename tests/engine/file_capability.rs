//! File is a capability: an embedded script is denied `File` until the host
//! grants `Capability::File`; the denial is a `capability_denied` exception.

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
