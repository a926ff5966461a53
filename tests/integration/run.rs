//! `gsd-lane run <slug>` / `invoke --slug` (invocation.md §5-§10, §12-§14) end to end: fake
//! reviewer CLIs (`tests/fixtures/bin/`, POSIX sh) and a loopback OpenAI-compatible server
//! (a real `TcpListener` on 127.0.0.1, `crate::http_server`).
//!
//! Every command runs the real binary with a cleared environment: `PATH` is the fixture bin
//! directory plus `/usr/bin:/bin`, `HOME` and `GSD_HOME` point into a private temp dir. Lanes are
//! installed as global overlays (`$GSD_HOME/.gsd/capabilities/<id>/`) from
//! `tests/fixtures/run/<shape>/<id>/capability.json`. No address but 127.0.0.1 is contacted.

use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::http_server::{json_reply, json_text_reply, Reply, Server};
use crate::util::{self, files_under, read_text as read, Scope, TestEnv};

/// The prompt every lane is given (`<run dir>/gsd-review-prompt.md`).
const PROMPT: &str = "Please review PLAN-1.\n";
const HOSTILE: &str = "; rm -rf /; $(whoami)";
/// Bound on one gsd-lane command in these tests (a hang fails instead of blocking the suite).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// Environment and runner
// ---------------------------------------------------------------------------------------------

/// One test's world: private HOME/GSD_HOME/project and a run dir holding the prompt.
struct Lab {
    env: TestEnv,
    run_dir: PathBuf,
}

/// What one command did.
struct Ran {
    out: util::Outcome,
    elapsed: Duration,
}

impl Ran {
    fn json(&self) -> Value {
        self.out.json()
    }

    fn status(&self, expected: i32) -> &Ran {
        self.out.assert_no_panic().assert_status(expected);
        self
    }
}

impl Lab {
    fn new() -> Lab {
        let env = TestEnv::with_planning();
        let run_dir = env.root.path().join("run");
        std::fs::create_dir_all(&run_dir).expect("create run dir");
        std::fs::write(run_dir.join("gsd-review-prompt.md"), PROMPT).expect("write prompt");
        Lab { env, run_dir }
    }

    /// Installs `tests/fixtures/run/<shape>/<id>/capability.json` as a global overlay, after
    /// `edit` (which may patch it).
    fn install_with(&self, shape: &str, id: &str, edit: impl FnOnce(&mut Value)) {
        let mut lane =
            util::read_json(&util::fixture(&format!("run/{shape}/{id}")).join("capability.json"));
        edit(&mut lane);
        self.env.write_overlay(Scope::Global, id, &lane);
    }

    fn install(&self, shape: &str, id: &str) {
        self.install_with(shape, id, |_| {});
    }

    /// The stdout spawn lane `acme` driven by fake CLI `binary`.
    fn install_acme(&self, binary: &str) {
        self.install_with("spawn-stdout", "acme-review", |lane| {
            lane["reviewer"]["probe"]["binary"] = json!(binary);
            lane["reviewer"]["invoke"]["binary"] = json!(binary);
        });
    }

    fn config(&self, config: &Value) {
        std::fs::write(
            self.env.project.join(".planning").join("config.json"),
            config.to_string(),
        )
        .expect("write config.json");
    }

    fn review_path(&self, identity: &str) -> PathBuf {
        self.run_dir.join(format!("gsd-review-{identity}.md"))
    }

    fn err_path(&self, identity: &str) -> PathBuf {
        self.run_dir.join(format!("gsd-review-{identity}.err"))
    }

    fn review(&self, identity: &str) -> String {
        read(&self.review_path(identity))
    }

    /// The review of a source-grounded lane whose text cites no `file:line`: it must start
    /// with the citation stamp and an empty line (upstream #3436); returns what follows.
    fn uncited_review(&self, identity: &str) -> String {
        let review = self.review(identity);
        review
            .strip_prefix(&util::uncited(""))
            .unwrap_or_else(|| panic!("no citation stamp on {identity}'s review: {review:?}"))
            .to_owned()
    }

    fn sidecar(&self, identity: &str) -> String {
        read(&self.err_path(identity))
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.env.home.join(name)
    }

    /// `gsd-lane <args>` in the project directory.
    fn gsd(&self, args: &[&str], timeout: Duration) -> Ran {
        let command = util::gsd_command(&self.env, &util::fixture_path(), &self.env.project, args);
        run_bounded(command, timeout)
    }

    /// `gsd-lane run <slug> --run-dir <run> --repo-root <project> <extra>`.
    fn run(&self, slug: &str, extra: &[&str]) -> Ran {
        self.run_timed(slug, extra, COMMAND_TIMEOUT)
    }

    fn run_timed(&self, slug: &str, extra: &[&str], timeout: Duration) -> Ran {
        let run_dir = self.run_dir.display().to_string();
        let repo = self.env.project.display().to_string();
        let mut args = vec!["run", slug, "--run-dir", &run_dir, "--repo-root", &repo];
        args.extend_from_slice(extra);
        self.gsd(&args, timeout)
    }

    /// `run <slug> --json`, expecting exit 0 and `{slug, ok:true, stubbed}`; returns `stubbed`.
    fn run_ok(&self, slug: &str, extra: &[&str]) -> (bool, Ran) {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        let ran = self.run(slug, &args);
        ran.status(0);
        let result = ran.json();
        let stubbed = assert_completed(&result, slug);
        (stubbed, ran)
    }
}

/// Checks the exact `--json` shape of a lane that ran; returns `stubbed`.
fn assert_completed(result: &Value, slug: &str) -> bool {
    let stubbed = result["stubbed"]
        .as_bool()
        .unwrap_or_else(|| panic!("stubbed is not a bool: {result}"));
    // `run --json` adds where its run dir is (decisions.md #4); `invoke` never does.
    let mut result = result.clone();
    if let Some(map) = result.as_object_mut() {
        if let Some(dir) = map.remove("runDir") {
            assert!(dir.is_string(), "runDir is not a path: {dir}");
        }
        let model = map
            .remove("model")
            .expect("every lane result records a model");
        assert_model_shape(&model);
    }
    assert_eq!(
        result,
        json!({"slug": slug, "ok": true, "stubbed": stubbed}),
        "exact --json shape of a completed lane"
    );
    stubbed
}

/// The `model` of a lane result (upstream #3649, §3.2): `{value, source}`, `source` from the
/// closed set, `value` null exactly when `source` is `unknown`.
fn assert_model_shape(model: &Value) {
    let source = model["source"]
        .as_str()
        .unwrap_or_else(|| panic!("{model}"));
    assert!(
        [
            "pinned",
            "served",
            "requested",
            "banner",
            "transcript",
            "unknown"
        ]
        .contains(&source),
        "{model}"
    );
    assert_eq!(model["value"].is_null(), source == "unknown", "{model}");
    assert!(
        model["value"].is_null() || model["value"].is_string(),
        "{model}"
    );
    assert_eq!(
        model.as_object().map(serde_json::Map::len),
        Some(2),
        "{model}"
    );
}

/// Runs `command`, killed (and the test failed) after `timeout`.
fn run_bounded(command: Command, timeout: Duration) -> Ran {
    let (out, elapsed) = util::run_bounded(command, timeout);
    Ran { out, elapsed }
}

/// The generic stub of §10.
/// The generic stub's upstream elements (invocation.md §10), without the last one, the
/// `Diagnosis:` line ([`diagnosis`]).
fn stub_head(slug: &str, sidecar: &str, diagnostic: Option<&str>) -> String {
    let mut lines = vec![
        format!("{slug} review failed or returned empty output. stderr:"),
        sidecar.to_owned(),
    ];
    if let Some(diagnostic) = diagnostic {
        lines.push("Raw response body:".to_owned());
        lines.push(diagnostic.to_owned());
    }
    format!("{}\n", lines.join("\n"))
}

/// The whole generic stub: its elements, then `diagnosis` as the last line (upstream #4275).
fn stub(slug: &str, sidecar: &str, diagnostic: Option<&str>, diagnosis: &str) -> String {
    format!("{}{diagnosis}\n", stub_head(slug, sidecar, diagnostic))
}

/// The `Diagnosis:` line of a spawn lane with no effort argument (upstream #4275, §7.4).
fn no_effort_diagnosis(slug: &str, ending: &str) -> String {
    format!(
        "Diagnosis: {slug} ran with no effort argument, so the reviewer CLI's own configuration applied and {ending}"
    )
}

/// The tail of a clean empty exit (U+2014).
const CLEAN_TAIL: &str = "exited cleanly inside the timeout \u{2014} a clean exit that produced no output is most often a model ending its turn without writing a final message rather than a crash; if this lane carries a reasoning effort, raising it is the usual fix.";

/// The `Diagnosis:` line of an HTTP lane.
fn http_diagnosis(slug: &str) -> String {
    format!("Diagnosis: {slug} is an HTTP lane and carries no reasoning-effort setting.")
}

fn stub_marker(slug: &str) -> String {
    format!("{slug} review failed or returned empty output. stderr:\n")
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------------
// Loopback OpenAI-compatible server
// ---------------------------------------------------------------------------------------------

/// `GET /v1/models` answering `data[].id` = `ids`.
fn models(ids: &[&str]) -> (&'static str, &'static str, Reply) {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model"}))
        .collect();
    (
        "GET",
        "/v1/models",
        json_reply(200, &json!({"object": "list", "data": data})),
    )
}

/// `POST /v1/chat/completions` answering a chat completion with `content` from `model`.
fn completion(model: &str, content: &str) -> (&'static str, &'static str, Reply) {
    (
        "POST",
        "/v1/chat/completions",
        json_reply(
            200,
            &json!({
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}]
            }),
        ),
    )
}

/// The exact §9 request body.
fn chat_body(model: &str, prompt: &str) -> String {
    format!(
        "{{\"model\":{},\"messages\":[{{\"role\":\"user\",\"content\":{}}}]}}",
        serde_json::to_string(model).expect("encode"),
        serde_json::to_string(prompt).expect("encode")
    )
}

const HTTP_SLUG: &str = "acme_local";

/// A lab with the HTTP lane installed and `review.acme_host` pointing at `host`.
fn http_lab(host: &str, model: Option<&str>, edit: impl FnOnce(&mut Value)) -> Lab {
    let lab = Lab::new();
    lab.install_with("http", "acme-review", edit);
    let mut config = json!({"review": {"acme_host": host}});
    if let Some(model) = model {
        config["review"]["models"] = json!({ HTTP_SLUG: model });
    }
    lab.config(&config);
    lab
}

// ---------------------------------------------------------------------------------------------
// Spawn lanes: review file, sidecar, stubs
// ---------------------------------------------------------------------------------------------

#[test]
fn spawn_review_is_stdout_plus_newline_and_sidecar_holds_stderr() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let (stubbed, ran) = lab.run_ok("acme", &[]);
    assert!(!stubbed);
    let sandbox = util::take_sandbox(&mut ran.out.json_raw()).expect("a sandbox member");
    assert_eq!(
        ran.out.stdout,
        format!("{{\"slug\":\"acme\",\"ok\":true,\"stubbed\":false,\"model\":{{\"value\":null,\"source\":\"unknown\"}},\"sandbox\":{sandbox}}}\n"),
        "one compact JSON line"
    );
    // The script prints `# Acme review\n\nprompt was: <prompt sans trailing newline>`.
    assert_eq!(
        lab.uncited_review("acme"),
        "# Acme review\n\nprompt was: Please review PLAN-1.\n"
    );
    assert_eq!(lab.sidecar("acme"), "acme: reviewed 21 bytes\n");
    assert!(lab.marker("acme-review.ran").exists());
}

#[test]
fn invoke_slug_is_run_json() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let run_dir = lab.run_dir.display().to_string();
    let ran = lab.gsd(
        &["invoke", "--slug", "acme", "--run-dir", &run_dir],
        COMMAND_TIMEOUT,
    );
    ran.status(0);
    assert_eq!(
        ran.json(),
        json!({"slug": "acme", "ok": true, "stubbed": false, "model": {"value": null, "source": "unknown"}})
    );
    assert_eq!(
        lab.uncited_review("acme"),
        "# Acme review\n\nprompt was: Please review PLAN-1.\n"
    );
}

#[test]
fn human_run_exits_zero_and_writes_the_same_files() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let ran = lab.run("acme", &[]);
    ran.status(0);
    assert_eq!(
        lab.uncited_review("acme"),
        "# Acme review\n\nprompt was: Please review PLAN-1.\n"
    );
    assert_eq!(lab.sidecar("acme"), "acme: reviewed 21 bytes\n");
}

#[test]
fn prompt_file_override_is_streamed_on_stdin() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let other = lab.env.root.path().join("trimmed-prompt.md");
    std::fs::write(&other, "TRIMMED").expect("write prompt");
    let other = other.display().to_string();
    let (stubbed, _) = lab.run_ok("acme", &["--prompt-file", &other]);
    assert!(!stubbed);
    assert_eq!(
        lab.uncited_review("acme"),
        "# Acme review\n\nprompt was: TRIMMED\n"
    );
}

/// The citation check (upstream #3436, §2) through the real binary: a review that cites a
/// `file:line` (even among plan-line references, or as a Windows path) is left as written; one
/// that cites only plan lines, URLs or clock times is stamped; a lane declared exactly
/// `diff-only` is never stamped.
#[test]
fn the_citation_check_stamps_only_uncited_source_grounded_reviews() {
    let with_prompt = |lab: &Lab, name: &str, text: &str| {
        let path = lab.env.root.path().join(name);
        std::fs::write(&path, text).expect("write prompt");
        let path = path.display().to_string();
        let (stubbed, _) = lab.run_ok("acme", &["--prompt-file", &path]);
        assert!(!stubbed);
        lab.review("acme")
    };
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    for cited in [
        "plan line 5, and src/foo.cts:42",
        "(README.md:12)",
        "src\\foo.cts:42",
    ] {
        assert_eq!(
            with_prompt(&lab, "cited.md", cited),
            format!("# Acme review\n\nprompt was: {cited}\n"),
            "{cited}"
        );
    }
    for uncited in [
        "see line 42 and L12-L18",
        "http://localhost:8080 at 12:30",
        "https://example.com/x",
    ] {
        assert_eq!(
            with_prompt(&lab, "uncited.md", uncited),
            util::uncited(&format!("# Acme review\n\nprompt was: {uncited}\n")),
            "{uncited}"
        );
    }

    let diff_only = Lab::new();
    diff_only.install_with("spawn-stdout", "acme-review", |lane| {
        lane["reviewer"]["evidenceClass"] = json!("diff-only");
    });
    assert_eq!(
        with_prompt(&diff_only, "uncited.md", "see line 42"),
        "# Acme review\n\nprompt was: see line 42\n"
    );
}

/// The model of a lane result (upstream #3649, §3.3) through `run --json`: an HTTP lane
/// records the model the server says it served, else the model its request carried (here the
/// discovered one, recorded although the call failed); a lane writing its review to a file
/// records the `model:` line of its stdout banner, within the first 40 lines; a pinned model
/// beats the banner.
#[test]
fn lane_results_record_the_served_requested_banner_or_pinned_model() {
    let server = Server::start(&[models(&["x"]), completion("other-model", "see src/a.rs:1")]);
    let lab = http_lab(&server.url(), Some("requested-model"), |_| {});
    let (_, ran) = lab.run_ok(HTTP_SLUG, &[]);
    assert_eq!(
        ran.json()["model"],
        json!({"value": "other-model", "source": "served"})
    );

    let server = Server::start(&[
        models(&["discovered-m"]),
        (
            "POST",
            "/v1/chat/completions",
            json_text_reply(500, "{\"error\":\"boom\"}".to_owned()),
        ),
    ]);
    let lab = http_lab(&server.url(), None, |_| {});
    let (stubbed, ran) = lab.run_ok(HTTP_SLUG, &[]);
    assert!(stubbed);
    assert_eq!(
        ran.json()["model"],
        json!({"value": "discovered-m", "source": "requested"})
    );

    let lab = Lab::new();
    lab.install_with("spawn-file-arg", "acme-file-review", |lane| {
        lane["reviewer"]["probe"]["binary"] = json!("acme-banner");
        lane["reviewer"]["invoke"]["binary"] = json!("acme-banner");
    });
    let (_, ran) = lab.run_ok("acme-file", &[]);
    assert_eq!(
        ran.json()["model"],
        json!({"value": "gpt-banner-1", "source": "banner"})
    );
    let (_, ran) = lab.run_ok("acme-file", &["--model", "pinned-m"]);
    assert_eq!(
        ran.json()["model"],
        json!({"value": "pinned-m", "source": "pinned"})
    );
}

#[test]
fn empty_stdout_with_stderr_is_a_stub_holding_the_stderr() {
    let lab = Lab::new();
    lab.install_acme("acme-empty");
    let (stubbed, ran) = lab.run_ok("acme", &[]);
    assert!(stubbed);
    assert_eq!(ran.json()["stubbed"], true);
    let stderr = "acme: model not found\nacme: giving up\n";
    assert_eq!(lab.sidecar("acme"), stderr);
    let review = lab.review("acme");
    assert!(review.starts_with(&stub_marker("acme")), "{review:?}");
    assert_eq!(
        review,
        stub(
            "acme",
            stderr,
            None,
            &no_effort_diagnosis("acme", "exited with status 3.")
        )
    );
}

#[test]
fn a_stubbed_lane_ran_so_explicit_still_exits_zero() {
    let lab = Lab::new();
    lab.install_acme("acme-empty");
    let ran = lab.run("acme", &["--json", "--explicit"]);
    ran.status(0);
    assert_eq!(
        ran.json(),
        json!({"slug": "acme", "ok": true, "stubbed": true, "model": {"value": null, "source": "unknown"}})
    );
}

#[test]
fn whitespace_only_stdout_is_a_stub() {
    let lab = Lab::new();
    lab.install_acme("acme-blank");
    let (stubbed, _) = lab.run_ok("acme", &[]);
    assert!(stubbed);
    // A clean empty exit: the first line intact, the stopped-short hint last (upstream #4275).
    assert_eq!(
        lab.review("acme"),
        stub(
            "acme",
            "acme: nothing to say\n",
            None,
            &no_effort_diagnosis("acme", CLEAN_TAIL)
        )
    );
}

#[test]
fn file_arg_lane_review_comes_from_the_output_file_not_stdout() {
    let lab = Lab::new();
    lab.install("spawn-file-arg", "acme-file-review");
    let (stubbed, _) = lab.run_ok("acme-file", &[]);
    assert!(!stubbed);
    let review = lab.uncited_review("acme-file");
    assert_eq!(review, "# File review\n\nwritten to the -o path\n");
    assert!(!review.contains("NOISE"));
    assert_eq!(lab.sidecar("acme-file"), "");
}

#[test]
fn file_arg_lane_under_an_instance_writes_the_instance_file() {
    let lab = Lab::new();
    lab.install("spawn-file-arg", "acme-file-review");
    let (stubbed, _) = lab.run_ok("acme-file", &["--as", "inst-1"]);
    assert!(!stubbed);
    assert_eq!(
        lab.uncited_review("inst-1"),
        "# File review\n\nwritten to the -o path\n"
    );
    assert!(lab.err_path("inst-1").exists());
    assert!(!lab.review_path("acme-file").exists());
    assert!(!lab.err_path("acme-file").exists());
}

#[test]
fn instance_name_selects_the_review_and_sidecar_files() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let (stubbed, ran) = lab.run_ok("acme", &["--as", "inst-1"]);
    assert!(!stubbed);
    assert_eq!(ran.json()["slug"], "acme", "the result keeps the lane slug");
    assert_eq!(
        lab.uncited_review("inst-1"),
        "# Acme review\n\nprompt was: Please review PLAN-1.\n"
    );
    assert_eq!(lab.sidecar("inst-1"), "acme: reviewed 21 bytes\n");
    assert!(!lab.review_path("acme").exists());
    assert!(!lab.err_path("acme").exists());
}

#[test]
fn instance_stub_keeps_the_lane_slug_in_its_header() {
    let lab = Lab::new();
    lab.install_acme("acme-empty");
    let (stubbed, _) = lab.run_ok("acme", &["--as", "inst-1"]);
    assert!(stubbed);
    assert_eq!(
        lab.review("inst-1"),
        stub(
            "acme",
            "acme: model not found\nacme: giving up\n",
            None,
            &no_effort_diagnosis("acme", "exited with status 3.")
        )
    );
}

#[test]
fn instance_name_with_path_characters_stays_in_the_run_dir() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let (stubbed, _) = lab.run_ok("acme", &["--as", "../../evil name"]);
    assert!(!stubbed);
    // Every character outside [A-Za-z0-9._-] becomes '-'.
    assert!(lab.review_path("..-..-evil-name").exists());
    let outside: Vec<PathBuf> = files_under(lab.env.root.path())
        .into_iter()
        .filter(|p| !p.starts_with(&lab.run_dir) && !p.starts_with(&lab.env.gsd_home))
        .filter(|p| !p.starts_with(&lab.env.home))
        .collect();
    assert_eq!(
        outside,
        Vec::<PathBuf>::new(),
        "files written outside the run dir"
    );
}

#[test]
fn hostile_model_reaches_the_tool_as_one_argument() {
    let lab = Lab::new();
    lab.install_acme("acme-args");
    let (stubbed, _) = lab.run_ok("acme", &["--model", HOSTILE]);
    assert!(!stubbed);
    assert_eq!(
        lab.uncited_review("acme"),
        format!("5\nreview\n--model\n{HOSTILE}\n-p\n-\n")
    );
}

#[test]
fn configured_model_reaches_the_tool_through_the_model_placeholder() {
    let lab = Lab::new();
    lab.install_acme("acme-args");
    lab.config(&json!({"review": {"models": {"acme": " acme-large "}}}));
    let (stubbed, _) = lab.run_ok("acme", &[]);
    assert!(!stubbed);
    assert_eq!(
        lab.uncited_review("acme"),
        "5\nreview\n--model\nacme-large\n-p\n-\n"
    );
}

#[test]
fn invalid_utf8_output_becomes_replacement_characters() {
    let lab = Lab::new();
    lab.install_acme("acme-badutf8");
    let (stubbed, _) = lab.run_ok("acme", &[]);
    assert!(!stubbed);
    let bytes = std::fs::read(lab.review_path("acme")).expect("read review");
    let review = String::from_utf8(bytes).expect("the review file is valid UTF-8");
    assert_eq!(review, util::uncited("before \u{FFFD}\u{FFFD} after\n"));
}

/// Runs the `acme-bytes` lane for `size` bytes and checks the review is those bytes plus `\n`.
fn assert_large_stdout(size: u64, timeout: Duration) -> Duration {
    let lab = Lab::new();
    lab.install_with("spawn-stdout", "acme-review", |lane| {
        lane["reviewer"]["probe"]["binary"] = json!("acme-bytes");
        lane["reviewer"]["invoke"]["binary"] = json!("acme-bytes");
        lane["reviewer"]["invoke"]["args"] = json!([size.to_string()]);
        lane["reviewer"]["timeoutFloorMs"] = json!(120_000);
        // These measure the stdout path; a source-grounded lane would also have its review
        // read through the citation check and copied behind the stamp (measured on its own,
        // BENCHMARKS.md "Citation check").
        lane["reviewer"]["evidenceClass"] = json!("diff-only");
    });
    let ran = lab.run_timed("acme", &["--json"], timeout);
    ran.status(0);
    assert!(!assert_completed(&ran.json(), "acme"), "not a stub");
    let path = lab.review_path("acme");
    let len = std::fs::metadata(&path).expect("review metadata").len();
    assert_eq!(len, size + 1, "review = stdout bytes + one newline");
    let mut file = std::fs::File::open(&path).expect("open review");
    let mut head = [0u8; 4];
    file.read_exact(&mut head).expect("read head");
    assert_eq!(&head, b"aaaa");
    file.seek(SeekFrom::End(-4)).expect("seek");
    let mut tail = [0u8; 4];
    file.read_exact(&mut tail).expect("read tail");
    assert_eq!(&tail, b"aaa\n");
    // Keep the temp dir from holding gigabytes longer than needed.
    std::fs::remove_file(&path).expect("remove big review");
    ran.elapsed
}

#[test]
fn stdout_of_64_mib_is_kept_whole() {
    assert_large_stdout(64 * 1024 * 1024, COMMAND_TIMEOUT);
}

/// About 3 s here (debug build); it writes 1 GiB to the temp dir and deletes it afterwards.
#[test]
fn stdout_of_1_gib_is_kept_whole() {
    let elapsed = assert_large_stdout(1024 * 1024 * 1024, Duration::from_secs(120));
    assert!(
        elapsed < Duration::from_secs(60),
        "1 GiB lane took {elapsed:?}"
    );
}

#[test]
fn hung_lane_is_killed_with_its_whole_tree_and_stubbed() {
    let lab = Lab::new();
    lab.install("spawn-hung", "acme-review");
    let ran = lab.run_timed("acme", &["--json"], Duration::from_secs(20));
    ran.status(0);
    assert!(
        ran.elapsed < Duration::from_secs(5),
        "timeoutFloorMs 1000 but the run took {:?}",
        ran.elapsed
    );
    assert!(
        assert_completed(&ran.json(), "acme"),
        "a killed lane is a stub"
    );
    let sidecar = lab.sidecar("acme");
    assert!(
        sidecar.ends_with("\n[spawn error: ETIMEDOUT]\n"),
        "sidecar: {sidecar:?}"
    );
    assert!(
        sidecar.starts_with("acme: started, now hanging\n"),
        "{sidecar:?}"
    );
    let review = lab.review("acme");
    let stubbed = stub_head("acme", &sidecar, None);
    assert!(review.starts_with(&stubbed), "{review}");
    // The last line says how it ended, without the clean-exit hint.
    assert!(
        review.ends_with(&format!(
            "\n{}\n",
            no_effort_diagnosis("acme", "was killed by the outer timeout.")
        )),
        "{review}"
    );
    // Then the bound that stopped it, and where it is set (issue 21 item 7).
    assert!(
        review[stubbed.len()..]
            .starts_with("\n> [gsd-lane] timed out after 1 s (reviewer.timeoutFloorMs in "),
        "{review}"
    );

    assert!(
        lab.marker("acme-hang.pid").is_file(),
        "the grandchild started"
    );
    let left = util::processes_left_with_home(&lab.env.home, Duration::from_secs(3));
    assert!(
        left.is_empty(),
        "the grandchild survived the timeout kill: {left:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Unavailability (§5, §7, §12): exit codes, explicit error, nothing written, nothing started
// ---------------------------------------------------------------------------------------------

/// Runs `slug` twice (discovered, then `--explicit`) and checks the refusal both times.
fn assert_unavailable(lab: &Lab, slug: &str, reason: &str, identity: &str) -> Vec<Ran> {
    let mut runs = Vec::new();
    for explicit in [false, true] {
        let mut args = vec!["--json"];
        if explicit {
            args.push("--explicit");
        }
        let ran = lab.run(slug, &args);
        ran.status(if explicit { 2 } else { 0 });
        let result = ran.json();
        assert_eq!(result["slug"], slug, "{result}");
        assert_eq!(result["ok"], false, "{result}");
        assert_eq!(result["stubbed"], false, "{result}");
        assert_eq!(
            result["reason"], reason,
            "{result}\nstderr: {}",
            ran.out.stderr
        );
        assert!(result["detail"].is_string(), "{result}");
        let prefix = format!("explicitly requested reviewer '{slug}':");
        if explicit {
            assert!(
                ran.out.stderr.starts_with(&prefix),
                "stderr: {:?}",
                ran.out.stderr
            );
        } else {
            assert!(!ran.out.stderr.contains(&prefix), "{:?}", ran.out.stderr);
        }
        assert!(
            !lab.review_path(identity).exists(),
            "{reason}: a review file was written"
        );
        assert!(
            !lab.err_path(identity).exists(),
            "{reason}: a sidecar was written"
        );
        assert_eq!(
            file_names(&lab.run_dir),
            ["gsd-review-prompt.md"],
            "{reason}: run dir changed"
        );
        runs.push(ran);
    }
    // Without --json and with --explicit: same exit code.
    lab.run(slug, &["--explicit"]).status(2);
    lab.run(slug, &[]).status(0);
    runs
}

#[test]
fn missing_binary_is_unavailable() {
    let lab = Lab::new();
    lab.install_acme("acme-not-installed");
    assert_unavailable(&lab, "acme", "missing_binary", "acme");
}

#[test]
fn missing_required_binary_is_unavailable_and_the_tool_never_starts() {
    let lab = Lab::new();
    lab.install("spawn-requires", "acme-review");
    assert_unavailable(&lab, "acme", "missing_required_binary", "acme");
    assert!(
        !lab.marker("acme-review.ran").exists(),
        "the tool was started"
    );
}

#[test]
fn capability_probe_with_the_needle_runs_the_lane() {
    let lab = Lab::new();
    lab.install("spawn-capability", "acme-review");
    let (stubbed, _) = lab.run_ok("acme", &[]);
    assert!(!stubbed);
    assert_eq!(lab.uncited_review("acme"), "capable review\n");
    assert!(lab.marker("acme-help.ran").exists());
}

#[test]
fn capability_probe_without_the_needle_is_probe_failed() {
    let lab = Lab::new();
    lab.install_with("spawn-capability", "acme-review", |lane| {
        lane["reviewer"]["probe"]["binary"] = json!("acme-help-plain");
        lane["reviewer"]["invoke"]["binary"] = json!("acme-help-plain");
    });
    assert_unavailable(&lab, "acme", "probe_failed", "acme");
    assert!(
        !lab.marker("acme-help-plain.ran").exists(),
        "the tool was started"
    );
}

#[test]
fn capability_probe_past_its_bound_is_probe_timeout() {
    let lab = Lab::new();
    lab.install_with("spawn-capability", "acme-review", |lane| {
        lane["reviewer"]["probe"]["binary"] = json!("acme-help-slow");
        lane["reviewer"]["invoke"]["binary"] = json!("acme-help-slow");
    });
    let runs = assert_unavailable(&lab, "acme", "probe_timeout", "acme");
    for ran in runs {
        assert!(
            ran.elapsed < Duration::from_secs(4),
            "probe bound 300 ms, help sleeps 5 s, run took {:?}",
            ran.elapsed
        );
    }
    assert!(
        !lab.marker("acme-help-slow.ran").exists(),
        "the tool was started"
    );
}

/// `invoke --slug <unknown>` keeps the reference's answer (decisions.md #5): a
/// `malformed_lane` result, exit 0 (2 with `--explicit`), nothing written; the reason, with a
/// did-you-mean, also goes to stderr.
fn assert_invoke_malformed(lab: &Lab, slug: &str) {
    let run_dir = lab.run_dir.display().to_string();
    for (explicit, status) in [(false, 0), (true, 2)] {
        let mut args = vec!["invoke", "--slug", slug, "--run-dir", &run_dir];
        if explicit {
            args.push("--explicit");
        }
        let ran = lab.gsd(&args, COMMAND_TIMEOUT);
        ran.status(status);
        let result = ran.json();
        assert_eq!(result["slug"], slug, "{result}");
        assert_eq!(result["ok"], false, "{result}");
        assert_eq!(result["reason"], "malformed_lane", "{result}");
        assert!(
            result.get("runDir").is_none(),
            "invoke keeps the shape: {result}"
        );
        assert_eq!(
            file_names(&lab.run_dir),
            ["gsd-review-prompt.md"],
            "run dir changed"
        );
    }
}

#[test]
fn unknown_slug_is_malformed_lane_for_invoke() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    assert_invoke_malformed(&lab, "nope");
    assert_invoke_malformed(&lab, "acm");
    let ran = lab.gsd(&["invoke", "--slug", "acm"], COMMAND_TIMEOUT);
    assert!(
        ran.out.stderr.contains("did you mean \"acme\""),
        "{}",
        ran.out.stderr
    );
}

#[test]
fn unknown_slug_is_a_usage_error_for_run_with_a_suggestion() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let before = files_under(lab.env.root.path());
    for json_output in [false, true] {
        let ran = lab.run("acme-reviw", if json_output { &["--json"] } else { &[] });
        ran.status(2);
        if json_output {
            assert_eq!(ran.json()["reason"], "malformed_lane", "{}", ran.out.stdout);
        } else {
            assert!(ran.out.stdout.is_empty(), "{}", ran.out.stdout);
        }
        assert!(
            ran.out.stderr.contains("no lane has slug \"acme-reviw\"")
                && ran.out.stderr.contains("did you mean \"acme\""),
            "{}",
            ran.out.stderr
        );
    }
    let ran = lab.run("zzzzzzzzzz", &[]);
    ran.status(2);
    assert!(
        !ran.out.stderr.contains("did you mean"),
        "{}",
        ran.out.stderr
    );
    assert_eq!(
        files_under(lab.env.root.path()),
        before,
        "something was written"
    );
}

#[test]
fn traversal_slug_is_refused_and_writes_nothing() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let before = files_under(lab.env.root.path());
    lab.run("../evil", &["--json"]).status(2);
    assert_invoke_malformed(&lab, "../evil");
    assert_eq!(
        files_under(lab.env.root.path()),
        before,
        "something was written"
    );
    assert!(!lab.env.root.path().join("gsd-review-evil.md").exists());
    assert!(!lab.marker("acme-review.ran").exists());
}

#[test]
fn run_of_an_inactive_lane_names_the_reason_the_file_and_the_fix() {
    let lab = Lab::new();
    let mut lane =
        util::read_json(&util::fixture("run/spawn-stdout/acme-review").join("capability.json"));
    lane["engines"] = json!({"gsd": ">=99.0.0"});
    let path = lab.env.write_overlay(Scope::Global, "acme-review", &lane);
    let ran = lab.run("acme", &[]);
    ran.status(2);
    let stderr = &ran.out.stderr;
    assert!(stderr.contains("is not active"), "{stderr}");
    assert!(stderr.contains("engines.gsd"), "{stderr}");
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("fix: edit engines.gsd"), "{stderr}");
    assert!(!stderr.contains("did you mean"), "{stderr}");
}

#[test]
fn prompt_file_problems_are_told_apart_before_anything_starts() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let dir = lab.env.root.path().join("a-directory");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let unreadable = lab.env.root.path().join("unreadable.md");
    std::fs::write(&unreadable, "x").expect("write");
    std::fs::set_permissions(
        &unreadable,
        std::os::unix::fs::PermissionsExt::from_mode(0o000),
    )
    .expect("chmod");
    let missing = lab.env.root.path().join("missing.md");
    let mut cases = vec![
        (missing.display().to_string(), "does not exist"),
        (dir.display().to_string(), "is a directory, not a file"),
        ("/dev/null".to_owned(), "is not a regular file"),
    ];
    // root reads anything: the unreadable case only means something for other users.
    if std::fs::read(&unreadable).is_err() {
        cases.push((unreadable.display().to_string(), "cannot be read"));
    }
    for (path, expected) in cases {
        let fresh = lab.env.root.path().join("fresh-run");
        let fresh_dir = fresh.display().to_string();
        let ran = lab.gsd(
            &[
                "run",
                "acme",
                "--prompt-file",
                &path,
                "--run-dir",
                &fresh_dir,
            ],
            COMMAND_TIMEOUT,
        );
        ran.status(1);
        assert!(
            ran.out.stderr.contains(expected),
            "{path}: {}",
            ran.out.stderr
        );
        assert!(!fresh.exists(), "{path}: the run dir was created");
        assert!(
            !lab.marker("acme-review.ran").exists(),
            "{path}: the lane started"
        );
        let ran = lab.gsd(
            &[
                "invoke",
                "--slug",
                "acme",
                "--prompt-file",
                &path,
                "--run-dir",
                &fresh_dir,
            ],
            COMMAND_TIMEOUT,
        );
        ran.status(1);
        assert!(
            ran.out.stderr.contains(expected),
            "invoke {path}: {}",
            ran.out.stderr
        );
    }
}

#[test]
fn no_prompt_is_a_usage_error_unless_the_lane_takes_none_or_stdin_is_named() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let empty = lab.env.root.path().join("empty-run");
    let empty_dir = empty.display().to_string();
    let ran = lab.gsd(&["run", "acme"], COMMAND_TIMEOUT);
    ran.status(1);
    assert!(
        ran.out.stderr.contains("reads a prompt and none was given"),
        "{}",
        ran.out.stderr
    );
    lab.gsd(&["run", "acme", "--run-dir", &empty_dir], COMMAND_TIMEOUT)
        .status(1);
    assert!(!lab.marker("acme-review.ran").exists(), "the lane started");

    // `--prompt -` reads stdin (here: empty), and a run dir that holds the prompt is enough.
    lab.gsd(
        &[
            "run",
            "acme",
            "--prompt",
            "-",
            "--run-dir",
            &empty_dir,
            "--json",
        ],
        COMMAND_TIMEOUT,
    )
    .status(0);
    lab.run_ok("acme", &[]);

    // A lane that takes no prompt runs without one.
    let other = Lab::new();
    other.install_with("spawn-stdout", "acme-review", |lane| {
        lane["reviewer"]["invoke"]["promptChannel"] = json!("none");
    });
    let ran = other.gsd(&["run", "acme", "--json"], COMMAND_TIMEOUT);
    ran.status(0);
    assert_eq!(ran.json()["ok"], true, "{}", ran.out.stderr);
}

#[test]
fn run_json_and_human_output_say_where_the_run_dir_is() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let prompt = lab
        .run_dir
        .join("gsd-review-prompt.md")
        .display()
        .to_string();
    let ran = lab.gsd(
        &["run", "acme", "--prompt-file", &prompt, "--json"],
        COMMAND_TIMEOUT,
    );
    ran.status(0);
    let result = ran.json();
    let dir = PathBuf::from(
        result["runDir"]
            .as_str()
            .unwrap_or_else(|| panic!("{result}")),
    );
    assert!(dir.join("gsd-review-acme.md").is_file(), "{result}");
    let ran = lab.gsd(&["run", "acme", "--prompt-file", &prompt], COMMAND_TIMEOUT);
    ran.status(0);
    let line = ran
        .out
        .stdout
        .lines()
        .find(|l| l.starts_with("run dir"))
        .unwrap_or_else(|| panic!("{}", ran.out.stdout))
        .to_owned();
    let dir = PathBuf::from(line.trim_start_matches("run dir").trim());
    assert!(dir.join("gsd-review-acme.md").is_file(), "{line}");
}

#[test]
fn invoke_without_run_dir_uses_the_working_directory() {
    let lab = Lab::new();
    lab.install("spawn-stdout", "acme-review");
    let command = util::gsd_command(
        &lab.env,
        &util::fixture_path(),
        &lab.run_dir,
        &["invoke", "--slug", "acme"],
    );
    let ran = run_bounded(command, COMMAND_TIMEOUT);
    ran.status(0);
    assert_eq!(
        ran.json(),
        json!({"slug": "acme", "ok": true, "stubbed": false, "model": {"value": null, "source": "unknown"}})
    );
    assert_eq!(
        lab.uncited_review("acme"),
        "# Acme review\n\nprompt was: Please review PLAN-1.\n"
    );
}

#[test]
fn empty_model_as_and_agent_keep_the_configured_values() {
    let lab = Lab::new();
    lab.install_acme("acme-args");
    lab.config(&json!({"review": {"models": {"acme": "configured-model"}}}));
    let run_dir = lab.run_dir.display().to_string();
    for empty in ["", "  "] {
        let ran = lab.gsd(
            &[
                "invoke",
                "--slug",
                "acme",
                "--run-dir",
                &run_dir,
                "--model",
                empty,
                "--as",
                empty,
                "--agent",
                empty,
            ],
            COMMAND_TIMEOUT,
        );
        ran.status(0);
        assert_eq!(
            ran.json(),
            json!({"slug": "acme", "ok": true, "stubbed": false,
                   "model": {"value": "configured-model", "source": "pinned"}})
        );
        assert_eq!(
            lab.uncited_review("acme"),
            "5\nreview\n--model\nconfigured-model\n-p\n-\n",
            "written under the slug, with the configured model"
        );
    }
}

#[test]
fn http_probe_key_different_from_invoke_key_is_malformed_lane() {
    let server = Server::start(&[models(&["served-a"]), completion("served-a", "nope")]);
    let lab = Lab::new();
    lab.install("http-probe-key-mismatch", "acme-review");
    lab.config(&json!({"review": {"acme_host": server.url(), "acme_probe_host": server.url()}}));
    assert_unavailable(&lab, HTTP_SLUG, "malformed_lane", HTTP_SLUG);
    assert_eq!(server.connections(), 0, "the server was contacted");
}

#[test]
fn http_host_with_a_closed_port_is_host_unreachable() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let lab = http_lab(&format!("http://127.0.0.1:{port}"), None, |_| {});
    assert_unavailable(&lab, HTTP_SLUG, "host_unreachable", HTTP_SLUG);
}

#[test]
fn http_probe_with_a_non_2xx_status_is_host_unreachable() {
    let server = Server::start(&[(
        "GET",
        "/v1/models",
        json_reply(503, &json!({"error": "loading"})),
    )]);
    let lab = http_lab(&server.url(), Some("pinned"), |_| {});
    assert_unavailable(&lab, HTTP_SLUG, "host_unreachable", HTTP_SLUG);
    assert!(
        server.posts().is_empty(),
        "the prompt was sent to an unavailable lane"
    );
}

// ---------------------------------------------------------------------------------------------
// HTTP lanes against the loopback server (§9)
// ---------------------------------------------------------------------------------------------

#[test]
fn http_model_discovery_uses_the_first_listed_model() {
    let server = Server::start(&[
        models(&["served-a", "served-b"]),
        completion("served-a", "HTTP review text"),
    ]);
    let lab = http_lab(&server.url(), None, |_| {});
    let (stubbed, ran) = lab.run_ok(HTTP_SLUG, &[]);
    assert!(!stubbed);
    assert_eq!(lab.uncited_review(HTTP_SLUG), "HTTP review text\n");
    assert_eq!(
        lab.sidecar(HTTP_SLUG),
        "",
        "HTTP lanes write an empty sidecar"
    );
    assert_eq!(
        server.requests(),
        [
            ("GET".to_owned(), "/v1/models".to_owned()),
            ("GET".to_owned(), "/v1/models".to_owned()),
            ("POST".to_owned(), "/v1/chat/completions".to_owned()),
        ],
        "probe, discovery, chat"
    );
    let posts = server.posts();
    let post = &posts[0];
    assert_eq!(
        String::from_utf8_lossy(&post.body),
        chat_body("served-a", PROMPT)
    );
    assert_eq!(post.header("content-type"), Some("application/json"));
    assert_eq!(post.header("authorization"), None);
    assert!(
        !ran.out.stderr.contains("served model"),
        "{}",
        ran.out.stderr
    );
}

#[test]
fn http_configured_model_skips_discovery() {
    let server = Server::start(&[
        models(&["served-a"]),
        completion("pinned-model", "pinned review"),
    ]);
    let lab = http_lab(&server.url(), Some(" pinned-model "), |_| {});
    let (stubbed, _) = lab.run_ok(HTTP_SLUG, &[]);
    assert!(!stubbed);
    assert_eq!(lab.uncited_review(HTTP_SLUG), "pinned review\n");
    assert_eq!(
        server.requests(),
        [
            ("GET".to_owned(), "/v1/models".to_owned()),
            ("POST".to_owned(), "/v1/chat/completions".to_owned()),
        ],
        "only the probe GET, no discovery"
    );
    assert_eq!(
        String::from_utf8_lossy(&server.posts()[0].body),
        chat_body("pinned-model", PROMPT)
    );
}

#[test]
fn http_model_override_flag_answers_the_model_key() {
    let server = Server::start(&[
        models(&["served-a"]),
        completion("cli-model", "flag review"),
    ]);
    let lab = http_lab(&server.url(), Some("config-model"), |_| {});
    let (stubbed, _) = lab.run_ok(HTTP_SLUG, &["--model", "cli-model"]);
    assert!(!stubbed);
    assert_eq!(
        String::from_utf8_lossy(&server.posts()[0].body),
        chat_body("cli-model", PROMPT)
    );
}

#[test]
fn http_failed_discovery_falls_back_to_the_declared_model() {
    let server = Server::start(&[models(&[]), completion("acme-7b", "fallback review")]);
    let lab = http_lab(&server.url(), None, |_| {});
    let (stubbed, _) = lab.run_ok(HTTP_SLUG, &[]);
    assert!(!stubbed);
    assert_eq!(lab.uncited_review(HTTP_SLUG), "fallback review\n");
    assert_eq!(
        String::from_utf8_lossy(&server.posts()[0].body),
        chat_body("acme-7b", PROMPT)
    );
}

#[test]
fn http_served_model_mismatch_warns_and_keeps_the_review() {
    let server = Server::start(&[
        models(&["x"]),
        completion("other-model", "mismatched review"),
    ]);
    let lab = http_lab(&server.url(), Some("requested-model"), |_| {});
    let (stubbed, ran) = lab.run_ok(HTTP_SLUG, &[]);
    assert!(!stubbed);
    // The warning is also noted in the review file, so REVIEWS.md shows it under the lane.
    assert_eq!(
        lab.uncited_review(HTTP_SLUG),
        "mismatched review\n\n> [gsd-lane] acme_local served model 'other-model' but \
         'requested-model' was requested. Review may be from a different model.\n"
    );
    assert!(
        ran.out.stderr.contains(
            "acme_local served model 'other-model' but 'requested-model' was requested. \
             Review may be from a different model."
        ),
        "stderr: {:?}",
        ran.out.stderr
    );
}

/// Runs the HTTP lane (model `served-a`) against a server whose chat completion answers
/// `status` with the JSON `body`; asserts the lane completed as a stub and returns its review.
fn stubbed_chat_error(status: u16, body: &str) -> String {
    let server = Server::start(&[
        models(&["served-a"]),
        (
            "POST",
            "/v1/chat/completions",
            json_text_reply(status, body.to_owned()),
        ),
    ]);
    let lab = http_lab(&server.url(), Some("served-a"), |_| {});
    let (stubbed, _) = lab.run_ok(HTTP_SLUG, &[]);
    assert!(stubbed);
    lab.review(HTTP_SLUG)
}

#[test]
fn http_500_with_json_body_is_a_stub_with_the_raw_body() {
    let body = json!({"error": {"message": "model exploded", "type": "server_error"}}).to_string();
    let review = stubbed_chat_error(500, &body);
    assert!(review.starts_with(&stub_marker(HTTP_SLUG)), "{review:?}");
    assert!(review.contains("\nRaw response body:\n"), "{review:?}");
    assert!(review.contains(&body), "{review:?}");
    assert!(
        review.ends_with(&format!("{body}\n{}\n", http_diagnosis(HTTP_SLUG))),
        "{review:?}"
    );
}

#[test]
fn http_error_stub_is_exactly_the_section_10_example() {
    // §10: `ollama review failed or returned empty output. stderr:\n\nRaw response body:\n
    // {"error":"model not found"}\n` for a server that answered 404 with that body; §9 step 4
    // keeps "the body text" (verbatim) for a body that parses, whatever the status, and
    // decisions #8 adds the status on its own line before it.
    let body = r#"{"error":"model not found"}"#;
    assert_eq!(
        stubbed_chat_error(404, body),
        format!(
            "acme_local review failed or returned empty output. stderr:\n\nRaw response body:\nHTTP 404\n{body}\n{}\n",
            http_diagnosis("acme_local")
        )
    );
}

#[test]
fn http_redirect_is_not_followed() {
    let elsewhere = TcpListener::bind("127.0.0.1:0").expect("bind second listener");
    let target = format!(
        "http://127.0.0.1:{}/v1/chat/completions",
        elsewhere.local_addr().expect("addr").port()
    );
    let server = Server::start(&[
        models(&["served-a"]),
        (
            "POST",
            "/v1/chat/completions",
            Reply::Respond {
                status: 307,
                headers: vec![("Location".into(), target)],
                body: Vec::new(),
            },
        ),
    ]);
    let lab = http_lab(&server.url(), Some("served-a"), |_| {});
    let (stubbed, _) = lab.run_ok(HTTP_SLUG, &[]);
    assert!(stubbed, "a redirect is no review");
    let review = lab.review(HTTP_SLUG);
    assert!(review.starts_with(&stub_marker(HTTP_SLUG)), "{review:?}");
    assert!(review.contains("307"), "{review:?}");
    elsewhere.set_nonblocking(true).expect("nonblocking");
    match elsewhere.accept() {
        Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {}
        Err(err) => panic!("accept on the redirect target: {err}"),
        Ok((_, peer)) => panic!("the redirect was followed: connection from {peer}"),
    }
}

#[test]
fn http_oversized_body_is_a_stub() {
    let content = "a".repeat(17 * 1024 * 1024);
    let (method, path, reply) = completion("served-a", &content);
    drop(content);
    let server = Server::start(&[models(&["served-a"]), (method, path, reply)]);
    let lab = http_lab(&server.url(), Some("served-a"), |_| {});
    let (stubbed, _) = lab.run_ok(HTTP_SLUG, &[]);
    assert!(stubbed, "a body over the 16 MiB cap is no review");
    let path = lab.review_path(HTTP_SLUG);
    let len = std::fs::metadata(&path).expect("review metadata").len();
    assert!(
        len <= 16 * 1024 * 1024 + 4096,
        "stub holds more than the capped body: {len} bytes"
    );
    let mut head = vec![0u8; stub_marker(HTTP_SLUG).len()];
    std::fs::File::open(&path)
        .expect("open review")
        .read_exact(&mut head)
        .expect("read stub head");
    assert_eq!(String::from_utf8_lossy(&head), stub_marker(HTTP_SLUG));
}

#[test]
fn http_stalled_server_times_out_into_a_stub() {
    let server = Server::start(&[
        models(&["served-a"]),
        ("POST", "/v1/chat/completions", Reply::Stall),
    ]);
    let lab = http_lab(&server.url(), Some("served-a"), |lane| {
        lane["reviewer"]["timeoutFloorMs"] = json!(1000);
    });
    // Bounded by the lane's own 1000 ms (run_timed fails the test if the command hangs); no
    // wall-clock threshold: the stub names the timeout.
    let ran = lab.run_timed(HTTP_SLUG, &["--json"], Duration::from_secs(20));
    ran.status(0);
    assert!(
        assert_completed(&ran.json(), HTTP_SLUG),
        "a stalled server is a stub"
    );
    let review = lab.review(HTTP_SLUG);
    assert!(review.starts_with(&stub_marker(HTTP_SLUG)), "{review:?}");
    let lower = review.to_lowercase();
    assert!(
        lower.contains("timeout") || lower.contains("timed out"),
        "stub does not mention the timeout: {review:?}"
    );
    assert_eq!(server.posts().len(), 1, "the request was sent once");
}

// ---------------------------------------------------------------------------------------------
// `doctor`
// ---------------------------------------------------------------------------------------------

fn doctor(lab: &Lab, slugs: &[&str]) -> (Value, Ran) {
    let mut args = vec!["doctor", "--json"];
    args.extend_from_slice(slugs);
    let ran = lab.gsd(&args, COMMAND_TIMEOUT);
    (ran.json(), ran)
}

#[test]
fn doctor_reports_a_ready_spawn_lane_with_its_program_and_version() {
    let lab = Lab::new();
    lab.install_acme("acme-args");
    let (rows, ran) = doctor(&lab, &["acme"]);
    ran.status(0);
    let row = &rows[0];
    assert_eq!(row["slug"], "acme");
    assert_eq!(row["ready"], true, "{row}");
    assert_eq!(row["probe"]["ok"], true, "{row}");
    let path = row["program"]["path"].as_str().unwrap_or_default();
    assert!(path.ends_with("tests/fixtures/bin/acme-args"), "{row}");
    // acme-args prints its argument count, then each argument: `1`, `--version`.
    assert_eq!(row["program"]["version"], "1", "{row}");
    assert!(
        row["trust"]
            .as_str()
            .unwrap_or_default()
            .starts_with("global overlay"),
        "{row}"
    );
    assert_eq!(row["problems"], json!([]));
    let human = lab.gsd(&["doctor", "acme"], COMMAND_TIMEOUT);
    human.status(0);
    let root = lab.env.project.display().to_string();
    assert!(
        human.out.stdout.starts_with(&format!(
            "project root {root}\nconfig       {root}/.planning/config.json (absent)\nsandbox      enforce ("
        )) && human.out.stdout.contains(", mechanism ")
            && human.out.stdout.contains("\n\nacme  ready\n"),
        "{}",
        human.out.stdout
    );
    assert!(
        human.out.stdout.ends_with("1 of 1 lanes ready\n"),
        "{}",
        human.out.stdout
    );
}

#[test]
fn doctor_gives_the_fix_for_each_problem_and_exits_one() {
    let lab = Lab::new();
    lab.install_acme("acme-not-installed");
    let (rows, ran) = doctor(&lab, &["acme"]);
    ran.status(1);
    let row = &rows[0];
    assert_eq!(row["ready"], false);
    assert_eq!(row["probe"]["reason"], "missing_binary");
    assert_eq!(row["program"]["path"], Value::Null);
    assert_eq!(
        row["problems"][0]["fix"],
        "install acme-not-installed so that `command -v acme-not-installed` finds it on this PATH"
    );

    let stale = Lab::new();
    stale.install_with("spawn-stdout", "acme-review", |lane| {
        lane["engines"] = json!({"gsd": ">=99.0.0"});
    });
    let (rows, ran) = doctor(&stale, &["acme"]);
    ran.status(1);
    assert_eq!(rows[0]["trust"], "not loaded");
    let fix = rows[0]["problems"][0]["fix"].as_str().unwrap_or_default();
    assert!(fix.starts_with("edit engines.gsd in "), "{fix}");

    let ran = stale.gsd(&["doctor", "acm"], COMMAND_TIMEOUT);
    ran.status(2);
    assert!(
        ran.out.stderr.contains("no lane has slug \"acm\""),
        "{}",
        ran.out.stderr
    );
}

#[test]
fn doctor_checks_an_http_lane_against_its_verified_host_only() {
    let server = Server::start(&[models(&["served-a"])]);
    let lab = http_lab(&server.url(), None, |_| {});
    let (rows, ran) = doctor(&lab, &[HTTP_SLUG]);
    ran.status(0);
    assert_eq!(rows[0]["ready"], true, "{}", rows[0]);
    assert_eq!(rows[0]["destination"], server.url());
    let requests = server.requests();
    assert!(!requests.is_empty(), "the verified host was not probed");
    assert!(
        requests
            .iter()
            .all(|(method, path)| method == "GET" && path == "/v1/models"),
        "doctor sent more than a probe: {requests:?}"
    );

    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let closed = http_lab(&format!("http://127.0.0.1:{port}"), None, |_| {});
    let (rows, ran) = doctor(&closed, &[HTTP_SLUG]);
    ran.status(1);
    assert_eq!(rows[0]["probe"]["reason"], "host_unreachable");
    let fix = rows[0]["problems"][0]["fix"].as_str().unwrap_or_default();
    assert!(fix.contains("review.acme_host"), "{fix}");
}
