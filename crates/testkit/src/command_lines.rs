//! Random command lines for the engine's property tests. A line is a
//! template of words separated by spaces; each word is drawn from the
//! alphabet its name is given in the test's [`Alphabets`] (`key`, `elem`,
//! …), or is one of `a|b|c`'s words, or is kept as it is.

use proptest::prelude::*;

/// A test's alphabets: a word's name and the words it is drawn from.
pub type Alphabets = &'static [(&'static str, &'static [&'static str])];

/// One word of a template (see the [module](self)).
pub fn word(spec: &'static str, alphabets: Alphabets) -> BoxedStrategy<String> {
    match alphabets.iter().find(|(name, _)| *name == spec) {
        Some((_, words)) => proptest::sample::select(*words)
            .prop_map(str::to_string)
            .boxed(),
        None => proptest::sample::select(spec.split('|').map(str::to_string).collect::<Vec<_>>())
            .boxed(),
    }
}

/// One command line of `template`, drawn word by word.
pub fn line(template: &'static str, alphabets: Alphabets) -> BoxedStrategy<Vec<String>> {
    template
        .split(' ')
        .map(|spec| word(spec, alphabets))
        .collect::<Vec<_>>()
        .boxed()
}

/// The number of cases a property test runs: `REDCODEC_PROPTEST_CASES`,
/// else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("REDCODEC_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
