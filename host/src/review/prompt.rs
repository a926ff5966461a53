//! The review prompt and the section files (review-workflow.md §7.1-§7.3).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::coverage;
use super::rundir::RunDir;
use crate::error::Failure;

/// The §7.2 preamble (*wording gsd-lane-defined*).
pub const PREAMBLE: &str = "You are reviewing implementation plans for one phase of a software project. Give structured feedback on plan quality, completeness and risk.";

/// The §7.2 review instructions (*wording gsd-lane-defined*; required fragments verbatim).
pub const INSTRUCTIONS: &str = "**Verify against source: do not judge the plan text alone. The plans point at real files, migrations, routes and tests in this repository.**

1. Open the files the plans reference and check each claim against the actual code.
2. Back every strength and concern with concrete `path/to/file:line` evidence plus the mechanism.
3. Trace any mechanism a plan claims works (a guard, a query filter, a test covering a path) instead of trusting it.
4. If you cannot read the repo (no file access), say so and downgrade that finding to an open question.
5. Cite a claim of a plan as `<plan path>:<line>`, with the path its `####` heading gives under Plans to Review.

Findings grounded in `file:line` evidence weigh far more than impressions; restating the plan's own claims has little value.

**Every plan needs its own section.** When a Plan Coverage Manifest closes this request, it lists every plan id and how many there are: give each listed id a `##` section whose heading is the id exactly as written, before any comparison across plans or overall verdict. A review that ends before every id has its section is incomplete; if you have to stop early, say so and name the ids you did not reach.

For each plan, provide:
- **Summary**: one paragraph.
- **Strengths**: bullets.
- **Concerns**: bullets, each with severity HIGH, MEDIUM or LOW.
- **Suggestions**: bullets.
- **Risk Assessment**: overall LOW, MEDIUM or HIGH, with justification.

Focus on: missing edge cases or error handling; dependency ordering; scope creep or over-engineering; security; performance; whether the plans achieve the phase goals.

Write your review in Markdown.";

/// The prompt's inputs, already read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// The phase argument as given.
    pub phase: String,
    /// The phase name.
    pub phase_name: String,
    /// PROJECT.md, first 80 lines (if the file exists).
    pub project: Option<String>,
    /// The ROADMAP section (empty when there is none).
    pub roadmap: String,
    /// REQUIREMENTS.md (if it exists).
    pub requirements: Option<String>,
    /// CONTEXT files concatenated (if any).
    pub context: Option<String>,
    /// RESEARCH files concatenated (if any).
    pub research: Option<String>,
    /// Plans: file name and content, in order.
    pub plans: Vec<(String, String)>,
    /// Each plan's path relative to the project root (`/`-separated), in the order of
    /// `plans`: the prompt's `####` anchors (upstream #4170). Missing ones fall back to the
    /// file name.
    pub plan_paths: Vec<String>,
}

/// The first `n` lines of `text` (as `head -n`: each kept line keeps its `\n`).
pub fn head_lines(text: &str, n: usize) -> String {
    text.split_inclusive('\n').take(n).collect()
}

/// `bytes` as text: taken over when valid UTF-8 (no copy), else decoded lossily.
fn text_of(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read(path)
        .map(text_of)
        .map_err(|err| Failure::new(format!("cannot read {}: {err}", path.display())))
}

fn read_optional(path: &Path) -> Result<Option<String>, Failure> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(text_of(bytes))),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(Failure::new(format!(
            "cannot read {}: {err}",
            path.display()
        ))),
    }
}

fn concat(paths: &[PathBuf]) -> Result<Option<String>, Failure> {
    if paths.is_empty() {
        return Ok(None);
    }
    let mut text = String::new();
    for path in paths {
        text.push_str(&read(path)?);
    }
    Ok(Some(text))
}

/// Reads every §7.1 source of `phase`; `planning_root` holds PROJECT.md and REQUIREMENTS.md.
///
/// # Errors
///
/// A file that exists but cannot be read (status 1).
pub fn gather(phase: &super::phase::Phase, planning_root: &Path) -> Result<Sources, Failure> {
    let mut plans = Vec::new();
    let mut plan_paths = Vec::new();
    let project_root = planning_root.parent().unwrap_or(planning_root);
    for path in &phase.plans {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        plans.push((name, read(path)?));
        plan_paths.push(relative_path(path, project_root));
    }
    Ok(Sources {
        phase: phase.arg.clone(),
        phase_name: phase.name.clone(),
        project: read_optional(&planning_root.join("PROJECT.md"))?.map(|t| head_lines(&t, 80)),
        roadmap: phase.roadmap.clone().unwrap_or_default(),
        requirements: read_optional(&planning_root.join("REQUIREMENTS.md"))?,
        context: concat(&phase.context)?,
        research: concat(&phase.research)?,
        plans,
        plan_paths,
    })
}

/// `path` relative to `root`, `/`-separated; the whole path when it is not under `root`.
fn relative_path(path: &Path, root: &Path) -> String {
    let Ok(relative) = path.strip_prefix(root) else {
        return path.to_string_lossy().into_owned();
    };
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

impl Sources {
    /// The plan ids in plan order ([`coverage::plan_id`]).
    pub fn plan_ids(&self) -> Vec<&str> {
        self.plans
            .iter()
            .map(|(name, _)| coverage::plan_id(name))
            .collect()
    }

    /// The `####` anchor of plan `index`: its project-relative path (else its file name).
    fn anchor(&self, index: usize) -> &str {
        match (self.plan_paths.get(index), self.plans.get(index)) {
            (Some(path), _) => path,
            (None, Some((name, _))) => name,
            (None, None) => "",
        }
    }

    /// The Plan Coverage Manifest of a phase review (none without plans).
    fn manifest(&self) -> Option<String> {
        (!self.plans.is_empty()).then(|| coverage::manifest(&self.plan_ids()))
    }
}

/// Writes blocks separated by a blank line, each as it comes (no block is copied).
struct Blocks<'w, W: Write> {
    out: &'w mut W,
    started: bool,
}

impl<W: Write> Blocks<'_, W> {
    /// Writes one block made of `parts`.
    fn block(&mut self, parts: &[&str]) -> std::io::Result<()> {
        if self.started {
            self.out.write_all(b"\n\n")?;
        }
        self.started = true;
        parts
            .iter()
            .try_for_each(|part| self.out.write_all(part.as_bytes()))
    }

    /// Writes `heading`, a line break and `content` without its trailing line breaks.
    fn titled(&mut self, heading: &str, content: &str) -> std::io::Result<()> {
        self.block(&[heading, "\n", content.trim_end_matches(['\n', '\r'])])
    }
}

/// The instructions section file: title, preamble, the whole Review Instructions block, then
/// the Plan Coverage Manifest (§10.3 of the addendum).
pub fn instructions_text(s: &Sources) -> String {
    let mut text = format!(
        "# Cross-AI Plan Review Request\n\n{PREAMBLE}\n\n## Review Instructions\n{INSTRUCTIONS}\n"
    );
    text.push_str(&s.manifest().unwrap_or_default());
    text
}

/// Writes `gsd-review-prompt.md` (§7.2) to `out`, block by block: a large plan is written
/// from the one copy [`Sources`] holds, never assembled into another.
///
/// # Errors
///
/// The write error.
pub fn write_prompt(out: &mut impl Write, s: &Sources) -> std::io::Result<()> {
    let mut blocks = Blocks {
        out,
        started: false,
    };
    blocks.block(&["# Cross-AI Plan Review Request"])?;
    blocks.block(&[PREAMBLE])?;
    if let Some(project) = &s.project {
        blocks.titled("## Project Context", project)?;
    }
    let phase_heading = format!("## Phase {}: {}", s.phase, s.phase_name);
    if s.roadmap.trim().is_empty() {
        blocks.block(&[&phase_heading])?;
    } else {
        blocks.block(&[
            &phase_heading,
            "\n### Roadmap Section\n",
            s.roadmap.trim_end_matches(['\n', '\r']),
        ])?;
    }
    if let Some(requirements) = &s.requirements {
        blocks.titled("### Requirements Addressed", requirements)?;
    }
    if let Some(context) = &s.context {
        blocks.titled("### User Decisions (CONTEXT.md)", context)?;
    }
    if let Some(research) = &s.research {
        blocks.titled("### Research Findings", research)?;
    }
    blocks.block(&["### Plans to Review\n"])?;
    for (index, (_, content)) in s.plans.iter().enumerate() {
        if index > 0 {
            blocks.out.write_all(b"\n\n")?;
        }
        let heading = format!("#### {}\n\n", s.anchor(index));
        blocks.out.write_all(heading.as_bytes())?;
        blocks
            .out
            .write_all(content.trim_end_matches(['\n', '\r']).as_bytes())?;
    }
    blocks.titled("## Review Instructions", INSTRUCTIONS)?;
    blocks.out.write_all(b"\n")?;
    blocks
        .out
        .write_all(s.manifest().unwrap_or_default().as_bytes())
}

/// `gsd-review-prompt.md` (§7.2) as one string (tests).
#[cfg(test)]
pub fn prompt_text(s: &Sources) -> String {
    let mut out = Vec::new();
    let _ = write_prompt(&mut out, s);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes the prompt and every §7.3 section file into the run dir.
///
/// # Errors
///
/// I/O errors (status 1).
pub fn write_files(run_dir: &RunDir, s: &Sources) -> Result<(), Failure> {
    run_dir.write_with("gsd-review-prompt.md", |file| {
        let mut out = std::io::BufWriter::new(file);
        write_prompt(&mut out, s)?;
        out.flush()
    })?;
    run_dir.write("gsd-review-instructions.md", &instructions_text(s))?;
    run_dir.write("gsd-review-roadmap.md", &s.roadmap)?;
    for (name, content) in &s.plans {
        run_dir.write(&plan_file_name(name), content)?;
    }
    if let Some(manifest) = s.manifest() {
        run_dir.write(coverage::MANIFEST_FILE, &manifest)?;
    }
    let optional = [
        ("gsd-review-project.md", &s.project),
        ("gsd-review-context.md", &s.context),
        ("gsd-review-research.md", &s.research),
        ("gsd-review-requirements.md", &s.requirements),
    ];
    for (name, content) in optional {
        if let Some(content) = content {
            run_dir.write(name, content)?;
        }
    }
    Ok(())
}

/// The run-dir copy of plan file `name`: `gsd-review-plan-<plan id>.md` (upstream #4170).
pub fn plan_file_name(name: &str) -> String {
    format!("gsd-review-plan-{}.md", coverage::plan_id(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_blocks_and_headings() {
        let s = Sources {
            phase: "3".into(),
            phase_name: "Billing".into(),
            project: Some("# P\n".into()),
            roadmap: "### Phase 3: Billing\ngoal".into(),
            requirements: None,
            context: Some("ctx\n".into()),
            research: None,
            plans: vec![
                ("03-01-PLAN.md".into(), "one\n".into()),
                ("03-02-PLAN.md".into(), "two".into()),
            ],
            plan_paths: vec![
                ".planning/phases/03-billing/03-01-PLAN.md".into(),
                ".planning/phases/03-billing/03-02-PLAN.md".into(),
            ],
        };
        let text = prompt_text(&s);
        assert!(text.starts_with("# Cross-AI Plan Review Request\n\nYou are reviewing"));
        assert!(text.contains("\n\n## Project Context\n# P\n\n## Phase 3: Billing\n### Roadmap Section\n### Phase 3: Billing\ngoal\n\n### User Decisions (CONTEXT.md)\nctx\n\n### Plans to Review\n#### .planning/phases/03-billing/03-01-PLAN.md\n\none\n\n#### .planning/phases/03-billing/03-02-PLAN.md\n\ntwo\n\n## Review Instructions\n**Verify against source"));
        // The coverage manifest closes the prompt and the instructions file (§10.3).
        let manifest = "\n## Plan Coverage Manifest\n\nTotal plans in this review: 2\n\nPlan ids (each needs its own `##` section whose heading is the id exactly as written):\n- 03-01\n- 03-02\n";
        assert!(
            text.ends_with(&format!("Write your review in Markdown.\n{manifest}")),
            "{text}"
        );
        assert!(
            instructions_text(&s).ends_with(&format!("Write your review in Markdown.\n{manifest}"))
        );
        assert!(text.contains("`<plan path>:<line>`"));
        assert_eq!(plan_file_name("03-01-PLAN.md"), "gsd-review-plan-03-01.md");
        assert!(!text.contains("Requirements Addressed"));
        for fragment in [
            "Verify against source",
            "check each claim against the actual code",
            "`path/to/file:line`",
            "If you cannot read the repo (no file access)",
            "downgrade that finding to an open question",
        ] {
            assert!(text.contains(fragment), "{fragment}");
        }
    }

    #[test]
    fn paths_are_project_relative() {
        assert_eq!(
            relative_path(
                Path::new("/p/.planning/phases/a/01-PLAN.md"),
                Path::new("/p")
            ),
            ".planning/phases/a/01-PLAN.md"
        );
        assert_eq!(
            relative_path(Path::new("/elsewhere/01-PLAN.md"), Path::new("/p")),
            "/elsewhere/01-PLAN.md"
        );
        let s = Sources::default();
        assert!(!prompt_text(&s).contains("## Plan Coverage Manifest"));
    }

    #[test]
    fn head_keeps_lines() {
        assert_eq!(head_lines("a\nb\nc", 2), "a\nb\n");
        assert_eq!(head_lines("a", 80), "a");
    }
}
