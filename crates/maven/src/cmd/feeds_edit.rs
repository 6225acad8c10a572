//! Writing feed blocks into the configuration file, then asking a running daemon to reload.
//!
//! [`append_feeds`] reads the file (a missing one is an empty configuration), appends the
//! blocks to `feeds` through the file's typed form ([`config::file::ConfigFile`]), validates
//! the result as `maven config check` does *before* anything is written, keeps the previous
//! file as `config.json.bak`, and writes the new one atomically (all through
//! [`super::config_edit`]). [`reload`] then asks the daemon (IPC `reload`).

use std::path::Path;

use config::file::ConfigFile;
use serde_json::Value;

use crate::ipc::client::IpcError;

/// The file as written; a missing file is an empty configuration.
pub(crate) fn read_file(path: &Path) -> Result<ConfigFile, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigFile::default()),
        Err(e) => return Err(format!("{}: cannot read it: {e}", path.display())),
    };
    serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "{}: not a configuration this command can edit: {e}",
            path.display()
        )
    })
}

/// The `url` of every feed block of the file, with its name.
pub(crate) fn configured_feeds(file: &ConfigFile) -> Vec<(String, String)> {
    file.rest
        .get("feeds")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|b| {
                    let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                    (s("name"), s("url"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Appends `blocks` to the file's `feeds`, through [`super::config_edit::edit`]: validated
/// before it is written, the previous file kept as `<file>.bak`, the new one renamed into
/// place.
pub(crate) fn append_feeds(path: &Path, blocks: Vec<Value>) -> Result<(), String> {
    super::config_edit::edit(path, |file| {
        let feeds = file
            .rest
            .entry("feeds")
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = feeds else {
            return Err(format!(
                "{}: \"feeds\" is not a list; fix it first (maven config check)",
                path.display()
            ));
        };
        list.extend(blocks);
        Ok(())
    })
    .map(|_| ())
}

/// What asking the daemon to reload after `written` was written came to, in words for the
/// owner (a daemon that reads another file is not asked).
pub(crate) async fn reload(data_dir: &Path, written: &Path) -> String {
    if let Ok(Some(said)) = super::config_edit::reads_another(data_dir, written).await {
        return said;
    }
    match super::reload::ask(data_dir).await {
        Ok(_) => "the running daemon reloaded its configuration".to_owned(),
        Err(IpcError::NoDaemon { .. }) => {
            "no daemon is running; it applies when one starts".to_owned()
        }
        Err(e) => format!(
            "the daemon did not reload ({}); restart it to apply it",
            shown::line(&e.to_string())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn everything_else_in_the_file_is_written_back_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/demo.json");
        let original: Value = serde_json::from_slice(&std::fs::read(demo).unwrap()).unwrap();
        std::fs::copy(demo, &path).unwrap();
        let block = json!({"name": "zz-added", "url": "https://example.org/a.xml"});
        append_feeds(&path, vec![block.clone()]).unwrap();
        let mut want = original.clone();
        match want.get_mut("feeds").and_then(Value::as_array_mut) {
            Some(list) => list.push(block),
            None => {
                want.as_object_mut()
                    .unwrap()
                    .insert("feeds".into(), json!([block]));
            }
        }
        let got: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn a_block_is_appended_validated_and_the_old_file_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        // A missing file is created.
        append_feeds(
            &path,
            vec![json!({"name": "a", "url": "https://example.org/a.xml"})],
        )
        .unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        append_feeds(
            &path,
            vec![json!({"name": "b", "url": "https://example.org/b.xml"})],
        )
        .unwrap();
        let file = read_file(&path).unwrap();
        assert_eq!(
            configured_feeds(&file),
            [
                ("a".to_owned(), "https://example.org/a.xml".to_owned()),
                ("b".to_owned(), "https://example.org/b.xml".to_owned())
            ]
        );
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let bak = read_file(&dir.path().join("config.json.bak")).unwrap();
        assert_eq!(configured_feeds(&bak).len(), 1);
        // An invalid result writes nothing.
        let before = std::fs::read(&path).unwrap();
        let e = append_feeds(
            &path,
            vec![json!({"name": "a", "url": "https://example.org/c"})],
        )
        .unwrap_err();
        assert!(
            e.contains("feeds[2].name") && e.contains("nothing was written"),
            "{e}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 2, "{leftovers:?}");
    }
}
