//! Config loading (C-1..C-6) on arbitrary bytes: the `config` crate parses and validates; every
//! answer is a config or a list of problems, never a panic. Environment references resolve to a
//! fixed value or to nothing, both tried.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for env in [
        &(|_: &str| None) as &dyn Fn(&str) -> Option<String>,
        &|_: &str| Some("x".to_owned()),
    ] {
        let cfg = match config::Config::parse("fuzz.json", data, env) {
            Ok(cfg) => cfg,
            Err(e) => {
                if let config::Error::Invalid { problems, .. } = &e {
                    assert!(!problems.is_empty(), "an error names its problems");
                }
                let _ = e.to_string();
                continue;
            }
        };
        {
            let _ = cfg.door(&config::Door::Fetch);
            let _ = cfg.door(&config::Door::Router);
            for f in &cfg.feeds {
                let _ = cfg.door(&config::Door::Feed(f.name.clone()));
            }
            for name in cfg.mcp_servers.keys() {
                let _ = cfg.door(&config::Door::Mcp(name.clone()));
                let _ = cfg.mcp_server(name);
            }
        }
    }
});
