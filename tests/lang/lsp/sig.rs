//! `bt lsp` signature help and workspace symbols, through the real server (the helpers of
//! the parent module: [`Server`], [`at`]).

use serde_json::{json, Value};

use super::{at, Server};

const SHELF: &str = "Object subclass: Shelf
  /// Puts a book on a row of the shelf.
  place: book row: n -> Self => self

s := Shelf new
d := Dictionary new
d at: 1 put: 
s place: 3 row: 
mystery at: 
d at: (s place: 
";

/// The labels of a signature's parameters (their `[start, end)` in UTF-16 units of its label).
fn param_labels(sig: &Value) -> Vec<String> {
    let label: Vec<u16> = sig["label"].as_str().unwrap().encode_utf16().collect();
    sig["parameters"]
        .as_array()
        .unwrap_or_else(|| panic!("no parameters in {sig}"))
        .iter()
        .map(|p| {
            let s = p["label"][0].as_u64().unwrap() as usize;
            let e = p["label"][1].as_u64().unwrap() as usize;
            String::from_utf16(&label[s..e]).unwrap()
        })
        .collect()
}

/// Signature help inside a keyword send: the full selector with its parameter names and doc,
/// the active parameter the keyword being typed; the receiver's class when it is inferred,
/// the library's candidates otherwise; nothing outside a keyword send.
#[test]
fn signature_help_in_keyword_sends() {
    let mut s = Server::start();
    let init = s.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert!(
        init["capabilities"]["signatureHelpProvider"]["triggerCharacters"]
            .as_array()
            .is_some_and(|t| t.contains(&json!(":"))),
        "{init}"
    );
    s.notify("initialized", json!({}));
    let uri = "file:///tmp/bt-lsp-sig/a.bt";
    s.open(uri, SHELF);
    let help = |s: &mut Server, line: u32, character: u32| {
        s.request("textDocument/signatureHelp", at(uri, line, character))
    };

    // `d at: 1 put: |` (d a Dictionary): Dictionary's at:put:, second parameter active.
    let h = help(&mut s, 6, 13);
    let sig = &h["signatures"][0];
    assert_eq!(sig["label"], "Dictionary >> at: key put: value", "{h}");
    assert_eq!(param_labels(sig), vec!["at: key", "put: value"], "{h}");
    assert_eq!(h["activeParameter"], 1, "{h}");
    assert_eq!(sig["activeParameter"], 1, "{h}");
    assert!(
        sig["documentation"]["value"]
            .as_str()
            .unwrap_or("")
            .contains("mapped to `value`"),
        "{h}"
    );
    assert!(
        h["signatures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["label"]
                .as_str()
                .unwrap()
                .starts_with("Dictionary >> at: key put:")),
        "only Dictionary's selectors starting at:put: {h}"
    );
    // `d at: |1 put:`: the first keyword is active; `at:` itself comes first, the longer
    // selectors with the same first part follow.
    let h = help(&mut s, 6, 6);
    assert_eq!(h["activeParameter"], 0, "{h}");
    let labels: Vec<&str> = h["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels[0], "Dictionary >> at: key", "{h}");
    assert!(
        labels.contains(&"Dictionary >> at: key ifAbsent: aBlock"),
        "{h}"
    );
    assert!(labels.contains(&"Dictionary >> at: key put: value"), "{h}");

    // A class of the document: its header (parameter names, return type) and doc comment.
    let h = help(&mut s, 7, 16);
    let sig = &h["signatures"][0];
    assert_eq!(sig["label"], "Shelf >> place: book row: n -> Self", "{h}");
    assert_eq!(param_labels(sig), vec!["place: book", "row: n"], "{h}");
    assert_eq!(h["activeParameter"], 1, "{h}");
    assert!(
        sig["documentation"]["value"]
            .as_str()
            .unwrap()
            .contains("Puts a book on a row"),
        "{h}"
    );

    // A receiver of unknown class: every class's `at:` selectors.
    let h = help(&mut s, 8, 12);
    let labels: Vec<&str> = h["signatures"]
        .as_array()
        .unwrap_or_else(|| panic!("{h}"))
        .iter()
        .map(|g| g["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"Dictionary >> at: key"), "{labels:?}");
    assert!(
        labels.iter().any(|l| l.starts_with("Array >> at:")),
        "{labels:?}"
    );
    assert!(labels.iter().all(|l| l.contains(">> at:")), "{labels:?}");
    assert_eq!(h["activeParameter"], 0, "{h}");

    // Inside parentheses: the inner send (`s place: |`).
    let h = help(&mut s, 9, 15);
    assert_eq!(
        h["signatures"][0]["label"], "Shelf >> place: book row: n -> Self",
        "{h}"
    );
    assert_eq!(h["activeParameter"], 0, "{h}");

    // `d at: 1 pu|`: the half-typed word is taken as the next keyword's start.
    s.change(uri, 2, "d := Dictionary new\nd at: 1 pu");
    let h = help(&mut s, 1, 10);
    assert_eq!(
        h["signatures"][0]["label"], "Dictionary >> at: key put: value",
        "{h}"
    );
    assert_eq!(h["activeParameter"], 1, "{h}");

    // Not in a keyword send: no signature (a unary send, a statement's start, a new line
    // after a complete statement).
    s.change(uri, 3, "d := Dictionary new\nd size\n");
    assert!(help(&mut s, 1, 6).is_null());
    assert!(help(&mut s, 1, 0).is_null());
    s.change(uri, 4, "d := Dictionary new\nd at: 1 put: 2\n");
    assert!(help(&mut s, 2, 0).is_null());
    // A selector no class has: nothing, and no error.
    s.change(uri, 5, "d := Dictionary new\nd zork: 1 blah: ");
    assert!(help(&mut s, 1, 16).is_null());
    s.shutdown();
}

/// Workspace symbols: the classes and methods of the open documents and of the library
/// whose name contains the query, with their locations.
#[test]
fn workspace_symbols_from_documents_and_the_library() {
    let mut s = Server::start();
    let init = s.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert_eq!(init["capabilities"]["workspaceSymbolProvider"], json!(true));
    s.notify("initialized", json!({}));
    let uri = "file:///tmp/bt-lsp-wsym/a.bt";
    s.open(uri, SHELF);
    let names = |r: &Value| -> Vec<(String, u64, String)> {
        r.as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap().to_string(),
                    x["kind"].as_u64().unwrap(),
                    x["containerName"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    // Case-insensitive: the document's class and its method.
    let r = s.request("workspace/symbol", json!({"query": "shel"}));
    assert_eq!(
        names(&r),
        vec![("Shelf".to_string(), 5, String::new())],
        "{r}"
    );
    assert_eq!(r[0]["location"]["uri"], uri, "{r}");
    assert_eq!(
        r[0]["location"]["range"]["start"],
        json!({"line": 0, "character": 17}),
        "{r}"
    );
    let r = s.request("workspace/symbol", json!({"query": "PLACE:"}));
    assert_eq!(
        names(&r),
        vec![("place:row:".to_string(), 6, "Shelf".to_string())],
        "{r}"
    );
    assert_eq!(
        r[0]["location"]["range"]["start"],
        json!({"line": 2, "character": 2}),
        "{r}"
    );
    // The library's: a class and its methods, in the library's sources.
    let r = s.request("workspace/symbol", json!({"query": "Dictionary"}));
    let dict = r
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "Dictionary" && x["kind"] == 5)
        .unwrap_or_else(|| panic!("{r}"));
    let target = dict["location"]["uri"].as_str().unwrap();
    assert!(target.ends_with("/Dictionary.bt"), "{dict}");
    let src = std::fs::read_to_string(target.strip_prefix("file://").unwrap()).unwrap();
    let line = dict["location"]["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(
        src.lines()
            .nth(line)
            .unwrap()
            .contains("subclass: Dictionary"),
        "{dict}"
    );
    let r = s.request("workspace/symbol", json!({"query": "ifAbsent"}));
    assert!(
        names(&r).contains(&("at:ifAbsent:".to_string(), 6, "Dictionary".to_string())),
        "{r}"
    );
    assert!(
        names(&r).iter().all(|(n, _, _)| n.contains("ifAbsent")),
        "{r}"
    );
    s.shutdown();
}
