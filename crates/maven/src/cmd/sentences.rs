//! `maven sentences match|list|check`: the sentence templates without a daemon. `match` is
//! the pure matcher (what `python -m hassil` does): the intent and its slots of each sentence,
//! from the files given with `--file` or, without, the owner's files and the phrasebook;
//! `list` shows which templates serve an act (or every one) and from which file and line;
//! `check` loads the files and names each problem with `FILE:LINE:COL`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value};
use turns::templates::{Origin, Templates};
use turns::Lang;

use crate::exit::{errln, outln, EXIT_FAILED, EXIT_USAGE};

/// The language `--lang` names.
pub(crate) fn lang(code: Option<&str>) -> Result<Option<Lang>, String> {
    match code {
        None => Ok(None),
        Some("en") => Ok(Some(Lang::En)),
        Some("ru") => Ok(Some(Lang::Ru)),
        Some(other) => Err(format!("--lang {other:?}: expected en or ru")),
    }
}

/// The templates: `files` alone when given, else the owner's files (beside the configuration
/// and where `"sentences"` points) and the phrasebook. Prints every problem.
fn templates(config_path: Option<&Path>, files: &[PathBuf]) -> Option<Templates> {
    if files.is_empty() {
        let config = crate::cmd::load_config(config_path)?;
        let (t, errors) = daemon::phrases::load(&config, config_path);
        for e in &errors {
            errln!("{}", shown::line(e));
        }
        return errors.is_empty().then_some(t);
    }
    let paths: Vec<(PathBuf, Option<Lang>)> =
        files.iter().map(|f| (f.clone(), lang_of_dir(f))).collect();
    let (read, errors) = daemon::phrases::read(&paths);
    for e in &errors {
        errln!("{}", shown::line(e));
    }
    if !errors.is_empty() {
        return None;
    }
    match Templates::only(&read) {
        Ok(t) => Some(t),
        Err(es) => {
            for e in es {
                errln!("{}", shown::line(&e.to_string()));
            }
            None
        }
    }
}

/// The language the folder of `file` names (`…/en/x.yaml`).
fn lang_of_dir(file: &Path) -> Option<Lang> {
    match file.parent()?.file_name()?.to_str()? {
        "en" => Some(Lang::En),
        "ru" => Some(Lang::Ru),
        _ => None,
    }
}

fn origin(o: Origin) -> &'static str {
    match o {
        Origin::Owner => "yours",
        Origin::Phrasebook => "phrasebook",
    }
}

/// `maven sentences match`.
pub(crate) fn matching(
    config_path: Option<&Path>,
    files: &[PathBuf],
    code: Option<&str>,
    as_json: bool,
    sentences: &[String],
) -> ExitCode {
    let lang = match lang(code) {
        Ok(l) => l,
        Err(e) => {
            errln!("maven sentences match: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let Some(t) = templates(config_path, files) else {
        return ExitCode::from(EXIT_FAILED);
    };
    let mut all = true;
    for s in sentences {
        match t.match_sentence(s, lang, "typed") {
            Some((o, l, m)) => {
                if as_json {
                    outln!(
                        "{}",
                        json!({"intent": m.intent, "slots": m.slots, "language": turns::templates::code(l),
                            "from": origin(o), "template": {"text": m.template.text, "at": m.template.at.to_string()}})
                    );
                } else {
                    let slots: Vec<String> =
                        m.slots.iter().map(|(k, v)| format!("{k}={}", v)).collect();
                    outln!(
                        "{}: {} {}",
                        shown::line(s),
                        shown::line(&m.intent),
                        shown::line(&slots.join(" "))
                    );
                    outln!(
                        "  by {} ({}, {})",
                        shown::line(&m.template.text),
                        shown::line(&m.template.at.to_string()),
                        origin(o)
                    );
                }
            }
            None => {
                all = false;
                if as_json {
                    outln!("{}", json!({"intent": Value::Null}));
                } else {
                    outln!("{}: no template matches", shown::line(s));
                }
            }
        }
    }
    if all {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    }
}

/// `maven sentences list [ACT]`: an act's row name (`time_get_current_time`), an intent of
/// the owner's files, or a phrasebook tool (`get_current_time`).
pub(crate) fn list(config_path: Option<&Path>, act: Option<&str>) -> ExitCode {
    let Some(t) = templates(config_path, &[]) else {
        return ExitCode::from(EXIT_FAILED);
    };
    let serves = |intent: &str| match act {
        None => true,
        Some(a) => {
            intent == a
                || intent.rsplit_once("::").is_some_and(|(_, tool)| {
                    let flat = config::flatten_name(tool);
                    tool == a || a.ends_with(&format!("_{flat}"))
                })
        }
    };
    let mut any = false;
    for (o, l, tpl) in t.all() {
        if !serves(&tpl.intent) {
            continue;
        }
        any = true;
        outln!(
            "{} [{}] {}  ({}, {})",
            shown::line(&tpl.intent),
            turns::templates::code(l),
            shown::line(&tpl.text),
            shown::line(&tpl.at.to_string()),
            origin(o)
        );
    }
    if !any {
        if let Some(a) = act {
            errln!("no template serves {}", shown::line(a));
            return ExitCode::from(EXIT_FAILED);
        }
    }
    ExitCode::SUCCESS
}

/// `maven sentences check [FILE…]`.
pub(crate) fn check(config_path: Option<&Path>, files: &[PathBuf]) -> ExitCode {
    let Some(t) = templates(config_path, files) else {
        return ExitCode::from(EXIT_FAILED);
    };
    let owner = t
        .all()
        .iter()
        .filter(|(o, _, _)| *o == Origin::Owner)
        .count();
    outln!("ok: {owner} templates of yours load");
    ExitCode::SUCCESS
}

/// The owner's files as read, for `config check` and `doctor`: their problems.
pub(crate) fn problems(config: &config::Config, config_path: Option<&Path>) -> Vec<String> {
    daemon::phrases::load(config, config_path).1
}

#[cfg(test)]
mod tests {
    use super::*;
    use turns::templates::SentenceFile;

    /// The README's example of an owner's file loads and means what the README says.
    #[test]
    fn the_readmes_sentence_file_means_what_it_says() {
        let readme = include_str!("../../../../README.md");
        let start = readme
            .find("# ~/.config/maven/sentences/en/mine.yaml")
            .expect("the README's example");
        let text = &readme[start..];
        let text = &text[..text.find("```").expect("its end")];
        let t = Templates::only(&[SentenceFile {
            name: "mine.yaml".into(),
            text: text.to_owned(),
            lang: Some(Lang::En),
        }])
        .unwrap_or_else(|e| panic!("{e:?}"));
        for (said, zone) in [
            ("what's the time at work?", "Europe/Berlin"),
            ("What's the time in the office", "Europe/Berlin"),
            ("time at home", "Europe/Rome"),
        ] {
            let (_, _, m) = t.match_sentence(said, None, "typed").expect(said);
            assert_eq!(m.intent, "time_get_current_time");
            assert_eq!(m.slots.get("timezone"), Some(&json!(zone)), "{said}");
        }
    }
}
