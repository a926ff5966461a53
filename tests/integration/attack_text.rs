//! Untrusted text in REVIEWS.md and on the terminal (issue 20 items 8 and 10), end to end.
//!
//! - A hostile reviewer's output (setext forms the old line rules missed, headings in a block
//!   quote, an unclosed `<!--`, an unclosed `<details>` with a forged `<h2>`, a review ending
//!   inside an open code fence) goes through a real `review` with fake lanes; a CommonMark
//!   parser (pulldown-cmark) must then see exactly the expected headings, in order, and no raw
//!   HTML before the summary.
//! - A manifest whose `title` or `reviewsSection` holds ESC/OSC, CR, C1, DEL, bidi or
//!   zero-width characters is refused by `validate` (TXT-UNSAFE), and no command that shows
//!   overlays prints a raw control, bidi or invisible character for it.

use std::path::PathBuf;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::{json, Value};

use crate::review::Lab;
use crate::util::{self, Scope, TestEnv};

/// Each hostile reviewer's whole output.
const ATTACKS: &[(&str, &str)] = &[
    (
        "alpha",
        "Intro.\n\nTwo-line\nsetext\n===\n\n*emph*\n===\n\n1984\n---\n\n+1\n===\n\n<span>x</span>\n---\n\n# ATX\n\n> # Quoted\n",
    ),
    (
        "beta",
        "<!-- everything after this is hidden\n\n# Beta heading\n",
    ),
    (
        "gamma",
        "<details>\n<summary>open me</summary>\n\n<h2>Forged Section</h2>\n\n## Real\n",
    ),
    (
        "delta",
        "# Delta\n\n```\nan open fence swallows the rest\n## Swallowed",
    ),
];

/// The headings of `markdown` (level, text) in order, and whether raw HTML comes before the
/// heading `stop`.
fn outline(markdown: &str, stop: &str) -> (Vec<(u8, String)>, bool) {
    let mut headings = Vec::new();
    let mut current: Option<(u8, String)> = None;
    let mut html_before_stop = false;
    let mut stopped = false;
    for event in Parser::new_ext(markdown, Options::empty()) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let level = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    HeadingLevel::H5 => 5,
                    HeadingLevel::H6 => 6,
                };
                current = Some((level, String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(done) = current.take() {
                    stopped |= done.1 == stop;
                    headings.push(done);
                }
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some((_, name)) = current.as_mut() {
                    name.push_str(&text);
                }
            }
            // gsd-lane's own markers of the plan-revision conflicts slot are no reviewer's HTML.
            Event::Html(html) | Event::InlineHtml(html) => {
                let own = matches!(
                    html.trim(),
                    "<!-- gsd:plan-revision-conflicts:begin -->"
                        | "<!-- gsd:plan-revision-conflicts:end -->"
                );
                html_before_stop |= !stopped && !own;
            }
            _ => {}
        }
    }
    (headings, html_before_stop)
}

/// A lab with fake lanes whose programs print the attacks, and one honest lane (`omega`).
fn hostile_lab() -> Lab {
    let lab = Lab::new();
    let attacks = lab.env.home.join("attacks");
    std::fs::create_dir_all(&attacks).expect("attacks dir");
    for (slug, text) in ATTACKS {
        lab.lane(slug, |_| {});
        std::fs::write(attacks.join(slug), text).expect("attack text");
        // The copied fake lane keeps its mode; only its body changes.
        std::fs::write(
            lab.bin.join(format!("fake-{slug}")),
            format!("#!/bin/sh\ncat > /dev/null\ncat \"$HOME/attacks/{slug}\"\n"),
        )
        .expect("hostile lane");
    }
    lab.lane("omega", |_| {});
    lab
}

#[test]
fn hostile_reviews_cannot_change_the_heading_structure_of_reviews_md() {
    let lab = hostile_lab();
    let out = lab.review(&[
        "--phase", "3", "--alpha", "--beta", "--gamma", "--delta", "--omega",
    ]);
    out.assert_no_panic().assert_status(0);
    let reviews = lab.reviews();
    let (headings, html) = outline(&reviews, "Consensus Summary");
    let from_title: Vec<(u8, String)> = headings
        .into_iter()
        .skip_while(|(level, _)| *level != 1)
        .collect();
    let want: Vec<(u8, String)> = [
        (1, "Cross-AI Plan Review — Phase 3"),
        (2, "Plan-Revision Conflicts"),
        (2, "Alpha Review"),
        (3, "Two-line setext"),
        (3, "emph"),
        (4, "1984"),
        (3, "+1"),
        (4, "<span>x</span>"),
        (3, "ATX"),
        (3, "Quoted"),
        (2, "Beta Review"),
        (3, "Beta heading"),
        // Sections come in id order: the open fence (delta) is followed by another reviewer.
        (2, "Delta Review"),
        (3, "Delta"),
        (2, "Gamma Review"),
        (3, "Real"),
        (2, "Omega Review"),
        (3, "fake-omega review"),
        (2, "Consensus Summary"),
        (3, "Agreed Strengths"),
        (3, "Agreed Concerns"),
        (3, "Divergent Views"),
    ]
    .into_iter()
    .map(|(level, text)| (level, text.to_owned()))
    .collect();
    assert_eq!(from_title, want, "REVIEWS.md:\n{reviews}");
    assert!(!html, "raw HTML in a reviewer's section:\n{reviews}");
    // What the reviewers wrote is still there to read, escaped or fenced.
    for kept in [
        "&lt;!-- everything after this is hidden",
        "&lt;h2>Forged Section&lt;/h2>",
        "an open fence swallows the rest\n## Swallowed\n```",
    ] {
        assert!(reviews.contains(kept), "{kept:?} missing:\n{reviews}");
    }
}

/// Every flavour of text that can steer a terminal or hide text.
const HOSTILE: &[(&str, &str)] = &[
    ("osc", "Acme\u{1b}]0;pwned\u{7}"),
    ("csi", "Acme\u{1b}[2J\u{1b}[1;1H"),
    ("cr", "Acme\rOwned"),
    ("c1-del", "Acme\u{9b}2J\u{7f}"),
    ("bidi", "Acme\u{202e}txt.exe"),
    ("zero-width", "Ac\u{200b}me"),
    ("newline", "Acme\n## Forged"),
];

/// The fixture lane with `edit` applied, as overlay `folder`.
fn lane_manifest(id: &str, edit: impl FnOnce(&mut Value)) -> Value {
    let mut lane = util::acme_as(id);
    edit(&mut lane);
    lane
}

/// True when `text` holds a character a terminal could be steered or fooled by (line feeds
/// and tabs are layout).
fn has_raw_control(text: &str) -> Option<char> {
    text.chars().find(|c| {
        (c.is_control() && !matches!(c, '\n' | '\t'))
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}')
    })
}

#[test]
fn validate_refuses_unsafe_titles_and_sections() {
    let env = TestEnv::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    for (name, text) in HOSTILE {
        for field in ["title", "reviewsSection"] {
            let id = format!("acme-{name}-{}", field.to_lowercase());
            let lane = lane_manifest(&id, |lane| {
                if field == "title" {
                    lane["title"] = json!(text);
                } else {
                    lane["reviewer"]["reviewsSection"] = json!(text);
                }
            });
            paths.push(env.write_overlay(Scope::Project, &id, &lane));
        }
    }
    let (out, report) = util::validate(&env, &paths);
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    let refused: Vec<(String, String)> = report
        .errors
        .iter()
        .filter(|d| util::str_of(d, "code") == "TXT-UNSAFE")
        .map(|d| (util::str_of(d, "capability"), util::str_of(d, "field")))
        .collect();
    assert_eq!(refused.len(), HOSTILE.len() * 2, "{refused:?}");
    for (name, _) in HOSTILE {
        assert!(refused.contains(&(format!("acme-{name}-title"), "title".to_owned())));
        assert!(refused.contains(&(
            format!("acme-{name}-reviewssection"),
            "reviewer.reviewsSection".to_owned()
        )));
    }
    // The human report names the problem without printing the characters.
    let human = env.cmd(&["validate"]).args(&paths).run();
    assert_eq!(human.code, Some(1));
    assert!(human.stdout.contains("TXT-UNSAFE") || human.stderr.contains("TXT-UNSAFE"));
    for stream in [&human.stdout, &human.stderr, &out.stdout] {
        assert_eq!(has_raw_control(stream), None, "{stream}");
    }
}

#[test]
fn no_command_prints_a_hostile_overlay_name_raw() {
    let env = TestEnv::with_planning();
    for (name, text) in HOSTILE {
        let id = format!("acme-{name}");
        let lane = lane_manifest(&id, |lane| {
            lane["title"] = json!(text);
            lane["reviewer"]["reviewsSection"] = json!(text);
            lane["reviewer"]["slug"] = json!(format!("acme{}", name.replace('-', "")));
            lane["reviewer"]["flags"] = json!([format!("--acme-{name}")]);
        });
        env.write_overlay(Scope::Global, &id, &lane);
    }
    let rows = env.list(&[]);
    for (name, _) in HOSTILE {
        let row = util::row(&rows, "global", &format!("acme-{name}"));
        assert_eq!(row["active"], json!(false), "{row}");
    }
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["sections"],
        &["sections", "--json"],
        &["flags"],
        &["plan"],
        &["doctor"],
        &["doctor", "--json"],
        &["disclose"],
        &["disclose", "--json"],
        &["manpage"],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["review", "--help"],
    ] {
        let out = env.run(args);
        out.assert_no_panic();
        for stream in [&out.stdout, &out.stderr] {
            assert_eq!(
                has_raw_control(stream),
                None,
                "gsd-lane {args:?} printed a raw control:\n{stream}"
            );
        }
    }
}
