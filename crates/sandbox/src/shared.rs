//! What a server may never be granted to write, however the block asks: a place other
//! programs load code or commands from (a package manager's cache or settings, a `bin`
//! directory, a directory on `PATH`, every shell's start-up files, git's, SSH's and the
//! editors' settings, the owner's services and autostart entries, the credentials helpers of
//! the cloud tools), where a server could plant code the owner later runs outside any
//! sandbox; and the server's own program or script, which a compromised run could rewrite to
//! persist. Such a write is refused unless the block sets `"allow_shared_code": true`, and the
//! trust line then says it in words ("writes ~/.ssh (granted: where other programs run code)").

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Below the owner's home: caches, prefixes, settings and files other programs run code from
/// (each tested below). A `write` that covers one of these (or lies inside one) is refused
/// unless the block sets `"allow_shared_code": true`.
pub const SHARED_CODE: &[(&str, &str)] = &[
    (".npm", "npm's cache (npx runs packages from it)"),
    (".cache/uv", "uv's cache (uvx runs packages from it)"),
    (".cache/pip", "pip's cache"),
    (".local/share/uv", "uv's Python installations and tools"),
    (".cargo", "Cargo's home (its bin directory and registry)"),
    (".rustup", "the Rust toolchains"),
    (".local/bin", "a directory of programs"),
    (".local/lib", "Python's user packages"),
    ("bin", "a directory of programs"),
    (".pyenv", "pyenv's Pythons"),
    (".nvm", "nvm's Node.js installations"),
    (".volta", "Volta's tools"),
    (".deno", "Deno's cache and programs"),
    (".bun", "Bun's cache and programs"),
    (".gem", "Ruby's gems"),
    ("go/bin", "a directory of programs"),
    ("go/pkg", "Go's module cache"),
    (".cache/yarn", "Yarn's cache"),
    (".local/share/pnpm", "pnpm's store"),
    (
        ".ssh",
        "SSH's keys and settings (authorized_keys, config: commands run on log-in)",
    ),
    (".gnupg", "GnuPG's keys and settings"),
    (
        ".gitconfig",
        "git's settings (core.fsmonitor, aliases and hooks run commands)",
    ),
    (
        ".config/git",
        "git's settings (core.fsmonitor, aliases and hooks run commands)",
    ),
    (".bashrc", "the shell's start-up file"),
    (".bash_profile", "the shell's start-up file"),
    (".bash_login", "the shell's start-up file"),
    (".bash_logout", "the shell's start-up file"),
    (".profile", "the shell's start-up file"),
    (".zshrc", "the shell's start-up file"),
    (".zshenv", "the shell's start-up file"),
    (".zprofile", "the shell's start-up file"),
    (".zlogin", "the shell's start-up file"),
    (".zlogout", "the shell's start-up file"),
    (".config/zsh", "zsh's start-up files"),
    (".kshrc", "the shell's start-up file"),
    (".mkshrc", "the shell's start-up file"),
    (".cshrc", "the shell's start-up file"),
    (".tcshrc", "the shell's start-up file"),
    (".login", "the shell's start-up file"),
    (".xprofile", "the session's start-up file"),
    (".xinitrc", "the session's start-up file"),
    (".xsession", "the session's start-up file"),
    (".xsessionrc", "the session's start-up file"),
    (".pam_environment", "the session's environment"),
    (".config/fish", "fish's start-up files"),
    (".config/nushell", "nushell's start-up files"),
    (".config/autostart", "programs started at log-in"),
    (".config/systemd", "the owner's services"),
    (".local/share/systemd", "the owner's services"),
    (".config/environment.d", "the session's environment"),
    (".local/share/applications", "programs the desktop starts"),
    (".vimrc", "vim's settings, which run commands"),
    (".vim", "vim's settings and plugins"),
    (".gvimrc", "vim's settings, which run commands"),
    (".exrc", "vi's settings, which run commands"),
    (".config/nvim", "Neovim's settings and plugins"),
    (".local/share/nvim", "Neovim's plugins"),
    (".emacs", "Emacs's settings, which run code"),
    (".emacs.d", "Emacs's settings and packages"),
    (".config/emacs", "Emacs's settings and packages"),
    (".vscode", "VS Code's extensions"),
    (".config/Code", "VS Code's settings and tasks"),
    (".config/helix", "Helix's settings"),
    (
        ".kube",
        "Kubernetes' credentials and settings (exec plugins run commands)",
    ),
    (
        ".aws",
        "AWS's credentials and settings (credential_process runs commands)",
    ),
    (
        ".docker",
        "Docker's credentials and settings (credential helpers run commands)",
    ),
    (".netrc", "passwords other programs send"),
    (".npmrc", "npm's settings (scripts and registries)"),
    (".yarnrc", "Yarn's settings"),
    (".yarnrc.yml", "Yarn's settings"),
    (".pypirc", "PyPI's credentials"),
    (".config/pip", "pip's settings (where packages come from)"),
    (".pip", "pip's settings (where packages come from)"),
    (".gemrc", "RubyGems' settings"),
    (".config/containers", "the container tools' settings"),
];

/// Outside the home: the system's own code.
const SYSTEM_CODE: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt",
];

/// Interpreters whose first argument that is not an option is the program they run.
const INTERPRETERS: &[&str] = &[
    "python", "python3", "node", "nodejs", "deno", "bun", "ruby", "perl", "bash", "sh", "zsh",
    "dash", "php", "lua", "Rscript",
];

/// Whether `a` and `b` overlap: one is the other or lies inside it.
fn overlap(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The shared code directory a `write` path covers, with what it is, or `None`. `home` is the
/// owner's home, `path` the `PATH` the server's command is found on.
pub fn shared_code(
    write: &Path,
    home: Option<&Path>,
    path: Option<&OsStr>,
) -> Option<(PathBuf, String)> {
    if let Some(home) = home.filter(|h| h.is_absolute()) {
        for (rel, what) in SHARED_CODE {
            let p = home.join(rel);
            if overlap(write, &p) {
                return Some((p, (*what).to_owned()));
            }
        }
    }
    if let Some(path) = path {
        for d in std::env::split_paths(path).filter(|d| d.is_absolute()) {
            if overlap(write, &d) {
                return Some((d, "a directory on PATH".to_owned()));
            }
        }
    }
    SYSTEM_CODE
        .iter()
        .map(PathBuf::from)
        .find(|d| overlap(write, d))
        .map(|d| (d, "the system's programs and libraries".to_owned()))
}

/// The program a server runs and, for an interpreter, the script it is given: the command (an
/// absolute path, or found on `path`) and the first argument that is not an option of
/// `python`, `node`, `bash`… (`uv run SCRIPT`, `npx ./path`).
pub fn own_code(command: &str, args: &[String], path: Option<&OsStr>) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let program = if command.contains('/') {
        Some(PathBuf::from(command))
    } else {
        path.and_then(|p| {
            std::env::split_paths(p)
                .filter(|d| d.is_absolute())
                .map(|d| d.join(command))
                .find(|p| p.is_file())
        })
    };
    if let Some(p) = program.filter(|p| p.is_absolute()) {
        out.push((p, "the program this server runs".to_owned()));
    }
    let name = Path::new(command)
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or(command);
    // `python3.12`, `node22`: the interpreter's family.
    let family = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let script = if INTERPRETERS.contains(&family) {
        args.iter().find(|a| !a.starts_with('-'))
    } else if family == "uv" || family == "poetry" || family == "pipenv" {
        // Its options take values (`--with x`): the script is the first path after `run`.
        args.iter()
            .skip_while(|a| *a != "run")
            .skip(1)
            .find(|a| Path::new(a).is_absolute())
    } else if family == "npx" || family == "bunx" || family == "pnpx" {
        // The package it runs: a path when it is one (a name is fetched into its cache).
        args.iter().find(|a| !a.starts_with('-'))
    } else {
        None
    };
    if let Some(s) = script {
        let p = PathBuf::from(s);
        if p.is_absolute() {
            out.push((p, format!("the script {name} runs")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_that_covers_shared_code_is_named() {
        let home = Path::new("/home/me");
        let shared = |w: &str| {
            shared_code(
                Path::new(w),
                Some(home),
                Some(OsStr::new("/opt/tools/bin:/usr/bin")),
            )
        };
        assert_eq!(shared("/home/me/.npm").unwrap().0, home.join(".npm"));
        assert_eq!(
            shared("/home/me/.npm/_npx/1/node_modules").unwrap().0,
            home.join(".npm")
        );
        assert_eq!(
            shared("/home/me").unwrap().0,
            home.join(".npm"),
            "the home covers them all"
        );
        assert_eq!(
            shared("/home/me/.cargo/registry").unwrap().1,
            "Cargo's home (its bin directory and registry)"
        );
        assert_eq!(shared("/opt/tools/bin/x").unwrap().1, "a directory on PATH");
        assert_eq!(
            shared("/usr/local/lib").unwrap().1,
            "the system's programs and libraries"
        );
        assert!(shared("/home/me/work/notes").is_none());
        assert!(shared("/srv/data").is_none());
        assert!(
            shared("/home/me/.npmrc-notes").is_none(),
            "a sibling with a longer name is not inside"
        );
    }

    /// Every place the owner's other programs run code or commands from is shared code: a
    /// write there (or over its directory) is never granted implicitly.
    #[test]
    fn every_place_other_programs_run_code_from_is_covered() {
        let home = Path::new("/home/me");
        for rel in [
            ".ssh",
            ".ssh/authorized_keys",
            ".gnupg",
            ".gitconfig",
            ".config/git",
            ".config/git/config",
            ".bashrc",
            ".bash_profile",
            ".bash_login",
            ".profile",
            ".zshrc",
            ".zshenv",
            ".zprofile",
            ".zlogin",
            ".config/fish/config.fish",
            ".config/autostart/x.desktop",
            ".config/systemd/user/x.service",
            ".config/environment.d/x.conf",
            ".local/share/applications/x.desktop",
            ".vimrc",
            ".config/nvim/init.lua",
            ".emacs.d/init.el",
            ".vscode/extensions",
            ".kube/config",
            ".aws/config",
            ".docker/config.json",
            ".netrc",
            ".npmrc",
            ".pypirc",
            ".config/pip/pip.conf",
            ".cargo/config.toml",
        ] {
            let p = home.join(rel);
            assert!(
                shared_code(&p, Some(home), None).is_some(),
                "{rel} must be shared code"
            );
        }
        // ~/.config itself covers some of them: never implicitly writable either.
        assert!(shared_code(&home.join(".config"), Some(home), None).is_some());
        assert!(shared_code(&home.join(".config/maven-notes"), Some(home), None).is_none());
    }

    #[test]
    fn the_program_and_its_script_are_its_own_code() {
        let s = |c: &str, a: &[&str]| {
            own_code(
                c,
                &a.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>(),
                None,
            )
            .into_iter()
            .map(|(p, _)| p.display().to_string())
            .collect::<Vec<_>>()
        };
        assert_eq!(
            s("python3", &["-u", "/srv/server.py", "--db", "/srv/x.db"]),
            ["/srv/server.py"]
        );
        assert_eq!(
            s("/usr/bin/node", &["/srv/index.js"]),
            ["/usr/bin/node", "/srv/index.js"]
        );
        assert_eq!(s("uv", &["run", "--with", "x", "/srv/s.py"]), ["/srv/s.py"]);
        assert_eq!(s("npx", &["-y", "/srv/pkg"]), ["/srv/pkg"]);
        assert!(
            s("npx", &["-y", "@x/server", "/srv/dir"]).is_empty(),
            "a package name, then data"
        );
        assert_eq!(s("python3.12", &["/srv/s.py"]), ["/srv/s.py"]);
        assert!(
            s("mcp-server-git", &["/srv/repo"]).is_empty(),
            "not an interpreter: its arguments are data"
        );
    }
}
