//! Embedding benchmark: bt's `Engine` against Rhai and mlua (Lua 5.4), measured in the same
//! run. Four rows: creating an engine, evaluating a 10-line config, 100,000 host-function
//! calls from a script, 100,000 script-function calls from the host. Prints ns per
//! operation (best of 5 rounds) and bt's ratio to each peer. `--only create|config|host|script`
//! measures one row (all three engines), `profile ROW` runs bt's row alone (for callgrind).

use std::time::Instant;

const ROUNDS: usize = 5;
const CALLS: i64 = 100_000;

/// Best of `ROUNDS` of `f`, which does `n` operations; ns per operation.
fn best(n: u64, mut f: impl FnMut()) -> f64 {
    (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

const BT_CONFIG: &str = r#"base := 8000
name := "billing"
#{
  #name => name,
  #port => base + 80,
  #workers => 2 * 4,
  #tags => #("eu", "prod"),
  #db => #{#url => "postgres://localhost/" ++ name, #pool => 16},
  #verbose => false
}"#;

const RHAI_CONFIG: &str = r#"let base = 8000;
let name = "billing";
#{
  name: name,
  port: base + 80,
  workers: 2 * 4,
  tags: ["eu", "prod"],
  db: #{url: "postgres://localhost/" + name, pool: 16},
  verbose: false
}"#;

const LUA_CONFIG: &str = r#"local base = 8000
local name = "billing"
return {
  name = name,
  port = base + 80,
  workers = 2 * 4,
  tags = {"eu", "prod"},
  db = {url = "postgres://localhost/" .. name, pool = 16},
  verbose = false
}"#;

fn bt_rows(want: &dyn Fn(usize) -> bool) -> [f64; 4] {
    let create = if want(0) {
        best(10, || {
            for _ in 0..10 {
                drop(std::hint::black_box(bt::Engine::new()));
            }
        })
    } else {
        f64::NAN
    };
    let e = bt::Engine::builder().check(false).build();
    let config = if want(1) {
        best(200, || {
            for _ in 0..200 {
                std::hint::black_box(e.eval(BT_CONFIG).unwrap());
            }
        })
    } else {
        f64::NAN
    };
    e.register_fn("Host", "inc:", |n: i64| n + 1).unwrap();
    let host_calls = if want(2) {
        best(CALLS as u64, || {
            let v = e
                .eval(&format!(
                    "s := 0. 1 to: {CALLS} do: [:i | s := Host inc: s]. s"
                ))
                .unwrap();
            assert_eq!(v.as_i64(), Some(CALLS));
        })
    } else {
        f64::NAN
    };
    let f = e.compile_fn(&["x"], "x + 1").unwrap();
    let script_calls = if want(3) {
        best(CALLS as u64, || {
            let mut x = bt::Value::Int(0);
            for _ in 0..CALLS {
                x = e.run(&f, &[x]).unwrap();
            }
            assert_eq!(x.as_i64(), Some(CALLS));
        })
    } else {
        f64::NAN
    };
    [create, config, host_calls, script_calls]
}

fn rhai_rows(want: &dyn Fn(usize) -> bool) -> [f64; 4] {
    let create = if want(0) {
        best(100, || {
            for _ in 0..100 {
                drop(std::hint::black_box(rhai::Engine::new()));
            }
        })
    } else {
        f64::NAN
    };
    let mut e = rhai::Engine::new();
    let config = if want(1) {
        best(200, || {
            for _ in 0..200 {
                std::hint::black_box(e.eval::<rhai::Map>(RHAI_CONFIG).unwrap());
            }
        })
    } else {
        f64::NAN
    };
    e.register_fn("inc", |n: i64| n + 1);
    let host_calls = if want(2) {
        best(CALLS as u64, || {
            let v: i64 = e
                .eval(&format!(
                    "let s = 0; for i in 1..={CALLS} {{ s = inc(s); }} s"
                ))
                .unwrap();
            assert_eq!(v, CALLS);
        })
    } else {
        f64::NAN
    };
    let ast = e.compile("fn f(x) { x + 1 }").unwrap();
    let mut scope = rhai::Scope::new();
    let script_calls = if want(3) {
        best(CALLS as u64, || {
            let mut x: i64 = 0;
            for _ in 0..CALLS {
                x = e.call_fn(&mut scope, &ast, "f", (x,)).unwrap();
            }
            assert_eq!(x, CALLS);
        })
    } else {
        f64::NAN
    };
    [create, config, host_calls, script_calls]
}

fn lua_rows(want: &dyn Fn(usize) -> bool) -> [f64; 4] {
    let create = if want(0) {
        best(100, || {
            for _ in 0..100 {
                drop(std::hint::black_box(mlua::Lua::new()));
            }
        })
    } else {
        f64::NAN
    };
    let lua = mlua::Lua::new();
    let config = if want(1) {
        best(200, || {
            for _ in 0..200 {
                std::hint::black_box(lua.load(LUA_CONFIG).eval::<mlua::Table>().unwrap());
            }
        })
    } else {
        f64::NAN
    };
    let inc = lua.create_function(|_, n: i64| Ok(n + 1)).unwrap();
    lua.globals().set("inc", inc).unwrap();
    let host_calls = if want(2) {
        best(CALLS as u64, || {
            let v: i64 = lua
                .load(format!(
                    "local s = 0 for i = 1, {CALLS} do s = inc(s) end return s"
                ))
                .eval()
                .unwrap();
            assert_eq!(v, CALLS);
        })
    } else {
        f64::NAN
    };
    let f: mlua::Function = lua
        .load("return function(x) return x + 1 end")
        .eval()
        .unwrap();
    let script_calls = if want(3) {
        best(CALLS as u64, || {
            let mut x: i64 = 0;
            for _ in 0..CALLS {
                x = f.call(x).unwrap();
            }
            assert_eq!(x, CALLS);
        })
    } else {
        f64::NAN
    };
    [create, config, host_calls, script_calls]
}

/// `bt-embed-bench profile ROW` (create, config, host, script): runs only bt's row, long
/// enough for `perf record`.
fn profile(row: &str) {
    let e = bt::Engine::builder().check(false).build();
    e.register_fn("Host", "inc:", |n: i64| n + 1).unwrap();
    let f = e.compile_fn(&["x"], "x + 1").unwrap();
    for _ in 0..20 {
        match row {
            "create" => (0..10).for_each(|_| drop(std::hint::black_box(bt::Engine::new()))),
            "config" => (0..1000).for_each(|_| {
                std::hint::black_box(e.eval(BT_CONFIG).unwrap());
            }),
            "host" => {
                e.eval(&format!(
                    "s := 0. 1 to: {CALLS} do: [:i | s := Host inc: s]. s"
                ))
                .unwrap();
            }
            "script" => {
                let mut x = bt::Value::Int(0);
                for _ in 0..CALLS / 10 {
                    x = e.run(&f, &[x]).unwrap();
                }
            }
            other => panic!("unknown row {other}: create, config, host, script"),
        }
    }
}

/// `bt-embed-bench profile-peer ENGINE ROW` (rhai or lua; create, config, script): the
/// peer's row with the same loop counts as [`profile`], so instruction counts compare
/// (`valgrind --tool=callgrind` or `perf stat -e instructions` on both).
fn profile_peer(engine: &str, row: &str) {
    let rhai_e = rhai::Engine::new();
    let ast = rhai_e.compile("fn f(x) { x + 1 }").unwrap();
    let mut scope = rhai::Scope::new();
    let lua = mlua::Lua::new();
    let lf: mlua::Function = lua
        .load("return function(x) return x + 1 end")
        .eval()
        .unwrap();
    for _ in 0..20 {
        match (engine, row) {
            ("rhai", "create") => {
                (0..10).for_each(|_| drop(std::hint::black_box(rhai::Engine::new())))
            }
            ("lua", "create") => (0..10).for_each(|_| drop(std::hint::black_box(mlua::Lua::new()))),
            ("rhai", "config") => (0..1000).for_each(|_| {
                std::hint::black_box(rhai_e.eval::<rhai::Map>(RHAI_CONFIG).unwrap());
            }),
            ("lua", "config") => (0..1000).for_each(|_| {
                std::hint::black_box(lua.load(LUA_CONFIG).eval::<mlua::Table>().unwrap());
            }),
            ("rhai", "script") => {
                let mut x: i64 = 0;
                for _ in 0..CALLS / 10 {
                    x = rhai_e.call_fn(&mut scope, &ast, "f", (x,)).unwrap();
                }
            }
            ("lua", "script") => {
                let mut x: i64 = 0;
                for _ in 0..CALLS / 10 {
                    x = lf.call(x).unwrap();
                }
            }
            other => panic!("unknown peer row {other:?}: rhai|lua create|config|script"),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "profile" {
        return profile(&args[2]);
    }
    if args.len() == 4 && args[1] == "profile-peer" {
        return profile_peer(&args[2], &args[3]);
    }
    let rows = [
        "engine creation",
        "10-line config eval",
        "host fn call from script",
        "script fn call from host",
    ];
    // `--only ROW` (create, config, host, script): measure that row only (the others
    // print NaN), e.g. for same-run A/B of one row on a loaded machine.
    let only = match args.iter().position(|a| a == "--only") {
        Some(i) => match args.get(i + 1).map(String::as_str) {
            Some("create") => Some(0),
            Some("config") => Some(1),
            Some("host") => Some(2),
            Some("script") => Some(3),
            other => panic!("--only {other:?}: create, config, host or script"),
        },
        None => None,
    };
    let want = move |i: usize| only.is_none_or(|o| o == i);
    let b = bt_rows(&want);
    let r = rhai_rows(&want);
    let l = lua_rows(&want);
    println!("| ns/op | bt | rhai | lua 5.4 (mlua) | bt/rhai | bt/lua |");
    println!("|---|---|---|---|---|---|");
    for i in (0..4).filter(|i| want(*i)) {
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} |",
            rows[i],
            b[i],
            r[i],
            l[i],
            b[i] / r[i],
            b[i] / l[i]
        );
    }
}
