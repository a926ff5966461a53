//! README promises that had no attack test (SECURITY.md, "Promises still without a test"),
//! each driven through the real binary against real processes (and, for HTTP, a real listener
//! on `127.0.0.1:0`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::http_server::{json_reply, Server};
use crate::review::{self, Lab};
use crate::util::{self, Scope};

/// Replaces fake lane `slug`'s program with the sh `body`.
fn lane_program(lab: &Lab, slug: &str, body: &str) {
    let path = lab.bin.join(format!("fake-{slug}"));
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("lane program");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The `## <section> Review` part of REVIEWS.md, up to its closing rule.
fn section<'a>(reviews: &'a str, name: &str) -> &'a str {
    reviews
        .split(&format!("## {name} Review\n\n"))
        .nth(1)
        .and_then(|rest| rest.split("\n\n---\n\n").next())
        .unwrap_or_else(|| panic!("no {name} section:\n{reviews}"))
}

/// The progress line of reviewer `display` (`◆ Reviewing with <display>... <ending>`) in the
/// plain display (stdout).
fn progress_line<'a>(stdout: &'a str, display: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(&format!("◆ Reviewing with {display}... ")))
        .unwrap_or_else(|| panic!("no progress line for {display}:\n{stdout}"))
}

// ---------------------------------------------------------------------------------------------
// 1. A review cut off by its bound or its output cap (README, Limits that remain)
// ---------------------------------------------------------------------------------------------

/// The partial review both cut-off lanes print before they are stopped.
const PARTIAL: &str = "# Beta review\\n\\nFirst finding: the plan skips migrations.\\n";

/// Lane `alpha` reviews; lane `beta` prints [`PARTIAL`] and is then stopped by `stop`: its
/// 2 s bound (`sleep`) or its 64 MiB stderr cap (`flood`).
fn cut_off_lab(stop: &str) -> Lab {
    let lab = Lab::new();
    lab.lane("alpha", |m| {
        m["reviewer"]["evidenceClass"] = json!("diff-only")
    });
    lab.lane("beta", |m| {
        m["reviewer"]["evidenceClass"] = json!("diff-only");
        m["reviewer"]["timeoutFloorMs"] = json!(2000);
    });
    let stop = match stop {
        "sleep" => "exec sleep 60\n",
        // 80 MiB of stderr: past the sidecar's 64 MiB cap (ENOBUFS), then it would hang.
        _ => "head -c 83886080 /dev/zero >&2\nexec sleep 60\n",
    };
    lane_program(
        &lab,
        "beta",
        &format!("cat > /dev/null\nprintf '{PARTIAL}'\n{stop}"),
    );
    lab
}

/// REVIEWS.md keeps the partial text followed by the notice naming `code`; the lane is not
/// reported as a clean review anywhere (progress line, banner, results file), the run dir is
/// kept with the resume command, and a resume runs the lane again.
fn assert_cut_off_is_never_clean(lab: &Lab, code: &str) {
    let out = lab.review(&["--phase", "3", "--alpha", "--beta"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    let beta = section(&reviews, "Beta");
    let notice = format!(
        "> [gsd-lane] incomplete review: the lane was stopped ({code}) before it finished; the text above is partial."
    );
    let finding = beta
        .find("First finding: the plan skips migrations.")
        .unwrap_or_else(|| panic!("the partial text is kept:\n{beta}"));
    let at = beta
        .find(&notice)
        .unwrap_or_else(|| panic!("the notice follows the text:\n{beta}"));
    assert!(finding < at, "{beta}");
    // The panel verdict and the consensus summary do not count it as a finished review.
    assert_beta_counted_incomplete(&reviews);
    assert!(
        !progress_line(&out.stdout, "Beta").contains("done ✓"),
        "a cut-off review is reported as done:\n{}",
        out.stdout
    );
    assert!(progress_line(&out.stdout, "Alpha").contains("done ✓"));
    assert!(
        out.stdout.contains("REVIEW PARTIAL") && !out.stdout.contains("REVIEW COMPLETE"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("review: resume with: gsd-lane review --resume "),
        "{}",
        out.stderr
    );
    let run_dir = review::run_dir_of(&out);
    let results = util::read_text(&run_dir.join("gsd-review-lane-results.jsonl"));
    let beta_result: Value = results
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["identity"] == "beta" || v["slug"] == "beta")
        .unwrap_or_else(|| panic!("no beta result:\n{results}"));
    assert_eq!(beta_result["stubbed"], json!(true), "{beta_result}");

    // `run --json` of the lane alone says it is incomplete; its review file ends with the notice.
    let one = lab.env.root.path().join("run-one");
    std::fs::create_dir_all(&one).expect("run dir");
    std::fs::write(one.join("gsd-review-prompt.md"), "Review PLAN-1.\n").expect("prompt");
    let ran = lab.gsd(&[
        "run",
        "beta",
        "--json",
        "--run-dir",
        one.to_str().expect("utf-8"),
    ]);
    ran.assert_no_panic().assert_status(0);
    let result = ran.json();
    assert_eq!(result["incomplete"], json!(true), "{result}");
    assert!(
        util::read_text(&one.join("gsd-review-beta.md")).ends_with(&format!("{notice}\n")),
        "the review file ends with the notice"
    );

    // The resume runs the cut-off lane again (it was not kept as a finished review).
    lane_program(
        lab,
        "beta",
        "cat > /dev/null\nprintf '# Beta review\\n\\nWhole this time.\\n'\n",
    );
    let resumed = lab.review(&["--resume", run_dir.to_str().expect("utf-8")]);
    resumed.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    let beta = section(&reviews, "Beta");
    assert!(beta.contains("Whole this time."), "{beta}");
    assert!(!reviews.contains("incomplete review"), "{reviews}");
}

#[test]
fn a_review_cut_off_by_its_bound_keeps_its_text_with_the_notice_and_is_never_clean() {
    let lab = cut_off_lab("sleep");
    assert_cut_off_is_never_clean(&lab, "ETIMEDOUT");
}

/// A cut-off review longer than `review.max_inline_bytes`: the notice the lane's file ends with
/// lies past the part REVIEWS.md shows, and is shown after it, so the panel verdict and the
/// consensus still count the review as not completed (not as a finished review).
#[test]
fn a_cut_off_review_longer_than_the_inline_bound_is_never_counted_as_finished() {
    let lab = cut_off_lab("sleep");
    // 130 KB of review text past a 64 KiB inline bound, then a hang cut by the time bound.
    lane_program(
        &lab,
        "beta",
        &format!(
            "cat > /dev/null\nprintf '{PARTIAL}'\ni=0\nwhile [ $i -lt 2000 ]; do echo 'Another finding line that pads this review past the bound.'; i=$((i + 1)); done\nexec sleep 60\n"
        ),
    );
    lab.config(&json!({"review": {"max_inline_bytes": 65536}}));
    let out = lab.review(&["--phase", "3", "--alpha", "--beta"]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    let beta = section(&reviews, "Beta");
    let notice = "> [gsd-lane] incomplete review: the lane was stopped (ETIMEDOUT) before it finished; the text above is partial.";
    let (Some(padding), Some(at), Some(partial)) = (
        beta.find("Another finding line"),
        beta.find(notice),
        beta.find("> [gsd-lane] partial review: "),
    ) else {
        panic!("the head, the incomplete notice and the partial notice are shown:\n{beta}");
    };
    assert!(padding < at && at < partial, "{beta}");
    assert_eq!(
        beta.matches("> [gsd-lane] incomplete review: ").count(),
        1,
        "said once:\n{beta}"
    );
    assert_beta_counted_incomplete(&reviews);
}

/// The panel verdict reads Beta's section `not-completed` and the Consensus Summary lists it
/// as incomplete: never as a finished review.
fn assert_beta_counted_incomplete(reviews: &str) {
    assert!(
        reviews.contains("| Beta (beta) | not-completed |"),
        "the panel verdict counts the cut-off review:\n{reviews}"
    );
    assert!(
        reviews.contains("- Beta — incomplete (stopped by its time bound or output cap"),
        "{reviews}"
    );
}

#[test]
fn a_review_cut_off_by_its_output_cap_keeps_its_text_with_the_notice_and_is_never_clean() {
    let lab = cut_off_lab("flood");
    assert_cut_off_is_never_clean(&lab, "ENOBUFS");
}

// ---------------------------------------------------------------------------------------------
// 2. The Landlock fallback lists the ancestors' entries once per process (README, Trust model,
//    what the sandbox does not stop; host/src/sandbox/landlock.rs)
// ---------------------------------------------------------------------------------------------

/// Every lane of a review under the Landlock fallback gets the grants listed once, when the
/// first lane's rules were made: an entry that already sat in an ancestor of a confined root
/// (here the directory holding the project) stays writable beneath it, a new entry created
/// there by someone else after the listing is not writable for any lane of that run, the lane
/// that runs after it was created included (the listing is not redone per lane), and a lane
/// cannot add an entry there itself.
#[test]
fn landlock_fallback_lists_ancestor_entries_once_and_grants_nothing_created_later() {
    let lab = Lab::new();
    let ancestor = lab.env.root.path().to_path_buf();
    std::fs::create_dir_all(ancestor.join("early")).expect("early");
    let script = format!(
        r#"cat > /dev/null
name=$(basename "$0")
A='{ancestor}'
: > "$HOME/started-$name"
i=0
while [ ! -e "$HOME/go" ] && [ "$i" -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
try() {{ if sh -c "$2" 2>/dev/null; then echo "$1: written"; else echo "$1: refused"; fi; }}
printf '# %s review\n\n' "$name"
try early "echo x > '$A/early/$name'"
try late "echo x > '$A/late/$name'"
try new-entry "mkdir '$A/made-by-$name'"
"#,
        ancestor = ancestor.display()
    );
    for slug in ["alpha", "beta"] {
        lab.lane(slug, |m| {
            m["reviewer"]["evidenceClass"] = json!("diff-only")
        });
        lane_program(&lab, slug, &script);
    }
    let mut command = lab.command(&["--phase", "3", "--alpha", "--beta", "--jobs", "1"]);
    command.env("GSD_LANE_NO_NAMESPACES", "1");
    let child = command.spawn().expect("spawn gsd-lane");
    // Once the first lane runs, its rules were made, so the grants were listed.
    let until = Instant::now() + Duration::from_secs(30);
    while !["alpha", "beta"]
        .iter()
        .any(|s| lab.env.home.join(format!("started-fake-{s}")).exists())
    {
        assert!(Instant::now() < until, "no lane started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::create_dir_all(ancestor.join("late")).expect("late");
    std::fs::write(lab.env.home.join("go"), "").expect("go");
    let out = review::finish(child, "review under the Landlock fallback");
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stderr.contains("landlock") || lab.reviews().contains("mechanism landlock"),
        "the Landlock fallback confined the lanes:\n{}",
        out.stderr
    );
    let reviews = lab.reviews();
    for name in ["Alpha", "Beta"] {
        let text = section(&reviews, name);
        for (what, want) in [
            ("early", "written"),
            ("late", "refused"),
            ("new-entry", "refused"),
        ] {
            assert!(
                text.contains(&format!("{what}: {want}")),
                "{name}: {what} should be {want}:\n{text}"
            );
        }
    }
    assert!(!ancestor.join("late/fake-alpha").exists());
    assert!(!ancestor.join("late/fake-beta").exists());
    assert!(ancestor.join("early/fake-beta").exists());
}

// ---------------------------------------------------------------------------------------------
// HTTP lanes against a real listener on 127.0.0.1:0
// ---------------------------------------------------------------------------------------------

/// A project whose first-party `ollama` lane points at a loopback server that lists one model
/// and answers every chat request; `review.models.ollama` is unset, so a run discovers it.
struct HttpLab {
    env: util::TestEnv,
    server: Server,
    run_dir: std::path::PathBuf,
}

impl HttpLab {
    fn new() -> HttpLab {
        let env = util::TestEnv::with_planning();
        let server = Server::start(&[
            (
                "GET",
                "/v1/models",
                json_reply(200, &json!({"object": "list", "data": [{"id": "acme-7b"}]})),
            ),
            (
                "POST",
                "/v1/chat/completions",
                json_reply(
                    200,
                    &json!({"id": "c1", "object": "chat.completion", "model": "acme-7b",
                        "choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "## Verdict\nSound."}}]}),
                ),
            ),
        ]);
        let lab = HttpLab {
            run_dir: env.root.path().join("run"),
            env,
            server,
        };
        lab.host(&lab.server.url());
        std::fs::create_dir_all(&lab.run_dir).expect("run dir");
        std::fs::write(lab.run_dir.join("gsd-review-prompt.md"), "Review PLAN-1.\n")
            .expect("prompt");
        lab
    }

    fn host(&self, host: &str) {
        std::fs::write(
            self.env.project.join(".planning/config.json"),
            json!({"review": {"ollama_host": host}}).to_string(),
        )
        .expect("config");
    }

    fn gsd(&self, args: &[&str]) -> util::Outcome {
        let command = util::gsd_command(&self.env, "/usr/bin:/bin", &self.env.project, args);
        util::run_bounded(command, Duration::from_secs(30)).0
    }

    /// `run ollama --json` into the lab's run dir.
    fn run(&self) -> Value {
        let run_dir = self.run_dir.display().to_string();
        let out = self.gsd(&["run", "ollama", "--run-dir", &run_dir, "--json"]);
        out.assert_no_panic().assert_status(0);
        out.json()
    }
}

/// Every `requests` member anywhere in `value`, flattened.
fn requests_in(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                match (key.as_str(), member) {
                    ("requests", Value::Array(items)) => {
                        into.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
                    }
                    _ => requests_in(member, into),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| requests_in(item, into)),
        _ => {}
    }
}

/// `disclose` lists every request an HTTP lane makes: a real run sends nothing to its server
/// that is not on the list (method and URL), and the review request carries the prompt; the
/// human screen shows the same list. A spawned lane makes no request of gsd-lane's own, and its
/// disclosure lists none (what its CLI does on the network is its own, README's known limits).
#[test]
fn disclose_lists_every_request_an_http_lane_makes_and_none_for_a_spawned_lane() {
    let lab = HttpLab::new();
    let disclosed = lab.gsd(&["disclose", "ollama", "--json"]);
    disclosed.assert_no_panic().assert_status(0);
    let mut requests = Vec::new();
    requests_in(&disclosed.json(), &mut requests);
    let url = lab.server.url();
    for want in [
        format!("POST {url}/v1/chat/completions (the whole prompt as JSON)"),
        format!("GET {url}/v1/models (model discovery)"),
        format!("GET {url}/v1/models (reachability probe)"),
    ] {
        assert!(requests.contains(&want), "{want} missing: {requests:?}");
    }
    let listed: Vec<(String, String)> = requests
        .iter()
        .filter_map(|r| {
            let mut words = r.split(' ');
            Some((words.next()?.to_owned(), words.next()?.to_owned()))
        })
        .collect();
    let human = lab.gsd(&["disclose", "ollama"]);
    human.assert_no_panic().assert_status(0);
    for request in &requests {
        assert!(
            human.stdout.contains(&format!("request:     {request}")),
            "{request} missing from the screen:\n{}",
            human.stdout
        );
    }

    let result = lab.run();
    assert_eq!(result["stubbed"], json!(false), "{result}");
    let seen = lab.server.seen();
    assert!(!seen.is_empty(), "the run contacted its server");
    for request in &seen {
        let made = (request.method.clone(), format!("{url}{}", request.target));
        assert!(
            listed.contains(&made),
            "the run made {made:?}, which disclose does not list: {requests:?}"
        );
    }
    let post = lab.server.posts().pop().expect("the review request");
    assert!(
        String::from_utf8_lossy(&post.body).contains("Review PLAN-1."),
        "the review request carries the prompt"
    );

    // A spawned lane: the command it runs, and no request list.
    lab.env
        .write_overlay_fixture(Scope::Global, "acme-review", "overlays/acme-review");
    let spawned = lab.gsd(&["disclose", "acme-review", "--json"]);
    spawned.assert_no_panic().assert_status(0);
    let mut none = Vec::new();
    requests_in(&spawned.json(), &mut none);
    assert!(none.is_empty(), "{none:?}");
    let screen = lab.gsd(&["disclose", "acme-review"]);
    assert!(screen.stdout.contains("runs now:"), "{}", screen.stdout);
    assert!(!screen.stdout.contains("request:"), "{}", screen.stdout);
}

/// `plan` never connects: with every HTTP lane pointed at a live listener, no form of `plan`
/// opens a connection to it; `run` (the control) does.
#[test]
fn plan_never_connects_to_an_http_lane_s_server() {
    let lab = HttpLab::new();
    let url = lab.server.url();
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        json!({"review": {"ollama_host": url, "lm_studio_host": url, "llama_cpp_host": url}})
            .to_string(),
    )
    .expect("config");
    for args in [
        &["plan"][..],
        &["plan", "--json"],
        &["plan", "--reviewer", "ollama"],
        &["plan", "--reviewer", "ollama", "--json"],
    ] {
        let out = lab.gsd(args);
        out.assert_no_panic();
        assert_eq!(
            lab.server.connections(),
            0,
            "`gsd-lane {}` connected to the lane's server",
            args.join(" ")
        );
    }
    lab.run();
    assert!(lab.server.connections() > 0, "the control run connects");
}

/// `doctor` against a config that moved an HTTP lane away from its pin: it says the
/// destination is blocked, never contacts the new host, and leaves the pin as it was (no
/// re-pin, nothing approved).
#[test]
fn doctor_says_a_moved_host_is_blocked_and_neither_repins_nor_connects() {
    let lab = HttpLab::new();
    lab.run();
    let pins_path = lab.env.gsd_home.join(".gsd/egress-pins.json");
    let pins = std::fs::read(&pins_path).expect("the first run pinned");
    let moved = Server::start(&[(
        "GET",
        "/v1/models",
        json_reply(200, &json!({"data": [{"id": "m"}]})),
    )]);
    lab.host(&moved.url());
    for args in [
        &["doctor", "ollama"][..],
        &["doctor"],
        &["doctor", "--json"],
    ] {
        let out = lab.gsd(args);
        out.assert_no_panic();
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(
            said.contains("egress_host_changed") || said.contains("pinned on first use"),
            "`gsd-lane {}` does not say the host moved:\n{said}",
            args.join(" ")
        );
        assert_eq!(moved.connections(), 0, "doctor contacted the moved host");
        assert_eq!(
            std::fs::read(&pins_path).expect("pins"),
            pins,
            "doctor changed the pin"
        );
        assert!(!lab.env.gsd_home.join(".gsd/consent.json").exists());
    }
}

// ---------------------------------------------------------------------------------------------
// 9. A weaker sandbox mode from the repository config, on a plain `review`
// ---------------------------------------------------------------------------------------------

/// `review.sandbox` set to `detect` or `off` by `.planning/config.json` is announced on stderr
/// by a plain `review` (no `--sandbox` flag), once, and said in REVIEWS.md; the mode is really
/// the one applied (under `detect` the lane's write lands and is reported, under `off` it lands
/// silently), so the announcement is never decoration over a confinement that did not change.
#[test]
fn a_weaker_mode_from_the_repository_config_is_announced_on_a_plain_review() {
    for mode in ["detect", "off"] {
        let lab = Lab::new();
        lab.lane("alpha", |m| {
            m["reviewer"]["evidenceClass"] = json!("diff-only")
        });
        lane_program(
            &lab,
            "alpha",
            "cat > /dev/null\necho x > \"$PWD/written-by-alpha\" 2>/dev/null\nprintf '# Alpha review\\n\\nSound.\\n'\n",
        );
        lab.config(&json!({"review": {"sandbox": mode}}));
        let out = lab.review(&["--phase", "3", "--alpha"]);
        out.assert_no_panic().assert_status(0);
        let warning = format!("warning: .planning/config.json sets review.sandbox to {mode}");
        assert_eq!(
            out.stderr.matches(&warning).count(),
            1,
            "{mode}: announced once:\n{}",
            out.stderr
        );
        let reviews = lab.reviews();
        assert!(
            reviews.contains(&format!("> Sandbox: {mode}")),
            "{mode}:\n{reviews}"
        );
        assert!(
            lab.env.project.join("written-by-alpha").exists(),
            "{mode}: the lane was confined after all"
        );
        assert_eq!(
            reviews.contains("written-by-alpha"),
            mode == "detect",
            "{mode}: the change is reported only under detect:\n{reviews}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 10. `invoke`'s default `.` run dir
// ---------------------------------------------------------------------------------------------

/// An `acme` program that records each start in `marker`, first on a PATH of `dir`.
fn recording_program(dir: &Path, name: &str, marker: &Path) {
    std::fs::create_dir_all(dir).expect("programs dir");
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\ncat > /dev/null 2>&1\necho '# review'\n",
            marker.display()
        ),
    )
    .expect("program");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `invoke` without `--run-dir` uses the working directory: a world-writable one (sticky or
/// not) is refused before the lane starts and nothing is written in it; a group-writable one
/// is accepted (umask 002 systems), while the same folder given as `--run-dir` is refused.
#[test]
fn invoke_refuses_a_world_writable_working_directory_as_its_default_run_dir() {
    let env = util::TestEnv::with_planning();
    env.write_overlay_fixture(Scope::Global, "acme-review", "overlays/acme-review");
    let programs = env.root.path().join("programs");
    let marker = env.root.path().join("started");
    recording_program(&programs, "acme", &marker);
    let path = format!("{}:/usr/bin:/bin", programs.display());
    let cwd = env.root.path().join("cwd");
    std::fs::create_dir_all(&cwd).expect("cwd");
    std::fs::write(cwd.join("gsd-review-prompt.md"), "Review PLAN-1.\n").expect("prompt");
    let invoke = |args: &[&str]| {
        let command = util::gsd_command(&env, &path, &cwd, args);
        util::run_bounded(command, Duration::from_secs(30)).0
    };
    for mode in [0o777, 0o1777, 0o757] {
        std::fs::set_permissions(&cwd, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let out = invoke(&["invoke", "--slug", "acme"]);
        out.assert_no_panic();
        assert_ne!(out.code, Some(0), "{mode:o}: {}", out.stdout);
        assert!(
            out.stderr.contains("everyone") || out.stdout.contains("everyone"),
            "{mode:o}: the refusal says why:\n{}{}",
            out.stdout,
            out.stderr
        );
        assert!(!marker.exists(), "{mode:o}: the lane started");
        assert_eq!(
            std::fs::read_dir(&cwd).expect("cwd").count(),
            1,
            "{mode:o}: something was written in the refused run dir"
        );
    }
    std::fs::set_permissions(&cwd, std::fs::Permissions::from_mode(0o775)).expect("chmod");
    let given = invoke(&["invoke", "--slug", "acme", "--run-dir", "."]);
    given.assert_no_panic();
    assert_ne!(given.code, Some(0), "{}", given.stdout);
    assert!(!marker.exists(), "a group-writable --run-dir ran the lane");
    let out = invoke(&["invoke", "--slug", "acme"]);
    out.assert_no_panic().assert_status(0);
    assert!(marker.exists(), "the group-writable default ran the lane");
    assert!(cwd.join("gsd-review-acme.md").is_file());
}

// ---------------------------------------------------------------------------------------------
// 3. `list` looks a lane's program up and starts nothing (README, Commands)
// ---------------------------------------------------------------------------------------------

/// Every program a first-party lane names (and Cursor's fallback `agent`) is on PATH as a
/// program that records each start. `list` in every form, and the other commands that show
/// lanes, find them without starting one: not `kimi`, whose capability probe would run it,
/// not `agent`, which is only checked with `--help` when a lane runs. `doctor` is the control
/// that shows a start is seen.
#[test]
fn list_finds_every_lane_program_on_path_and_starts_none() {
    let env = util::TestEnv::with_planning();
    let programs = env.root.path().join("programs");
    let marker = env.root.path().join("started");
    let mut names: Vec<String> = util::first_party()
        .iter()
        .filter_map(|lane| lane.manifest["reviewer"]["invoke"]["binary"].as_str())
        .map(str::to_owned)
        .collect();
    names.push("agent".to_owned());
    for name in &names {
        recording_program(&programs, name, &marker);
    }
    assert!(names.iter().any(|n| n == "kimi"), "{names:?}");
    let path = format!("{}:/usr/bin:/bin", programs.display());
    let gsd = |args: &[&str]| {
        let command = util::gsd_command(&env, &path, &env.project, args);
        util::run_bounded(command, Duration::from_secs(30)).0
    };
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["flags"],
        &["sections"],
        &["plan"],
        &["plan", "--json"],
        &["disclose"],
    ] {
        let out = gsd(args);
        out.assert_no_panic().assert_status(0);
        assert!(
            !marker.exists(),
            "`gsd-lane {}` started {}",
            args.join(" "),
            std::fs::read_to_string(&marker).unwrap_or_default()
        );
    }
    let rows = gsd(&["list", "--json"]).json();
    for id in ["claude", "kimi-code", "codex"] {
        let row = util::row(rows.as_array().expect("rows"), "first-party", id);
        assert!(
            row.to_string().contains(&programs.display().to_string()),
            "the lookup found {id}'s program: {row}"
        );
    }
    gsd(&["doctor"]).assert_no_panic();
    assert!(
        std::fs::read_to_string(&marker)
            .unwrap_or_default()
            .contains("--version"),
        "doctor is expected to run the programs' --version"
    );
}

// ---------------------------------------------------------------------------------------------
// 11. An update that changes `binary` or `args` needs consent again (README, Trust model)
// ---------------------------------------------------------------------------------------------

/// A project with the approved project-scope lane `acme-spawn` (fake CLI `acme-args`, which
/// prints its argv as the review), installed with `install --project-scope --yes`.
struct UpdateLab {
    env: util::TestEnv,
    run_dir: std::path::PathBuf,
}

impl UpdateLab {
    fn new() -> UpdateLab {
        let env = util::TestEnv::with_planning();
        let run_dir = env.root.path().join("run");
        std::fs::create_dir_all(&run_dir).expect("run dir");
        std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review PLAN-1.\n").expect("prompt");
        let lab = UpdateLab { env, run_dir };
        let source = lab.source("v1", |_| {});
        let out = lab.gsd(&["install", "--project-scope", "--yes", "--json", &source]);
        out.assert_no_panic().assert_status(0);
        lab
    }

    /// The fixture manifest with `edit` applied, as a capability folder to install.
    fn source(&self, name: &str, edit: impl FnOnce(&mut Value)) -> String {
        let mut manifest = util::read_json(&util::fixture(
            "trust/spawn-lane/acme-spawn/capability.json",
        ));
        edit(&mut manifest);
        let folder = self
            .env
            .root
            .path()
            .join("sources")
            .join(name)
            .join("acme-spawn");
        std::fs::create_dir_all(&folder).expect("source folder");
        std::fs::write(
            folder.join("capability.json"),
            serde_json::to_string_pretty(&manifest).expect("json"),
        )
        .expect("source");
        folder.display().to_string()
    }

    fn installed(&self) -> std::path::PathBuf {
        self.env
            .capabilities_dir(Scope::Project)
            .join("acme-spawn/capability.json")
    }

    fn gsd(&self, args: &[&str]) -> util::Outcome {
        let command = util::gsd_command(&self.env, &util::fixture_path(), &self.env.project, args);
        util::run_bounded(command, Duration::from_secs(30)).0
    }

    /// `run acme_spawn --json`: the result and the review (the argv the CLI got), if it ran.
    fn run(&self) -> (Value, Option<String>) {
        let review = self.run_dir.join("gsd-review-acme_spawn.md");
        let _ = std::fs::remove_file(&review);
        let run_dir = self.run_dir.display().to_string();
        let out = self.gsd(&["run", "acme_spawn", "--json", "--run-dir", &run_dir]);
        out.assert_no_panic();
        (out.json(), std::fs::read_to_string(&review).ok())
    }
}

/// For a changed `args` and a changed `binary`: `install` of the update without consent says
/// the executable set changed, installs nothing and records nothing, and the approved version
/// keeps running as approved; the same bytes placed in the folder by other means (a pull of
/// the repository) deactivate the lane, which then starts nothing; the update installed with
/// consent runs as updated.
#[test]
fn an_update_changing_binary_or_args_deactivates_the_lane_until_consent() {
    type Edit = fn(&mut Value);
    let updates: [(&str, Edit, &str); 2] = [
        (
            "args",
            |m| {
                m["reviewer"]["invoke"]["args"] =
                    json!(["review", "--yolo", "{{model}}", "-p", "-"])
            },
            "--yolo",
        ),
        (
            "binary",
            |m| {
                m["reviewer"]["invoke"]["binary"] = json!("acme-review");
                m["reviewer"]["probe"]["binary"] = json!("acme-review");
            },
            "Acme review",
        ),
    ];
    for (what, edit, tell) in updates {
        let lab = UpdateLab::new();
        let approved = std::fs::read(lab.installed()).expect("installed");
        let consent = std::fs::read(lab.env.gsd_home.join(".gsd/consent.json")).expect("consent");
        let (result, review) = lab.run();
        assert_eq!(result["ok"], json!(true), "{what}: {result}");
        let review = review.expect("the approved version ran");
        assert!(!review.contains(tell), "{what}: {review}");

        let source = lab.source(what, edit);
        let out = lab.gsd(&["install", "--project-scope", "--json", &source]);
        out.assert_no_panic().assert_status(1);
        let envelope = out.json();
        assert_eq!(envelope["status"], json!("aborted"), "{what}: {envelope}");
        assert_eq!(
            envelope["changes"]["executableSetChanged"],
            json!(true),
            "{what}: {envelope}"
        );
        assert_eq!(std::fs::read(lab.installed()).expect("installed"), approved);
        assert_eq!(
            std::fs::read(lab.env.gsd_home.join(".gsd/consent.json")).expect("consent"),
            consent,
            "{what}: consent recorded without asking"
        );
        let (result, review) = lab.run();
        assert_eq!(result["ok"], json!(true), "{what}: {result}");
        assert!(
            !review.expect("ran").contains(tell),
            "{what}: the update ran"
        );

        // The update's bytes in the folder by other means: the lane is inactive.
        std::fs::copy(Path::new(&source).join("capability.json"), lab.installed()).expect("copy");
        let rows = lab.env.list(&[]);
        let row = util::row(&rows, "project", "acme-spawn");
        assert_eq!(row["active"], json!(false), "{what}: {row}");
        let (result, review) = lab.run();
        assert_eq!(result["ok"], json!(false), "{what}: {result}");
        assert!(review.is_none(), "{what}: the changed lane ran");

        let out = lab.gsd(&["install", "--project-scope", "--yes", "--json", &source]);
        out.assert_no_panic().assert_status(0);
        let (result, review) = lab.run();
        assert_eq!(result["ok"], json!(true), "{what}: {result}");
        assert!(
            review.expect("ran").contains(tell),
            "{what}: consented update"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 4. No capability may own or default either sandbox key (README, Trust model)
// ---------------------------------------------------------------------------------------------

/// An overlay declaring `review.sandbox` (default `off`) or `review.allow_repository_writes`
/// (default: itself) is skipped with `X-CONFIG-CENTRAL`, is never run, and its default opens
/// nothing: another lane run beside it stays under `enforce` and is told nothing about writes.
#[test]
fn a_capability_defaulting_a_sandbox_key_is_skipped_and_its_default_never_applies() {
    let env = util::TestEnv::with_planning();
    let programs = env.root.path().join("programs");
    let marker = env.root.path().join("started");
    recording_program(&programs, "acme", &marker);
    let path = format!("{}:/usr/bin:/bin", programs.display());
    let owners: [(&str, &str, Value); 2] = [
        ("acme-open", "review.sandbox", json!("off")),
        (
            "acme-writes",
            "review.allow_repository_writes",
            json!("acme"),
        ),
    ];
    for (id, key, default) in &owners {
        let mut lane = util::acme_as(id);
        let slug = id.replace('-', "");
        lane["reviewer"]["slug"] = json!(slug);
        lane["reviewer"]["flags"] = json!([format!("--{id}")]);
        lane["reviewer"]["reviewsSection"] = json!(format!("Section {id}"));
        lane["reviewer"]["modelConfigKey"] = json!(format!("review.models.{slug}"));
        lane["config"] = json!({
            format!("review.models.{slug}"): {"type": "string", "default": "", "description": "Model."},
            *key: {"type": "string", "default": default, "description": "Owned."}
        });
        env.write_overlay(Scope::Global, id, &lane);
    }
    env.write_overlay_fixture(Scope::Global, "acme-review", "overlays/acme-review");
    let rows = env.list(&[]);
    for (id, key, _) in &owners {
        let row = util::row(&rows, "global", id);
        assert_eq!(row["active"], json!(false), "{row}");
        assert!(
            util::row_diagnostic_codes(row)
                .iter()
                .any(|(code, field)| code == "X-CONFIG-CENTRAL" && field.contains(key)),
            "{row}"
        );
    }
    let gsd = |args: &[&str]| {
        let command = util::gsd_command(&env, &path, &env.project, args);
        util::run_bounded(command, Duration::from_secs(30)).0
    };
    let run_dir = env.root.path().join("run");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review PLAN-1.\n").expect("prompt");
    let run_dir = run_dir.display().to_string();
    for (id, _, _) in &owners {
        let out = gsd(&["run", &id.replace('-', ""), "--json", "--run-dir", &run_dir]);
        out.assert_no_panic();
        assert_ne!(out.code, Some(0), "{id}: {}", out.stdout);
        assert!(!marker.exists(), "{id} ran");
    }
    let out = gsd(&["run", "acme", "--json", "--run-dir", &run_dir]);
    out.assert_no_panic().assert_status(0);
    let result = out.json_raw();
    assert_eq!(result["sandbox"]["mode"], json!("enforce"), "{result}");
    assert!(
        !out.stderr.contains("allow_repository_writes") && !out.stderr.contains("review.sandbox"),
        "{}",
        out.stderr
    );
}

/// `doctor` against a config that moved an approved project-scope HTTP lane away from the host
/// its consent record binds: it says so, never contacts the new host, and approves nothing
/// (the consent store and the pins are left exactly as they were).
#[test]
fn doctor_says_a_host_moved_from_its_consent_record_is_blocked_and_approves_nothing() {
    let lab = HttpLab::new();
    let mut manifest = util::read_json(&util::fixture(
        "trust/http-lane/acme-reviewer/capability.json",
    ));
    manifest["reviewer"]["invoke"]["defaultHost"] = json!(lab.server.url());
    let source = lab.env.root.path().join("sources/acme-reviewer");
    std::fs::create_dir_all(&source).expect("source");
    std::fs::write(
        source.join("capability.json"),
        serde_json::to_string_pretty(&manifest).expect("json"),
    )
    .expect("manifest");
    let source = source.display().to_string();
    let out = lab.gsd(&["install", "--project-scope", "--yes", "--json", &source]);
    out.assert_no_panic().assert_status(0);
    let gsd_dir = lab.env.gsd_home.join(".gsd");
    let consent = std::fs::read(gsd_dir.join("consent.json")).expect("consent recorded");
    let moved = Server::start(&[(
        "GET",
        "/v1/models",
        json_reply(200, &json!({"data": [{"id": "m"}]})),
    )]);
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        json!({"review": {"acme_host": moved.url()}}).to_string(),
    )
    .expect("config");
    for args in [&["doctor", "acme"][..], &["doctor"], &["doctor", "--json"]] {
        let out = lab.gsd(args);
        out.assert_no_panic();
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(
            said.contains("egress_host_changed"),
            "`gsd-lane {}` does not say the host moved:\n{said}",
            args.join(" ")
        );
        assert_eq!(moved.connections(), 0, "doctor contacted the moved host");
        assert_eq!(
            std::fs::read(gsd_dir.join("consent.json")).expect("consent"),
            consent,
            "doctor changed the consent record"
        );
        assert!(!gsd_dir.join("egress-pins.json").exists(), "doctor pinned");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. The consent screens of `install` and `trust approve` print no hostile text raw
// ---------------------------------------------------------------------------------------------

/// The first character of `text` that could steer a terminal or hide text (line feeds and
/// tabs are layout), if any.
fn raw_control(text: &str) -> Option<char> {
    text.chars().find(|c| {
        (c.is_control() && !matches!(c, '\n' | '\t'))
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}')
    })
}

/// ESC sequences (OSC title, CSI clear), CR and a bidi override.
const STEER: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\rOwned \u{202e}txt.exe";

/// The `acme-spawn` fixture with [`STEER`] in every field validation lets through (an
/// argument, an `invoke.env` value, the description, a config default and description) and,
/// when `title` is set, in the title (which validation refuses, `TXT-UNSAFE`).
fn steering_manifest(title: bool) -> Value {
    let mut m = util::read_json(&util::fixture(
        "trust/spawn-lane/acme-spawn/capability.json",
    ));
    m["description"] = json!(format!("Acme {STEER}"));
    m["reviewer"]["invoke"]["args"] = json!(["review", STEER, "{{model}}", "-p", "-"]);
    m["reviewer"]["invoke"]["env"] = json!({"ACME_MODE": STEER});
    m["config"]["review.models.acme_spawn"]["description"] = json!(STEER);
    m["config"]["review.models.acme_spawn"]["default"] = json!(format!("m{STEER}"));
    if title {
        m["title"] = json!(format!("Acme {STEER}"));
    }
    m
}

/// `install` (project and global scope) and `trust approve`, asked without a terminal, with
/// `--json` and with `--yes`, show a manifest carrying ESC, CR and bidi text with every such
/// character escaped, on stdout and stderr; the escaped argument is still shown (nothing is
/// hidden by dropping it). A manifest whose title carries it is refused, and the refusal is
/// escaped too.
#[test]
fn consent_screens_of_install_and_trust_approve_print_no_hostile_text_raw() {
    let lab = UpdateLab {
        env: util::TestEnv::with_planning(),
        run_dir: std::path::PathBuf::new(),
    };
    let check = |what: &str, out: &util::Outcome| {
        out.assert_no_panic();
        for stream in [&out.stdout, &out.stderr] {
            assert_eq!(
                raw_control(stream),
                None,
                "{what} printed a raw control:\n{stream}"
            );
        }
    };
    let source = lab.source("steer", |m| *m = steering_manifest(false));
    for scope in ["--project-scope", "--global"] {
        for extra in [&[][..], &["--json"]] {
            let mut args = vec!["install", scope];
            args.extend_from_slice(extra);
            args.push(&source);
            let out = lab.gsd(&args);
            check(&args.join(" "), &out);
            assert_eq!(
                out.code,
                Some(1),
                "asked without a terminal: {}",
                out.stdout
            );
            let shown = format!("{}{}", out.stdout, out.stderr);
            assert!(
                shown.contains(r"\u{1b}]0;pwned\u{7}") && shown.contains(r"\u{202e}"),
                "the argument is shown escaped:\n{shown}"
            );
        }
    }
    // The repository ships it; `trust approve` shows it before asking.
    lab.env
        .write_overlay(Scope::Project, "acme-spawn", &steering_manifest(false));
    for args in [
        &["trust", "approve", "acme-spawn"][..],
        &["trust", "approve", "acme-spawn", "--json"],
        &["trust", "approve", "acme-spawn", "--yes"],
    ] {
        let out = lab.gsd(args);
        check(&args.join(" "), &out);
        assert!(
            format!("{}{}", out.stdout, out.stderr).contains(r"\u{202e}"),
            "{}",
            out.stdout
        );
    }
    let out = lab.gsd(&["install", "--project-scope", "--yes", &source]);
    check("install --yes", &out);
    out.assert_status(0);
    // A hostile title is refused by validation; the refusal prints nothing raw either.
    let titled = lab.source("titled", |m| *m = steering_manifest(true));
    let out = lab.gsd(&["install", "--global", "--yes", &titled]);
    check("install of a hostile title", &out);
    assert_ne!(out.code, Some(0));
    lab.env
        .write_overlay(Scope::Project, "acme-spawn", &steering_manifest(true));
    for args in [
        &["trust", "approve", "acme-spawn", "--yes"][..],
        &["trust", "approve", "acme-spawn", "--json"],
    ] {
        let out = lab.gsd(args);
        check(&args.join(" "), &out);
        assert_ne!(out.code, Some(0), "{}", out.stdout);
    }
}

// ---------------------------------------------------------------------------------------------
// SIGTERM and a closed terminal (SIGHUP) during a review (README, Reviewing a phase; Resuming)
// ---------------------------------------------------------------------------------------------

/// A review of `alpha` (reviews at once) and `beta` (sleeps 30 s), started; returns once
/// alpha's result is journaled and beta's child runs.
fn review_with_a_sleeping_lane(lab: &Lab) -> std::process::Child {
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "sleep 30");
    let child = lab
        .command(&["--phase", "3", "--all"])
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(review::journaled(&lab.tmp, "alpha")
        && lab.marks("beta").iter().any(|m| m.kind == "child"))
    {
        assert!(Instant::now() < deadline, "lanes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("/bin/kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

/// SIGTERM does what Ctrl-C does: every lane's tree is killed at once, the finished review is
/// kept, REVIEWS.md marks the unfinished reviewer, the run dir is kept, the exit status is 130,
/// and a resume runs only the interrupted reviewer.
#[test]
fn sigterm_kills_every_lane_writes_reviews_md_and_the_review_can_be_resumed() {
    let lab = Lab::new();
    let child = review_with_a_sleeping_lane(&lab);
    signal(child.id(), "TERM");
    let out = review::finish(child, "terminated review");
    out.assert_no_panic().assert_status(130);
    let left = util::processes_left_with_home(&lab.env.home, Duration::from_secs(5));
    assert!(left.is_empty(), "lane processes survived SIGTERM: {left:?}");
    let reviews = lab.reviews();
    assert!(reviews.contains("reviewers: [alpha]\n"), "{reviews}");
    assert!(
        reviews.contains("beta review not completed: the review run was interrupted (SIGINT/SIGTERM) before this reviewer finished."),
        "{reviews}"
    );
    let dir = review::run_dir_of(&out);
    lab.behave("beta", "review");
    let resumed = lab.review(&["--resume", dir.to_str().expect("utf-8")]);
    resumed.assert_no_panic().assert_status(0);
    let starts = |slug: &str| lab.marks(slug).iter().filter(|m| m.kind == "start").count();
    assert_eq!((starts("alpha"), starts("beta")), (1, 2));
    assert!(
        !lab.reviews().contains("not completed"),
        "{}",
        lab.reviews()
    );
}

/// A closed terminal (SIGHUP) ends the review without its cooperation, like a SIGKILL: no
/// lane outlives it, and the review can be continued (`runs` lists it; the resume keeps the
/// finished review and runs the other).
#[test]
fn a_closed_terminal_leaves_no_lane_and_the_review_can_be_resumed() {
    let lab = Lab::new();
    let mut child = review_with_a_sleeping_lane(&lab);
    signal(child.id(), "HUP");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < deadline, "SIGHUP did not end the review");
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = util::processes_left_with_home(&lab.env.home, Duration::from_secs(5));
    assert!(left.is_empty(), "lane processes survived SIGHUP: {left:?}");
    let listed = lab.gsd(&["runs", "--json"]);
    listed.assert_no_panic().assert_status(0);
    let runs = listed.json();
    let dir = runs
        .as_array()
        .and_then(|r| r.first())
        .and_then(|r| r["runDir"].as_str())
        .unwrap_or_else(|| panic!("the review is listed: {runs}"))
        .to_owned();
    lab.behave("beta", "review");
    let resumed = lab.review(&["--resume", &dir]);
    resumed.assert_no_panic().assert_status(0);
    let starts = |slug: &str| lab.marks(slug).iter().filter(|m| m.kind == "start").count();
    assert_eq!((starts("alpha"), starts("beta")), (1, 2));
}

// ---------------------------------------------------------------------------------------------
// A `/v1` base URL is pinned as written (README, Reliability)
// ---------------------------------------------------------------------------------------------

/// `review.ollama_host` written `…/v1` is requested as `…/v1/chat/completions`, and the host
/// pinned on first use and shown by `disclose` is the configured value as written, `/v1`
/// included (not a value rewritten to match the request path); the same value on the next run
/// is no egress change.
#[test]
fn a_v1_base_url_is_pinned_and_shown_as_written() {
    let lab = HttpLab::new();
    let written = format!("{}/v1", lab.server.url());
    lab.host(&written);
    let result = lab.run();
    assert_eq!(result["ok"], json!(true), "{result}");
    assert!(lab
        .server
        .requests()
        .iter()
        .any(|(m, p)| m == "POST" && p == "/v1/chat/completions"));
    let pins = util::read_json(&lab.env.gsd_home.join(".gsd/egress-pins.json"));
    let mut hosts = Vec::new();
    collect_strings(&pins, "host", &mut hosts);
    assert_eq!(hosts, vec![written.clone()], "{pins}");
    let shown = lab.gsd(&["disclose", "ollama"]);
    assert!(
        shown
            .stdout
            .contains(&format!("destination: {written} (local)")),
        "{}",
        shown.stdout
    );
    let again = lab.run();
    assert_eq!(again["stubbed"], json!(false), "{again}");
}

/// Every string member named `key` anywhere in `value`.
fn collect_strings(value: &Value, key: &str, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (name, member) in map {
                match member {
                    Value::String(text) if name == key => into.push(text.clone()),
                    _ => collect_strings(member, key, into),
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| collect_strings(item, key, into)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// An oversized `run.json` is refused on resume (README, Resuming a review)
// ---------------------------------------------------------------------------------------------

/// A review whose `beta` failed (so its run dir is kept); returns the run dir.
fn failed_beta_run(lab: &Lab) -> std::path::PathBuf {
    lab.lane("alpha", |_| {});
    lab.lane("beta", |_| {});
    lab.behave("beta", "fail");
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    lab.behave("beta", "review");
    review::run_dir_of(&out)
}

/// Appends 5 MiB of spaces to `path` (it stays valid JSON, past the 4 MiB record bound).
fn grow(path: &Path) {
    let mut text = std::fs::read(path).expect("record");
    text.extend(std::iter::repeat_n(b' ', 5 * 1024 * 1024));
    std::fs::write(path, text).expect("grow record");
}

/// `run.json` grown past its 4 MiB bound (still valid JSON) is refused by `--resume` and no
/// lane runs: the run dir's copy, which a lane could write, as a changed copy (exit 2, naming
/// it); gsd-lane's own record under `$GSD_HOME/.gsd/runs` as an oversized record (exit 1,
/// naming it and the bound). Both are read bounded.
#[test]
fn an_oversized_run_json_is_refused_on_resume_and_nothing_runs() {
    let starts = |lab: &Lab| {
        ["alpha", "beta"].map(|slug| lab.marks(slug).iter().filter(|m| m.kind == "start").count())
    };
    let lab = Lab::new();
    let dir = failed_beta_run(&lab);
    grow(&dir.join("run.json"));
    let before = starts(&lab);
    let resumed = lab.review(&["--resume", dir.to_str().expect("utf-8")]);
    resumed.assert_no_panic().assert_status(2);
    assert!(
        resumed
            .stderr
            .contains("run.json was changed after gsd-lane wrote it"),
        "{}",
        resumed.stderr
    );
    assert_eq!(starts(&lab), before, "a lane ran");

    let lab = Lab::new();
    let dir = failed_beta_run(&lab);
    grow(&crate::resume::ledger_entry(&lab).join("run.json"));
    let before = starts(&lab);
    let resumed = lab.review(&["--resume", dir.to_str().expect("utf-8")]);
    resumed.assert_no_panic().assert_status(1);
    assert!(
        resumed
            .stderr
            .contains("run.json: larger than 4194304 bytes"),
        "{}",
        resumed.stderr
    );
    assert_eq!(starts(&lab), before, "a lane ran");
}

// ---------------------------------------------------------------------------------------------
// Ctrl-C ends a rate-limit wait (README, Rate limits)
// ---------------------------------------------------------------------------------------------

/// An HTTP lane answered `429` with `Retry-After: 40` waits to retry; Ctrl-C during that wait
/// ends the review at once (well before the 40 s), with status 130, and no retry is sent.
#[test]
fn ctrl_c_ends_a_rate_limit_wait_without_a_retry() {
    let server = Server::start(&[
        (
            "GET",
            "/v1/models",
            json_reply(200, &json!({"object": "list", "data": [{"id": "m"}]})),
        ),
        (
            "POST",
            "/v1/chat/completions",
            crate::http_server::Reply::Respond {
                status: 429,
                headers: vec![
                    ("Retry-After".into(), "40".into()),
                    ("Content-Type".into(), "application/json".into()),
                ],
                body: br#"{"error":"slow down"}"#.to_vec(),
            },
        ),
    ]);
    let lab = Lab::new();
    lab.config(&json!({"review": {"ollama_host": server.url(), "models": {"ollama": "m"}}}));
    let child = lab
        .command(&["--phase", "3", "--ollama"])
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !review::journaled(&lab.tmp, "ollama") {
        assert!(Instant::now() < deadline, "the lane was never rate-limited");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.post_count(), 1);
    let interrupted = Instant::now();
    signal(child.id(), "INT");
    let out = review::finish(child, "review interrupted in a rate-limit wait");
    let took = interrupted.elapsed();
    out.assert_no_panic().assert_status(130);
    assert!(
        took < Duration::from_secs(15),
        "Ctrl-C waited out the rate limit: {took:?}"
    );
    assert_eq!(server.post_count(), 1, "a retry was sent after Ctrl-C");
}

// ---------------------------------------------------------------------------------------------
// A resume is refused when a lane's budget or host changed (README, Resuming a review)
// ---------------------------------------------------------------------------------------------

/// `--resume` of `dir` is refused (exit 2, "cannot resume"); `beta` does not start again.
fn assert_resume_refused(lab: &Lab, dir: &Path) -> util::Outcome {
    let before = lab
        .marks("beta")
        .iter()
        .filter(|m| m.kind == "start")
        .count();
    let out = lab.review(&["--resume", dir.to_str().expect("utf-8")]);
    out.assert_no_panic().assert_status(2);
    assert!(out.stderr.contains("cannot resume"), "{}", out.stderr);
    let after = lab
        .marks("beta")
        .iter()
        .filter(|m| m.kind == "start")
        .count();
    assert_eq!(after, before, "a refused resume ran beta");
    out
}

/// A changed prompt budget of the failed lane (`review.max_prompt_tokens_per_reviewer.beta`)
/// refuses the resume; `--force` resumes anyway.
#[test]
fn resume_is_refused_when_a_lane_budget_changed() {
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.budget_lane("beta");
    lab.behave("beta", "stub");
    let key = "max_prompt_tokens_per_reviewer";
    lab.config(&json!({"review": {key: {"beta": 100_000}}}));
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    let dir = review::run_dir_of(&out);
    lab.behave("beta", "review");
    lab.config(&json!({"review": {key: {"beta": 90_000}}}));
    let refused = assert_resume_refused(&lab, &dir);
    assert!(refused.stderr.contains("beta"), "{}", refused.stderr);
    let forced = lab.review(&["--resume", dir.to_str().expect("utf-8"), "--force"]);
    forced.assert_no_panic().assert_status(0);
}

/// A changed host of the failed HTTP lane refuses the resume, and nothing is sent: to another
/// server the pin blocks it first (`egress_host_changed`); to the same server under another
/// path (which the pin, binding the origin, allows) the resume's own record refuses it.
#[test]
fn resume_is_refused_when_an_http_lane_s_host_changed_and_nothing_is_sent() {
    let failing = Server::start(&[
        (
            "GET",
            "/v1/models",
            json_reply(200, &json!({"object": "list", "data": [{"id": "m"}]})),
        ),
        (
            "POST",
            "/v1/chat/completions",
            json_reply(500, &json!({"error": "down"})),
        ),
    ]);
    let lab = Lab::new();
    lab.lane("alpha", |_| {});
    lab.config(&json!({"review": {"ollama_host": failing.url(), "models": {"ollama": "m"}}}));
    let out = lab.review(&["--phase", "3", "--alpha", "--ollama"]);
    out.assert_no_panic().assert_status(0);
    let dir = review::run_dir_of(&out);
    let moved = Server::start(&[]);
    for (host, said) in [
        (moved.url(), "egress_host_changed"),
        (format!("{}/v1", failing.url()), "cannot resume"),
    ] {
        lab.config(&json!({"review": {"ollama_host": host, "models": {"ollama": "m"}}}));
        let resumed = lab.review(&["--resume", dir.to_str().expect("utf-8")]);
        resumed.assert_no_panic().assert_status(2);
        assert!(resumed.stderr.contains(said), "{host}: {}", resumed.stderr);
        assert_eq!(
            moved.connections(),
            0,
            "the resume contacted the moved host"
        );
        assert_eq!(
            failing.post_count(),
            1,
            "{host}: the resume ran the lane again"
        );
    }
}
