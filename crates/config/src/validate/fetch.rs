//! The `fetch` block and the `feeds` list.

use std::time::Duration;

use serde_json::Value;

use crate::read::{describe, join, valid_name, Obj, Validator};
use crate::{FeedConfig, FetchConfig, ProblemKind};

impl Validator<'_> {
    pub(crate) fn fetch(&mut self, v: Option<&Value>) -> FetchConfig {
        let mut f = FetchConfig {
            allow_hosts: Vec::new(),
            deny_hosts: Vec::new(),
            max_body: webfetch::DEFAULT_MAX_BODY,
            host_interval: Duration::from_secs(1),
            timeouts: webfetch::Timeouts::default(),
        };
        let Some(v) = v else { return f };
        let Some(o) = self.object(
            "fetch",
            v,
            &[
                "allow_hosts",
                "deny_hosts",
                "max_body",
                "host_interval",
                "timeouts",
            ],
            true,
        ) else {
            return f;
        };
        f.allow_hosts = self.host_list(&o, "allow_hosts");
        f.deny_hosts = self.host_list(&o, "deny_hosts");
        if let Some(m) = self.positive(&o, "max_body") {
            f.max_body = m;
        }
        if let Some(d) = self.duration(&o, "host_interval") {
            f.host_interval = d;
        }
        if let Some(t) = o.map.get("timeouts") {
            if let Some(t) = self.object(
                "fetch.timeouts",
                t,
                &["resolve", "connect", "tls", "headers", "total"],
                true,
            ) {
                let ft = &mut f.timeouts;
                ft.resolve = self.positive_duration(&t, "resolve", ft.resolve);
                ft.connect = self.positive_duration(&t, "connect", ft.connect);
                ft.tls = self.positive_duration(&t, "tls", ft.tls);
                ft.headers = self.positive_duration(&t, "headers", ft.headers);
                ft.total = self.positive_duration(&t, "total", ft.total);
            }
        }
        f
    }

    pub(crate) fn host_list(&mut self, o: &Obj<'_>, key: &str) -> Vec<String> {
        let hosts = self.string_list(o, key);
        for (i, h) in hosts.iter().enumerate() {
            if !webfetch::host_pattern_is_valid(h) {
                self.bad_value(
                    &format!("{}[{i}]", join(&o.path, key)),
                    "a host name such as \"example.org\" or \"*.example.org\", or an IP address",
                    format!("{h:?}"),
                );
            }
        }
        hosts
    }

    pub(crate) fn feeds(&mut self, v: Option<&Value>, min_interval: Duration) -> Vec<FeedConfig> {
        let Some(v) = v else { return Vec::new() };
        let Value::Array(items) = v else {
            self.wrong_type("feeds", "a list of feed objects", v);
            return Vec::new();
        };
        let mut out: Vec<FeedConfig> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = format!("feeds[{i}]");
            let enabled = item.get("enabled").and_then(Value::as_bool).unwrap_or(true);
            let Some(o) = self.object(
                &path,
                item,
                &[
                    "name",
                    "url",
                    "interval",
                    "enabled",
                    "max_body",
                    "allow_private",
                    "baseline",
                ],
                enabled,
            ) else {
                continue;
            };
            let name = self.nonempty_string(&o, "name");
            if o.map.get("name").is_none() {
                self.problem(
                    &join(&path, "name"),
                    ProblemKind::Missing {
                        needed: "every feed needs a name",
                    },
                );
            }
            if let Some(n) = &name {
                if !valid_name(n) {
                    self.bad_value(
                        &join(&path, "name"),
                        "letters, digits, '-', '_' or '.', at most 64",
                        format!("{n:?}"),
                    );
                } else if out.iter().any(|f| &f.name == n) {
                    self.problem(
                        &join(&path, "name"),
                        ProblemKind::Duplicate {
                            what: "feed name",
                            name: n.clone(),
                        },
                    );
                }
            }
            let url = self.http_url(&o, "url");
            if o.map.get("url").is_none() {
                self.problem(
                    &join(&path, "url"),
                    ProblemKind::Missing {
                        needed: "every feed needs a url",
                    },
                );
            }
            let interval = self
                .positive_duration(&o, "interval", Duration::from_secs(30 * 60))
                .max(min_interval);
            let enabled = self.boolean(&o, "enabled", true);
            let max_body = self.positive(&o, "max_body");
            let allow_private = self.boolean(&o, "allow_private", false);
            let baseline = match o.map.get("baseline") {
                None => 3,
                Some(v) => match v.as_u64() {
                    Some(n) if n <= 1000 => n,
                    _ if v.is_number() => {
                        self.bad_value(
                            &join(&path, "baseline"),
                            "an integer from 0 to 1000",
                            describe(v),
                        );
                        3
                    }
                    _ => {
                        self.wrong_type(&join(&path, "baseline"), "an integer from 0 to 1000", v);
                        3
                    }
                },
            };
            if let (Some(name), Some(url)) = (name, url) {
                out.push(FeedConfig {
                    name,
                    url,
                    interval,
                    enabled,
                    max_body,
                    allow_private,
                    baseline,
                });
            }
        }
        out
    }
}
