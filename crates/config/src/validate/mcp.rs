//! The `mcp_servers` blocks: the target, the sandbox and the `oauth` block.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::read::{describe, join, valid_name, Obj, Validator};
use crate::{
    flatten_name, McpDoor, McpOAuthConfig, McpServerConfig, McpTarget, ProblemKind, Secret,
};

use super::MAX_MCP_TIMEOUT;
// The tool-name pattern and the default `max_tools` are the host's, in `mcp::names`.
use mcp::names::{valid_tool_name, DEFAULT_MAX_TOOLS};

impl Validator<'_> {
    pub(crate) fn mcp_servers(&mut self, v: Option<&Value>) -> BTreeMap<String, McpServerConfig> {
        let mut out = BTreeMap::new();
        let Some(v) = v else { return out };
        let Value::Object(map) = v else {
            self.wrong_type("mcp_servers", "an object mapping names to server blocks", v);
            return out;
        };
        let mut flat: BTreeMap<String, String> = BTreeMap::new();
        for (name, block) in map {
            let path = format!("mcp_servers.{name}");
            if !valid_name(name) {
                self.bad_value(
                    &path,
                    "a server name of letters, digits, '-', '_' or '.', at most 64",
                    format!("{name:?}"),
                );
                continue;
            }
            if let Some(other) = flat.insert(flatten_name(name), name.clone()) {
                self.problem(
                    &path,
                    ProblemKind::FlattenCollision {
                        first: other,
                        second: name.clone(),
                        flat: flatten_name(name),
                    },
                );
            }
            let enabled = block
                .get("enabled")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let Some(o) = self.object(&path, block, crate::file::MCP_BLOCK_KEYS, enabled) else {
                continue;
            };
            if let Some(s) = self.mcp_server(name, &o) {
                out.insert(name.clone(), s);
            }
        }
        out
    }

    pub(crate) fn mcp_server(&mut self, name: &str, o: &Obj<'_>) -> Option<McpServerConfig> {
        let path = o.path.clone();
        let has = |k: &str| o.map.contains_key(k);
        let raw = |k: &str| o.map.get(k).and_then(Value::as_str).unwrap_or("");
        let written = if has("command") {
            let args = o.map.get("args").and_then(Value::as_array);
            std::iter::once(raw("command"))
                .chain(args.into_iter().flatten().filter_map(Value::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            raw("url").to_owned()
        };
        let mut sandbox = None;
        let target = match (has("command"), has("url")) {
            (true, true) => {
                self.problem(
                    &path,
                    ProblemKind::Conflict {
                        expected:
                            "either \"command\" (a local process) or \"url\" (an HTTP endpoint)",
                    },
                );
                None
            }
            (false, false) => {
                self.problem(
                    &path,
                    ProblemKind::Missing {
                        needed: "a server block needs \"command\" (a local process) or \"url\" (an HTTP endpoint)",
                    },
                );
                None
            }
            (true, false) => {
                for k in ["headers", "allow_private", "host_interval", "oauth"] {
                    if has(k) {
                        self.problem(
                            &join(&path, k),
                            ProblemKind::WrongKind {
                                only: "an HTTP server (with \"url\")",
                            },
                        );
                    }
                }
                let command = self.nonempty_string(o, "command");
                let args = self.string_list(o, "args");
                let env = self.secret_map(o, "env");
                let path_env = env
                    .get("PATH")
                    .map(|v| v.expose().to_owned())
                    .or_else(|| (self.env)("PATH"));
                sandbox = self.sandbox(o, command.as_deref(), &args, path_env.as_deref());
                command.map(|command| McpTarget::Stdio { command, args, env })
            }
            (false, true) => {
                for k in ["args", "env", "sandbox"] {
                    if has(k) {
                        self.problem(
                            &join(&path, k),
                            ProblemKind::WrongKind {
                                only: "a local server (with \"command\")",
                            },
                        );
                    }
                }
                let url = self.http_url(o, "url");
                let headers = self.secret_map(o, "headers");
                let allow_private = self.boolean(o, "allow_private", false);
                let host_interval = self.duration(o, "host_interval");
                url.map(|url| McpTarget::Http {
                    url,
                    headers,
                    door: McpDoor {
                        allow_private,
                        host_interval,
                    },
                })
            }
        };
        let enabled = self.boolean(o, "enabled", false);
        let allow_tools = self.string_list(o, "allow_tools");
        for (i, t) in allow_tools.iter().enumerate() {
            if !valid_tool_name(t) {
                self.bad_value(
                    &format!("{path}.allow_tools[{i}]"),
                    "a tool name matching [A-Za-z0-9_.-]{1,128}",
                    format!("{t:?}"),
                );
            }
        }
        let max_tools = self
            .positive(o, "max_tools")
            .unwrap_or(u64::try_from(DEFAULT_MAX_TOOLS).unwrap_or(u64::MAX));
        let mut timeouts = mcp::McpTimeouts::default();
        if let Some(t) = o.map.get("timeouts") {
            let tpath = join(&path, "timeouts");
            if let Some(t) = self.object(&tpath, t, crate::file::TIMEOUT_KEYS, o.enabled) {
                for (key, slot) in [
                    ("init", &mut timeouts.init),
                    ("list", &mut timeouts.list),
                    ("call", &mut timeouts.call),
                ] {
                    let d = self.positive_duration(&t, key, *slot);
                    if d > MAX_MCP_TIMEOUT {
                        self.bad_value(
                            &join(&tpath, key),
                            "at most \"10m\"",
                            format!("{:?}", t.map.get(key).map(describe).unwrap_or_default()),
                        );
                    } else {
                        *slot = d;
                    }
                }
            }
        }
        let protocol = match o.map.get("protocol") {
            None => mcp::Protocol::Auto,
            Some(v) => match v.as_str().and_then(mcp::Protocol::parse) {
                Some(p) => p,
                None => {
                    self.bad_value(
                        &join(&path, "protocol"),
                        "\"auto\", \"2026-07-28\" or \"2025-11-25\"",
                        describe(v),
                    );
                    mcp::Protocol::Auto
                }
            },
        };
        let oauth = match o.map.get("oauth") {
            Some(v) if has("url") => self.mcp_oauth(&join(&path, "oauth"), v, o.enabled),
            _ => McpOAuthConfig::default(),
        };
        Some(McpServerConfig {
            name: name.to_string(),
            target: target?,
            sandbox,
            written,
            enabled,
            allow_tools,
            max_tools,
            timeouts,
            protocol,
            oauth,
        })
    }

    /// `p` as a path when it is absolute, without `..` and without NUL; else `None`, and the
    /// error names `at` and what was expected (`what` said after it, if any).
    pub(crate) fn absolute_path(&mut self, at: &str, what: &str, p: String) -> Option<PathBuf> {
        let pp = std::path::Path::new(&p);
        let dotted = pp
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
        if !pp.is_absolute() || dotted || p.contains('\0') {
            self.bad_value(
                at,
                format!("an absolute path without \"..\"{what}"),
                format!("{p:?}"),
            );
            return None;
        }
        Some(PathBuf::from(p))
    }

    /// A stdio block's `sandbox`: `true` (the default), `false`, or `{"read": [paths],
    /// "write": [paths], "network": bool, "memory": bytes, "processes": n}`.
    pub(crate) fn sandbox(
        &mut self,
        o: &Obj<'_>,
        command: Option<&str>,
        args: &[String],
        path_env: Option<&str>,
    ) -> Option<sandbox::Policy> {
        let mut policy = sandbox::Policy::default();
        let Some(v) = o.map.get("sandbox") else {
            return Some(policy);
        };
        let path = join(&o.path, "sandbox");
        let so = match v {
            Value::Bool(true) => return Some(policy),
            Value::Bool(false) => return None,
            Value::Object(_) => self.object(&path, v, crate::file::SANDBOX_KEYS, o.enabled)?,
            _ => {
                self.wrong_type(
                    &path,
                    "true, false or an object {\"read\", \"write\", \"network\", \"hosts\", \"connect\", \"memory\", \"processes\", \"disk\", \"allow_shared_code\"}",
                    v,
                );
                return Some(policy);
            }
        };
        for (key, slot) in [("read", &mut policy.read), ("write", &mut policy.write)] {
            for (i, p) in self.string_list(&so, key).into_iter().enumerate() {
                if let Some(p) = self.absolute_path(&format!("{path}.{key}[{i}]"), "", p) {
                    slot.push(p);
                }
            }
        }
        policy.network = self.network(&so, &path);
        policy.allow_shared_code = self.boolean(&so, "allow_shared_code", false);
        self.no_shared_code(&path, &policy, command, args, path_env);
        if let Some(d) = self.positive(&so, "disk") {
            if d < sandbox::MIN_DISK {
                self.bad_value(
                    &join(&path, "disk"),
                    format!("at least {} bytes (16 MiB)", sandbox::MIN_DISK),
                    d.to_string(),
                );
            } else {
                policy.disk = d;
            }
        }
        if let Some(m) = self.positive(&so, "memory") {
            if m < sandbox::MIN_MEMORY {
                self.bad_value(
                    &join(&path, "memory"),
                    format!("at least {} bytes (64 MiB)", sandbox::MIN_MEMORY),
                    m.to_string(),
                );
            } else {
                policy.memory = m;
            }
        }
        if let Some(n) = self.positive(&so, "processes") {
            if n > sandbox::MAX_PROCESSES {
                self.bad_value(
                    &join(&path, "processes"),
                    format!("at most {}", sandbox::MAX_PROCESSES),
                    n.to_string(),
                );
            } else {
                policy.processes = n;
            }
        }
        Some(policy)
    }

    /// a `write` never covers the server's own program or script, nor (without
    /// `allow_shared_code`) a directory other programs load code from.
    pub(crate) fn no_shared_code(
        &mut self,
        path: &str,
        policy: &sandbox::Policy,
        command: Option<&str>,
        args: &[String],
        path_env: Option<&str>,
    ) {
        let home = (self.env)("HOME").map(PathBuf::from);
        let path_os = path_env.map(std::ffi::OsStr::new);
        let own = command
            .map(|c| sandbox::own_code(c, args, path_os))
            .unwrap_or_default();
        for (i, w) in policy.write.iter().enumerate() {
            let at = format!("{path}.write[{i}]");
            if let Some((p, what)) = own.iter().find(|(p, _)| p.starts_with(w)) {
                self.problem(
                    &at,
                    ProblemKind::Refused {
                        reason: format!(
                            "{} covers {} ({what}): a server that can rewrite its own code keeps a compromise across restarts, and you may run that code yourself outside Maven; grant it in \"read\" instead (an existing file named in \"args\" is readable already)",
                            w.display(),
                            p.display()
                        ),
                    },
                );
                continue;
            }
            if policy.allow_shared_code {
                continue;
            }
            if let Some((p, what)) = sandbox::shared_code(w, home.as_deref(), path_os) {
                self.problem(
                    &at,
                    ProblemKind::Refused {
                        reason: format!(
                            "{} covers {} ({what}), where other programs load code from: a server could plant code that you later run outside any sandbox. Its private directory already holds its own caches; grant a directory of its own instead, or set \"allow_shared_code\": true in this sandbox if that is what you mean",
                            w.display(),
                            p.display()
                        ),
                    },
                );
            }
        }
    }

    /// The `oauth` block of an HTTP server: `client_id`, `client_secret` (a `${ENV}`
    /// reference only: a secret is not written in the file), `client_metadata_url` (https,
    /// with a path).
    pub(crate) fn mcp_oauth(&mut self, path: &str, v: &Value, enabled: bool) -> McpOAuthConfig {
        let mut out = McpOAuthConfig::default();
        let Some(o) = self.object(
            path,
            v,
            &[
                "client_id",
                "client_secret",
                "client_metadata_url",
                "dpop",
                "grant",
                "private_key_file",
                "key_id",
                "workload_token_file",
                "idp",
            ],
            enabled,
        ) else {
            return out;
        };
        out.private_key_file = self.absolute_file(&o, "private_key_file");
        out.key_id = self.nonempty_string(&o, "key_id");
        if out.key_id.is_some() && out.private_key_file.is_none() {
            self.problem(
                &join(path, "key_id"),
                ProblemKind::Missing {
                    needed: "oauth.key_id needs oauth.private_key_file",
                },
            );
        }
        out.client_id = self.nonempty_string(&o, "client_id");
        if let Some(v) = o.map.get("dpop") {
            out.dpop = match v.as_str() {
                Some("auto") => oauth::DpopMode::Auto,
                Some("never") => oauth::DpopMode::Never,
                Some("required") => oauth::DpopMode::Required,
                _ => {
                    self.bad_value(
                        &join(path, "dpop"),
                        "\"auto\", \"never\" or \"required\"",
                        describe(v),
                    );
                    oauth::DpopMode::Auto
                }
            };
        }
        if let Some(raw) = o.map.get("client_secret") {
            let p = join(path, "client_secret");
            out.client_secret = self.secret_ref(&p, raw, enabled);
            if !o.map.contains_key("client_id") {
                self.problem(
                    &p,
                    ProblemKind::Missing {
                        needed: "oauth.client_secret needs oauth.client_id",
                    },
                );
            }
        }
        out.grant = self.oauth_grant(&o, path, &out);
        if let Some(u) = self.http_url(&o, "client_metadata_url") {
            let ok = url::Url::parse(&u)
                .is_ok_and(|x| x.scheme() == "https" && x.path() != "/" && x.fragment().is_none());
            if ok {
                out.client_metadata_url = Some(u);
            } else {
                self.bad_value(
                    &join(path, "client_metadata_url"),
                    "an https URL with a path",
                    format!("{u:?}"),
                );
            }
        }
        out
    }
}

impl Validator<'_> {
    /// `oauth.grant`: `"authorization_code"` (the default: the owner authorizes on the page),
    /// `"client_credentials"` (needs `client_id` and a `client_secret` or a
    /// `private_key_file`), `"jwt_bearer"` (a workload's token, `workload_token_file`) or
    /// `"enterprise"` (needs `client_id` and `idp`: the identity provider's `token_endpoint`,
    /// Maven's `client_id` there and its `client_secret` if any, and the owner's
    /// `id_token_file`).
    fn oauth_grant(&mut self, o: &Obj<'_>, path: &str, out: &McpOAuthConfig) -> oauth::Grant {
        let word = self.string(o, "grant");
        let grant_path = join(path, "grant");
        let workload = self.absolute_file(o, "workload_token_file");
        let idp = o.map.get("idp");
        let need = |me: &mut Self, ok: bool, needed: &'static str| {
            if !ok {
                me.problem(&grant_path, ProblemKind::Missing { needed });
            }
        };
        let grant = match word.as_deref() {
            None | Some("authorization_code") => oauth::Grant::AuthorizationCode,
            Some("client_credentials") => {
                need(
                    self,
                    out.client_id.is_some()
                        && (o.map.contains_key("client_secret") || out.private_key_file.is_some()),
                    "the client_credentials grant needs oauth.client_id and oauth.client_secret or oauth.private_key_file",
                );
                oauth::Grant::ClientCredentials
            }
            Some("jwt_bearer") => {
                need(
                    self,
                    workload.is_some(),
                    "the jwt_bearer grant needs oauth.workload_token_file",
                );
                oauth::Grant::JwtBearer(oauth::TokenSource::File(
                    workload.clone().unwrap_or_default(),
                ))
            }
            Some("enterprise") => {
                need(
                    self,
                    out.client_id.is_some() && idp.is_some(),
                    "the enterprise grant needs oauth.client_id and oauth.idp",
                );
                let e = idp.and_then(|v| self.oauth_idp(&join(path, "idp"), v, o.enabled));
                match e {
                    Some(e) => oauth::Grant::Enterprise(e),
                    None => oauth::Grant::AuthorizationCode,
                }
            }
            Some(other) => {
                self.bad_value(
                    &grant_path,
                    "\"authorization_code\", \"client_credentials\", \"jwt_bearer\" or \"enterprise\"",
                    format!("{other:?}"),
                );
                oauth::Grant::AuthorizationCode
            }
        };
        if workload.is_some() && !matches!(grant, oauth::Grant::JwtBearer(_)) {
            self.problem(
                &join(path, "workload_token_file"),
                ProblemKind::Missing {
                    needed: "oauth.workload_token_file is for oauth.grant \"jwt_bearer\"",
                },
            );
        }
        if idp.is_some()
            && !matches!(grant, oauth::Grant::Enterprise(_))
            && word.as_deref() != Some("enterprise")
        {
            self.problem(
                &join(path, "idp"),
                ProblemKind::Missing {
                    needed: "oauth.idp is for oauth.grant \"enterprise\"",
                },
            );
        }
        grant
    }

    /// `oauth.idp` of the enterprise grant.
    fn oauth_idp(&mut self, path: &str, v: &Value, enabled: bool) -> Option<oauth::Enterprise> {
        let o = self.object(
            path,
            v,
            &[
                "token_endpoint",
                "client_id",
                "client_secret",
                "id_token_file",
            ],
            enabled,
        )?;
        let token_endpoint = self.http_url(&o, "token_endpoint");
        let client_id = self.nonempty_string(&o, "client_id");
        let id_token = self.absolute_file(&o, "id_token_file");
        let client_secret = o
            .map
            .get("client_secret")
            .and_then(|raw| self.secret_ref(&join(path, "client_secret"), raw, enabled))
            .map(|s| s.0);
        for (key, present) in [
            ("token_endpoint", token_endpoint.is_some()),
            ("client_id", client_id.is_some()),
            ("id_token_file", id_token.is_some()),
        ] {
            if !present && !o.map.contains_key(key) {
                self.problem(
                    &join(path, key),
                    ProblemKind::Missing {
                        needed: "oauth.idp needs token_endpoint, client_id and id_token_file",
                    },
                );
            }
        }
        Some(oauth::Enterprise {
            token_endpoint: token_endpoint?,
            client_id: client_id?,
            client_secret,
            id_token: oauth::TokenSource::File(id_token?),
        })
    }

    /// A secret: a `${ENV}` reference only (a secret is not written in the file).
    fn secret_ref(&mut self, p: &str, raw: &Value, enabled: bool) -> Option<Secret> {
        match raw {
            Value::String(r)
                if r.starts_with("${") && r.ends_with('}') && r.matches("${").count() == 1 =>
            {
                self.expand(p, r, enabled).map(Secret)
            }
            Value::String(_) => {
                self.bad_value(
                    p,
                    "a ${ENV} reference (a secret is not written in the file)",
                    "a literal string",
                );
                None
            }
            other => {
                self.wrong_type(p, "a string", other);
                None
            }
        }
    }

    /// An absolute path to a file (a key, a token), without `..`.
    fn absolute_file(&mut self, o: &Obj<'_>, key: &str) -> Option<PathBuf> {
        let p = self.nonempty_string(o, key)?;
        let pp = std::path::Path::new(&p);
        let dotted = pp
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
        if !pp.is_absolute() || dotted || p.contains('\0') {
            self.bad_value(
                &join(&o.path, key),
                "an absolute path without \"..\"",
                format!("{p:?}"),
            );
            return None;
        }
        Some(PathBuf::from(p))
    }
}

impl Validator<'_> {
    /// A sandbox's `network` (`true`, `false` or `"direct"`), with the proxy's `hosts` and
    /// `connect`, which only `true` takes.
    fn network(&mut self, so: &Obj<'_>, path: &str) -> sandbox::Network {
        let hosts = self.string_list(so, "hosts");
        for (i, h) in hosts.iter().enumerate() {
            if !webfetch::host_pattern_is_valid(h) {
                self.bad_value(
                    &format!("{path}.hosts[{i}]"),
                    "a host name, *.domain or an IP address",
                    format!("{h:?}"),
                );
            }
        }
        let mut connect = Vec::new();
        for (i, c) in self.string_list(so, "connect").into_iter().enumerate() {
            match sandbox::Endpoint::parse(&c) {
                Ok(e) => connect.push(e),
                Err(expected) => {
                    self.bad_value(&format!("{path}.connect[{i}]"), expected, format!("{c:?}"))
                }
            }
        }
        let (network, written) = match so.map.get("network") {
            None | Some(Value::Bool(true)) => {
                return sandbox::Network::Proxy { hosts, connect };
            }
            Some(Value::Bool(false)) => (sandbox::Network::None, "false"),
            Some(Value::String(s)) if s == "direct" => (sandbox::Network::Direct, "\"direct\""),
            Some(v) => {
                self.wrong_type(&join(path, "network"), "true, false or \"direct\"", v);
                return sandbox::Network::default();
            }
        };
        for (key, given) in [
            ("hosts", !hosts.is_empty()),
            ("connect", !connect.is_empty()),
        ] {
            if given {
                self.bad_value(
                    &join(path, key),
                    format!("no {key} with \"network\": {written} (only the proxy of \"network\": true takes them)"),
                    "a list",
                );
            }
        }
        network
    }
}
