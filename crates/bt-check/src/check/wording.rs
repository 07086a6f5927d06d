//! The wording of the checker's messages: "did you mean" suggestions by edit distance, the
//! article before a class name, and the bt spelling of names that habits from other
//! Smalltalks bring. Plain text functions: no tree, no types, no class table.

/// Levenshtein distance (for "did you mean").
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest candidate within edit distance 2 (1 for names of up to three characters).
pub(crate) fn did_you_mean<'c>(
    name: &str,
    candidates: impl Iterator<Item = &'c str>,
) -> Option<String> {
    let limit = if name.chars().count() <= 3 { 1 } else { 2 };
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name || c.len().abs_diff(name.len()) > limit {
            continue;
        }
        let d = edit_distance(name, c);
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_string())
}

/// "an Integer", "a String".
pub(crate) fn a_an(noun: &str) -> String {
    let vowel = noun
        .chars()
        .next()
        .is_some_and(|c| "AEIOUaeiou".contains(c));
    format!("{} {noun}", if vowel { "an" } else { "a" })
}

/// The bt spelling of a name another Smalltalk uses (`printNl`, `OrderedCollection` …), for
/// the hint on an unknown name.
pub(crate) fn habit(name: &str) -> Option<&'static str> {
    Some(match name {
        "millisecondClock" | "millisecondClockValue" | "millisecondsSinceStartup" => {
            "`Time monotonicMs` (for intervals) or `Time nowMs` (since the Unix epoch)"
        }
        "printNl" | "displayNl" => "`Transcript showCr: x printString`",
        "OrderedCollection" => {
            "`List` (`l := l add: x`: a List is a value; `add:` answers a new one)"
        }
        "Date" | "DateAndTime" => "`DateTime` (`DateTime now`)",
        "Smalltalk" => "`System` (`System arguments`, `System getEnv:`)",
        "IdentityDictionary" => "`Dictionary`",
        _ => return None,
    })
}
