//! `maven mcp import FILE [--write [--replace]]` (C-5): reads the `mcpServers` shape other MCP
//! hosts use (`command`/`args`/`env`, or `url`/`headers`) and prints Maven `mcp_servers` blocks
//! with every server `enabled: false`, or merges them into the configuration file
//! (`cmd::config_edit`) and reloads a running daemon. Secret-bearing values (header values,
//! environment values that look secret by name or shape, secret-looking arguments) are never
//! printed nor written: they become `${NAME}` references, and stderr says which variables to
//! set. Any other environment value stays as written; a path in it gets its sandbox grant.

use crate::exit::{errln, outln};
use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::{Map, Value};

use config::file::{ConfigFile, McpBlock, SandboxBlock, SandboxPolicy};
use config::{flatten_name, Config};

use crate::exit::{EXIT_FAILED, EXIT_USAGE};

/// What an import produced: the block and what the owner should know.
#[derive(Debug)]
pub(crate) struct Imported {
    /// The converted blocks, as a configuration file of their own.
    pub(crate) block: ConfigFile,
    pub(crate) notes: Vec<String>,
}

fn env_name(server: &str, key: &str) -> String {
    let mut s = String::new();
    for c in format!("MCP_{server}_{key}").chars() {
        s.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        });
    }
    s
}

fn string_map(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The sandbox of an imported local server. Nothing it is given can hold code that
/// other programs run: a package manager (`npx`, `uvx`) keeps its cache in the server's
/// private directory, never the owner's; `uv`'s installed Pythons are readable. Of the
/// absolute (or `~/`) paths among the arguments that exist, the server's own script and every
/// file are readable, a directory (the folders a filesystem-style server works in) writable —
/// unless it covers a directory other programs load code from, which stays readable. Returns
/// the `sandbox` value (absent: the default), the environment to add and the notes, in the
/// trust line's words.
fn sandbox_for(
    name: &str,
    command: &str,
    args: &[&str],
    env_paths: &[(String, String)],
    home: Option<&std::path::Path>,
) -> (Option<SandboxBlock>, Vec<(String, String)>, Vec<String>) {
    let mut read: Vec<String> = Vec::new();
    let mut write: Vec<String> = Vec::new();
    let mut env = Vec::new();
    let mut notes = vec![format!(
        "{name}: network through Maven's proxy, public addresses only (the default, \"network\": true); a local service it needs goes in \"sandbox\": {{\"connect\": [\"127.0.0.1:PORT\"]}}, and a program that cannot use a proxy needs \"network\": \"direct\""
    )];
    let tool = std::path::Path::new(command)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(command);
    let owned: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let path = std::env::var_os("PATH");
    let own: Vec<std::path::PathBuf> = sandbox::own_code(command, &owned, path.as_deref())
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    if let Some(home) = home.filter(|h| h.is_absolute()) {
        let at = |rel: &str| home.join(rel).display().to_string();
        // A server installed by npm (`DIR/node_modules/.bin/NAME`, or `node
        // DIR/node_modules/P/index.js`) needs nothing here: the plan itself makes the outermost
        // `node_modules` readable ("its packages"), so no `read` is written for it.
        match tool {
            "npx" | "npm" => notes.push(format!(
                "{name}: npm downloads into a cache of its own, in its private directory (its first start fetches its packages)"
            )),
            "uvx" | "uv" => {
                read.push(at(".local/share/uv"));
                env.push((
                    "UV_PYTHON_INSTALL_DIR".to_owned(),
                    at(".local/share/uv/python"),
                ));
                notes.push(format!(
                    "{name}: reads {} (uv's installed Pythons); uv downloads into a cache of its own, in its private directory",
                    at(".local/share/uv")
                ));
            }
            _ => {}
        }
        for a in args {
            let p = match a.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => std::path::PathBuf::from(a),
            };
            let plain = !p
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir));
            if !p.is_absolute() || !plain {
                continue;
            }
            let shown = p.display().to_string();
            if !p.exists() {
                if a.starts_with('/') || a.starts_with("~/") {
                    notes.push(format!(
                        "{name}: {shown}, named in its arguments, does not exist: not granted"
                    ));
                }
                continue;
            }
            if read.contains(&shown) || write.contains(&shown) {
                continue;
            }
            if own.contains(&p) {
                notes.push(format!(
                    "{name}: reads {shown} (its own script, named in its arguments; never writable)"
                ));
                read.push(shown);
            } else if let Some(o) = own.iter().find(|o| o.starts_with(&p)) {
                notes.push(format!(
                    "{name}: reads {shown} (named in its arguments); not writable: it holds its own script {}",
                    o.display()
                ));
                read.push(shown);
            } else if p.is_file() {
                notes.push(format!(
                    "{name}: reads {shown} (named in its arguments); if it must write it, add it to \"sandbox\": {{\"write\": [...]}} yourself"
                ));
                read.push(shown);
            } else if let Some((shared, what)) =
                sandbox::shared_code(&p, Some(home), path.as_deref())
            {
                notes.push(format!(
                    "{name}: reads {shown} (named in its arguments); not writable: it covers {} ({what}), where other programs load code from",
                    shared.display()
                ));
                read.push(shown);
            } else {
                notes.push(format!(
                    "{name}: writes {shown} (a directory named in its arguments)"
                ));
                write.push(shown);
            }
        }
    }
    if let Some(home) = home.filter(|h| h.is_absolute()) {
        for (key, value) in env_paths {
            let Some((p, grant)) = env_grant(value, home, path.as_deref()) else {
                continue;
            };
            let shown = p.display().to_string();
            if read.contains(&shown) || write.contains(&shown) {
                continue;
            }
            match grant {
                EnvGrant::Write(_) if own.iter().any(|o| o.starts_with(&p)) => {
                    let program = own
                        .iter()
                        .find(|o| o.starts_with(&p))
                        .map(|o| o.display().to_string())
                        .unwrap_or_default();
                    notes.push(format!(
                        "{name}: reads {shown} (named in env.{key}); not writable: it holds its own program {program}, which a server must never rewrite. To let it write {value}, create that file first (touch {value}) and import again: an existing file is granted by itself"
                    ));
                    read.push(shown);
                }
                EnvGrant::Write(why) => {
                    notes.push(format!(
                        "{name}: writes {shown} ({why}, named in env.{key})"
                    ));
                    write.push(shown);
                }
                EnvGrant::Read(why) => {
                    notes.push(format!("{name}: reads {shown} (named in env.{key}); {why}"));
                    read.push(shown);
                }
                EnvGrant::None(why) => {
                    notes.push(format!(
                        "{name}: env.{key} names {value}: not granted: {why}"
                    ));
                }
            }
        }
    }
    if read.is_empty() && write.is_empty() {
        return (None, env, notes);
    }
    let policy = SandboxPolicy {
        read,
        write,
        ..SandboxPolicy::default()
    };
    (Some(SandboxBlock::Policy(Box::new(policy))), env, notes)
}

/// What the sandbox grants for a path an environment value names.
enum EnvGrant {
    /// Writable: the server's data (a file, or the directory a file it makes will be in).
    Write(&'static str),
    /// Readable only, and why not writable.
    Read(String),
    /// Nothing, and why.
    None(String),
}

/// The grant a path in an environment value needs (`None`: the value is not a path). A value
/// names a file a server keeps its data in (`MEMORY_FILE_PATH`), or the directory it works in:
/// both writable, unless it covers a directory other programs load code from (then readable).
/// A file that does not exist yet is granted its directory when that directory exists and is
/// neither the home nor shared code; never the home itself.
fn env_grant(
    value: &str,
    home: &std::path::Path,
    path: Option<&std::ffi::OsStr>,
) -> Option<(std::path::PathBuf, EnvGrant)> {
    let p = match value.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None if value.starts_with('/') => std::path::PathBuf::from(value),
        None => return None,
    };
    if p.components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Some((p, EnvGrant::None("it climbs with \"..\"".into())));
    }
    let shared = |d: &std::path::Path| sandbox::shared_code(d, Some(home), path);
    if p.is_file() {
        return Some(match p.parent().and_then(shared) {
            Some((s, what)) => {
                let why = format!("not writable: it is under {} ({what})", s.display());
                (p, EnvGrant::Read(why))
            }
            None => (p, EnvGrant::Write("a file")),
        });
    }
    if p.is_dir() {
        return Some(match shared(&p) {
            Some((s, what)) => {
                let why = format!("not writable: it covers {} ({what})", s.display());
                (p, EnvGrant::Read(why))
            }
            None if p == home => (
                p,
                EnvGrant::None(
                    "it is the home directory itself; grant what it needs yourself".into(),
                ),
            ),
            None => (p, EnvGrant::Write("a directory")),
        });
    }
    let Some(dir) = p.parent().filter(|d| d.is_dir()) else {
        return Some((
            p,
            EnvGrant::None("neither it nor its directory exists".into()),
        ));
    };
    let dir = dir.to_path_buf();
    Some(if dir == home || dir.parent().is_none() {
        (
            p,
            EnvGrant::None(format!(
                "it does not exist yet, and its directory is {}; create it, or grant a directory of its own in \"sandbox\": {{\"write\": [...]}}",
                dir.display()
            )),
        )
    } else if let Some((s, what)) = shared(&dir) {
        (
            p,
            EnvGrant::None(format!(
                "it does not exist yet, and its directory is under {} ({what})",
                s.display()
            )),
        )
    } else {
        (dir, EnvGrant::Write("the directory of a file it makes"))
    })
}

/// Whether an environment variable's name or value says it holds a secret: a name with TOKEN,
/// KEY, SECRET, PASSWORD, PASS, AUTH or CREDENTIAL in it, or a value shaped like a token. Only
/// those become `${VAR}` references; a path, a flag or a name stays as written.
fn secret_env(key: &str, value: &str) -> bool {
    let k = key.to_ascii_uppercase();
    [
        "TOKEN",
        "KEY",
        "SECRET",
        "PASSWORD",
        "PASS",
        "AUTH",
        "CREDENTIAL",
    ]
    .iter()
    .any(|w| k.contains(w))
        || daemon::json::mask_word(value, false) != value
}

/// The arguments with every literal that looks secret (the value after `--token` or another
/// secret flag, a `--flag=value` of one, a URL with a password, a known token shape) replaced
/// by a `${NAME}` reference, each with a note: an argument is visible to every process of the
/// machine (`/proc/PID/cmdline`), so the value belongs in the daemon's environment.
fn secret_args(name: &str, args: &[&str], notes: &mut Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut flag: Option<&str> = None;
    for (i, a) in args.iter().enumerate() {
        let var = |what: &str| env_name(name, what);
        let mut moved = |var: String, was: &str| {
            notes.push(format!(
                "{name}: args[{i}] ({was}) is now ${{{var}}}: set {var} in the daemon's environment; an argument is visible to every process on this machine, so if the server can read it from its environment, put it in \"env\" instead"
            ));
            var
        };
        let word = if a.contains("${") {
            (*a).to_owned()
        } else if let Some(f) = flag {
            let v = moved(var(f.trim_start_matches('-')), f);
            format!("${{{v}}}")
        } else if let Some((f, _)) = a
            .split_once('=')
            .filter(|(f, _)| daemon::json::secret_flag(f))
        {
            let v = moved(var(f.trim_start_matches('-')), f);
            format!("{f}=${{{v}}}")
        } else if daemon::json::mask_word(a, false) != *a {
            let v = moved(var(&format!("arg{i}")), "a secret-looking value");
            format!("${{{v}}}")
        } else {
            (*a).to_owned()
        };
        flag = (daemon::json::secret_flag(a) && !a.contains('=')).then_some(*a);
        out.push(word);
    }
    out
}

/// Converts another host's configuration into a Maven `mcp_servers` block.
pub(crate) fn convert(input: &Value) -> Result<Imported, String> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    convert_with_home(input, home.as_deref())
}

/// [`convert`], with the owner's home given.
fn convert_with_home(input: &Value, home: Option<&std::path::Path>) -> Result<Imported, String> {
    let servers = input
        .get("mcpServers")
        .or_else(|| input.get("servers"))
        .and_then(Value::as_object)
        .ok_or(
            "expected an object with \"mcpServers\" (or \"servers\") mapping names to servers",
        )?;
    let mut out = BTreeMap::new();
    let mut notes = Vec::new();
    let mut flat: BTreeMap<String, String> = BTreeMap::new();
    for (raw_name, server) in servers {
        let name: String = raw_name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        if name.is_empty() {
            notes.push(format!(
                "{raw_name:?}: skipped: the name has no usable character"
            ));
            continue;
        }
        if name != *raw_name {
            notes.push(format!("{raw_name:?}: renamed to {name:?}"));
        }
        if let Some(other) = flat.insert(flatten_name(&name), name.clone()) {
            notes.push(format!(
                "{name:?}: skipped: it flattens like {other:?}, and their tool rows would collide"
            ));
            continue;
        }
        let Some(obj) = server.as_object() else {
            notes.push(format!("{name}: skipped: not an object"));
            continue;
        };
        let mut block = McpBlock::default();
        if let Some(cmd) = obj.get("command").and_then(Value::as_str) {
            block.command = Some(cmd.to_owned());
            let args: Vec<&str> = obj
                .get("args")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            block.args = secret_args(&name, &args, &mut notes);
            let mut env = BTreeMap::new();
            let mut plain = Vec::new();
            for (k, v) in string_map(obj.get("env")) {
                if v.contains("${") {
                    env.insert(k, v);
                } else if secret_env(&k, &v) {
                    let var = env_name(&name, &k);
                    notes.push(format!(
                        "{name}: env.{k} is now ${{{var}}}: set {var} in the daemon's environment"
                    ));
                    env.insert(k, format!("${{{var}}}"));
                } else {
                    plain.push((k.clone(), v.clone()));
                    env.insert(k, v);
                }
            }
            let (sandbox, extra, mut sb_notes) = sandbox_for(&name, cmd, &args, &plain, home);
            for (k, v) in extra {
                env.entry(k).or_insert(v);
            }
            notes.append(&mut sb_notes);
            block.env = env;
            block.sandbox = sandbox;
        } else if let Some(url) = obj.get("url").and_then(Value::as_str) {
            if obj.get("type").and_then(Value::as_str) == Some("sse") {
                notes.push(format!(
                    "{name}: declared the legacy SSE transport; Maven speaks Streamable HTTP to the same URL, which may not work"
                ));
            }
            block.url = Some(url.to_owned());
            let mut headers = BTreeMap::new();
            for (k, _) in string_map(obj.get("headers")) {
                let var = env_name(&name, &k);
                notes.push(format!(
                    "{name}: header {k} is now ${{{var}}}: set {var} in the daemon's environment"
                ));
                headers.insert(k, format!("${{{var}}}"));
            }
            block.headers = headers;
            if let Ok(u) = url::Url::parse(url) {
                // The guard's own table judges a literal address (every private, loopback,
                // link-local and unique-local block); `localhost` is this machine.
                let private = match u.host() {
                    Some(url::Host::Ipv4(a)) => !webfetch::addr::classify(a.into()).is_public(),
                    Some(url::Host::Ipv6(a)) => !webfetch::addr::classify(a.into()).is_public(),
                    Some(url::Host::Domain(d)) => {
                        d.eq_ignore_ascii_case("localhost")
                            || d.to_ascii_lowercase().ends_with(".localhost")
                    }
                    None => false,
                };
                if private {
                    notes.push(format!(
                        "{name}: {url} is on this machine or the LAN: add \"allow_private\": true if you trust it"
                    ));
                }
            }
        } else {
            notes.push(format!("{name}: skipped: neither \"command\" nor \"url\""));
            continue;
        }
        for k in obj.keys() {
            if !matches!(
                k.as_str(),
                "command" | "args" | "env" | "url" | "headers" | "type"
            ) {
                notes.push(format!(
                    "{name}: {k:?} has no Maven equivalent and was dropped"
                ));
            }
        }
        block.enabled = Some(false);
        match valid_alone(&name, block) {
            Ok((block, note)) => {
                notes.extend(note);
                out.insert(name, block);
            }
            Err(why) => notes.push(why),
        }
    }
    Ok(Imported {
        block: ConfigFile {
            mcp_servers: out,
            rest: Map::new(),
        },
        notes,
    })
}

/// Why `block`, alone in a configuration, does not validate; `None` when it does.
fn invalid(name: &str, block: &McpBlock) -> Option<String> {
    let mut one = BTreeMap::new();
    one.insert(name.to_owned(), block.clone());
    let file = ConfigFile {
        mcp_servers: one,
        rest: Map::new(),
    };
    Config::parse("(imported)", file.to_text().as_bytes(), &|_| None)
        .err()
        .map(|e| e.to_string())
}

/// `block` as it is when it validates alone; else with its write grants made read-only (and a
/// note why); else an error note that skips it. A converted block never goes into the file
/// unless it validates, and one server that cannot be converted never keeps the others out.
fn valid_alone(name: &str, mut block: McpBlock) -> Result<(McpBlock, Option<String>), String> {
    let Some(why) = invalid(name, &block) else {
        return Ok((block, None));
    };
    let why = why.replace('\n', "; ");
    if let Some(SandboxBlock::Policy(p)) = block.sandbox.as_mut() {
        if !p.write.is_empty() {
            let moved = std::mem::take(&mut p.write);
            for w in &moved {
                if !p.read.contains(w) {
                    p.read.push(w.clone());
                }
            }
            if invalid(name, &block).is_none() {
                return Ok((
                    block,
                    Some(format!(
                        "{name}: reads {} only: as a write grant its block does not validate ({why})",
                        moved.join(", ")
                    )),
                ));
            }
        }
    }
    Err(format!(
        "{name}: skipped: its converted block does not validate: {why}"
    ))
}

/// Where `--write` merges the converted blocks.
pub(crate) struct WriteTo<'a> {
    /// The configuration file (`--config`, else the default).
    pub(crate) config: &'a std::path::Path,
    /// `--replace`: a block of the same name is replaced, not refused.
    pub(crate) replace: bool,
    /// The data directory of the daemon to reload.
    pub(crate) data_dir: &'a std::path::Path,
}

/// Merges the converted blocks into `file`: a block whose name is taken is replaced only with
/// `replace`, else the whole merge is refused, naming every one.
fn merge(
    file: &mut ConfigFile,
    blocks: &ConfigFile,
    replace: bool,
    path: &str,
) -> Result<(), String> {
    let taken: Vec<&String> = blocks
        .mcp_servers
        .keys()
        .filter(|k| file.mcp_servers.contains_key(*k))
        .collect();
    if !taken.is_empty() && !replace {
        let names: Vec<String> = taken.iter().map(|k| format!("mcp_servers.{k}")).collect();
        return Err(format!(
            "{} already in {path}: nothing was written (add --replace to replace {})",
            names.join(", "),
            if names.len() == 1 { "it" } else { "them" }
        ));
    }
    for (k, b) in &blocks.mcp_servers {
        file.mcp_servers.insert(k.clone(), b.clone());
    }
    Ok(())
}

/// Runs the command: prints the converted blocks, or with `write` merges them into the
/// configuration file and reloads a running daemon.
pub(crate) fn run(file: &str, write: Option<WriteTo<'_>>, data_dir: &std::path::Path) -> ExitCode {
    let bytes = if file == "-" {
        let mut b = Vec::new();
        if let Err(e) = std::io::Read::read_to_end(&mut std::io::stdin(), &mut b) {
            errln!("maven mcp import: cannot read stdin: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
        b
    } else {
        match std::fs::read(file) {
            Ok(b) => b,
            Err(e) => {
                errln!("maven mcp import: cannot read {file}: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        }
    };
    let input: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            errln!("maven mcp import: {file}: not valid JSON: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let imported = match convert(&input) {
        Ok(i) => i,
        Err(e) => {
            errln!("maven mcp import: {file}: {}", shown::block(&e.to_string()));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    // What is printed must itself be a valid Maven configuration.
    let text = imported.block.to_text();
    if let Err(e) = Config::parse("(imported)", text.as_bytes(), &|_| None) {
        errln!(
            "maven mcp import: the converted block does not validate:\n{}",
            shown::block(&e.to_string())
        );
        return ExitCode::from(EXIT_FAILED);
    }
    for n in &imported.notes {
        // Notes quote the names of another host's file: shown, never obeyed.
        errln!("note: {}", shown::line(n));
    }
    root_notes(&imported.block, data_dir);
    let Some(to) = write else {
        outln!("{text}");
        return ExitCode::SUCCESS;
    };
    let shown_path = to.config.display().to_string();
    let written = crate::cmd::config_edit::edit(to.config, |f| {
        merge(f, &imported.block, to.replace, &shown_path)
    });
    match written {
        Ok(w) => {
            let names: Vec<&str> = imported
                .block
                .mcp_servers
                .keys()
                .map(String::as_str)
                .collect();
            outln!(
                "imported {} server(s), each \"enabled\": false until you enable it: {}",
                names.len(),
                shown::line(&names.join(", "))
            );
            let ok = crate::cmd::runtime(async {
                if crate::cmd::config_edit::written_then_reload(&w, to.data_dir).await {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(EXIT_FAILED)
                }
            });
            ok
        }
        Err(e) => {
            errln!("maven mcp import: {}", shown::block(&e));
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// For a root daemon: each write grant a converted server's own uid could not use, as a note
/// with the `chown` line (the grants themselves are as converted).
fn root_notes(block: &ConfigFile, data_dir: &std::path::Path) {
    for (name, b) in &block.mcp_servers {
        let Some(SandboxBlock::Policy(p)) = &b.sandbox else {
            continue;
        };
        let writes: Vec<std::path::PathBuf> = p.write.iter().map(Into::into).collect();
        for why in daemon::confine::root_unwritable(data_dir, name, &writes) {
            errln!("note: {why}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_desktop_shape_becomes_a_dark_block_without_secrets() {
        let input = json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "@x/server-files", "/home/me"], "env": {"API_KEY": "sk-secret"}},
            "remote thing": {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer abc"}, "timeout": 5},
            "lan": {"type": "http", "url": "http://192.168.1.5:9100/mcp"},
            "nas": {"type": "http", "url": "http://172.20.0.9/mcp"},
            "ula": {"type": "http", "url": "http://[fd00::5]/mcp"},
            "link": {"type": "http", "url": "http://169.254.10.1/mcp"},
            "pub": {"type": "http", "url": "http://172.32.0.1/mcp"},
            "broken": {"foo": 1}
        }});
        let out = convert(&input).unwrap();
        let text = out.block.to_text();
        assert!(
            !text.contains("sk-secret") && !text.contains("Bearer abc"),
            "{text}"
        );
        let v = serde_json::to_value(&out.block).unwrap();
        let s = &v["mcp_servers"];
        assert_eq!(s["files"]["command"], "npx");
        assert_eq!(s["files"]["env"]["API_KEY"], "${MCP_FILES_API_KEY}");
        assert_eq!(s["files"]["enabled"], false);
        assert_eq!(
            s["remote_thing"]["headers"]["Authorization"],
            "${MCP_REMOTE_THING_AUTHORIZATION}"
        );
        assert_eq!(s["lan"]["url"], "http://192.168.1.5:9100/mcp");
        assert!(s.get("broken").is_none());
        let notes = out.notes.join("\n");
        assert!(
            notes.contains("\"remote thing\": renamed to \"remote_thing\""),
            "{notes}"
        );
        assert!(notes.contains("remote_thing: \"timeout\" has no Maven equivalent and was dropped"));
        assert!(notes.contains("broken: skipped: neither \"command\" nor \"url\""));
        assert!(notes.contains("lan: http://192.168.1.5:9100/mcp is on this machine or the LAN"));
        // Every private block the guard refuses, not only the usual prefixes.
        for (name, url) in [
            ("nas", "http://172.20.0.9/mcp"),
            ("ula", "http://[fd00::5]/mcp"),
            ("link", "http://169.254.10.1/mcp"),
        ] {
            assert!(
                notes.contains(&format!("{name}: {url} is on this machine or the LAN")),
                "{notes}"
            );
        }
        assert!(!notes.contains("pub: "), "172.32.0.1 is public: {notes}");
        // A local server keeps the default network, and is told what it now means.
        assert!(s["files"]
            .get("sandbox")
            .and_then(|b| b.get("network"))
            .is_none());
        assert!(
            notes.contains("files: network through Maven's proxy, public addresses only (the default, \"network\": true)"),
            "{notes}"
        );
        // The result is a valid Maven configuration.
        Config::parse("x", out.block.to_text().as_bytes(), &|_| None).unwrap();
    }

    #[test]
    fn npx_and_uvx_servers_get_a_sandbox_that_works() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        let docs = home.join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        let input = json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "~/docs", "/nonexistent/dir"]},
            "git": {"command": "uvx", "args": ["mcp-server-git"]},
            "plain": {"command": "/usr/local/bin/thing"}
        }});
        let out = convert_with_home(&input, Some(home)).unwrap();
        let v = serde_json::to_value(&out.block).unwrap();
        let s = &v["mcp_servers"];
        let h = |rel: &str| home.join(rel).display().to_string();
        // No shared cache is granted: npm and uv keep theirs in the private directory.
        assert_eq!(
            s["files"]["sandbox"],
            json!({"write": [docs.display().to_string()]})
        );
        assert!(s["files"].get("env").is_none(), "{}", s["files"]);
        assert_eq!(s["git"]["sandbox"], json!({"read": [h(".local/share/uv")]}));
        assert!(s["git"]["env"].get("UV_CACHE_DIR").is_none());
        assert!(s["plain"].get("sandbox").is_none(), "the default sandbox");
        let notes = out.notes.join("\n");
        assert!(notes.contains(&format!(
            "files: writes {} (a directory named in its arguments)",
            docs.display()
        )));
        assert!(
            notes.contains(
                "files: /nonexistent/dir, named in its arguments, does not exist: not granted"
            ),
            "{notes}"
        );
        assert!(
            notes
                .contains("files: npm downloads into a cache of its own, in its private directory"),
            "{notes}"
        );
        Config::parse("x", out.block.to_text().as_bytes(), &|_| None).unwrap();
    }

    #[test]
    fn a_server_under_node_modules_bin_needs_no_grant_of_its_own() {
        use std::os::unix::fs::PermissionsExt as _;
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        // What `npm install --prefix ~/mcp @scope/srv` leaves.
        let nm = home.join("mcp/node_modules");
        let entry = nm.join("@scope/srv/dist/index.js");
        std::fs::create_dir_all(entry.parent().unwrap()).unwrap();
        std::fs::write(
            &entry,
            "#!/bin/sh
",
        )
        .unwrap();
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(nm.join(".bin")).unwrap();
        std::os::unix::fs::symlink("../@scope/srv/dist/index.js", nm.join(".bin/srv")).unwrap();
        let command = nm.join(".bin/srv").display().to_string();
        let input = json!({"mcpServers": {"srv": {"command": command}}});
        let out = convert_with_home(&input, Some(&home)).unwrap();
        let v = serde_json::to_value(&out.block).unwrap();
        let block = &v["mcp_servers"]["srv"];
        assert!(
            block.get("sandbox").is_none(),
            "the default sandbox: {block}"
        );
        // The default sandbox of that block reads the packages by itself.
        let data = t.path().join("data");
        let ctx = sandbox::Context {
            data_dir: &data,
            path: None,
            deny_ports: vec![],
            owner_home: Some(home.clone()),
        };
        let plan = sandbox::Plan::resolve("srv", &sandbox::Policy::default(), &command, &[], &ctx)
            .unwrap();
        assert!(plan.read.contains(&nm), "{:?}", plan.read);
        assert!(
            plan.trust().contains("~/mcp/node_modules (its packages)"),
            "{}",
            plan.trust()
        );
        Config::parse("x", out.block.to_text().as_bytes(), &|_| None).unwrap();
    }

    #[test]
    fn a_script_or_a_file_in_the_arguments_is_read_never_written() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        let srv = home.join("srv");
        std::fs::create_dir_all(&srv).unwrap();
        let script = srv.join("server.py");
        let conf = srv.join("server.toml");
        std::fs::write(&script, "print()").unwrap();
        std::fs::write(&conf, "x = 1").unwrap();
        let cargo = home.join(".cargo");
        let data = home.join("data");
        std::fs::create_dir_all(&cargo).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        let d = |p: &std::path::Path| p.display().to_string();
        let input = json!({"mcpServers": {
            "py": {"command": "python3", "args": [d(&script), "--config", d(&conf), d(&srv), d(&cargo), d(&data), d(&srv.join("gone.db"))]}
        }});
        let out = convert_with_home(&input, Some(home)).unwrap();
        let v = serde_json::to_value(&out.block).unwrap();
        let s = &v["mcp_servers"]["py"];
        assert_eq!(
            s["sandbox"],
            json!({"read": [d(&script), d(&conf), d(&srv), d(&cargo)], "write": [d(&data)]})
        );
        let notes = out.notes.join("\n");
        for want in [
            format!("py: reads {} (its own script, named in its arguments; never writable)", d(&script)),
            format!("py: reads {} (named in its arguments); if it must write it, add it to \"sandbox\": {{\"write\": [...]}} yourself", d(&conf)),
            format!("py: reads {} (named in its arguments); not writable: it holds its own script {}", d(&srv), d(&script)),
            format!("py: writes {} (a directory named in its arguments)", d(&data)),
            format!("py: reads {} (named in its arguments); not writable: it covers {} (Cargo's home (its bin directory and registry)), where other programs load code from", d(&cargo), d(&cargo)),
            format!("py: {}, named in its arguments, does not exist: not granted", d(&srv.join("gone.db"))),
        ] {
            assert!(notes.contains(&want), "{want}\nin\n{notes}");
        }
    }

    #[test]
    fn secret_literals_in_args_become_env_references() {
        let input = json!({"mcpServers": {
            "gh": {"command": "gh-mcp", "args": ["--token", "ghp_abcdefghijklmnop", "--repo", "x"]},
            "pg": {"command": "pg-mcp", "args": ["postgresql://app:Sup3rS3cret@localhost/db", "--api-key=k123"]},
            "ok": {"command": "srv", "args": ["--token", "${ALREADY}", "--pin", "3"]}
        }});
        let out = convert_with_home(&input, None).unwrap();
        let text = out.block.to_text();
        for secret in ["ghp_abcdefghijklmnop", "Sup3rS3cret", "k123"] {
            assert!(!text.contains(secret), "{text}");
        }
        let v = serde_json::to_value(&out.block).unwrap();
        let s = &v["mcp_servers"];
        assert_eq!(
            s["gh"]["args"],
            json!(["--token", "${MCP_GH_TOKEN}", "--repo", "x"])
        );
        assert_eq!(
            s["pg"]["args"],
            json!(["${MCP_PG_ARG0}", "--api-key=${MCP_PG_API_KEY}"])
        );
        assert_eq!(
            s["ok"]["args"],
            json!(["--token", "${ALREADY}", "--pin", "3"])
        );
        let notes = out.notes.join("\n");
        assert!(
            notes.contains("gh: args[1] (--token) is now ${MCP_GH_TOKEN}: set MCP_GH_TOKEN in the daemon's environment; an argument is visible to every process on this machine"),
            "{notes}"
        );
        assert!(
            notes.contains("pg: args[0] (a secret-looking value) is now ${MCP_PG_ARG0}"),
            "{notes}"
        );
        Config::parse("x", text.as_bytes(), &|_| None).unwrap();
    }

    #[test]
    fn env_values_stay_unless_secret_and_a_path_in_one_gets_its_grant() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        let data = home.join("data");
        std::fs::create_dir_all(&data).unwrap();
        let db = data.join("app.db");
        std::fs::write(&db, "").unwrap();
        let cargo = home.join(".cargo");
        std::fs::create_dir_all(&cargo).unwrap();
        let d = |p: &std::path::Path| p.display().to_string();
        let input = json!({"mcpServers": {"s": {"command": "srv", "env": {
            "DB": d(&db),
            "WORK": "~/data",
            "LIB": d(&cargo),
            "TOP": d(&home.join("new.json")),
            "UP": d(&home.join("data/../data")),
            "MODE": "fast",
            "API_KEY": "plain-looking",
            "THING": "ghp_abcdefghijklmnopqrstuvwx",
            "FROM_ENV": "${ALREADY}"
        }}}});
        let out = convert_with_home(&input, Some(home)).unwrap();
        let v = serde_json::to_value(&out.block).unwrap();
        let s = &v["mcp_servers"]["s"];
        assert_eq!(s["env"]["DB"], d(&db));
        assert_eq!(s["env"]["WORK"], "~/data");
        assert_eq!(s["env"]["MODE"], "fast");
        assert_eq!(
            s["env"]["API_KEY"], "${MCP_S_API_KEY}",
            "secret by its name"
        );
        assert_eq!(s["env"]["THING"], "${MCP_S_THING}", "secret by its shape");
        assert_eq!(s["env"]["FROM_ENV"], "${ALREADY}");
        // The file and the directory are writable; shared code is read only; the home itself
        // and a path that climbs are never granted.
        assert_eq!(s["sandbox"]["write"], json!([d(&db), d(&data)]));
        assert_eq!(s["sandbox"]["read"], json!([d(&cargo)]));
        let notes = out.notes.join("\n");
        for want in [
            format!("s: writes {} (a file, named in env.DB)", d(&db)),
            format!("s: writes {} (a directory, named in env.WORK)", d(&data)),
            format!(
                "s: env.TOP names {}: not granted: it does not exist yet, and its directory is {}",
                d(&home.join("new.json")),
                d(home)
            ),
            format!(
                "s: env.UP names {}: not granted: it climbs with \"..\"",
                d(&home.join("data/../data"))
            ),
        ] {
            assert!(notes.contains(&want), "{want}\nin\n{notes}");
        }
        assert!(
            notes.contains(&format!(
                "s: reads {} (named in env.LIB); not writable: it covers",
                d(&cargo)
            )),
            "{notes}"
        );
        Config::parse("x", out.block.to_text().as_bytes(), &|_| None).unwrap();
    }

    #[test]
    fn names_that_flatten_alike_are_not_both_imported() {
        let out =
            convert(&json!({"mcpServers": {"a-b": {"command": "x"}, "a_b": {"command": "y"}}}))
                .unwrap();
        assert_eq!(out.block.mcp_servers.len(), 1);
        assert!(
            out.notes.iter().any(|n| n.contains("flattens like")),
            "{:?}",
            out.notes
        );
    }

    #[test]
    fn other_shapes_are_refused() {
        assert!(convert(&json!({"servers": 3})).is_err());
        assert!(convert(&json!([])).is_err());
    }
}
