//! Every relative link of the README and the book (docs/src, an mdBook)
//! resolves: the file exists, and an `#anchor` names a heading (or an
//! `id="…"`) of the page it points to, slugged as mdBook and GitHub slug
//! them. `{{#include …}}` files exist, and the links in an included file
//! resolve from the page that includes it. Every page of docs/src is in
//! SUMMARY.md and every page SUMMARY.md lists exists. No network: links
//! with a scheme (`https:`) are not followed.

use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `path` without `.` and `..` components (the file need not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The text of a Markdown file with every `{{#include path}}` replaced by
/// the included file (paths relative to the including file).
fn expanded(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("{{#include ") {
        out.push_str(&rest[..at]);
        let end = rest[at..]
            .find("}}")
            .unwrap_or_else(|| panic!("{}: unclosed {{{{#include", path.display()));
        let target = rest[at + "{{#include ".len()..at + end].trim();
        // `file.rs:2:10` and `file.rs:anchor` select a part of the file.
        let file = target.split(':').next().unwrap_or(target);
        let included = normalize(&path.parent().unwrap().join(file));
        assert!(
            included.is_file(),
            "{}: {{{{#include {target}}}}}: no file {}",
            path.display(),
            included.display()
        );
        if included.extension().is_some_and(|e| e == "md") {
            out.push_str(&expanded(&included));
        } else {
            out.push_str(&std::fs::read_to_string(&included).unwrap());
        }
        rest = &rest[at + end + 2..];
    }
    out.push_str(rest);
    out
}

/// The lines of `text` outside fenced code blocks, with inline code spans
/// blanked.
fn prose(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        let mut in_code = false;
        for ch in line.chars() {
            if ch == '`' {
                in_code = !in_code;
            } else if !in_code {
                kept.push(ch);
            }
        }
        out.push(kept);
    }
    out
}

/// The link targets of `text`: `[text](target)` and `![alt](target)`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let end = tail.find(')').unwrap_or(tail.len());
            let target = tail[..end].split_whitespace().next().unwrap_or("");
            out.push(target.trim_matches(['<', '>']).to_string());
            rest = &tail[end..];
        }
    }
    out
}

/// A heading's anchor as mdBook and GitHub make it: lower case, letters,
/// digits, `-` and `_` kept, spaces made `-`, everything else dropped.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    // Link text only: `[x](y)` reads as `x`.
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_lowercase().next()?),
            _ => None,
        })
        .collect()
}

/// Every anchor a page defines: its headings (a repeated one gets `-1`,
/// `-2`, …) and explicit `id="…"`s.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(heading) = line.strip_prefix('#') {
            let heading = heading.trim_start_matches('#');
            if heading.starts_with(' ') {
                let base = slug(&heading.replace('`', ""));
                let n = seen.entry(base.clone()).or_insert(0);
                out.insert(if *n == 0 {
                    base.clone()
                } else {
                    format!("{base}-{n}")
                });
                *n += 1;
            }
        }
        let mut rest = line;
        while let Some(at) = rest.find("id=\"") {
            let tail = &rest[at + 4..];
            let end = tail.find('"').unwrap_or(tail.len());
            out.insert(tail[..end].to_string());
            rest = &tail[end..];
        }
    }
    out
}

/// Every broken link of the Markdown file `page`.
fn broken_links(page: &Path) -> Vec<String> {
    let text = expanded(page);
    let dir = page.parent().unwrap();
    let mut broken = Vec::new();
    for link in links(&text) {
        if link.is_empty() {
            broken.push("an empty link".to_string());
            continue;
        }
        if link.contains("://") || link.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match link.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (link.as_str(), None),
        };
        let target = if path.is_empty() {
            page.to_path_buf()
        } else {
            normalize(&dir.join(path))
        };
        if !target.exists() {
            broken.push(format!("{link}: no {}", target.display()));
            continue;
        }
        if let Some(anchor) = anchor {
            let is_md = target.extension().is_some_and(|e| e == "md");
            let found = is_md && anchors(&expanded(&target)).contains(anchor);
            if !found {
                broken.push(format!(
                    "{link}: no heading #{anchor} in {}",
                    target.display()
                ));
            }
        }
    }
    broken
}

fn book_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("docs/src"), &mut out);
    out.sort();
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut pages = vec![root().join("README.md")];
    pages.extend(book_pages());
    assert!(pages.len() > 10, "the book has {} pages", pages.len() - 1);
    let mut broken = Vec::new();
    for page in &pages {
        for b in broken_links(page) {
            broken.push(format!(
                "{}: {b}",
                page.strip_prefix(root()).unwrap().display()
            ));
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn summary_lists_every_page_and_only_pages_that_exist() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = links(&summary)
        .iter()
        .map(|l| normalize(&src.join(l)))
        .collect();
    for page in &listed {
        assert!(
            page.is_file(),
            "SUMMARY.md lists {}, which does not exist",
            page.display()
        );
    }
    for page in book_pages() {
        if page.file_name().unwrap() != "SUMMARY.md" {
            assert!(
                listed.contains(&page),
                "SUMMARY.md does not list {}",
                page.display()
            );
        }
    }
}

#[test]
fn the_checker_finds_what_is_broken() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("b.md"),
        "# Two words\n## `code` here\n## Two words\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.md"),
        "[ok](b.md#two-words) [ok](b.md#two-words-1) [ok](b.md#code-here) [bad](b.md#nothing) \
         [bad](c.md) `[not a link](c.md)` [ok](#self) <a id=\"self\"></a>\n```\n[no](d.md)\n```\n",
    )
    .unwrap();
    let broken = broken_links(&dir.path().join("a.md"));
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].starts_with("b.md#nothing"));
    assert!(broken[1].starts_with("c.md"));
    assert_eq!(slug("Redis' own test suite"), "redis-own-test-suite");
    assert_eq!(slug("[Link](x.md) and more"), "link-and-more");
}
