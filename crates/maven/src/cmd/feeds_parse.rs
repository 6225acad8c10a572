//! `maven feeds parse`.
pub(crate) fn run(
    _file: &str,
    _url: Option<&str>,
    _content_type: Option<&str>,
) -> std::process::ExitCode {
    eprintln!("maven feeds parse: not available in this build");
    std::process::ExitCode::from(1)
}
