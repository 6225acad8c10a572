//! Writing the configuration file in place (`maven mcp import --write`, `maven feeds add` and
//! `import`): read as [`ConfigFile`], changed, validated as the daemon will load it, then
//! written whole (a temporary file renamed over it, the previous one kept as `FILE.bak`), and a
//! running daemon reloaded.
//!
//! Nothing is written when the result does not validate: the error names the file and every
//! problem, as `maven config check` does. A `${VAR}` that this shell does not set is not a
//! refusal (the daemon may have it in its environment); it is said.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use config::file::ConfigFile;
use config::{Config, ProblemKind};

use crate::exit::{errln, outln};

/// What [`edit`] wrote.
#[derive(Debug)]
pub(crate) struct Written {
    /// The configuration file.
    pub(crate) path: PathBuf,
    /// Where the file as it was is kept (`None`: there was no file).
    pub(crate) backup: Option<PathBuf>,
    /// Variables the new file names that this shell does not set.
    pub(crate) unset: Vec<String>,
}

/// The configuration file a command edits: `--config`, else the default path.
pub(crate) fn target(explicit: Option<&Path>) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .unwrap_or_else(config::default_config_path)
}

/// Reads the file at `path` (none yet: an empty configuration), lets `change` change it,
/// validates the result and writes it. `change`'s error (a name already taken, say) is
/// returned as it is, and nothing is written.
pub(crate) fn edit(
    path: &Path,
    change: impl FnOnce(&mut ConfigFile) -> Result<(), String>,
) -> Result<Written, String> {
    let shown = path.display().to_string();
    let before = match std::fs::read(path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown}: {e}")),
    };
    let mut file = match &before {
        Some(bytes) => {
            // The file as it is must be valid first: an edit never hides an earlier mistake.
            validate(&shown, bytes).map_err(|e| {
                format!("{e}\n{shown} must be valid before it is changed (see `maven config check`); nothing was written")
            })?;
            serde_json::from_slice::<ConfigFile>(bytes)
                .map_err(|e| format!("{shown}: cannot be read as a configuration: {e}"))?
        }
        None => ConfigFile::default(),
    };
    change(&mut file)?;
    let text = format!("{}\n", file.to_text());
    let unset = validate(&shown, text.as_bytes()).map_err(|e| {
        format!("{e}\nthe changed configuration does not validate; nothing was written")
    })?;
    let backup = match &before {
        Some(b) => {
            let bak = PathBuf::from(format!("{shown}.bak"));
            write_new(&bak, b, mode_of(path))
                .map_err(|e| format!("cannot keep the previous file as {}: {e}", bak.display()))?;
            Some(bak)
        }
        None => None,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = PathBuf::from(format!("{shown}.tmp-{}", std::process::id()));
    write_new(&tmp, text.as_bytes(), mode_of(path))
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot replace {shown}: {e}"));
    }
    Ok(Written {
        path: path.to_path_buf(),
        backup,
        unset,
    })
}

/// The file's mode, or 0600 for a new one (it may name secrets' variables, and hashes).
fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).map_or(0o600, |m| m.permissions().mode() & 0o7777)
}

/// Writes `bytes` to a fresh file at `path` (replacing one there), synced to disk.
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Validates `bytes` as the daemon loads them, with this shell's environment; variables this
/// shell does not set are returned, not refused.
fn validate(file: &str, bytes: &[u8]) -> Result<Vec<String>, String> {
    match Config::parse(file, bytes, &|k| std::env::var(k).ok()) {
        Ok(_) => Ok(Vec::new()),
        Err(config::Error::Invalid { problems, .. })
            if problems
                .iter()
                .all(|p| matches!(p.kind, ProblemKind::Unresolved { .. })) =>
        {
            Ok(problems
                .iter()
                .filter_map(|p| match &p.kind {
                    ProblemKind::Unresolved { var } => Some(var.clone()),
                    _ => None,
                })
                .collect())
        }
        Err(e) => Err(shown::block(&e.to_string()).into_owned()),
    }
}

/// When the running daemon of `data_dir` reads a configuration file other than `written`,
/// the words that say so (and that it is not reloaded); `None` when it reads that file.
pub(crate) async fn reads_another(
    data_dir: &Path,
    written: &Path,
) -> Result<Option<String>, crate::ipc::client::IpcError> {
    let written = crate::daemon::reads(Some(written)).display().to_string();
    let status = crate::ipc::client::ask::<wire::views::StatusView>(
        data_dir,
        &wire::methods::Request::Status,
    )
    .await?;
    Ok(status.config.filter(|r| *r != written).map(|reads| {
        let (reads, written) = (shown::line(&reads), shown::line(&written));
        format!(
            "the running daemon reads {reads}, not {written}: it was not reloaded; to use this file, start the daemon with --config {written}, or edit the daemon's file with --config {reads}"
        )
    }))
}

/// Says what was written, then reloads a running daemon of `data_dir` and says what it did.
/// Returns false when the daemon refused the file.
pub(crate) async fn written_then_reload(w: &Written, data_dir: &Path) -> bool {
    outln!("wrote {}", shown::line(&w.path.display().to_string()));
    if let Some(b) = &w.backup {
        outln!(
            "the previous file is kept as {}",
            shown::line(&b.display().to_string())
        );
    }
    for v in &w.unset {
        errln!(
            "note: {} is not set in this shell: the daemon needs it in its environment for the block that names it",
            shown::line(v)
        );
    }
    // A daemon that reads another file is not reloaded: the file written is not what it reads.
    match reads_another(data_dir, &w.path).await {
        Ok(Some(said)) => {
            outln!("{said}");
            return true;
        }
        Ok(None) => {}
        Err(crate::ipc::client::IpcError::NoDaemon { .. }) => {
            outln!("no daemon is running: the file is read when it starts");
            return true;
        }
        // The reload below says what is wrong with the daemon.
        Err(_) => {}
    }
    match super::reload::ask(data_dir).await {
        Ok(v) => {
            for l in super::reload::lines(&v) {
                outln!("{l}");
            }
            true
        }
        Err(crate::ipc::client::IpcError::NoDaemon { .. }) => {
            outln!("no daemon is running: the file is read when it starts");
            true
        }
        Err(e) => {
            errln!("maven reload: {}", shown::block(&e.to_string()));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_is_validated_kept_and_written_whole() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("conf/config.json");
        // No file yet: made, mode 0600, in a directory made 0700.
        let w = edit(&path, |f| {
            f.rest
                .insert("feed_min_interval".into(), serde_json::json!("10m"));
            Ok(())
        })
        .unwrap();
        assert!(w.backup.is_none());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let first = std::fs::read_to_string(&path).unwrap();
        // A change that does not validate writes nothing.
        let err = edit(&path, |f| {
            f.rest
                .insert("feed_min_interval".into(), serde_json::json!("often"));
            Ok(())
        })
        .unwrap_err();
        assert!(err.contains("feed_min_interval"), "{err}");
        assert!(err.contains("nothing was written"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
        // The change's own refusal writes nothing.
        let err = edit(&path, |_| Err("taken".into())).unwrap_err();
        assert_eq!(err, "taken");
        // A good change keeps the previous file.
        let w = edit(&path, |f| {
            f.rest
                .insert("feed_min_interval".into(), serde_json::json!("20m"));
            Ok(())
        })
        .unwrap();
        let bak = w.backup.unwrap();
        assert_eq!(std::fs::read_to_string(bak).unwrap(), first);
        assert!(std::fs::read_to_string(&path).unwrap().contains("20m"));
        // An invalid file is not edited.
        std::fs::write(&path, "{\"web\": 3}").unwrap();
        let err = edit(&path, |_| Ok(())).unwrap_err();
        assert!(err.contains("must be valid before it is changed"), "{err}");
    }
}
