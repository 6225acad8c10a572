//! The README's demo ("The demo, step by step"), run as README.md writes it: its `sh` blocks
//! are read from the file, each `m …` line run through the real CLI against a real daemon on
//! `examples/demo.json` with the bundled demo server, and what each prints compared with the
//! `#> ` lines under it (`…` stands for any text), its exit code with `#! exit N` (else 0).
//! The acts the paragraph between the two blocks tells the reader to enable on the page are
//! enabled as the page would (the store, with the daemon stopped). A README whose demo no
//! longer says what happens fails here.

use std::path::Path;

use serde_json::Value;

use crate::support::{by_name, demo_server, eventually, stderr, Home};

/// One command of the demo and what the README says it prints.
#[derive(Debug)]
struct Step {
    /// The line as written.
    line: String,
    /// Its arguments after `m`.
    args: Vec<String>,
    /// The `#> ` lines under it: its whole stdout, line by line.
    out: Vec<String>,
    /// `#! exit N`, else 0.
    exit: i32,
}

fn readme() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(p).unwrap()
}

/// The demo's section: from its heading to the next heading.
fn section(readme: &str) -> &str {
    let start = readme
        .find("### The demo, step by step")
        .expect("README.md has no \"### The demo, step by step\"");
    let rest = &readme[start + 3..];
    let end = ["\n## ", "\n### "]
        .iter()
        .filter_map(|h| rest.find(h))
        .min()
        .map_or(rest.len(), |i| i + 1);
    &readme[start..start + 3 + end]
}

/// The section's `sh` blocks, and the text between the first and the second.
fn blocks(section: &str) -> (Vec<&str>, &str) {
    let mut blocks = Vec::new();
    let mut between = "";
    let mut rest = section;
    while let Some(i) = rest.find("```sh\n") {
        if blocks.len() == 1 {
            between = &rest[..i];
        }
        let body = &rest[i + 6..];
        let j = body.find("```").expect("an sh block is not closed");
        blocks.push(&body[..j]);
        rest = &body[j + 3..];
    }
    (blocks, between)
}

/// The steps of one block.
fn steps(block: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for line in block.lines() {
        if let Some(out) = line.strip_prefix("#> ") {
            let step = steps.last_mut().expect("a #> line before any command");
            step.out.push(out.to_owned());
        } else if let Some(code) = line.strip_prefix("#! exit ") {
            let step = steps.last_mut().expect("a #! line before any command");
            step.exit = code.trim().parse().unwrap();
        } else if let Some(cmd) = line.strip_prefix("m ") {
            let cmd = cmd.split(" #").next().unwrap();
            assert!(
                !cmd.contains(['"', '\'', '$', '\\', '|', ';']),
                "the demo's commands are plain words: {line}"
            );
            steps.push(Step {
                line: line.to_owned(),
                args: cmd.split_whitespace().map(str::to_owned).collect(),
                out: Vec::new(),
                exit: 0,
            });
        } else {
            assert!(
                line.starts_with("m()") || line.trim().is_empty(),
                "a line of the demo that is neither a command nor its output: {line:?}"
            );
        }
    }
    steps
}

/// The acts the text tells the reader to enable: the backticked names after "enable", up to
/// the sentence's "there".
fn to_enable(between: &str) -> Vec<String> {
    let text = between.replace('\n', " ");
    let from = text
        .find(" enable ")
        .expect("the demo says which acts to enable");
    let said = &text[from..];
    let said = &said[..said.find(" there").unwrap_or(said.len())];
    said.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Whether `got` is `want`, where each `…` of `want` stands for any text.
fn matches(want: &str, got: &str) -> bool {
    let parts: Vec<&str> = want.split('…').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return want == got;
    }
    if !got.starts_with(first) || got.len() < first.len() + last.len() || !got.ends_with(last) {
        return false;
    }
    let mut rest = &got[first.len()..got.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Runs one step and compares it with what the README says.
fn run(home: &Home, step: &Step) {
    let args: Vec<&str> = step.args.iter().map(String::as_str).collect();
    let out = home.run(&args);
    let got = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = got.lines().collect();
    let said = step.out.join("\n");
    assert_eq!(
        out.status.code(),
        Some(step.exit),
        "README.md: `{}` exits {:?}, the README says {}\nstdout:\n{got}\nstderr:\n{}",
        step.line,
        out.status.code(),
        step.exit,
        stderr(&out)
    );
    if step.out.is_empty() {
        return;
    }
    assert!(
        lines.len() == step.out.len() && step.out.iter().zip(&lines).all(|(w, g)| matches(w, g)),
        "README.md: `{}` prints\n{got}\nand the README says\n{said}",
        step.line
    );
}

/// Waits until the demo server is ready with its three tools listed and `enabled` of them
/// enabled.
fn wait_ready(home: &Home, enabled: usize) {
    eventually("the demo server to be ready", || {
        let v = home.json(&["mcp", "status", "--json"]);
        let s = by_name(&v, "todo");
        (s["state"] == "ready"
            && s["tools_offered"] == 3
            && s["tools_proposed"].as_u64() == Some(3 - enabled as u64)
            && s["tools_enabled"].as_u64() == Some(enabled as u64))
        .then_some(())
    });
}

#[test]
fn the_readme_demo_says_what_happens() {
    let readme = readme();
    let (blocks, between) = blocks(section(&readme));
    assert_eq!(
        blocks.len(),
        2,
        "the demo has two blocks: before and after the page"
    );
    let before = steps(blocks[0]);
    let after = steps(blocks[1]);
    let enable = to_enable(between);
    assert!(!before.is_empty() && !after.is_empty() && !enable.is_empty());

    let home = Home::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.json");
    let mut config: Value = serde_json::from_slice(&std::fs::read(demo).unwrap()).unwrap();
    config["mcp_servers"]["todo"]["command"] = demo_server().display().to_string().into();
    // Any free port: other tests run beside this one.
    config["web"] = serde_json::json!({"listen": "127.0.0.1:0"});
    home.write_config(&config.to_string());

    let d = home.start();
    wait_ready(&home, 0);
    for step in &before {
        run(&home, step);
    }
    assert!(d.signal("-TERM").status.success());

    // The page's step: enable what the README names.
    let names: Vec<&str> = enable.iter().map(String::as_str).collect();
    home.enable(&names);
    let d = home.start();
    wait_ready(&home, names.len());
    for step in &after {
        run(&home, step);
    }
    drop(d);
}

#[test]
fn the_demo_convention_reads_as_documented() {
    assert!(matches("a … b", "a 12 b"));
    assert!(matches("…maven-demo-todo", "/x/maven-demo-todo"));
    assert!(matches(
        "http://localhost:…/enroll#…",
        "http://localhost:1/enroll#ab"
    ));
    assert!(!matches("a … b", "a 12 c"));
    assert!(!matches("ab…ba", "aba"));
    assert!(!matches("exact", "exact "));
    let s = steps("m() { x; }\nm say hi   # a comment\n#> hello\n#> there\n#! exit 1\nm acts\n");
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].args, ["say", "hi"]);
    assert_eq!(s[0].out, ["hello", "there"]);
    assert_eq!((s[0].exit, s[1].exit), (1, 0));
    assert_eq!(
        to_enable("sign in, and enable `a_b`, `c_d` and\n`e_f` there. Without `x`"),
        ["a_b", "c_d", "e_f"]
    );
}
