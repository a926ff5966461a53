//! Reference material generated from (or checked against) the clap model: the man page and the
//! README's exit-status table.

use crate::util::{self, TestEnv};

/// The subcommands `gsd-lane --help` lists (clap's own `help` aside).
fn subcommands(env: &TestEnv) -> Vec<String> {
    let out = env.run(&["--help"]);
    out.assert_status(0);
    out.stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn man_page_comes_from_the_clap_model() {
    let env = TestEnv::new();
    let out = env.run(&["manpage"]);
    out.assert_status(0);
    let page = &out.stdout;
    assert!(page.contains(".TH gsd-lane 1"), "{page}");
    for name in subcommands(&env) {
        let heading = format!(".SH \"GSD\\-LANE {}\"", name.to_uppercase());
        assert!(page.contains(&heading), "no section for {name}");
    }
    assert!(page.contains("--claude"), "review's lane flags are missing");
    assert!(page.contains("--phase <N>"), "review's options are missing");
    assert!(
        !page.contains("compat-version"),
        "a hidden option is documented"
    );
}

#[test]
fn readme_exit_status_table_covers_every_command() {
    let env = TestEnv::new();
    let readme = util::read_text(&util::workspace_root().join("README.md"));
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| *l != "### Exit statuses")
        .skip_while(|l| !l.starts_with("| Command"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(table.len() > 2, "no exit-status table in README.md");
    for name in subcommands(&env) {
        let cell = format!("`{name}`");
        let named = table.iter().any(|row| {
            row.split('|')
                .nth(1)
                .is_some_and(|first| first.contains(&cell) || first.contains(&format!("`{name} ")))
        });
        assert!(named, "README's exit-status table has no row for {name}");
    }
}
