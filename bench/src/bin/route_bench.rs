//! `route-bench`: how well a router turns the owner's sentences into acts (see BENCHMARKS.md,
//! "Routing (bench/route)").
//!
//! `route-bench [--url URL --model NAME --context 4096 --tools auto|off --timeout 120]
//! [--catalogue bench/route/catalogue.json] [--sentences bench/route/sentences.json]
//! [--owner bench/route/owner] [--limit N] [--verbose]`
//!
//! The catalogue is the tool listing of real MCP servers (each entry `{server, name,
//! description, inputSchema, annotations}`), named as the daemon names rows
//! (`<server>_<tool>` flattened) and offered with the daemon's description cap. Each sentence
//! names the act a correct route takes (or a list of acceptable acts, or `null` when no act
//! should serve it) and the arguments a correct call must carry.
//!
//! Without `--url` the rules router alone routes every sentence. With `--url` the model router
//! (an OpenAI-compatible chat-completions endpoint on loopback) routes them too, one request at
//! a time, and the table puts three routers side by side: `rules`, `model` (asked directly),
//! and `rules+model` (what the daemon does: the rules router's decision unless it cannot help,
//! then the model's; a model error falls back to the rules).
//!
//! The sentence templates are measured beside them, without a model: `phrasebook` (the
//! phrasebook that ships with Maven, keyed by each server's `serverInfo.name`), `phrasebook+rules`
//! (the phrasebook, then the rules router), and `files+phrasebook+rules` (the owner's files in
//! `--owner`, written for this catalogue, then the phrasebook, then the rules): what the daemon
//! does before it asks a model.
//!
//! Each sentence lands in one category: the right act with the right arguments; the right act
//! with arguments that are wrong or missing (a tail the act cannot bind, named arguments its
//! schema refuses, or an expected value not matched); a wrong act that only reads; a wrong act
//! that may write (an act may write unless its annotations claim `readOnlyHint: true`); no act
//! although one was expected; no act, rightly; or the model's request failed.

#![allow(
    clippy::disallowed_macros,
    reason = "a benchmark prints its measurements"
)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{json, Map, Value};
use turns::llm::{CatalogueEntry, Endpoint, LlmRouter};
use turns::rules::{self, ActName, Decision};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Res<T> = Result<T, BoxError>;

#[derive(Debug, Clone)]
struct Opts {
    owner: String,
    url: Option<String>,
    model: String,
    context: u64,
    tools: bool,
    timeout: u64,
    catalogue: String,
    sentences: String,
    limit: Option<usize>,
    verbose: bool,
}

fn parse(args: &[String]) -> Res<Opts> {
    let mut o = Opts {
        url: None,
        model: "smollm2".to_owned(),
        context: 4096,
        tools: true,
        timeout: 120,
        catalogue: "bench/route/catalogue.json".to_owned(),
        sentences: "bench/route/sentences.json".to_owned(),
        owner: "bench/route/owner".to_owned(),
        limit: None,
        verbose: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || -> Res<String> {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{a} needs a value").into())
        };
        match a.as_str() {
            "--url" => o.url = Some(val()?),
            "--model" => o.model = val()?,
            "--context" => o.context = val()?.parse()?,
            "--tools" => {
                o.tools = match val()?.as_str() {
                    "auto" => true,
                    "off" => false,
                    other => return Err(format!("--tools is auto or off, not {other:?}").into()),
                }
            }
            "--timeout" => o.timeout = val()?.parse()?,
            "--catalogue" => o.catalogue = val()?,
            "--sentences" => o.sentences = val()?,
            "--owner" => o.owner = val()?,
            "--limit" => o.limit = Some(val()?.parse()?),
            "--verbose" => o.verbose = true,
            other => return Err(format!("unknown argument {other:?}").into()),
        }
    }
    Ok(o)
}

/// One act of the catalogue, as the daemon would hold its row.
#[derive(Debug, Clone)]
struct Act {
    entry: CatalogueEntry,
    read_only: bool,
}

/// Reads the catalogue: one act per entry, named as the daemon names rows.
fn catalogue(v: &Value) -> Res<Vec<Act>> {
    let list = v.as_array().ok_or("the catalogue is not a JSON array")?;
    let mut out = Vec::new();
    for e in list {
        let field = |k: &str| -> Res<&str> {
            e.get(k)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("a catalogue entry without a string {k:?}: {e}").into())
        };
        let (server, tool) = (field("server")?, field("name")?);
        let description = e.get("description").and_then(Value::as_str).unwrap_or("");
        let read_only = e.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true));
        out.push(Act {
            entry: CatalogueEntry {
                act: ActName {
                    name: allowlist::naming::flatten_name(server, tool),
                    tool: tool.to_owned(),
                },
                description: allowlist::catalogue::cap_description(
                    description,
                    allowlist::DESCRIPTION_CAP,
                )
                .into_owned(),
                schema: e.get("inputSchema").cloned().unwrap_or_else(|| json!({})),
            },
            read_only,
        });
    }
    Ok(out)
}

/// One sentence and what a correct route does with it.
#[derive(Debug, Clone)]
struct Sentence {
    text: String,
    lang: String,
    /// The acceptable acts, each with the arguments a correct call carries (`None`: not
    /// checked); empty when no act should serve the sentence.
    expect: Vec<(String, Option<Value>)>,
}

/// Reads the sentences. `act` is a row name, a list of them, or null; `args` is an object (for
/// every acceptable act), a list as long as `act` (one each), or null (not checked).
fn sentences(v: &Value) -> Res<Vec<Sentence>> {
    let list = v.as_array().ok_or("the sentences are not a JSON array")?;
    let mut out = Vec::new();
    for s in list {
        let text = s
            .get("text")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("a sentence without a text: {s}"))?;
        let lang = s.get("lang").and_then(Value::as_str).unwrap_or("en");
        let acts: Vec<String> = match s.get("act") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(a)) => vec![a.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| x.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| format!("an act list with a non-string: {s}"))?,
            Some(other) => return Err(format!("act is not a name, a list or null: {other}").into()),
        };
        let args: Vec<Option<Value>> = match s.get("args") {
            None | Some(Value::Null) => vec![None; acts.len()],
            Some(Value::Array(a)) if a.len() == acts.len() => a.iter().cloned().map(Some).collect(),
            Some(a @ Value::Object(_)) => vec![Some(a.clone()); acts.len()],
            Some(other) => {
                return Err(
                    format!("args of {text:?} is not an object or one per act: {other}").into(),
                )
            }
        };
        out.push(Sentence {
            text: text.to_owned(),
            lang: lang.to_owned(),
            expect: acts.into_iter().zip(args).collect(),
        });
    }
    Ok(out)
}

/// Whether `actual` carries what `expected` lists: an object every listed key (at every
/// depth), an array an element matching each listed element, a string the same text
/// (trimmed, any case), a number the same value, anything else the same value.
fn matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|got| matches(v, got))),
        (Value::Array(e), Value::Array(a)) => e.iter().all(|v| a.iter().any(|got| matches(v, got))),
        (Value::String(e), Value::String(a)) => e.trim().to_lowercase() == a.trim().to_lowercase(),
        (Value::Number(e), Value::Number(a)) => e.as_f64() == a.as_f64(),
        (e, a) => e == a,
    }
}

/// What a router chose for one sentence.
#[derive(Debug, Clone, PartialEq)]
enum Chosen {
    /// An act, with the arguments it would run with (`None`: none it could run with).
    Act(String, Option<Map<String, Value>>),
    /// No act (a plain answer, a refusal, a built-in intent), as the router put it.
    Nothing(String),
    /// The request failed.
    Failed(String),
}

/// Where one sentence lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Right,
    WrongArgs,
    WrongReadOnly,
    WrongMayWrite,
    Missed,
    NoneRight,
    Failed,
}

const OUTCOMES: [(Outcome, &str, &str); 7] = [
    (Outcome::Right, "right", "right act+args"),
    (Outcome::WrongArgs, "wrong_args", "right act, args wrong"),
    (
        Outcome::WrongReadOnly,
        "wrong_read_only",
        "wrong act (reads)",
    ),
    (
        Outcome::WrongMayWrite,
        "wrong_may_write",
        "wrong act (may write)",
    ),
    (Outcome::Missed, "missed", "none, act expected"),
    (Outcome::NoneRight, "none_right", "none, rightly"),
    (Outcome::Failed, "failed", "request failed"),
];

/// Scores one choice against what the sentence expects. `read_only` says whether an act
/// claims to only read (an act not in the catalogue may write).
fn score(
    expect: &[(String, Option<Value>)],
    chosen: &Chosen,
    read_only: impl Fn(&str) -> bool,
) -> Outcome {
    match chosen {
        Chosen::Failed(_) => Outcome::Failed,
        Chosen::Nothing(_) if expect.is_empty() => Outcome::NoneRight,
        Chosen::Nothing(_) => Outcome::Missed,
        Chosen::Act(name, args) => match expect.iter().find(|(a, _)| a == name) {
            Some((_, want)) => match (want, args) {
                (_, None) => Outcome::WrongArgs,
                (None, Some(_)) => Outcome::Right,
                (Some(want), Some(got)) if matches(want, &Value::Object(got.clone())) => {
                    Outcome::Right
                }
                (Some(_), Some(_)) => Outcome::WrongArgs,
            },
            None if read_only(name) => Outcome::WrongReadOnly,
            None => Outcome::WrongMayWrite,
        },
    }
}

/// The daemon's row for an act: enabled, destructive unless it claims to only read.
fn row(act: &Act) -> allowlist::ToolRow {
    let e = &act.entry;
    let server = e
        .act
        .name
        .strip_suffix(&allowlist::naming::flatten(&e.act.tool))
        .unwrap_or("")
        .trim_end_matches('_')
        .to_owned();
    allowlist::ToolRow {
        name: e.act.name.clone(),
        kind: allowlist::ToolKind::Mcp,
        server: server.clone(),
        tool: e.act.tool.clone(),
        cmd: vec!["mcp".into(), server.clone(), e.act.tool.clone()],
        scope: format!("mcp:{server}"),
        state: allowlist::ToolState::Enabled,
        destructive: !act.read_only,
        fingerprint: None,
        description: e.description.clone(),
        input_schema: e.schema.clone(),
        shape: json!({}),
        approved_shape: None,
        provenance: String::new(),
        created: time::OffsetDateTime::UNIX_EPOCH,
        updated: time::OffsetDateTime::UNIX_EPOCH,
    }
}

/// What a decision runs with: a tail bound as the daemon binds it (every read-only act named
/// in its server's `allow_tools`, the most the owner can grant), named arguments checked
/// against the act's schema.
fn chosen(decision: &Decision, acts: &[Act], allow_tools: &[String]) -> Chosen {
    let find = |name: &str| acts.iter().find(|a| a.entry.act.name == name);
    match decision {
        Decision::RunAct { name, tail } => Chosen::Act(
            name.clone(),
            find(name).and_then(|a| allowlist::bind_positional(&row(a), allow_tools, tail).ok()),
        ),
        Decision::CallAct { name, arguments } => Chosen::Act(
            name.clone(),
            find(name).and_then(|a| {
                allowlist::run::schema::validate(name, &a.entry.schema, arguments)
                    .ok()
                    .map(|()| arguments.clone())
            }),
        ),
        Decision::Say(text) => Chosen::Nothing(format!("says {text:?}")),
        other => Chosen::Nothing(format!("{other:?}")),
    }
}

/// One router's results: per sentence, its language, outcome and latency.
#[derive(Debug, Default)]
struct Tally {
    rows: Vec<(String, Outcome, Duration)>,
}

impl Tally {
    fn counts(&self, lang: Option<&str>) -> (usize, BTreeMap<Outcome, usize>, Vec<Duration>) {
        let mut n = 0;
        let mut by = BTreeMap::new();
        let mut lat = Vec::new();
        for (l, o, d) in &self.rows {
            if lang.is_some_and(|x| x != l) {
                continue;
            }
            n += 1;
            *by.entry(*o).or_insert(0) += 1;
            lat.push(*d);
        }
        lat.sort();
        (n, by, lat)
    }
}

/// The `q`-quantile of sorted latencies, in milliseconds.
fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn table(routers: &[(&str, &Tally)]) -> String {
    let mut t = String::from("| router | lang | n |");
    for (_, _, head) in OUTCOMES {
        let _ = write!(t, " {head} |");
    }
    t.push_str(" p50 ms | p90 ms |\n|---|---|--:|");
    for _ in OUTCOMES {
        t.push_str("--:|");
    }
    t.push_str("--:|--:|\n");
    for (name, tally) in routers {
        for lang in [Some("en"), Some("ru"), None] {
            let (n, by, lat) = tally.counts(lang);
            let _ = write!(t, "| {name} | {} | {n} |", lang.unwrap_or("all"));
            for (o, _, _) in OUTCOMES {
                let _ = write!(t, " {} |", by.get(&o).copied().unwrap_or(0));
            }
            let _ = writeln!(
                t,
                " {:.3} | {:.3} |",
                quantile_ms(&lat, 0.5),
                quantile_ms(&lat, 0.9)
            );
        }
    }
    t
}

fn totals(tally: &Tally) -> Value {
    let (n, by, lat) = tally.counts(None);
    let mut m = Map::new();
    m.insert("n".into(), json!(n));
    for (o, key, _) in OUTCOMES {
        m.insert(key.into(), json!(by.get(&o).copied().unwrap_or(0)));
    }
    m.insert("p50_ms".into(), json!(quantile_ms(&lat, 0.5)));
    m.insert("p90_ms".into(), json!(quantile_ms(&lat, 0.9)));
    Value::Object(m)
}

fn describe(c: &Chosen) -> String {
    match c {
        Chosen::Act(name, Some(args)) => format!("{name} {}", Value::Object(args.clone())),
        Chosen::Act(name, None) => format!("{name} (no arguments it can run with)"),
        Chosen::Nothing(how) => format!("none: {how}"),
        Chosen::Failed(e) => format!("failed: {e}"),
    }
}

/// A JSON file, or why not (naming it).
fn read_json(path: &str) -> Res<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    Ok(serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?)
}

/// The `serverInfo.name` each catalogue server gives (bench/route/README.md names the
/// listings): what the phrasebook's intents are keyed by.
fn server_infos() -> BTreeMap<String, String> {
    [
        ("todo", "maven-demo-todo"),
        ("memory", "memory-server"),
        ("time", "mcp-time"),
        ("filesystem", "secure-filesystem-server"),
        ("fetch", "mcp-fetch"),
        ("git", "mcp-git"),
        ("everything", "mcp-servers/everything"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_owned(), b.to_owned()))
    .collect()
}

/// The owner's sentence files in `dir` (`en/*.yaml`, `ru/*.yaml`).
fn owner_files(dir: &str) -> Res<Vec<turns::templates::SentenceFile>> {
    let mut out = Vec::new();
    for (sub, lang) in [("en", turns::Lang::En), ("ru", turns::Lang::Ru)] {
        let Ok(entries) = std::fs::read_dir(format!("{dir}/{sub}")) else {
            continue;
        };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths
            .into_iter()
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        {
            out.push(turns::templates::SentenceFile {
                name: p.display().to_string(),
                text: std::fs::read_to_string(&p)?,
                lang: Some(lang),
            });
        }
    }
    Ok(out)
}

/// What a template route runs with: its arguments checked against the act's schema.
fn templated(r: Option<turns::templates::Routed>, acts: &[Act]) -> Option<Chosen> {
    let r = r?;
    let a = acts.iter().find(|a| a.entry.act.name == r.act)?;
    Some(Chosen::Act(
        r.act.clone(),
        allowlist::run::schema::validate(&r.act, &a.entry.schema, &r.arguments)
            .ok()
            .map(|()| r.arguments),
    ))
}

async fn run(o: Opts) -> Res<()> {
    let acts = catalogue(&read_json(&o.catalogue)?)?;
    let mut all = sentences(&read_json(&o.sentences)?)?;
    if let Some(n) = o.limit {
        all.truncate(n);
    }
    let names: Vec<ActName> = acts.iter().map(|a| a.entry.act.clone()).collect();
    let entries: Vec<CatalogueEntry> = acts.iter().map(|a| a.entry.clone()).collect();
    let allow_tools: Vec<String> = acts
        .iter()
        .filter(|a| a.read_only)
        .map(|a| a.entry.act.tool.clone())
        .collect();
    let read_only = |name: &str| acts.iter().any(|a| a.entry.act.name == name && a.read_only);
    let model = o.url.as_ref().map(|url| {
        let mut door = webfetch::DoorConfig::new("router");
        door.allow_private = true;
        door.host_interval = Duration::ZERO;
        door.timeouts.headers = Duration::from_secs(o.timeout);
        door.timeouts.total = Duration::from_secs(o.timeout);
        LlmRouter::new(
            Endpoint {
                url: url.clone(),
                model: o.model.clone(),
                context_tokens: o.context,
                headers: Vec::new(),
                tools: o.tools,
            },
            door,
        )
    });

    let (mut by_rules, mut by_model, mut by_daemon) =
        (Tally::default(), Tally::default(), Tally::default());
    let (mut by_book, mut by_book_rules, mut by_files) =
        (Tally::default(), Tally::default(), Tally::default());
    let rows: Vec<allowlist::ToolRow> = acts.iter().map(row).collect();
    let infos = server_infos();
    let book = turns::templates::Templates::phrasebook();
    let files = turns::templates::Templates::load(&owner_files(&o.owner)?).map_err(|e| {
        e.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    for s in &all {
        let lang = if s.lang == "ru" {
            turns::Lang::Ru
        } else {
            turns::Lang::En
        };
        for (tally, templates, then_rules) in [
            (&mut by_book, &book, false),
            (&mut by_book_rules, &book, true),
            (&mut by_files, &files, true),
        ] {
            let t0 = tokio::time::Instant::now();
            let routed = templated(
                templates.route(&s.text, lang, "typed", &rows, &infos),
                &acts,
            );
            let chose = match (routed, then_rules) {
                (Some(c), _) => c,
                (None, false) => Chosen::Nothing("no template".into()),
                (None, true) => chosen(&rules::route(&s.text, &names), &acts, &allow_tools),
            };
            let took = t0.elapsed();
            let out = score(&s.expect, &chose, read_only);
            if o.verbose && then_rules {
                eprintln!("templates {out:?}\t{}\t{}", s.text, describe(&chose));
            }
            tally.rows.push((s.lang.clone(), out, took));
        }
        let t0 = tokio::time::Instant::now();
        let decision = rules::route(&s.text, &names);
        let rules_took = t0.elapsed();
        let rules_chose = chosen(&decision, &acts, &allow_tools);
        let rules_out = score(&s.expect, &rules_chose, read_only);
        by_rules.rows.push((s.lang.clone(), rules_out, rules_took));
        if o.verbose {
            eprintln!(
                "rules {rules_out:?}\t{}\t{}",
                s.text,
                describe(&rules_chose)
            );
        }
        let Some(router) = &model else { continue };
        let t0 = tokio::time::Instant::now();
        let asked = router.route(&s.text, &entries).await;
        let took = t0.elapsed();
        let model_chose = match &asked {
            Ok(d) => chosen(d, &acts, &allow_tools),
            Err(e) => Chosen::Failed(e.to_string()),
        };
        let model_out = score(&s.expect, &model_chose, read_only);
        by_model.rows.push((s.lang.clone(), model_out, took));
        if o.verbose {
            eprintln!(
                "model {model_out:?}\t{}\t{}",
                s.text,
                describe(&model_chose)
            );
        }
        // The daemon: the rules router's decision unless it cannot help; then the model's,
        // and the rules router's again when the model fails.
        let daemon = match (&decision, &model_chose) {
            (Decision::CannotHelp(_), Chosen::Failed(_)) => (rules_out, rules_took + took),
            (Decision::CannotHelp(_), _) => (model_out, rules_took + took),
            _ => (rules_out, rules_took),
        };
        by_daemon.rows.push((s.lang.clone(), daemon.0, daemon.1));
    }

    let mut routers = vec![
        ("rules", &by_rules),
        ("phrasebook", &by_book),
        ("phrasebook+rules", &by_book_rules),
        ("files+phrasebook+rules", &by_files),
    ];
    if model.is_some() {
        routers.push(("model", &by_model));
        routers.push(("rules+model", &by_daemon));
    }
    println!(
        "{} sentences, {} acts ({} read-only){}",
        all.len(),
        acts.len(),
        allow_tools.len(),
        match &o.url {
            Some(u) => format!(
                "; model {:?} at {u}, context {}, tools {}",
                o.model,
                o.context,
                if o.tools { "auto" } else { "off" }
            ),
            None => String::new(),
        }
    );
    print!("{}", table(&routers));
    let mut line = Map::new();
    line.insert("bench".into(), json!("route"));
    line.insert("sentences".into(), json!(all.len()));
    line.insert("acts".into(), json!(acts.len()));
    if model.is_some() {
        line.insert(
            "endpoint".into(),
            json!({"model": o.model, "context": o.context, "tools": if o.tools { "auto" } else { "off" }}),
        );
    }
    for (name, tally) in &routers {
        line.insert((*name).into(), totals(tally));
    }
    println!("{}", Value::Object(line));
    Ok(())
}

/// Whether `url` is `http://` to a loopback address written as one (`127.0.0.0/8`, `[::1]`;
/// the `router` door refuses the name `localhost` as it refuses every local name).
fn on_loopback(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return false;
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = parse(&args).and_then(|o| {
        if let Some(url) = &o.url {
            if !on_loopback(url) {
                return Err(format!("--url must be on loopback, not {url:?}").into());
            }
        }
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(run(o))
    });
    if let Err(e) = result {
        eprintln!("route-bench: {e}");
        std::process::exit(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(v: Value) -> Vec<(String, Option<Value>)> {
        sentences(&json!([v])).unwrap().remove(0).expect
    }

    fn args(v: Value) -> Option<Map<String, Value>> {
        let Value::Object(m) = v else { panic!() };
        Some(m)
    }

    #[test]
    fn arguments_match_on_the_listed_keys_at_every_depth() {
        assert!(matches(
            &json!({"timezone": "asia/tokyo"}),
            &json!({"timezone": " Asia/Tokyo ", "extra": 1})
        ));
        assert!(!matches(
            &json!({"timezone": "Asia/Tokyo"}),
            &json!({"timezone": "Asia/Seoul"})
        ));
        assert!(!matches(&json!({"timezone": "Asia/Tokyo"}), &json!({})));
        assert!(matches(&json!({"task_id": 3}), &json!({"task_id": 3.0})));
        assert!(!matches(&json!({"task_id": 3}), &json!({"task_id": "3"})));
        assert!(matches(&json!({"done": false}), &json!({"done": false})));
        assert!(!matches(&json!({"done": false}), &json!({"done": true})));
        assert!(matches(
            &json!({"entities": [{"name": "Anna"}]}),
            &json!({"entities": [{"name": "Tea"}, {"name": "anna", "observations": ["likes tea"]}]})
        ));
        assert!(!matches(
            &json!({"names": ["Anna", "Boris"]}),
            &json!({"names": ["Anna"]})
        ));
        assert!(matches(&json!({}), &json!({"anything": 1})));
    }

    #[test]
    fn every_outcome_is_scored() {
        let ro = |n: &str| n.ends_with("list_tasks") || n == "time_get_current_time";
        let time = expect(
            json!({"text": "t", "act": "time_get_current_time", "args": {"timezone": "Asia/Tokyo"}}),
        );
        let act = |n: &str, a: Value| Chosen::Act(n.into(), args(a));
        assert_eq!(
            score(
                &time,
                &act("time_get_current_time", json!({"timezone": "Asia/Tokyo"})),
                ro
            ),
            Outcome::Right
        );
        assert_eq!(
            score(
                &time,
                &act("time_get_current_time", json!({"timezone": "Tokyo"})),
                ro
            ),
            Outcome::WrongArgs
        );
        assert_eq!(
            score(
                &time,
                &Chosen::Act("time_get_current_time".into(), None),
                ro
            ),
            Outcome::WrongArgs
        );
        assert_eq!(
            score(&time, &act("todo_list_tasks", json!({})), ro),
            Outcome::WrongReadOnly
        );
        assert_eq!(
            score(&time, &act("todo_clear_done", json!({})), ro),
            Outcome::WrongMayWrite
        );
        assert_eq!(
            score(&time, &act("not_in_catalogue", json!({})), ro),
            Outcome::WrongMayWrite
        );
        assert_eq!(
            score(&time, &Chosen::Nothing(String::new()), ro),
            Outcome::Missed
        );
        assert_eq!(
            score(&time, &Chosen::Failed("x".into()), ro),
            Outcome::Failed
        );

        let none = expect(json!({"text": "hi", "act": null, "args": null}));
        assert!(none.is_empty());
        assert_eq!(
            score(&none, &Chosen::Nothing(String::new()), ro),
            Outcome::NoneRight
        );
        assert_eq!(
            score(&none, &act("todo_list_tasks", json!({})), ro),
            Outcome::WrongReadOnly
        );
        assert_eq!(
            score(&none, &act("todo_clear_done", json!({})), ro),
            Outcome::WrongMayWrite
        );

        // Either of two acts, each with its own arguments; unchecked arguments need only a call
        // that can run.
        let mem = expect(
            json!({"text": "remember", "act": ["memory_create_entities", "memory_add_observations"],
            "args": [{"entities": [{"name": "Anna"}]}, {"observations": [{"entityName": "Anna"}]}]}),
        );
        assert_eq!(
            score(
                &mem,
                &act(
                    "memory_add_observations",
                    json!({"observations": [{"entityName": "Anna", "contents": ["x"]}]})
                ),
                ro
            ),
            Outcome::Right
        );
        assert_eq!(
            score(
                &mem,
                &act(
                    "memory_create_entities",
                    json!({"observations": [{"entityName": "Anna"}]})
                ),
                ro
            ),
            Outcome::WrongArgs
        );
        let loose = expect(json!({"text": "x", "act": "todo_clear_done"}));
        assert_eq!(
            score(&loose, &act("todo_clear_done", json!({})), ro),
            Outcome::Right
        );
        assert!(sentences(&json!([{"text": "x", "act": ["a", "b"], "args": [{}]}])).is_err());
    }

    #[test]
    fn decisions_become_the_arguments_the_daemon_would_run_with() {
        let cat = catalogue(&json!([
            {"server": "todo", "name": "list_tasks", "description": "Lists",
             "inputSchema": {"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]},
             "annotations": {"readOnlyHint": true}},
            {"server": "todo", "name": "update_task", "description": "Updates",
             "inputSchema": {"type": "object", "properties": {"task_id": {"type": "integer"}}, "required": ["task_id"]},
             "annotations": {"readOnlyHint": false}},
        ]))
        .unwrap();
        assert_eq!(cat[0].entry.act.name, "todo_list_tasks");
        assert!(cat[0].read_only && !cat[1].read_only);
        let allow = vec!["list_tasks".to_owned()];
        let names: Vec<ActName> = cat.iter().map(|a| a.entry.act.clone()).collect();
        // A read-only act's one string argument takes the tail.
        assert_eq!(
            chosen(&rules::route("list tasks inbox", &names), &cat, &allow),
            Chosen::Act("todo_list_tasks".into(), args(json!({"project": "inbox"})))
        );
        // A write's arguments are never guessed from a tail.
        assert_eq!(
            chosen(&rules::route("update task 3", &names), &cat, &allow),
            Chosen::Act("todo_update_task".into(), None)
        );
        assert!(matches!(
            chosen(&rules::route("hello", &names), &cat, &allow),
            Chosen::Nothing(_)
        ));
        // Named arguments count only when the schema takes them.
        let call = |a: Value| Decision::CallAct {
            name: "todo_update_task".into(),
            arguments: args(a).unwrap(),
        };
        assert_eq!(
            chosen(&call(json!({"task_id": 3})), &cat, &allow),
            Chosen::Act("todo_update_task".into(), args(json!({"task_id": 3})))
        );
        assert_eq!(
            chosen(&call(json!({"task_id": "3"})), &cat, &allow),
            Chosen::Act("todo_update_task".into(), None)
        );
    }

    #[test]
    fn only_a_loopback_endpoint_is_asked() {
        for url in [
            "http://127.0.0.1:8080/v1/chat/completions",
            "http://127.1.2.3/v1",
            "http://[::1]:8080/v1",
        ] {
            assert!(on_loopback(url), "{url}");
        }
        for url in [
            "https://127.0.0.1/v1",
            "http://localhost:8080/v1",
            "http://localhost.example.com/v1",
            "http://127.0.0.1.example.com/v1",
            "http://user@127.0.0.1/v1",
            "http://10.0.0.1:8080/v1",
            "http://[::2]/v1",
            "127.0.0.1:8080",
        ] {
            assert!(!on_loopback(url), "{url}");
        }
    }

    #[test]
    fn quantiles_and_the_shipped_files_parse() {
        let d: Vec<Duration> = (1..=10).map(Duration::from_millis).collect();
        assert_eq!(quantile_ms(&d, 0.5), 5.0);
        assert_eq!(quantile_ms(&d, 0.9), 9.0);
        assert_eq!(quantile_ms(&[], 0.5), 0.0);
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/route/");
        let read = |f: &str| -> Value {
            serde_json::from_str(&std::fs::read_to_string(format!("{dir}{f}")).unwrap()).unwrap()
        };
        let cat = catalogue(&read("catalogue.json")).unwrap();
        let all = sentences(&read("sentences.json")).unwrap();
        assert!(all.len() >= 120);
        // Every expected act is in the catalogue, and its expected arguments name its
        // properties.
        for s in &all {
            for (act, want) in &s.expect {
                let a = cat
                    .iter()
                    .find(|a| &a.entry.act.name == act)
                    .unwrap_or_else(|| panic!("{act} of {:?} is not in the catalogue", s.text));
                if let Some(Value::Object(w)) = want {
                    for k in w.keys() {
                        assert!(
                            a.entry
                                .schema
                                .pointer(&format!("/properties/{k}"))
                                .is_some(),
                            "{k} of {:?} is not a property of {act}",
                            s.text
                        );
                    }
                }
            }
        }
    }
}
