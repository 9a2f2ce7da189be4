//! The README's "Use" program is `examples/use.rs` (which `cargo test
//! --all-targets` compiles): this test fails if the two drift apart.

/// The first ```` ```rust ```` block after `heading` in `markdown` (its
/// info string may go on: ```` ```rust no_run ````).
fn rust_block_after<'a>(markdown: &'a str, heading: &str) -> &'a str {
    let section = &markdown[markdown
        .find(heading)
        .unwrap_or_else(|| panic!("README has no {heading:?} heading"))..];
    let fence = section.find("```rust").expect("no ```rust block");
    let start = fence + section[fence..].find('\n').expect("a ```rust line ends") + 1;
    let end = section[start..].find("```").expect("unterminated block");
    &section[start..start + end]
}

/// `source` without its leading `//!` doc comment and the blank line after it.
fn without_module_doc(source: &str) -> &str {
    let mut rest = source;
    while rest.starts_with("//!") {
        rest = rest.split_once('\n').map_or("", |(_, tail)| tail);
    }
    rest.strip_prefix('\n').unwrap_or(rest)
}

#[test]
fn readme_use_is_the_use_example() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let example = std::fs::read_to_string(format!("{root}/examples/use.rs")).unwrap();
    let snippet = rust_block_after(&readme, "\n## Use\n");
    assert_eq!(
        snippet,
        without_module_doc(&example),
        "README.md's \"Use\" program and examples/use.rs differ: make them identical"
    );
}

#[test]
fn the_comparison_sees_a_difference() {
    let readme = "# x\n\n## Use\n\n```rust\nfn main() {}\n```\n";
    assert_eq!(rust_block_after(readme, "\n## Use\n"), "fn main() {}\n");
    let no_run = "# x\n\n## Use\n\n```rust no_run\nfn main() {}\n```\n";
    assert_eq!(rust_block_after(no_run, "\n## Use\n"), "fn main() {}\n");
    assert_eq!(
        without_module_doc("//! a\n//! b\n\nfn main() {}\n"),
        "fn main() {}\n"
    );
    assert_ne!(rust_block_after(readme, "\n## Use\n"), "fn main() { }\n");
}
