//! `gsd-lane new`: the folder it writes validates as written, installs, and runs through a real
//! `gsd-lane run` (spawn: its starter program; `--http`: a loopback OpenAI-compatible server);
//! an invalid slug or an existing folder is refused with nothing written.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::http_server::{json_reply, Server};
use crate::util::{self, TestEnv};

/// `new <args…> --dir <root>/lanes`: the outcome and the folder of `slug`.
fn new_lane(env: &TestEnv, slug: &str, extra: &[&str]) -> (util::Outcome, PathBuf) {
    let dir = env.root.path().join("lanes");
    std::fs::create_dir_all(&dir).expect("lanes dir");
    let mut args = vec!["new", slug, "--dir", dir.to_str().expect("utf8")];
    args.extend_from_slice(extra);
    (env.run(&args), dir.join(slug))
}

/// `validate <folder> --json`: exit 0 with no error and no warning.
fn assert_validates_clean(env: &TestEnv, folder: &Path) {
    let (out, report) = util::validate(env, &[folder.to_path_buf()]);
    out.assert_status(0);
    assert!(
        report.errors.is_empty() && report.warnings.is_empty(),
        "{}",
        out.stdout
    );
}

fn prompt_file(env: &TestEnv) -> PathBuf {
    let path = env.root.path().join("PLAN.md");
    std::fs::write(&path, "# Plan\n\n- [ ] one\n- [ ] two\n").expect("prompt");
    path
}

/// The review a `run --json` left in its run dir.
fn review_of(out: &util::Outcome, slug: &str) -> String {
    let run_dir = PathBuf::from(out.json()["runDir"].as_str().unwrap_or_default());
    util::read_text(&run_dir.join(format!("gsd-review-{slug}.md")))
}

#[test]
fn a_new_spawn_lane_validates_installs_and_runs_as_written() {
    let env = TestEnv::with_planning();
    let (out, folder) = new_lane(&env, "my-reviewer", &[]);
    out.assert_status(0);
    for step in [
        "gsd-lane validate ",
        "gsd-lane install ",
        "gsd-lane disclose my-reviewer",
        "gsd-lane run my-reviewer",
    ] {
        assert!(out.stdout.contains(step), "{step} missing:\n{}", out.stdout);
    }
    assert!(folder.join("README.md").is_file());
    let manifest = util::read_json(&folder.join("capability.json"));
    assert_eq!(
        manifest["reviewer"]["invoke"]["binary"],
        "./bin/my-reviewer"
    );
    assert_eq!(manifest["reviewer"]["invoke"]["promptChannel"], "stdin");
    assert_eq!(manifest["reviewer"]["invoke"]["outputChannel"], "stdout");
    assert_validates_clean(&env, &folder);

    let install = env.run(&[
        "install",
        folder.to_str().expect("utf8"),
        "--global",
        "--yes",
    ]);
    install.assert_status(0);
    let prompt = prompt_file(&env);
    let run = env.run(&[
        "run",
        "my-reviewer",
        "--json",
        "--prompt-file",
        prompt.to_str().expect("utf8"),
    ]);
    run.assert_status(0);
    assert_eq!(run.json()["stubbed"], false, "{}", run.stdout);
    let review = review_of(&run, "my-reviewer");
    assert!(
        review.starts_with(&util::uncited("# My Reviewer review\n"))
            && review.contains("a prompt of 4 lines"),
        "{review}"
    );

    // The author replaces the starter with a call to their reviewer (a fake one here): the
    // lane runs it with the prompt on stdin after reinstalling.
    std::fs::write(
        folder.join("bin/my-reviewer"),
        "#!/bin/sh\nsed -n 's/^- \\[ \\] /reviewed: /p'\n",
    )
    .expect("fake reviewer");
    let reinstall = env.run(&[
        "install",
        folder.to_str().expect("utf8"),
        "--global",
        "--yes",
    ]);
    reinstall.assert_status(0);
    let run = env.run(&[
        "run",
        "my-reviewer",
        "--json",
        "--prompt-file",
        prompt.to_str().expect("utf8"),
    ]);
    run.assert_status(0);
    assert_eq!(
        review_of(&run, "my-reviewer"),
        util::uncited("reviewed: one\nreviewed: two\n")
    );
}

#[test]
fn a_new_http_lane_validates_installs_and_reviews_through_a_loopback_server() {
    let env = TestEnv::with_planning();
    let (out, folder) = new_lane(&env, "local-llm", &["--http"]);
    out.assert_status(0);
    assert!(out.stdout.contains("local_llm_host"), "{}", out.stdout);
    let manifest = util::read_json(&folder.join("capability.json"));
    assert_eq!(manifest["reviewer"]["transport"], "openai-http");
    assert_eq!(manifest["reviewer"]["handler"], "openai-compatible");
    assert!(!folder.join("bin").exists());
    assert_validates_clean(&env, &folder);

    let server = Server::start(&[
        (
            "GET",
            "/v1/models",
            json_reply(
                200,
                &json!({"object": "list", "data": [{"id": "m1", "object": "model"}]}),
            ),
        ),
        (
            "POST",
            "/v1/chat/completions",
            json_reply(
                200,
                &json!({"id": "c", "object": "chat.completion", "model": "m1",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Looks fine."},
                                     "finish_reason": "stop"}]}),
            ),
        ),
    ]);
    std::fs::write(
        env.project.join(".planning/config.json"),
        json!({"review": {"local_llm_host": server.url()}}).to_string(),
    )
    .expect("config");
    // Configured first, as `new` says: the install pins the destination it resolves.
    env.run(&[
        "install",
        folder.to_str().expect("utf8"),
        "--global",
        "--yes",
    ])
    .assert_status(0);
    let prompt = prompt_file(&env);
    let run = env.run(&[
        "run",
        "local-llm",
        "--json",
        "--prompt-file",
        prompt.to_str().expect("utf8"),
    ]);
    run.assert_status(0);
    assert_eq!(run.json()["ok"], true, "{}{}", run.stdout, run.stderr);
    assert_eq!(review_of(&run, "local-llm"), util::uncited("Looks fine.\n"));
    let posted: Value = serde_json::from_slice(&server.posts()[0].body).expect("request body");
    assert_eq!(posted["model"], "m1");
}

#[test]
fn an_invalid_slug_or_an_existing_folder_is_refused_and_nothing_is_written() {
    let env = TestEnv::with_planning();
    for bad in ["Bad", "my_lane", "x.y", "../up", "gsd-thing", "claude"] {
        let (out, _) = new_lane(&env, bad, &[]);
        out.assert_status(2);
        assert_eq!(out.stderr.lines().count(), 1, "{bad}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{bad}");
    }
    let lanes = env.root.path().join("lanes");
    assert_eq!(std::fs::read_dir(&lanes).expect("lanes").count(), 0);

    std::fs::create_dir_all(lanes.join("taken")).expect("taken");
    std::fs::write(lanes.join("taken/keep.txt"), "mine").expect("file");
    let (out, folder) = new_lane(&env, "taken", &[]);
    out.assert_status(1);
    assert!(out.stderr.contains("already exists"), "{}", out.stderr);
    assert_eq!(util::read_text(&folder.join("keep.txt")), "mine");
    assert!(!folder.join("capability.json").exists());
    // Nothing left behind: no staging folder beside it.
    let names: Vec<String> = std::fs::read_dir(&lanes)
        .expect("lanes")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["taken"]);

    let out = env.run(&["new", "fine", "--dir", "no/such/dir"]);
    out.assert_status(1);
    assert!(out.stderr.contains("not a directory"), "{}", out.stderr);
}

/// README's complete `.planning/config.json` example is valid JSON that the loader applies:
/// its models, hosts, effort and default reviewers reach the plans.
#[test]
fn the_readme_config_example_is_applied_as_written() {
    let readme = util::read_text(&util::workspace_root().join("README.md"));
    let section = readme
        .split("## Configuration (`.planning/config.json`)")
        .nth(1)
        .expect("README has the configuration section");
    let example = section
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("a json block");
    let config: Value = serde_json::from_str(example).expect("the example is valid JSON");
    let env = TestEnv::with_planning();
    std::fs::write(env.project.join(".planning/config.json"), example).expect("config");
    let out = env.run(&[
        "plan",
        "--selected",
        "claude,ollama",
        "--run-dir",
        "/run",
        "--repo-root",
        "/repo",
    ]);
    out.assert_status(0);
    let plans = out.json();
    let claude = plans[0]["plan"]["argv"].to_string();
    assert!(claude.contains("\"sonnet\""), "{claude}");
    assert!(
        claude.contains("\"--effort\",\"medium\""),
        "review.effort.claude: {claude}"
    );
    assert_eq!(
        plans[1]["plan"]["host"], config["review"]["ollama_host"],
        "{}",
        plans[1]
    );
    assert_eq!(plans[1]["plan"]["model"], "qwen3:8b", "{}", plans[1]);
    assert_eq!(plans[1]["promptBudget"], 24000, "{}", plans[1]);
}
