//! The generated shell completions and man page.

use crate::support::{stderr, Home};

#[test]
fn completions_and_man_page_name_the_subcommands() {
    let home = Home::new();
    for args in [
        &["completions", "bash"][..],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["man"],
    ] {
        let out = home.run(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        for sub in ["daemon", "doctor", "status", "inspect"] {
            let wanted = if args[0] == "man" && sub == "inspect" {
                "mcp"
            } else {
                sub
            };
            assert!(text.contains(wanted), "{args:?} lacks {wanted}: {text}");
        }
    }
    let out = home.run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}
