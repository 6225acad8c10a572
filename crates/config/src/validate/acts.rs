//! The `acts` list.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::read::{join, Validator};
use crate::{ActConfig, McpServerConfig, ProblemKind};

impl Validator<'_> {
    pub(crate) fn acts(
        &mut self,
        v: Option<&Value>,
        servers: &BTreeMap<String, McpServerConfig>,
    ) -> Vec<ActConfig> {
        let Some(v) = v else { return Vec::new() };
        let Value::Array(items) = v else {
            self.wrong_type("acts", "a list of act objects", v);
            return Vec::new();
        };
        let _ = servers;
        let mut out: Vec<ActConfig> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = format!("acts[{i}]");
            let Some(o) = self.object(
                &path,
                item,
                &["name", "cmd", "read_only", "timeout", "max_output"],
                true,
            ) else {
                continue;
            };
            let name = self.nonempty_string(&o, "name");
            if !o.map.contains_key("name") {
                self.problem(
                    &join(&path, "name"),
                    ProblemKind::Missing {
                        needed: "every act needs a name",
                    },
                );
            }
            if let Some(n) = &name {
                let ok = n.len() <= 64
                    && n.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if !ok {
                    self.bad_value(
                        &join(&path, "name"),
                        "lowercase letters, digits and '_', at most 64",
                        format!("{n:?}"),
                    );
                } else if out.iter().any(|a| &a.name == n) {
                    self.problem(
                        &join(&path, "name"),
                        ProblemKind::Duplicate {
                            what: "act name",
                            name: n.clone(),
                        },
                    );
                }
            }
            let cmd = self.string_list(&o, "cmd");
            match o.map.get("cmd") {
                None => self.problem(
                    &join(&path, "cmd"),
                    ProblemKind::Missing {
                        needed: "an act needs cmd, the argv to run (no shell)",
                    },
                ),
                Some(_) if cmd.is_empty() => self.problem(
                    &join(&path, "cmd"),
                    ProblemKind::Empty {
                        expected: "a non-empty list: the program and its arguments",
                    },
                ),
                Some(_) if cmd[0] == "mcp" => self.problem(
                    &join(&path, "cmd"),
                    ProblemKind::Reserved {
                        name: cmd[0].clone(),
                    },
                ),
                Some(_) => {}
            }
            let read_only = self.boolean(&o, "read_only", false);
            let timeout = self.positive_duration(&o, "timeout", Duration::from_secs(30));
            let max_output = self.positive(&o, "max_output").unwrap_or(64 * 1024);
            if let (Some(name), false) = (name, cmd.is_empty()) {
                out.push(ActConfig {
                    name,
                    cmd,
                    read_only,
                    timeout,
                    max_output,
                });
            }
        }
        out
    }
}
