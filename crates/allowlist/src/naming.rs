//! Local names: one algorithm for the daemon and for `maven mcp inspect`.

use std::collections::HashSet;

use mcp::Tool;
use sha2::{Digest as _, Sha256};

pub use mcp::names::flatten;

/// `<server>_<tool>` flattened (lowercase; anything not ASCII alphanumeric becomes `_`).
pub fn flatten_name(server: &str, tool: &str) -> String {
    format!("{}_{}", flatten(server), flatten(tool))
}

/// A stable short hash of the exact (server, tool) identity, used as a suffix when two
/// identities flatten to one name.
pub fn identity_suffix(server: &str, tool: &str) -> String {
    let mut h = Sha256::new();
    h.update(server.as_bytes());
    h.update([0u8]);
    h.update(tool.as_bytes());
    hex::encode(&h.finalize()[..4])
}

/// The local name for a new identity: flattened, or with the identity's stable suffix when the
/// flattened name already belongs to another row (two identities never share a row).
pub fn local_name(server: &str, tool: &str, taken: &HashSet<String>) -> String {
    let flat = flatten_name(server, tool);
    if !taken.contains(&flat) {
        return flat;
    }
    format!("{flat}_{}", identity_suffix(server, tool))
}

/// Local names for one listing's tools, in order, by [`local_name`]: each name is taken before
/// the next tool is named. The daemon passes the names of every row it has (an identity that
/// already has a row keeps it); `maven mcp inspect`, which never opens the database, passes
/// none and so shows what a new database would assign.
pub fn local_names(server: &str, tools: &[Tool], taken: &HashSet<String>) -> Vec<String> {
    let mut taken = taken.clone();
    tools
        .iter()
        .map(|t| {
            let n = local_name(server, &t.name, &taken);
            taken.insert(n.clone());
            n
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: serde_json::Value) -> Tool {
        Tool::from_value(v).unwrap()
    }

    #[test]
    fn local_names_never_collide() {
        let tools = vec![
            tool(json!({"name":"List-Tasks"})),
            tool(json!({"name":"list_tasks"})),
            tool(json!({"name":"list.tasks"})),
        ];
        let names = local_names("Vik", &tools, &HashSet::new());
        assert_eq!(names[0], "vik_list_tasks");
        assert!(names[1].starts_with("vik_list_tasks_") && names[1].len() == 23);
        assert_ne!(names[1], names[2]);
        assert_eq!(local_names("Vik", &tools, &HashSet::new()), names);
    }

    #[test]
    fn local_names_get_a_stable_suffix_when_taken() {
        let mut taken = HashSet::new();
        assert_eq!(local_name("a-b", "x", &taken), "a_b_x");
        taken.insert("a_b_x".to_string());
        let n = local_name("a_b", "x", &taken);
        assert!(
            n.starts_with("a_b_x_") && n.len() == "a_b_x_".len() + 8,
            "{n}"
        );
        assert_eq!(n, local_name("a_b", "x", &taken), "stable");
    }

    #[test]
    fn inspect_and_the_daemon_name_alike() {
        // A listing named at once equals the same listing named tool by tool against rows.
        let tools = vec![
            tool(json!({"name":"a-b"})),
            tool(json!({"name":"a_b"})),
            tool(json!({"name":"c"})),
        ];
        let at_once = local_names("s", &tools, &HashSet::new());
        let mut taken = HashSet::new();
        let one_by_one: Vec<String> = tools
            .iter()
            .map(|t| {
                let n = local_name("s", &t.name, &taken);
                taken.insert(n.clone());
                n
            })
            .collect();
        assert_eq!(at_once, one_by_one);
    }
}
