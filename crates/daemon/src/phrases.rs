//! The owner's sentence files, read from disk for the turn pipeline's templates
//! (`turns::templates`): every `*.yaml` under `sentences/<lang>/` beside the configuration
//! file (`$XDG_CONFIG_HOME/maven/sentences/en/`, the layout of Home Assistant's
//! `custom_sentences/<lang>/`), then each file or folder `"sentences"` names (a folder's own
//! `*.yaml`, and those of its `en/` and `ru/`). Files are read in name order, each bounded
//! (the matcher refuses one over `sentences::MAX_FILE_BYTES` with its name), at most
//! [`MAX_FILES`] of them; what cannot be read is an error naming the file.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use turns::templates::{SentenceFile, Templates};
use turns::Lang;

/// The most sentence files read.
pub const MAX_FILES: usize = 1000;

/// The folder of sentence files beside the configuration file `config` (the default one's when
/// `None`).
pub fn beside(config: Option<&Path>) -> PathBuf {
    let file = config
        .map(Path::to_path_buf)
        .unwrap_or_else(config::default_config_path);
    file.parent()
        .map(|d| d.join("sentences"))
        .unwrap_or_else(|| PathBuf::from("sentences"))
}

fn lang_of_dir(name: &str) -> Option<Lang> {
    match name {
        "en" => Some(Lang::En),
        "ru" => Some(Lang::Ru),
        _ => None,
    }
}

/// The `*.yaml` files directly in `dir`, by name; nothing when it does not exist.
fn yaml_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml") && p.is_file())
        .collect();
    out.sort();
    out
}

/// Where to look: each file with the language its folder names.
pub fn paths(config: &config::Config, config_path: Option<&Path>) -> Vec<(PathBuf, Option<Lang>)> {
    let mut out = Vec::new();
    let folder = |dir: &Path, out: &mut Vec<(PathBuf, Option<Lang>)>| {
        let own = dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(lang_of_dir);
        for f in yaml_in(dir) {
            out.push((f, own));
        }
        for l in ["en", "ru"] {
            for f in yaml_in(&dir.join(l)) {
                out.push((f, lang_of_dir(l)));
            }
        }
    };
    folder(&beside(config_path.or(config.source.as_deref())), &mut out);
    for p in &config.sentences {
        if p.is_dir() {
            folder(p, &mut out);
        } else {
            out.push((p.clone(), None));
        }
    }
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// Reads the owner's files: each one's text, or an error naming it.
pub fn read(paths: &[(PathBuf, Option<Lang>)]) -> (Vec<SentenceFile>, Vec<String>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    if paths.len() > MAX_FILES {
        errors.push(format!(
            "{} sentence files: only the first {MAX_FILES} are read",
            paths.len()
        ));
    }
    for (p, lang) in paths.iter().take(MAX_FILES) {
        let name = p.display().to_string();
        let mut bytes = Vec::new();
        let limit = sentences::MAX_FILE_BYTES as u64 + 1;
        match std::fs::File::open(p).and_then(|f| f.take(limit).read_to_end(&mut bytes)) {
            Ok(_) => match String::from_utf8(bytes) {
                Ok(text) => files.push(SentenceFile {
                    name,
                    text,
                    lang: *lang,
                }),
                Err(_) => errors.push(format!("{name}: not UTF-8 text")),
            },
            Err(e) => errors.push(format!("{name}: cannot be read: {e}")),
        }
    }
    (files, errors)
}

/// The templates of `config`: the owner's files and the phrasebook; with every error (each
/// naming its file, line and column), and the phrasebook alone when there is one.
pub fn load(config: &config::Config, config_path: Option<&Path>) -> (Templates, Vec<String>) {
    let (files, mut errors) = read(&paths(config, config_path));
    match Templates::load(&files) {
        Ok(t) if errors.is_empty() => (t, errors),
        Ok(_) => (Templates::phrasebook(), errors),
        Err(e) => {
            errors.extend(e.iter().map(ToString::to_string));
            (Templates::phrasebook(), errors)
        }
    }
}
