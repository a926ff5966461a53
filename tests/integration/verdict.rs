//! The panel verdict end to end (issue 23): a real `review` with canned reviewer lanes (each a
//! script printing one review of `tests/fixtures/verdict/reviews/`), the verdict at the top of
//! REVIEWS.md and in `review --json`, `gsd-lane verdict` recomputing the same verdict, the
//! degraded panel (banner, top of file, `--require-quorum`), `review.quorum` validation, and
//! citations that leave the repository (`..`, a symbolic link out) never verifying.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{json, Value};

use crate::review::{copy_dir, Lab};
use crate::util;

/// The corpus's reviewer slugs.
const CORPUS: [&str; 8] = [
    "heads", "bolds", "numbered", "multi", "tables", "blind", "escape", "planonly",
];

/// A lab whose project holds the corpus repository (plus a file outside it and a link
/// leading there) and one canned lane per slug in `slugs`.
fn corpus_lab(slugs: &[&str]) -> Lab {
    let lab = Lab::new();
    copy_dir(&util::fixture("verdict/repo"), &lab.env.project);
    let outside = lab.env.root.path().join("outside");
    std::fs::create_dir_all(&outside).expect("outside dir");
    std::fs::write(outside.join("secret.txt"), "secret\n").expect("secret");
    std::os::unix::fs::symlink(
        outside.join("secret.txt"),
        lab.env.project.join("src/escape.rs"),
    )
    .expect("link out");
    let canned = lab.env.home.join("canned");
    std::fs::create_dir_all(&canned).expect("canned dir");
    for slug in slugs {
        lab.lane(slug, |_| {});
        std::fs::copy(
            util::fixture("verdict/bin/canned-lane"),
            lab.bin.join(format!("fake-{slug}")),
        )
        .expect("canned lane");
        std::fs::copy(
            util::fixture(&format!("verdict/reviews/{slug}.md")),
            canned.join(format!("fake-{slug}.md")),
        )
        .expect("canned review");
    }
    lab
}

/// `gsd-lane verdict <file> --json` in the lab, parsed.
fn verdict_json(lab: &Lab, file: &Path, extra: &[&str]) -> (util::Outcome, Value) {
    let path = file.display().to_string();
    let mut args = vec!["verdict", path.as_str(), "--json"];
    args.extend_from_slice(extra);
    let out = lab.gsd(&args);
    out.assert_no_panic();
    let value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|err| panic!("verdict --json: {err}\n{}\n{}", out.stdout, out.stderr));
    (out, value)
}

/// The strings of a JSON array, sorted.
fn sorted(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn corpus_verdict_matches_the_contract_and_recomputes_identically() {
    let lab = corpus_lab(&CORPUS);
    let out = lab.review(&["--phase", "3", "--all", "--json"]);
    out.assert_no_panic().assert_status(0);
    let event: Value = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "verdict")
        .unwrap_or_else(|| panic!("no verdict event:\n{}", out.stdout));
    let (again, verdict) = verdict_json(&lab, &lab.reviews_path(), &[]);
    again.assert_status(0);

    // `review`'s event and `gsd-lane verdict` on the file it wrote agree exactly.
    let mut from_review = event.clone();
    from_review.as_object_mut().expect("object").remove("event");
    assert_eq!(from_review, verdict, "review and verdict disagree");

    let expected = util::read_json(&util::fixture("verdict/expected.json"));
    let reviewers = verdict["reviewers"].as_array().expect("reviewers");
    assert_eq!(reviewers.len(), CORPUS.len(), "{verdict:#}");
    for reviewer in reviewers {
        let id = reviewer["id"].as_str().expect("id");
        let want = &expected["reviewers"][id];
        for key in ["outcome", "risk", "concerns", "citations", "grounding"] {
            assert_eq!(reviewer[key], want[key], "{id}.{key}");
        }
        let section = format!("{}{}", &id[..1].to_uppercase(), &id[1..]);
        assert_eq!(reviewer["section"], json!(section));
    }
    assert_eq!(verdict["quorum"], expected["quorum"]);
    let agreed = verdict["agreed"].as_array().expect("agreed");
    let want_agreed = expected["agreed"].as_array().expect("agreed");
    assert_eq!(agreed.len(), want_agreed.len(), "{:#}", verdict["agreed"]);
    for (got, want) in agreed.iter().zip(want_agreed) {
        assert_eq!(got["path"], want["path"]);
        assert_eq!(got["lines"], want["lines"], "{}", want["path"]);
        assert_eq!(got["severity"], want["severity"], "{}", want["path"]);
        assert_eq!(sorted(&got["reviewers"]), sorted(&want["reviewers"]));
        assert_eq!(
            sorted(&got["also_raised_by"]),
            sorted(&want["also_raised_by"])
        );
    }
    assert_eq!(
        sorted(&verdict["divergent"]),
        sorted(&expected["divergent"])
    );
    assert_eq!(verdict["missing"], json!([]));

    // The top of REVIEWS.md: below the title, the same table `verdict` prints.
    let text = lab.reviews();
    let title = text
        .find("# Cross-AI Plan Review — Phase 3\n")
        .expect("title");
    let top = &text[title..];
    assert!(top.contains("\n\n**Panel verdict**"), "{top}");
    assert!(
        top.contains("4 of 8 reviews are substantive and source-grounded; quorum 2 met.\n"),
        "{top}"
    );
    // Directly below the title, the plan-revision conflicts slot (upstream #3916), then the verdict.
    let slot_end = top
        .find("<!-- gsd:plan-revision-conflicts:end -->\n")
        .expect("slot");
    assert!(
        top[slot_end..].find("**Panel verdict**") < top[slot_end..].find("\n## "),
        "verdict below the title, above the sections"
    );
    let human = lab.gsd(&["verdict", &lab.reviews_path().display().to_string()]);
    human.assert_status(0);
    assert!(
        text.contains(&human.stdout),
        "the human output is the block of the file:\n{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("| Heads (heads) | review | MEDIUM | 1/1/1 | 5/5 | grounded |\n"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("- `src/billing/invoice.rs:12-18` — HIGH — "),
        "{}",
        human.stdout
    );

    // The Consensus Summary's computed parts are filled in.
    let summary = &text[text.rfind("\n## Consensus Summary\n").expect("summary")..];
    let agreed_at = summary
        .find("### Agreed Concerns\n")
        .expect("agreed heading");
    assert!(
        summary[agreed_at..].contains("-->\n- `migrations/0003_invoices.sql:4-9` — HIGH — "),
        "{summary}"
    );
    assert!(summary.contains("### Divergent Views\n<!-- where reviewers disagreed — worth investigating -->\n- Divergent risk: "), "{summary}");
    // Not degraded: no banner line.
    assert!(!out.stdout.contains("PANEL DEGRADED"));
}

#[test]
fn a_degraded_panel_says_so_at_the_top_and_in_the_banner_and_require_quorum_exits_2() {
    let lab = corpus_lab(&["heads", "tables", "blind", "escape", "planonly"]);
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    assert!(
        out.stdout.contains("PANEL DEGRADED: 1 of 5 reviews is substantive and source-grounded; quorum 2 not met.\n"),
        "{}",
        out.stdout
    );
    let text = lab.reviews();
    assert!(
        text.contains("1 of 5 reviews is substantive and source-grounded; quorum 2 not met — PANEL DEGRADED.\n"),
        "{text}"
    );
    let (plain, verdict) = verdict_json(&lab, &lab.reviews_path(), &[]);
    plain.assert_status(0);
    assert_eq!(
        verdict["quorum"],
        json!({"required": 2, "substantive": 1, "met": false})
    );
    let (strict, _) = verdict_json(&lab, &lab.reviews_path(), &["--require-quorum"]);
    strict.assert_status(2);

    let out = lab.review(&["--phase", "3", "--all", "--require-quorum"]);
    out.assert_no_panic().assert_status(2);
    assert!(out.stdout.contains("PANEL DEGRADED"), "{}", out.stdout);
    assert!(
        lab.reviews().contains("quorum 2 not met"),
        "REVIEWS.md is still written"
    );

    // A quorum of 1 is met by the one grounded review; --require-quorum then exits 0.
    lab.config(&json!({"review": {"quorum": 1}}));
    let out = lab.review(&["--phase", "3", "--all", "--require-quorum"]);
    out.assert_no_panic().assert_status(0);
    assert!(!out.stdout.contains("PANEL DEGRADED"), "{}", out.stdout);
}

#[test]
fn citations_out_of_the_repository_never_verify() {
    let lab = corpus_lab(&["escape"]);
    // The file the link and the `..` path lead to exists and has the cited line.
    let out = lab.review(&["--phase", "3", "--all"]);
    out.assert_no_panic().assert_status(0);
    let (_, verdict) = verdict_json(&lab, &lab.reviews_path(), &[]);
    let escape = &verdict["reviewers"][0];
    assert_eq!(
        escape["citations"],
        json!({"found": 3, "verified": 0}),
        "{verdict:#}"
    );
    assert_eq!(escape["grounding"], "miscited");
    // With the repository root one level up, `../outside/secret.txt` is still a `..` path:
    // never verified, whatever the root.
    let root = lab.env.project.display().to_string();
    let (_, verdict) = verdict_json(&lab, &lab.reviews_path(), &["--repo-root", &root]);
    assert_eq!(verdict["reviewers"][0]["citations"]["verified"], 0);
}

#[test]
fn review_quorum_must_be_a_positive_integer() {
    let lab = corpus_lab(&["heads"]);
    for bad in [json!(0), json!("2"), json!(1.5), json!(-3)] {
        lab.config(&json!({"review": {"quorum": bad}}));
        let out = lab.review(&["--phase", "3", "--all"]);
        out.assert_no_panic().assert_status(1);
        assert!(
            out.stderr
                .contains(".planning/config.json: review.quorum is "),
            "{}",
            out.stderr
        );
        assert!(!lab.started("heads"), "no lane runs on a bad review.quorum");
        let out = lab.gsd(&["verdict", "x.md"]);
        out.assert_status(1);
        assert!(out.stderr.contains("review.quorum"), "{}", out.stderr);
    }
}

#[test]
fn verdict_refuses_a_file_that_is_not_a_reviews_md() {
    let lab = Lab::new();
    let notes = lab.env.project.join("NOTES.md");
    std::fs::write(&notes, "# My notes\n\n- src/a.rs:1\n").expect("notes");
    let out = lab.gsd(&["verdict", "NOTES.md"]);
    out.assert_no_panic().assert_status(1);
    assert!(
        out.stderr
            .contains("NOTES.md: not a REVIEWS.md written by gsd-lane review"),
        "{}",
        out.stderr
    );
    let out = lab.gsd(&["verdict", "missing.md"]);
    out.assert_status(1);
    assert!(
        out.stderr.contains("missing.md: cannot read"),
        "{}",
        out.stderr
    );
    let out = lab.gsd(&["verdict", "NOTES.md", "--repo-root", "nowhere"]);
    out.assert_status(1);
    assert!(out.stderr.contains("--repo-root"), "{}", out.stderr);
}

#[test]
fn an_unclosed_fence_hides_later_sections_and_fails_closed() {
    let lab = corpus_lab(&["heads"]);
    let file = lab.env.project.join("R.md");
    std::fs::write(
        &file,
        "---\nphase: 3\nreviewers: [a, b]\n---\n\n# Cross-AI Plan Review — Phase 3\n\n## A Review\n\nsee `src/billing/tax.rs:2`\n\n```\nunclosed\n\n---\n\n## B Review\n\nsee `src/billing/tax.rs:3`\n\n---\n\n## Consensus Summary\n",
    )
    .expect("write");
    let (out, verdict) = verdict_json(&lab, &file, &["--require-quorum"]);
    out.assert_status(2);
    assert_eq!(verdict["missing"], json!(["b"]));
    assert_eq!(
        verdict["quorum"],
        json!({"required": 2, "substantive": 1, "met": false})
    );
}
