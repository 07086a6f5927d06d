//! The `Erlang` class against a real `erl`: native functions whose answers must be Erlang's
//! exactly — `phash2` of pids, ports and references, `term_to_binary`'s `[compressed]`
//! bytes at several levels, `unicode`'s UTF-16 and UTF-32 conversions (with their `{error, …}` and
//! `{incomplete, …}` shapes) and `~p`'s layout of binaries that are not printable — are
//! evaluated by `bt run` and by `erl -noshell -eval`, and each answer is compared as the
//! text of `~w` (a `~p` layout as the `~w` of its UTF-8 binary). No distribution: both sides
//! run alone. The goldens tests/golden/eval/erlang/unicode_utf16.btscript and pretty.btscript
//! pin the same answers where `erl` is not installed. `module_info(exports)` of the native
//! modules is checked against OTP's exports.

/// (how to print, the Erlang expression, the bt expression): `w` prints the answer with
/// `~w`, `p` the `~w` of its `~p` layout.
const CASES: &[(&str, &str, &str)] = &[
    ("w", "erlang:phash2(binary_to_term(list_to_binary([131,88,100,0,7,102,111,111,64,98,97,114,0,0,0,5,0,0,0,0,0,0,0,1])))", "Erlang erlang phash2: (Erlang erlang binary_to_term: (Binary withAll: #(131, 88, 100, 0, 7, 102, 111, 111, 64, 98, 97, 114, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1)))"),
    ("w", "erlang:phash2(binary_to_term(list_to_binary([131,90,0,3,100,0,7,102,111,111,64,98,97,114,0,0,0,1,0,0,0,7,0,0,0,2,0,0,0,3])))", "Erlang erlang phash2: (Erlang erlang binary_to_term: (Binary withAll: #(131, 90, 0, 3, 100, 0, 7, 102, 111, 111, 64, 98, 97, 114, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0, 3)))"),
    ("w", "erlang:phash2(binary_to_term(list_to_binary([131,89,100,0,7,102,111,111,64,98,97,114,0,0,0,5,0,0,0,1])))", "Erlang erlang phash2: (Erlang erlang binary_to_term: (Binary withAll: #(131, 89, 100, 0, 7, 102, 111, 111, 64, 98, 97, 114, 0, 0, 0, 5, 0, 0, 0, 1)))"),
    ("w", "erlang:phash2(binary_to_term(list_to_binary([131,104,2,88,100,0,7,102,111,111,64,98,97,114,0,0,0,5,0,0,0,0,0,0,0,1,97,1])))", "Erlang erlang phash2: (Erlang erlang binary_to_term: (Binary withAll: #(131, 104, 2, 88, 100, 0, 7, 102, 111, 111, 64, 98, 97, 114, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 97, 1)))"),
    ("w", "erlang:phash2(binary_to_term(list_to_binary([131,88,100,0,7,102,111,111,64,98,97,114,0,0,0,5,0,0,0,0,0,0,0,1])), 1000)", "Erlang erlang phash2: (Erlang erlang binary_to_term: (Binary withAll: #(131, 88, 100, 0, 7, 102, 111, 111, 64, 98, 97, 114, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1))) with: 1000"),
    ("w", "unicode:characters_to_binary(\"aé€😀\", unicode, utf16)", "Erlang unicode characters_to_binary: \"aé€😀\" with: #unicode with: #utf16"),
    ("w", "unicode:characters_to_binary(\"aé€😀\", unicode, {utf16,little})", "Erlang unicode characters_to_binary: \"aé€😀\" with: #unicode with: (Tuple withAll: #(#utf16, #little))"),
    ("w", "unicode:characters_to_binary(\"aé€😀\", unicode, utf32)", "Erlang unicode characters_to_binary: \"aé€😀\" with: #unicode with: #utf32"),
    ("w", "unicode:characters_to_binary(\"aé€😀\", unicode, {utf32,little})", "Erlang unicode characters_to_binary: \"aé€😀\" with: #unicode with: (Tuple withAll: #(#utf32, #little))"),
    ("w", "unicode:characters_to_list(<<0,97,216,61,222,0>>, utf16)", "Erlang unicode characters_to_list: (Binary withAll: #(0, 97, 216, 61, 222, 0)) with: #utf16"),
    ("w", "unicode:characters_to_list(<<0,97,216>>, utf16)", "Erlang unicode characters_to_list: (Binary withAll: #(0, 97, 216)) with: #utf16"),
    ("w", "unicode:characters_to_list(<<0,97,216,61>>, utf16)", "Erlang unicode characters_to_list: (Binary withAll: #(0, 97, 216, 61)) with: #utf16"),
    ("w", "unicode:characters_to_list(<<0,97,220,0,0,98>>, utf16)", "Erlang unicode characters_to_list: (Binary withAll: #(0, 97, 220, 0, 0, 98)) with: #utf16"),
    ("w", "unicode:characters_to_list(<<0,97,216,61,0,98>>, utf16)", "Erlang unicode characters_to_list: (Binary withAll: #(0, 97, 216, 61, 0, 98)) with: #utf16"),
    ("w", "unicode:characters_to_list([<<0,97>>, 98, <<0>>, <<99>>], utf16)", "Erlang unicode characters_to_list: #((Binary withAll: #(0, 97)), 98, (Binary withAll: #(0)), (Binary withAll: #(99))) with: #utf16"),
    ("w", "unicode:characters_to_list([<<0,97,0>>, <<99>>], utf16)", "Erlang unicode characters_to_list: #((Binary withAll: #(0, 97, 0)), (Binary withAll: #(99))) with: #utf16"),
    ("w", "unicode:characters_to_list([<<0,97,0>>, 99], utf16)", "Erlang unicode characters_to_list: #((Binary withAll: #(0, 97, 0)), 99) with: #utf16"),
    ("w", "unicode:characters_to_binary(<<0,0,0,97,0,17,0,0>>, utf32, utf8)", "Erlang unicode characters_to_binary: (Binary withAll: #(0, 0, 0, 97, 0, 17, 0, 0)) with: #utf32 with: #utf8"),
    ("w", "unicode:characters_to_binary(<<0,0,0,97,0,0,216,0>>, utf32, utf8)", "Erlang unicode characters_to_binary: (Binary withAll: #(0, 0, 0, 97, 0, 0, 216, 0)) with: #utf32 with: #utf8"),
    ("w", "unicode:characters_to_binary(<<0,0,0,97,0,0,0>>, utf32, utf8)", "Erlang unicode characters_to_binary: (Binary withAll: #(0, 0, 0, 97, 0, 0, 0)) with: #utf32 with: #utf8"),
    ("w", "unicode:characters_to_binary([97, 1114112], unicode, utf16)", "Erlang unicode characters_to_binary: #(97, 1114112) with: #unicode with: #utf16"),
    ("w", "unicode:characters_to_binary(<<97,255>>, unicode, utf16)", "Erlang unicode characters_to_binary: (Binary withAll: #(97, 255)) with: #unicode with: #utf16"),
    ("w", "unicode:characters_to_binary(<<97,255>>, latin1, {utf32,little})", "Erlang unicode characters_to_binary: (Binary withAll: #(97, 255)) with: #latin1 with: (Tuple withAll: #(#utf32, #little))"),
    ("w", "unicode:characters_to_binary(<<0,97,216>>, utf16, latin1)", "Erlang unicode characters_to_binary: (Binary withAll: #(0, 97, 216)) with: #utf16 with: #latin1"),
    ("w", "unicode:characters_to_binary(<<0,97,1,0>>, utf16, latin1)", "Erlang unicode characters_to_binary: (Binary withAll: #(0, 97, 1, 0)) with: #utf16 with: #latin1"),
    ("w", "unicode:characters_to_list(<<97,0,61,216,0,222>>, {utf16,little})", "Erlang unicode characters_to_list: (Binary withAll: #(97, 0, 61, 216, 0, 222)) with: (Tuple withAll: #(#utf16, #little))"),
    ("w", "unicode:characters_to_list([<<0,0,0,97>>,[<<0,0>>,<<0,98>>]], utf32)", "Erlang unicode characters_to_list: #((Binary withAll: #(0, 0, 0, 97)), #((Binary withAll: #(0, 0)), (Binary withAll: #(0, 98)))) with: #utf32"),
    ("w", "unicode:characters_to_binary([<<\"ab\">>, [300, <<\"c\">>]], latin1, utf16)", "Erlang unicode characters_to_binary: #(\"ab\", #(300, \"c\")) with: #latin1 with: #utf16"),
    ("w", "unicode:characters_to_binary([<<\"ab\">>, [300, <<\"c\">>]], unicode, utf16)", "Erlang unicode characters_to_binary: #(\"ab\", #(300, \"c\")) with: #unicode with: #utf16"),
    ("w", "unicode:characters_to_binary(\"x\", utf16, utf32)", "Erlang unicode characters_to_binary: #(120) with: #utf16 with: #utf32"),
    ("w", "unicode:characters_to_binary(<<0,104,0,105>>, utf16)", "Erlang unicode characters_to_binary: (Binary withAll: #(0, 104, 0, 105)) with: #utf16"),
    ("w", "term_to_binary(lists:duplicate(30, a), [compressed])", "Erlang erlang term_to_binary: (Erlang lists duplicate: 30 with: #a) with: #(#compressed)"),
    ("w", "term_to_binary(list_to_binary(lists:duplicate(50, \"hello world \")), [{compressed, 1}])", "Erlang erlang term_to_binary: (Erlang erlang list_to_binary: (Erlang lists duplicate: 50 with: \"hello world \")) with: #((Erlang erlang list_to_tuple: #(#compressed, 1)))"),
    ("w", "term_to_binary(lists:seq(1, 500), [compressed])", "Erlang erlang term_to_binary: (Erlang lists seq: 1 with: 500) with: #(#compressed)"),
    ("w", "term_to_binary([{I, integer_to_binary(I * 7)} || I <- lists:seq(1, 60)], [{compressed, 9}])", "Erlang erlang term_to_binary: ((1 to: 60) asList collect: [:i | Erlang erlang list_to_tuple: (Array with: i with: (Erlang erlang integer_to_binary: i * 7))]) with: #((Erlang erlang list_to_tuple: #(#compressed, 9)))"),
    ("w", "term_to_binary({lists:seq(1, 300), <<\"abcabcabcabcabcabcabc\">>, 3.25}, [{compressed, 3}])", "Erlang erlang term_to_binary: (Tuple withAll: (Array with: (Erlang lists seq: 1 with: 300) with: \"abcabcabcabcabcabcabc\" with: 3.25)) with: #((Erlang erlang list_to_tuple: #(#compressed, 3)))"),
    ("p", "list_to_binary(lists:seq(1,60))", "Erlang erlang list_to_binary: (1 to: 60) asList"),
    ("p", "[list_to_binary(lists:seq(1,60)), list_to_binary(lists:seq(1,60))]", "Array with: (Erlang erlang list_to_binary: (1 to: 60) asList) with: (Erlang erlang list_to_binary: (1 to: 60) asList)"),
    ("p", "lists:duplicate(30, <<1,2>>)", "(1 to: 30) asList collect: [:i | Binary withAll: #(1, 2)]"),
    ("p", "{tag, lists:duplicate(30, <<1,2>>)}", "Tuple withAll: (Array with: #tag with: ((1 to: 30) asList collect: [:i | Binary withAll: #(1, 2)]))"),
    ("p", "[a, list_to_binary(lists:seq(1,30)), b]", "Array with: #a with: (Erlang erlang list_to_binary: (1 to: 30) asList) with: #b"),
    ("p", "#{k => list_to_binary(lists:seq(100,160))}", "#{#k => (Binary withAll: (100 to: 160) asList)}"),
    ("p", "[[[list_to_binary(lists:seq(1,40))]]]", "Array with: (Array with: (Array with: (Binary withAll: (1 to: 40) asList)))"),
    ("p", "{aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, <<1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25>>}", "Tuple withAll: (Array with: #aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa with: (Binary withAll: (1 to: 25) asList))"),
];

#[test]
fn unicode_and_pretty_binaries_agree_with_erl() {
    if !crate::tools::have_erl() {
        return;
    }
    let mut bt = String::from(
        "w := [:x | Erlang unicode characters_to_binary: (Erlang io_lib format: \"~w\" with: (Array with: x))]\n\
         p := [:x | Erlang unicode characters_to_binary: (Erlang io_lib format: \"~p\" with: (Array with: x))]\n",
    );
    let mut erl = String::from(
        "W = fun(X) -> io:format(\"~w~n\", [X]) end, \
         P = fun(X) -> unicode:characters_to_binary(io_lib:format(\"~p\", [X])) end, ",
    );
    for (how, e, b) in CASES {
        if *how == "p" {
            bt.push_str(&format!("Transcript showCr: (w value: (p value: ({b})))\n"));
            erl.push_str(&format!("W(P({e})), "));
        } else {
            bt.push_str(&format!("Transcript showCr: (w value: ({b}))\n"));
            erl.push_str(&format!("W({e}), "));
        }
    }
    erl.push_str("halt().");
    let (ours, theirs) = run_both("terms", &bt, &erl);
    let (ours, theirs): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    assert_eq!(ours.len(), CASES.len(), "bt answered {ours:?}");
    assert_eq!(theirs.len(), CASES.len(), "erl answered {theirs:?}");
    for ((o, t), (_, e, _)) in ours.iter().zip(&theirs).zip(CASES) {
        assert_eq!(o, t, "{e}");
    }
}

/// The modules bt implements natively.
const MODULES: &[&str] = &[
    "base64",
    "binary",
    "calendar",
    "crypto",
    "erlang",
    "file",
    "io",
    "io_lib",
    "lists",
    "maps",
    "math",
    "os",
    "proplists",
    "string",
    "timer",
    "unicode",
];

/// Every function `M:module_info(exports)` lists in bt is an export of the same module, with
/// the same arity, in OTP.
#[test]
fn module_info_exports_are_erlang_exports() {
    if !crate::tools::have_erl() {
        return;
    }
    let list = MODULES
        .iter()
        .map(|m| format!("#{m}"))
        .collect::<Vec<_>>()
        .join(", ");
    let bt = format!(
        "#({list}) do: [:m | ((Erlang module: m) module_info: #exports) do: [:fa | \
         Transcript showCr: \"{{m}} {{fa at: 1}} {{fa at: 2}}\"]]\n"
    );
    let erl = format!(
        "[[io:format(\"~s ~s ~p~n\", [M, F, A]) || {{F, A}} <- M:module_info(exports)] || M <- [{}]], halt().",
        MODULES.join(", ")
    );
    let (ours, theirs) = run_both("exports", &bt, &erl);
    let theirs: std::collections::HashSet<&str> = theirs.lines().collect();
    assert!(ours.lines().count() > 300, "bt listed {ours}");
    let extra: Vec<&str> = ours.lines().filter(|l| !theirs.contains(l)).collect();
    assert!(extra.is_empty(), "not exported by OTP: {extra:?}");
}

/// Runs the bt program `bt` and `erl -noshell -eval ERL` (in a scratch directory, removed
/// after); answers their standard outputs.
fn run_both(tag: &str, bt: &str, erl: &str) -> (String, String) {
    let dir = std::env::temp_dir().join(format!("bt-erl-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("cases.bt");
    std::fs::write(&script, bt).unwrap();
    let ours = std::process::Command::new(crate::dist_common::BT)
        .args(["run", script.to_str().unwrap()])
        .output()
        .unwrap();
    let theirs = std::process::Command::new("erl")
        .args(["-noshell", "-eval", erl])
        .env("HOME", &dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        String::from_utf8_lossy(&ours.stdout).into_owned(),
        String::from_utf8_lossy(&theirs.stdout).into_owned(),
    )
}
