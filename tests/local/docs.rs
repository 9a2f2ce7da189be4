//! The documentation is checked like code: every relative link (file and
//! `#anchor`) in README.md, docs/*.md, python/README.md and CHANGELOG.md
//! resolves; every page with a Rust block is one `cargo test --doc`
//! compiles (the `docs` module at the end of src/lib.rs), and names the
//! language of each of its blocks; and every Python block parses (with
//! `.venv`'s Python, made by `bash scripts/python/setup_venv.sh`, which the
//! test command runs).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A fenced code block.
struct Block {
    /// The first word of its info string (`rust` for ```` ```rust no_run ````).
    language: String,
    /// Its first line's number (1-based), the fence's.
    line: usize,
    text: String,
}

/// A markdown file split into its fenced blocks and the rest (prose, with
/// every line of a block blanked, so that line numbers stay).
struct Page {
    /// Code spans blanked too (for links).
    prose: String,
    /// Code spans kept (for headings, whose anchors keep their text).
    headings_text: String,
    blocks: Vec<Block>,
}

fn parse(markdown: &str) -> Page {
    let mut prose = String::new();
    let mut blocks = Vec::new();
    let mut open: Option<(String, Block)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence: String = trimmed
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect();
        let is_fence = indent <= 3
            && fence.len() >= 3
            && fence.chars().all(|c| c == fence.chars().next().unwrap());
        match &mut open {
            None if is_fence => {
                let language = trimmed[fence.len()..]
                    .split([' ', ',', '\t'])
                    .next()
                    .unwrap_or("")
                    .to_lowercase();
                open = Some((
                    fence,
                    Block {
                        language,
                        line: i + 1,
                        text: String::new(),
                    },
                ));
            }
            Some((opener, _))
                if is_fence
                    && fence.starts_with(opener.as_str())
                    && trimmed[fence.len()..].trim().is_empty() =>
            {
                blocks.push(open.take().unwrap().1);
            }
            Some((_, block)) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            None => {
                prose.push_str(line);
            }
        }
        prose.push('\n');
    }
    if let Some((_, block)) = open {
        // An unterminated block runs to the end of the file, as on GitHub.
        blocks.push(block);
    }
    Page {
        prose: blank_code_spans(&prose),
        headings_text: prose,
        blocks,
    }
}

/// `text` with the inside of each code span (`` `...` ``, any number of
/// backticks, across lines too) replaced by spaces, so that a `](` in code
/// is not a link.
fn blank_code_spans(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        // The next run of exactly `run` backticks closes the span.
        let mut j = i + run;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let other = bytes[j..].iter().take_while(|&&b| b == b'`').count();
                if other == run {
                    close = Some(j);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                for b in &mut out[i + run..j] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = j + run;
            }
            None => i += run,
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced, by ASCII")
}

/// GitHub's anchor for a heading's text: lowercase, punctuation dropped
/// (letters, digits, spaces, `-` and `_` kept), each space a `-`. Link
/// markup keeps its text; code spans keep their content.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](target)` -> `text`.
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|e| close + e) else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings, with GitHub's `-1`, `-2`, ... for
/// repeated ones.
fn anchors(page: &Page) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in page.headings_text.lines() {
        let trimmed = line.trim_start();
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if line.len() - trimmed.len() > 3
            || !(1..=6).contains(&hashes)
            || !(trimmed[hashes..].starts_with(' ') || trimmed.len() == hashes)
        {
            continue;
        }
        let text = trimmed[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(text);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The link targets in a page's prose, with their line numbers: inline
/// links `[text](target "title")` and definitions `[label]: target`.
fn links(page: &Page) -> Vec<(usize, String)> {
    let prose = &page.prose;
    let line_of = |offset: usize| prose[..offset].matches('\n').count() + 1;
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = prose[from..].find("](").map(|a| from + a) {
        let start = at + 2;
        // The target ends at the `)` that balances the `(`.
        let mut depth = 0usize;
        let mut end = None;
        for (k, c) in prose[start..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = Some(start + k);
                    break;
                }
                ')' => depth -= 1,
                '\n' => break,
                _ => {}
            }
        }
        if let Some(end) = end {
            let target = prose[start..end].trim();
            let target = target.split_whitespace().next().unwrap_or("");
            let target = target.trim_start_matches('<').trim_end_matches('>');
            found.push((line_of(at), target.to_string()));
            from = end;
        } else {
            from = start;
        }
    }
    for (i, line) in prose.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix('[')
            && let Some((_, target)) = rest.split_once("]:")
            && !rest.starts_with('^')
        {
            let target = target.split_whitespace().next().unwrap_or("");
            found.push((i + 1, target.to_string()));
        }
    }
    found
}

/// Whether `target` points off this repository (a URL, `mailto:`).
fn is_external(target: &str) -> bool {
    target.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// Every relative link of the markdown file `file` (under `root`) that does
/// not resolve, as `file:line: target: why`.
fn broken_links(root: &Path, file: &Path) -> Vec<String> {
    let markdown = std::fs::read_to_string(root.join(file))
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let page = parse(&markdown);
    let mut broken = Vec::new();
    for (line, target) in links(&page) {
        if target.is_empty() || is_external(&target) {
            continue;
        }
        let mut why = |reason: String| {
            broken.push(format!("{}:{line}: {target}: {reason}", file.display()));
        };
        let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
        let linked = if path.is_empty() {
            file.to_path_buf()
        } else if let Some(from_root) = path.strip_prefix('/') {
            PathBuf::from(from_root)
        } else {
            file.parent().unwrap_or(Path::new("")).join(path)
        };
        let on_disk = root.join(&linked);
        if !on_disk.exists() {
            why(format!("{} does not exist", linked.display()));
            continue;
        }
        if anchor.is_empty() || on_disk.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let target_page = parse(&std::fs::read_to_string(&on_disk).unwrap());
        let anchors = anchors(&target_page);
        if !anchors.contains(anchor) {
            why(format!(
                "{} has no heading with anchor #{anchor} (its anchors: {})",
                linked.display(),
                anchors.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    broken
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, docs/*.md, python/README.md and CHANGELOG.md, relative to
/// the root.
fn checked_files() -> Vec<PathBuf> {
    let root = root();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(&root).unwrap().to_path_buf())
        .collect();
    files.sort();
    for file in ["README.md", "python/README.md", "CHANGELOG.md"] {
        files.insert(0, PathBuf::from(file));
    }
    files
}

#[test]
fn every_relative_link_resolves() {
    let root = root();
    let broken: Vec<String> = checked_files()
        .iter()
        .flat_map(|file| broken_links(&root, file))
        .collect();
    assert!(
        broken.is_empty(),
        "links that do not resolve:\n{}",
        broken.join("\n")
    );
}

#[test]
fn rust_pages_are_doc_tested() {
    let root = root();
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let mut problems = Vec::new();
    for file in checked_files() {
        let page = parse(&std::fs::read_to_string(root.join(&file)).unwrap());
        let included = format!(
            "include_str!(\"../{}\")",
            file.to_string_lossy().replace('\\', "/")
        );
        let doc_tested = lib.contains(&included);
        if page.blocks.iter().any(|b| b.language == "rust") && !doc_tested {
            problems.push(format!(
                "{} has Rust blocks but src/lib.rs's `docs` module has no {included}: add it, so that `cargo test --doc` compiles them",
                file.display()
            ));
        }
        // rustdoc compiles a block with no language as Rust: say so here,
        // in words, rather than as a compile error.
        for block in page.blocks.iter().filter(|b| b.language.is_empty()) {
            if doc_tested {
                problems.push(format!(
                    "{}:{}: a fenced block without a language in a doc-tested page is compiled as Rust: name it (```text, ```sh, ```rust, ...)",
                    file.display(),
                    block.line
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The Python that parses the blocks: `.venv`'s.
fn python() -> PathBuf {
    let python = root().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `bash scripts/python/setup_venv.sh` (the README's test command does)",
        python.display()
    );
    python
}

/// The Python blocks of `sources` (name, text) that do not parse, as
/// Python's own messages.
fn python_syntax_errors(sources: &[(String, String)]) -> Vec<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    const CHECK: &str = "import ast, json, sys\n\
        for name, text in json.load(sys.stdin):\n\
        \x20   try:\n\
        \x20       ast.parse(text, name)\n\
        \x20   except SyntaxError as e:\n\
        \x20       print(f'{name}: {e}')\n";
    let mut child = Command::new(python())
        .args(["-c", CHECK])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start python");
    let input = serde_json::to_vec(sources).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the Python check itself failed");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_python_block_parses() {
    let root = root();
    let mut sources = Vec::new();
    for file in checked_files() {
        let page = parse(&std::fs::read_to_string(root.join(&file)).unwrap());
        for block in page.blocks.iter().filter(|b| b.language == "python") {
            sources.push((
                format!("{}:{}", file.display(), block.line),
                block.text.clone(),
            ));
        }
    }
    assert!(
        sources.len() >= 4,
        "the README and docs/python.md have Python blocks"
    );
    let errors = python_syntax_errors(&sources);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_checker_sees_broken_links_and_bad_python() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("docs")).unwrap();
    std::fs::write(
        root.join("docs/a.md"),
        "# Reading over HTTP(S) and S3\n\n## Overriding zarrs' `bytes`, `transpose`\n\n\
         ## Same\n\n## Same\n\n\
         [ok](#reading-over-https-and-s3) [ok](../README.md#top) [ok](#same-1)\n\
         [ok](#overriding-zarrs-bytes-transpose) [ok](https://example.com/nowhere.md)\n\
         `[not a link](nowhere.md)`\n\n\
         ```sh\n[not a link](nowhere.md)\n```\n\n\
         [bad](#reading-over-http-and-s3) [bad](missing.md)\n\
         [also\nbad](../README.md#nothing)\n\n[label]: gone.md\n",
    )
    .unwrap();
    std::fs::write(root.join("README.md"), "# Top\n").unwrap();
    let broken = broken_links(root, Path::new("docs/a.md"));
    let targets: Vec<&str> = broken
        .iter()
        .map(|b| b.split(": ").nth(1).unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "#reading-over-http-and-s3",
            "missing.md",
            "../README.md#nothing",
            "gone.md"
        ],
        "{broken:#?}"
    );
    assert!(broken[0].starts_with("docs/a.md:17: "), "{}", broken[0]);

    let page = parse("```\nfn main() {}\n```\n\n```rust no_run\nfn f() {}\n```\n");
    let languages: Vec<&str> = page.blocks.iter().map(|b| b.language.as_str()).collect();
    assert_eq!(languages, ["", "rust"]);

    let errors = python_syntax_errors(&[
        (
            "good".to_string(),
            "import zarr\nzarr.config.set({})\n".to_string(),
        ),
        ("bad".to_string(), "zarr.config.set({)\n".to_string()),
    ]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("bad: "), "{errors:?}");
}
