//! `gsd-lane completions`: the generated bash function driven in a real bash (COMP_WORDS,
//! COMP_CWORD, COMPREPLY); zsh and fish scripts checked for the same candidates.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::util::{self, run_bounded, Scope, TestEnv};

/// An environment with an active overlay lane (`--acme`) and an inactive one (`--stale`,
/// `engines.gsd` unsatisfiable).
fn lab() -> TestEnv {
    let env = TestEnv::with_planning();
    env.write_overlay(Scope::Global, "acme-review", &util::acme());
    let mut stale = util::acme_as("stale-review");
    stale["reviewer"]["slug"] = json!("stale");
    stale["reviewer"]["flags"] = json!(["--stale"]);
    stale["engines"] = json!({"gsd": ">=99.0.0"});
    env.write_overlay(Scope::Global, "stale-review", &stale);
    env
}

fn script(env: &TestEnv, shell: &str) -> String {
    let out = env.run(&["completions", shell]);
    out.assert_status(0);
    out.stdout
}

/// COMPREPLY of the generated bash function for the command line `words` (the last word is
/// the one being completed).
fn complete(path: &std::path::Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let driver = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={cword}\nCOMP_LINE='{}'\nCOMP_POINT=${{#COMP_LINE}}\n_gsd__lane gsd-lane '{}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        path.display(),
        quoted.join(" "),
        words.join(" "),
        words[cword],
    );
    let mut command = Command::new("bash");
    command
        .arg("--norc")
        .arg("--noprofile")
        .arg("-c")
        .arg(driver)
        .env_clear();
    let (out, _) = run_bounded(command, Duration::from_secs(20));
    out.assert_status(0);
    out.stdout.lines().map(str::to_owned).collect()
}

#[test]
fn bash_completes_every_word_lane_flags_included_hidden_options_never() {
    let env = lab();
    let path = env.root.path().join("gsd-lane.bash");
    std::fs::write(&path, script(&env, "bash")).expect("write script");

    let first = complete(&path, &["gsd-lane", "re"]);
    assert!(first.contains(&"review".to_owned()), "{first:?}");
    assert!(first.contains(&"remove".to_owned()), "{first:?}");

    // Past the first word (clap-rs/clap#6421): options of the subcommand.
    let review = complete(&path, &["gsd-lane", "review", "--ph"]);
    assert_eq!(review, ["--phase"]);
    let lanes = complete(&path, &["gsd-lane", "review", "--phase", "3", "--"]);
    for flag in [
        "--acme",
        "--claude",
        "--agy",
        "--all",
        "--jobs",
        "--project",
        "--verbose",
    ] {
        assert!(
            lanes.contains(&flag.to_owned()),
            "{flag} missing: {lanes:?}"
        );
    }
    for hidden in ["--compat-version", "--stale"] {
        assert!(
            !lanes.contains(&hidden.to_owned()),
            "{hidden} offered: {lanes:?}"
        );
    }
    let top = complete(&path, &["gsd-lane", "--"]);
    assert!(!top.contains(&"--compat-version".to_owned()), "{top:?}");
    assert!(top.contains(&"--project".to_owned()), "{top:?}");

    let run = complete(&path, &["gsd-lane", "run", "acme", "--prompt-"]);
    assert_eq!(run, ["--prompt-file"]);
    let trust = complete(&path, &["gsd-lane", "trust", "ap"]);
    assert_eq!(trust, ["approve"]);
}

#[test]
fn zsh_and_fish_offer_subcommands_options_and_lane_flags_but_not_hidden_ones() {
    let env = lab();
    let zsh = script(&env, "zsh");
    assert!(
        zsh.contains("'--acme[Review with Acme (lane acme)]'"),
        "{zsh}"
    );
    assert!(zsh.contains("--phase=[Review the plans"), "{zsh}");
    assert!(zsh.contains("'review:"), "{zsh}");
    assert!(!zsh.contains("--compat-version=["), "{zsh}");
    assert!(!zsh.contains("--stale["), "{zsh}");
    let fish = script(&env, "fish");
    assert!(
        fish.contains("__fish_gsd_lane_using_subcommand review\" -l acme"),
        "{fish}"
    );
    assert!(fish.contains("-l phase"), "{fish}");
    assert!(fish.contains("-a \"review\""), "{fish}");
    assert!(!fish.contains("-l compat-version"), "{fish}");
    assert!(!fish.contains("-l stale"), "{fish}");
}

/// The lab plus a skipped overlay whose slug is shell text.
fn lab_with_hostile_slug() -> TestEnv {
    let env = lab();
    let mut evil = util::acme_as("evil-review");
    evil["reviewer"]["slug"] = json!("evil$(touch /tmp/gsd-lane-pwned)");
    evil["reviewer"]["flags"] = json!(["--evil"]);
    env.write_overlay(Scope::Global, "evil-review", &evil);
    env
}

#[test]
fn bash_offers_lane_slugs_and_option_values() {
    let env = lab_with_hostile_slug();
    let path = env.root.path().join("gsd-lane.bash");
    let text = script(&env, "bash");
    assert!(!text.contains("pwned"), "a hostile slug reached the script");
    std::fs::write(&path, text).expect("write script");

    for words in [
        &["gsd-lane", "run", ""][..],
        &["gsd-lane", "doctor", ""],
        &["gsd-lane", "invoke", "--slug", ""],
    ] {
        let offered = complete(&path, words);
        for slug in ["acme", "claude", "ollama"] {
            assert!(offered.contains(&slug.to_owned()), "{words:?}: {offered:?}");
        }
        // A slug, not the capability id.
        assert!(
            !offered.contains(&"acme-review".to_owned()),
            "{words:?}: {offered:?}"
        );
    }
    for sub in ["approve", "revoke", "rebind-host"] {
        let offered = complete(&path, &["gsd-lane", "trust", sub, "ac"]);
        assert!(offered.contains(&"acme".to_owned()), "{sub}: {offered:?}");
        assert!(
            offered.contains(&"acme-review".to_owned()),
            "{sub}: {offered:?}"
        );
    }
    let disclose = complete(&path, &["gsd-lane", "disclose", "acme"]);
    assert!(disclose.contains(&"acme-review".to_owned()), "{disclose:?}");
    for sub in ["run", "review"] {
        let modes = complete(&path, &["gsd-lane", sub, "--sandbox", ""]);
        assert_eq!(modes, ["enforce", "detect", "off"], "{sub}");
    }
    let colors = complete(&path, &["gsd-lane", "list", "--color", ""]);
    assert_eq!(colors, ["auto", "always", "never"]);
}

#[test]
fn zsh_and_fish_offer_lane_slugs_and_sandbox_modes() {
    let env = lab_with_hostile_slug();
    let zsh = script(&env, "zsh");
    assert!(!zsh.contains("pwned"), "{zsh}");
    assert!(
        zsh.lines()
            .any(|l| l.contains("':slug -- ") && l.contains("(acme ") && l.contains(" claude ")),
        "{zsh}"
    );
    assert!(zsh.contains(":MODE:(enforce detect off)"), "{zsh}");
    let fish = script(&env, "fish");
    assert!(!fish.contains("pwned"), "{fish}");
    assert!(
        fish.lines()
            .any(|l| l.contains("__fish_gsd_lane_using_subcommand run\"")
                && l.contains(" -a \"acme ")),
        "{fish}"
    );
    assert!(
        fish.lines().any(|l| l.contains(
            "__fish_gsd_lane_using_subcommand trust; and __fish_seen_subcommand_from approve"
        ) && l.contains("acme-review")),
        "{fish}"
    );
    assert!(fish.contains("enforce\\t"), "{fish}");
}

/// The man page (generated from the same model as the completions): ENVIRONMENT, EXIT STATUS
/// and EXAMPLES present, and no reference to a page that does not exist.
#[test]
fn man_page_has_environment_exit_status_examples_and_names_no_missing_page() {
    let env = lab();
    let out = env.run(&["manpage"]);
    out.assert_status(0);
    let page = &out.stdout;
    for heading in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH COMMANDS",
        ".SH ENVIRONMENT",
        ".SH \"EXIT STATUS\"",
        ".SH EXAMPLES",
        ".SH \"GSD\\-LANE NEW\"",
    ] {
        assert!(page.contains(heading), "{heading} missing");
    }
    let environment = page
        .split(".SH ENVIRONMENT")
        .nth(1)
        .and_then(|rest| rest.split(".SH ").next())
        .unwrap_or_default();
    for name in [
        "GSD_HOME",
        "GSD_LANE_BIN",
        "NO_COLOR",
        "GSD_LANE_WATCHDOG",
        "TMPDIR",
        "PATH",
    ] {
        assert!(
            environment.contains(&format!("\\fB{name}")),
            "ENVIRONMENT lacks {name}"
        );
    }
    // `name(1)`-style references: only the page itself may be named.
    let references: Vec<&str> = page
        .match_indices("(1)")
        .map(|(at, _)| {
            let start = page[..at]
                .rfind(|c: char| c.is_whitespace())
                .map_or(0, |i| i + 1);
            &page[start..at]
        })
        .filter(|name| *name != "gsd\\-lane" && *name != "gsd-lane")
        .collect();
    assert!(
        references.is_empty(),
        "pages that do not exist: {references:?}"
    );
    assert!(!page.contains(".BR gsd"), "a cross-reference macro");

    // groff reads it without a warning, when groff is here.
    if std::process::Command::new("groff")
        .arg("--version")
        .output()
        .is_ok()
    {
        let path = env.root.path().join("gsd-lane.1");
        std::fs::write(&path, page).expect("write page");
        let mut groff = std::process::Command::new("groff");
        groff
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&path)
            .env("LC_ALL", "C.UTF-8");
        let (out, _) = run_bounded(groff, Duration::from_secs(30));
        out.assert_status(0);
        assert!(out.stderr.is_empty(), "groff warnings:\n{}", out.stderr);
    }
}
