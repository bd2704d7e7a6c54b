//! Redis' glob patterns (`stringmatchlen` in Redis 7.0's `util.c`), as
//! KEYS and SCAN MATCH (case-sensitive) and CONFIG GET (without case)
//! match them, with Redis' protections against abusive patterns.

/// Whether `s` matches `pattern`, as Redis' `stringmatchlen`: `*` any
/// run of bytes, `?` any one byte, `[abc]` a set, `[^abc]` its complement,
/// `[a-z]` a range (bounds in either order, compared as C's signed
/// `char`), `\x` the byte `x` literally (also inside a set). An unclosed
/// `[` set ends at the end of the pattern. With `nocase`, ASCII letters
/// compare without case, except a set's escaped byte, as in Redis.
///
/// `matches(b"*", b"", _)` is false, as in Redis; KEYS and SCAN short-cut
/// a lone `*` before matching.
pub fn matches(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    let mut search = Search {
        nocase,
        give_up: false,
    };
    search.match_from(pattern, s, 0)
}

/// How deep `*`s may nest before a match attempt fails, as in Redis: a
/// pattern with more than this many `*`s matches nothing beyond them, and
/// the recursion is bounded.
const MAX_NESTING: usize = 1000;

/// One match attempt.
struct Search {
    /// ASCII letters compare without case.
    nocase: bool,
    /// Set once the rest of the pattern after a `*` matched nowhere in
    /// the rest of the string: no earlier `*` can help then, so the
    /// search stops (Redis' fix against exponential patterns; the result
    /// is unchanged).
    give_up: bool,
}

impl Search {
    /// Two bytes compare equal (without case under `nocase`).
    fn same(&self, a: u8, b: u8) -> bool {
        if self.nocase {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    }

    /// The match of `s` from pattern `p`, `nesting` `*`s deep.
    fn match_from(&mut self, mut p: &[u8], mut s: &[u8], nesting: usize) -> bool {
        if nesting > MAX_NESTING {
            return false;
        }
        while let (Some(&pc), Some(&sc)) = (p.first(), s.first()) {
            match pc {
                b'*' => {
                    while p.get(1) == Some(&b'*') {
                        p = &p[1..];
                    }
                    if p.len() == 1 {
                        return true;
                    }
                    while !s.is_empty() {
                        if self.match_from(&p[1..], s, nesting + 1) {
                            return true;
                        }
                        if self.give_up {
                            return false;
                        }
                        s = &s[1..];
                    }
                    self.give_up = true;
                    return false;
                }
                b'?' => {}
                b'[' => {
                    let (matched, rest) = self.match_set(&p[1..], sc);
                    if !matched {
                        return false;
                    }
                    // `rest` starts at the closing `]` (or is empty); the
                    // common step below moves past it.
                    p = rest;
                }
                b'\\' if p.len() >= 2 => {
                    p = &p[1..];
                    if !self.same(p[0], sc) {
                        return false;
                    }
                }
                _ => {
                    if !self.same(pc, sc) {
                        return false;
                    }
                }
            }
            s = &s[1..];
            p = p.get(1..).unwrap_or_default();
            if s.is_empty() {
                while p.first() == Some(&b'*') {
                    p = &p[1..];
                }
                break;
            }
        }
        p.is_empty() && s.is_empty()
    }

    /// Matches byte `c` against the set starting after a `[`. Returns
    /// whether it matched and the pattern from the set's closing `]` on
    /// (empty when the set is not closed).
    fn match_set<'p>(&self, mut p: &'p [u8], c: u8) -> (bool, &'p [u8]) {
        let negate = p.first() == Some(&b'^');
        if negate {
            p = &p[1..];
        }
        let mut matched = false;
        loop {
            match p {
                [] => break,
                [b'\\', escaped, ..] => {
                    matched |= *escaped == c;
                    p = &p[2..];
                }
                [b']', ..] => break,
                [lo, b'-', hi, ..] => {
                    // C compares plain (signed) chars here, ordered
                    // first, then lowered under `nocase`.
                    let (lo, hi) = (signed(*lo).min(signed(*hi)), signed(*lo).max(signed(*hi)));
                    let (lo, hi, c) = (self.lower(lo), self.lower(hi), self.lower(signed(c)));
                    matched |= lo <= c && c <= hi;
                    p = &p[3..];
                }
                [literal, ..] => {
                    matched |= self.same(*literal, c);
                    p = &p[1..];
                }
            }
        }
        (matched != negate, p)
    }

    /// C's `tolower` under `nocase` (ASCII letters only).
    fn lower(&self, c: i8) -> i8 {
        if self.nocase {
            (c as u8).to_ascii_lowercase() as i8
        } else {
            c
        }
    }
}

/// A byte as C's signed `char`.
fn signed(b: u8) -> i8 {
    b as i8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob_match(p: &[u8], s: &[u8]) -> bool {
        matches(p, s, false)
    }

    #[test]
    fn glob_matches_like_stringmatchlen() {
        let yes: &[(&[u8], &[u8])] = &[
            (b"*", b"anything"),
            (b"", b""),
            (b"h?llo", b"hello"),
            (b"h*llo", b"hllo"),
            (b"h*llo", b"heeeello"),
            (b"h[ae]llo", b"hallo"),
            (b"h[^e]llo", b"hallo"),
            (b"h[a-b]llo", b"hbllo"),
            (b"h[b-a]llo", b"hallo"),
            (b"h\\*llo", b"h*llo"),
            (b"h[\\]]llo", b"h]llo"),
            (b"a**b", b"ab"),
            (b"a*", b"a"),
            (b"*a*b*", b"xxaxxbxx"),
            (b"[abc", b"a"),
            (b"ab\\", b"ab\\"),
            // `[a-]` is the range from ']' to 'a'.
            (b"[a-]", b"^"),
            (b"\x00*", b"\x00\xff"),
            (b"[\\", b"\\"),
            (b"[^", b"x"),
            (b"[^]", b"]"),
        ];
        for (p, s) in yes {
            assert!(glob_match(p, s), "{p:?} should match {s:?}");
        }
        let no: &[(&[u8], &[u8])] = &[
            (b"*", b""),
            (b"", b"a"),
            (b"**", b""),
            (b"?", b""),
            (b"h?llo", b"hllo"),
            (b"h[ae]llo", b"hillo"),
            (b"h[^e]llo", b"hello"),
            (b"h[a-b]llo", b"hcllo"),
            (b"h\\*llo", b"hello"),
            (b"a*b", b"abc"),
            (b"abc", b"ab"),
            (b"ab", b"abc"),
            (b"[abc", b"d"),
            (b"[a-]", b"-"),
            (b"[", b"["),
            (b"[]", b"]"),
            (b"[]a]", b"a"),
            // Bytes above 0x7f are negative chars: 'b' is not in [a-\xff].
            (b"[a-\xff]", b"b"),
        ];
        for (p, s) in no {
            assert!(!glob_match(p, s), "{p:?} should not match {s:?}");
        }
        // Checked on Redis 7.0: `[a-\xff]` is the range -1..=97 of signed chars.
        for s in [&b"A"[..], b"-", b"^", b"\xff"] {
            assert!(glob_match(b"[a-\xff]", s), "{s:?}");
        }
        assert!(!glob_match(b"[a-\xff]", b"\x80"));
    }

    #[test]
    fn glob_gives_up_quickly_on_hopeless_patterns() {
        let pattern = b"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
        let s = [b'a'; 200];
        assert!(!glob_match(pattern, &s));
    }

    #[test]
    fn glob_gives_up_beyond_redis_nesting_limit() {
        // Redis' keyspace test: 50,000 `*?` against 50,000 bytes matches
        // nothing in Redis 7.0 (more than 1000 nested `*`s), and returns
        // at once without exhausting the stack.
        let pattern = b"*?".repeat(50_000);
        assert!(!glob_match(&pattern, &vec![b'a'; 50_000]));
        // 1000 nested stars still match; the 1001st does not.
        let s = [b'a'; 2000];
        assert!(glob_match(&b"*?".repeat(1000), &s));
        assert!(!glob_match(&b"*?".repeat(1002), &s));
    }

    #[test]
    fn nocase_folds_ascii_letters_as_config_get_does() {
        let yes: &[(&[u8], &[u8])] = &[
            (b"MAXMEMORY*", b"maxmemory-policy"),
            (b"proto-MAX-*", b"proto-max-bulk-len"),
            (b"[A-C]x", b"bx"),
            (b"[a-c]x", b"BX"),
            (b"[XYZ]", b"y"),
            (b"\\A", b"a"),
        ];
        for (p, s) in yes {
            assert!(matches(p, s, true), "{p:?} should match {s:?}");
            assert!(
                !matches(p, s, false),
                "{p:?} matches {s:?} only without case"
            );
        }
        // A set's escaped byte keeps its case, as in Redis.
        assert!(!matches(b"[\\A]", b"a", true));
        assert!(!matches(b"\xc3", b"\xe3", true));
    }

    #[test]
    fn nocase_patterns_give_up_quickly_too() {
        let pattern = b"A*A*A*A*A*A*A*A*A*A*A*A*A*A*A*A*A*A*A*A*b";
        assert!(!matches(pattern, &[b'a'; 200], true));
        assert!(!matches(&b"*?".repeat(50_000), &vec![b'a'; 50_000], true));
    }
}
