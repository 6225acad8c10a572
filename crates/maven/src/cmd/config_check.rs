//! `maven config check [PATH]`.

use crate::exit::{errln, outln};
use std::path::Path;
use std::process::ExitCode;

use config::Config;

use crate::exit::EXIT_FAILED;

pub(crate) fn run(path: Option<&Path>, data_dir: &Path) -> ExitCode {
    let shown = path
        .map(Path::to_path_buf)
        .unwrap_or_else(config::default_config_path);
    match Config::load(path) {
        Ok(c) => {
            match &c.source {
                Some(p) => outln!("{}: ok ({})", p.display(), c.counts()),
                None => outln!(
                    "{}: no such file; every default applies (nothing external)",
                    shown.display()
                ),
            }
            // a grant that is a link (planted by a server, or not) keeps its block from
            // starting; said here as the daemon and doctor say it.
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            let mut refused = false;
            for (name, block) in &c.mcp_servers {
                let Some(why) = block
                    .sandbox
                    .as_ref()
                    .filter(|_| block.enabled)
                    .and_then(|p| p.refused_grant(home.as_deref()))
                else {
                    continue;
                };
                errln!("mcp_servers.{name}: will not start: {}", shown::line(&why));
                refused = true;
            }
            // The owner's sentence files, each problem with its file, line and column.
            for e in crate::cmd::sentences::problems(&c, path) {
                errln!("sentences: {}", shown::line(&e));
                refused = true;
            }
            // A root daemon's server runs as a uid of its own: a write grant it cannot use is
            // said now, with the line that fixes it, not at its first start.
            for (name, block) in &c.mcp_servers {
                let Some(policy) = &block.sandbox else {
                    continue;
                };
                for why in daemon::confine::root_unwritable(data_dir, name, &policy.write) {
                    errln!("note: mcp_servers.{name}: {why}");
                }
            }
            if refused {
                return ExitCode::from(EXIT_FAILED);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("{}", shown::block(&e.to_string()));
            ExitCode::from(EXIT_FAILED)
        }
    }
}
