//! Opening a granted path without following a link: every component is resolved by the
//! kernel with `RESOLVE_NO_SYMLINKS` (`openat2`), so a link anywhere on the way — planted by a
//! server in a directory it may write, or made by anyone — fails the open instead of being
//! followed. What the launcher binds and what Landlock is given is the object opened, never a
//! path resolved again later.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};

/// Why a granted path cannot be opened without following a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The path itself is a link, or passes through one (`link`), which points to `target`.
    Link {
        /// The granted path.
        path: PathBuf,
        /// The first component of it that is a link (the path itself when it is one).
        link: PathBuf,
        /// What the link points to, as written in it.
        target: PathBuf,
    },
    /// It could not be opened for another reason (a permission, an I/O error).
    Other {
        /// The granted path.
        path: PathBuf,
        /// What the kernel said.
        detail: String,
    },
}

impl Refusal {
    /// The owner's words for it, paths shown with `~` below `home`: "granted path ~/notes/out
    /// is a link to ~/.local/bin: point the grant at a real directory".
    pub fn words(&self, home: Option<&Path>) -> String {
        match self {
            Refusal::Link { path, link, target } => {
                let to = shown(&resolved(link, target), home);
                if link == path {
                    format!(
                        "granted path {} is a link to {to}: point the grant at a real {}",
                        shown(path, home),
                        kind(target, link)
                    )
                } else {
                    format!(
                        "granted path {} passes through {}, a link to {to}: point the grant at a real path",
                        shown(path, home),
                        shown(link, home)
                    )
                }
            }
            Refusal::Other { path, detail } => {
                format!(
                    "granted path {} cannot be opened: {detail}",
                    shown(path, home)
                )
            }
        }
    }
}

/// "directory" or "file", as the link's target is.
fn kind(target: &Path, link: &Path) -> &'static str {
    match std::fs::metadata(resolved(link, target)) {
        Ok(m) if !m.is_dir() => "file",
        _ => "directory",
    }
}

/// A link's target made absolute (a relative target is relative to the link's directory).
fn resolved(link: &Path, target: &Path) -> PathBuf {
    if target.is_absolute() {
        return target.to_path_buf();
    }
    let base = link.parent().unwrap_or(Path::new("/"));
    normal(&base.join(target))
}

/// A path with `.` and `..` removed lexically (symbolic links are the launcher's business: it
/// opens every path it grants).
pub(crate) fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// `p` as the owner reads it: `~/…` below the owner's home.
pub(crate) fn shown(p: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| p.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => p.display().to_string(),
    }
}

/// Opens `p` (absolute) as an `O_PATH` descriptor without following any link on the way:
/// `Ok(None)` when it does not exist (a grant that grants nothing), the link named when one is
/// on the way.
pub(crate) fn open(p: &Path) -> Result<Option<OwnedFd>, Refusal> {
    let flags = OFlags::PATH | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(rustix::fs::CWD, p, flags, Mode::empty(), how) {
        Ok(fd) => {
            // O_PATH|O_NOFOLLOW opens a link itself rather than failing: refuse it too.
            let link = rustix::fs::fstat(&fd).is_ok_and(|st| {
                rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
            });
            if link {
                return Err(link_refusal(p));
            }
            Ok(Some(fd))
        }
        Err(rustix::io::Errno::NOENT) | Err(rustix::io::Errno::NOTDIR) => Ok(None),
        Err(rustix::io::Errno::LOOP) => Err(link_refusal(p)),
        Err(e) => Err(Refusal::Other {
            path: p.to_path_buf(),
            detail: e.to_string(),
        }),
    }
}

/// Whether `p` exists without following a link on the way (a link is reported by [`open`]).
pub(crate) fn check(p: &Path) -> Result<bool, Refusal> {
    open(p).map(|fd| fd.is_some())
}

/// The refusal for `p`: the first of its components (from the root) that is a link.
fn link_refusal(p: &Path) -> Refusal {
    let mut so_far = PathBuf::new();
    for c in p.components() {
        so_far.push(c);
        if let Ok(target) = std::fs::read_link(&so_far) {
            return Refusal::Link {
                path: p.to_path_buf(),
                link: so_far,
                target,
            };
        }
    }
    // Replaced between the two looks: still refused, named as the path itself.
    Refusal::Other {
        path: p.to_path_buf(),
        detail: "a link appeared on its way while it was opened".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_anywhere_on_the_way_is_named_with_its_target() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let notes = home.join("notes");
        let bin = home.join(".local/bin");
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(&bin, notes.join("out")).unwrap();
        std::fs::write(home.join("secret"), "s").unwrap();
        std::os::unix::fs::symlink("../secret", notes.join("todo.db")).unwrap();

        assert!(matches!(open(&notes), Ok(Some(_))));
        assert!(matches!(open(&notes.join("missing")), Ok(None)));
        let r = open(&notes.join("out")).unwrap_err();
        assert_eq!(
            r.words(Some(&home)),
            "granted path ~/notes/out is a link to ~/.local/bin: point the grant at a real directory"
        );
        let r = open(&notes.join("out/x")).unwrap_err();
        assert_eq!(
            r.words(Some(&home)),
            "granted path ~/notes/out/x passes through ~/notes/out, a link to ~/.local/bin: point the grant at a real path"
        );
        // A relative link is named by what it resolves to.
        let r = open(&notes.join("todo.db")).unwrap_err();
        assert_eq!(
            r.words(Some(&home)),
            "granted path ~/notes/todo.db is a link to ~/secret: point the grant at a real file"
        );
        // A dangling link is still a link.
        std::os::unix::fs::symlink("/nonexistent/x", notes.join("dangling")).unwrap();
        assert!(matches!(
            open(&notes.join("dangling")),
            Err(Refusal::Link { .. })
        ));
    }
}
