//! Per-lane prompt budgets (review-workflow.md §8): resolution, the UTF-16 token estimate, the
//! trimming algorithm, the trim note, metadata and the two failure reasons.

use std::borrow::Cow;
use std::io::Write;
use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};

use super::rundir::RunDir;
use crate::error::Failure;
use crate::refusal::{Reason, Refusal};

/// Safety margin (percent).
const MARGIN_PCT: f64 = 10.0;
/// Tokens reserved for the trim note under pressure.
const NOTE_RESERVE: i64 = 80;
/// PROJECT.md head-shrink (lines).
const PROJECT_LINES: usize = 40;
/// Plan floor (UTF-16 units).
const PLAN_FLOOR: usize = 1024;

/// UTF-16 length of `text`.
pub fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// `est(t) = ceil(len16(t) / 4)`.
pub fn est(text: &str) -> i64 {
    i64::try_from(utf16_len(text).div_ceil(4)).unwrap_or(i64::MAX)
}

/// The first `units` UTF-16 code units of `text`, never splitting a surrogate pair.
pub fn cut16(text: &str, units: usize) -> &str {
    let mut used = 0;
    for (index, c) in text.char_indices() {
        if used + c.len_utf16() > units {
            return text.get(..index).unwrap_or(text);
        }
        used += c.len_utf16();
    }
    text
}

/// The integer budget `B` from the resolved number (truncated toward zero).
pub fn integer_budget(number: &serde_json::Number) -> i64 {
    if let Some(i) = number.as_i64() {
        return i;
    }
    // Finite by construction (plan::prompt_budget); saturating conversion after truncation.
    #[allow(clippy::cast_possible_truncation)]
    let truncated = number.as_f64().map_or(0, |f| f.trunc() as i64);
    truncated
}

/// The metadata file's content (§8.5), keys in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Metadata {
    /// `B`.
    pub budget: i64,
    /// `E`.
    pub effective_budget: i64,
    /// `est(prompt)`, 0 for a minimum-set hard fail.
    pub estimated_tokens: i64,
    /// Dropped ids in drop order.
    pub omitted: Vec<String>,
    /// PROJECT.md was head-shrunk.
    pub project_md_shrunk: bool,
    /// Unrounded truncation percent.
    pub plan_truncation_pct: f64,
    /// The budget step hard-failed.
    pub hard_failed: bool,
    /// A trim note was injected.
    pub note_injected: bool,
}

impl Metadata {
    /// The JSON document (2-space indentation when rendered).
    pub fn to_json(&self) -> Value {
        json!({
            "budget": self.budget,
            "effectiveBudget": self.effective_budget,
            "estimatedTokens": self.estimated_tokens,
            "omitted": self.omitted,
            "projectMdShrunk": self.project_md_shrunk,
            "planTruncationPct": number(self.plan_truncation_pct),
            "hardFailed": self.hard_failed,
            "noteInjected": self.note_injected,
        })
    }

    /// Whether REVIEWS.md lists it under `trimmed_reviewers` (§11.2).
    pub fn qualifies(&self) -> bool {
        self.hard_failed
            || !self.omitted.is_empty()
            || self.project_md_shrunk
            || self.plan_truncation_pct > 0.0
    }

    /// The rounded percent (halves up).
    pub fn rounded_pct(&self) -> i64 {
        round_half_up(self.plan_truncation_pct)
    }
}

fn number(value: f64) -> Value {
    #[allow(clippy::cast_possible_truncation)]
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

fn round_half_up(value: f64) -> i64 {
    #[allow(clippy::cast_possible_truncation)]
    let rounded = (value + 0.5).floor() as i64;
    rounded
}

/// The inputs of one trimming run (the section files' contents).
#[derive(Debug, Clone, Default)]
pub struct Sections {
    /// Instructions file.
    pub instructions: String,
    /// Roadmap file.
    pub roadmap: String,
    /// Project excerpt (empty when absent).
    pub project: String,
    /// Plans: original file name and content.
    pub plans: Vec<(String, String)>,
    /// Context (empty when absent).
    pub context: String,
    /// Research (empty when absent).
    pub research: String,
    /// Requirements (empty when absent).
    pub requirements: String,
}

/// What trimming produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Trim<'a> {
    /// The prompt fits.
    Fits {
        /// The assembled prompt.
        prompt: Prompt<'a>,
        /// Its metadata.
        metadata: Metadata,
    },
    /// Hard fail (minimum set, or the assembled prompt still over `E`).
    TooSmall(Metadata),
}

/// An assembled prompt as the pieces it is made of, in order: headings and separators, and
/// the sections' text borrowed (cut, never copied), so a lane's trimmed prompt costs no copy of
/// a large plan; it is written to its file piece by piece.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prompt<'a>(Vec<Cow<'a, str>>);

impl<'a> Prompt<'a> {
    /// Appends one block, after a blank line when it is not the first.
    fn block(&mut self, parts: impl IntoIterator<Item = Cow<'a, str>>) {
        if !self.0.is_empty() {
            self.0.push(Cow::Borrowed("\n\n"));
        }
        self.0.extend(parts);
    }

    /// The estimate of the whole prompt, `est` of its text.
    pub fn estimate(&self) -> i64 {
        let units: usize = self.0.iter().map(|piece| utf16_len(piece)).sum();
        i64::try_from(units.div_ceil(4)).unwrap_or(i64::MAX)
    }

    /// Writes the prompt's text to `out`.
    ///
    /// # Errors
    ///
    /// The write error.
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        self.0
            .iter()
            .try_for_each(|piece| out.write_all(piece.as_bytes()))
    }

    /// The prompt's text in one string (tests).
    #[cfg(test)]
    pub fn text(&self) -> String {
        self.0.concat()
    }
}

/// What the budget steps of one review share: the section files (phase form) and the prompt's
/// estimate (`--prompt-file` form), each read once, by the first budgeted lane, for all of
/// them, instead of once per lane.
#[derive(Debug, Default)]
pub struct Inputs {
    /// The section files, read once.
    sections: OnceLock<Result<Arc<Sections>, InputError>>,
    /// The estimate of `gsd-review-prompt.md`, read once.
    prompt_estimate: OnceLock<Result<i64, InputError>>,
}

/// Why the budget step could not read its inputs from the run dir (it ends
/// `budget_tool_failed` with this text).
#[derive(Debug)]
pub enum InputError {
    /// A required section file is absent.
    Missing(String),
    /// A section file could not be read.
    Unreadable {
        /// The file's name in the run dir.
        name: String,
        /// What reading it said.
        source: std::io::Error,
    },
    /// No plan file of the review is in the run dir.
    NoPlans,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Missing(name) => write!(f, "{name} is missing"),
            InputError::Unreadable { name, source } => write!(f, "reading {name}: {source}"),
            InputError::NoPlans => f.write_str("every plan file is missing"),
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InputError::Unreadable { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The trim note (§8.4).
pub fn note(budget: i64, omitted: &[String], pct: f64) -> String {
    let list = if omitted.is_empty() {
        "none".to_owned()
    } else {
        omitted.join(", ")
    };
    format!(
        "<note>\nPrompt automatically trimmed to fit a {budget}-token budget.\nOmitted sections: {list}.\nPlan content truncated by approximately {}%.\nTreat any missing context as out-of-scope rather than a review concern.\n</note>",
        round_half_up(pct)
    )
}

/// The effective budget `E = floor(B × 0.9)`.
pub fn effective(budget: i64) -> i64 {
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let e = (budget as f64 * (1.0 - MARGIN_PCT / 100.0)).floor() as i64;
    e
}

/// The trimming algorithm (§8.3) for budget `B > 0`.
pub fn trim(s: &Sections, budget: i64) -> Trim<'_> {
    let e = effective(budget);
    let minimum = est(&s.instructions)
        + est(&s.roadmap)
        + s.plans
            .iter()
            .map(|(_, p)| est(cut16(p, PLAN_FLOOR)))
            .sum::<i64>();
    let mut metadata = Metadata {
        budget,
        effective_budget: e,
        estimated_tokens: 0,
        omitted: Vec::new(),
        project_md_shrunk: false,
        plan_truncation_pct: 0.0,
        hard_failed: true,
        note_injected: false,
    };
    if minimum > e {
        return Trim::TooSmall(metadata);
    }
    metadata.hard_failed = false;
    let mut draft = Draft {
        project: &s.project,
        plans: s
            .plans
            .iter()
            .map(|(name, content)| (name.as_str(), content.as_str()))
            .collect(),
        context: &s.context,
        research: &s.research,
        requirements: &s.requirements,
    };
    let c = if draft.total(s) > e {
        e - NOTE_RESERVE
    } else {
        e
    };
    draft.shrink_project(s, c, &mut metadata);
    draft.truncate_plans(s, c, &mut metadata);
    draft.drop_optional(s, c, &mut metadata);
    let trimmed = !metadata.omitted.is_empty()
        || metadata.project_md_shrunk
        || metadata.plan_truncation_pct > 0.0;
    let notice = trimmed.then(|| note(budget, &metadata.omitted, metadata.plan_truncation_pct));
    metadata.note_injected = notice.is_some();
    let prompt = draft.render(s, notice);
    metadata.estimated_tokens = prompt.estimate();
    if metadata.estimated_tokens > e {
        metadata.hard_failed = true;
        return Trim::TooSmall(metadata);
    }
    Trim::Fits { prompt, metadata }
}

/// The sections as trimming leaves them (instructions and roadmap are never trimmed): each a
/// prefix of the section's text, or empty when omitted.
struct Draft<'a> {
    project: &'a str,
    plans: Vec<(&'a str, &'a str)>,
    context: &'a str,
    research: &'a str,
    requirements: &'a str,
}

/// The estimate of a block: its heading and content, nothing for an absent optional block.
fn cost(wrapper: &str, content: &str, required: bool) -> i64 {
    if required || !content.is_empty() {
        est(wrapper) + est(content)
    } else {
        0
    }
}

impl<'a> Draft<'a> {
    /// The estimate of the prompt this draft makes (without the trimming note).
    fn total(&self, s: &Sections) -> i64 {
        est(&s.instructions)
            + cost("## Roadmap\n\n", &s.roadmap, true)
            + cost("## Project\n\n", self.project, false)
            + cost("## Plans\n\n", "", true)
            + self
                .plans
                .iter()
                .map(|(name, content)| cost(&format!("### {name}\n\n"), content, true))
                .sum::<i64>()
            + cost("## Context\n\n", self.context, false)
            + cost("## Research\n\n", self.research, false)
            + cost("## Requirements\n\n", self.requirements, false)
    }

    /// Over `c`: PROJECT.md keeps its first [`PROJECT_LINES`] lines.
    fn shrink_project(&mut self, s: &Sections, c: i64, metadata: &mut Metadata) {
        if self.total(s) <= c || self.project.is_empty() {
            return;
        }
        let shrunk = match self.project.match_indices('\n').nth(PROJECT_LINES - 1) {
            Some((at, _)) => self.project.get(..at).unwrap_or(self.project),
            None => self.project,
        };
        if shrunk.len() != self.project.len() {
            metadata.project_md_shrunk = true;
            self.project = shrunk;
        }
    }

    /// Over `c`: the plans are cut proportionally to fit, each keeping at least [`PLAN_FLOOR`].
    fn truncate_plans(&mut self, s: &Sections, c: i64, metadata: &mut Metadata) {
        let now = self.total(s);
        if now <= c {
            return;
        }
        let m: i64 = self.plans.iter().map(|(_, p)| est(p)).sum();
        let g = c - (now - m);
        if !(0 < g && g < m) {
            return;
        }
        let o: usize = self.plans.iter().map(|(_, p)| utf16_len(p)).sum();
        #[allow(clippy::cast_precision_loss)]
        let chars = (g * 4) as f64;
        let mut new_total = 0;
        for (_, content) in &mut self.plans {
            let len = utf16_len(content);
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss
            )]
            let share = if o == 0 {
                0
            } else {
                ((len as f64 / o as f64) * chars).floor() as usize
            };
            let keep = share.max(PLAN_FLOOR);
            let cut = cut16(content, keep);
            new_total += utf16_len(cut);
            *content = cut;
        }
        if o > 0 {
            #[allow(clippy::cast_precision_loss)]
            let pct = (o - new_total) as f64 / o as f64 * 100.0;
            metadata.plan_truncation_pct = pct;
        }
    }

    /// Over `c`: context, then research, then requirements are omitted, one at a time.
    fn drop_optional(&mut self, s: &Sections, c: i64, metadata: &mut Metadata) {
        for name in ["context", "research", "requirements"] {
            let over = self.total(s) > c;
            let section = match name {
                "context" => &mut self.context,
                "research" => &mut self.research,
                _ => &mut self.requirements,
            };
            if over && !section.is_empty() {
                *section = "";
                metadata.omitted.push(name.to_owned());
            }
        }
    }

    /// The prompt: instructions, the trimming note when there is one, then the blocks.
    fn render(&self, s: &'a Sections, notice: Option<String>) -> Prompt<'a> {
        let mut prompt = Prompt::default();
        prompt.block([Cow::Borrowed(s.instructions.as_str())]);
        if let Some(notice) = notice {
            prompt.block([Cow::Owned(notice)]);
        }
        prompt.block([Cow::Borrowed("## Roadmap\n\n"), Cow::Borrowed(&s.roadmap)]);
        if !self.project.is_empty() {
            prompt.block([Cow::Borrowed("## Project\n\n"), Cow::Borrowed(self.project)]);
        }
        let mut plans = vec![Cow::Borrowed("## Plans\n\n")];
        for (index, (name, content)) in self.plans.iter().enumerate() {
            if index > 0 {
                plans.push(Cow::Borrowed("\n\n"));
            }
            plans.push(Cow::Owned(format!("### {name}\n\n")));
            plans.push(Cow::Borrowed(*content));
        }
        prompt.block(plans);
        for (heading, text) in [
            ("## Context\n\n", self.context),
            ("## Research\n\n", self.research),
            ("## Requirements\n\n", self.requirements),
        ] {
            if !text.is_empty() {
                prompt.block([Cow::Borrowed(heading), Cow::Borrowed(text)]);
            }
        }
        prompt
    }
}

/// The result of the budget step for one identity.
#[derive(Debug, Clone)]
pub enum Step {
    /// Run the lane with the prompt file [`prompt_file`] names.
    Run {
        /// Metadata (for `trimmed_reviewers`).
        metadata: Option<Metadata>,
    },
    /// Do not run: `budget_too_small` or `budget_tool_failed`.
    Skip {
        /// The refusal (reason and detail).
        refusal: Refusal,
        /// Metadata when it was written.
        metadata: Option<Metadata>,
    },
}

fn read_section(run_dir: &RunDir, name: &str, required: bool) -> Result<String, InputError> {
    let read = crate::private_fs::open_run_file_read(&run_dir.file(name)).and_then(|mut file| {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes).map(|_| bytes)
    });
    match read {
        Ok(bytes) => Ok(String::from_utf8(bytes)
            .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !required => Ok(String::new()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            Err(InputError::Missing(name.to_owned()))
        }
        Err(source) => Err(InputError::Unreadable {
            name: name.to_owned(),
            source,
        }),
    }
}

fn load_sections(run_dir: &RunDir, plan_names: &[String]) -> Result<Sections, InputError> {
    let mut plans = Vec::new();
    for name in plan_names {
        match read_section(run_dir, &super::prompt::plan_file_name(name), false)? {
            text if crate::private_fs::run_entry_exists(
                &run_dir.file(&super::prompt::plan_file_name(name)),
            ) =>
            {
                plans.push((name.clone(), text));
            }
            _ => {}
        }
    }
    if plans.is_empty() {
        return Err(InputError::NoPlans);
    }
    Ok(Sections {
        instructions: read_section(run_dir, "gsd-review-instructions.md", true)?,
        roadmap: read_section(run_dir, "gsd-review-roadmap.md", true)?,
        project: read_section(run_dir, "gsd-review-project.md", false)?,
        plans,
        context: read_section(run_dir, "gsd-review-context.md", false)?,
        research: read_section(run_dir, "gsd-review-research.md", false)?,
        requirements: read_section(run_dir, "gsd-review-requirements.md", false)?,
    })
}

fn write_metadata(run_dir: &RunDir, id: &str, metadata: &Metadata) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(&metadata.to_json()).unwrap_or_default();
    run_dir.write(
        &format!("gsd-review-prompt-{id}.metadata.json"),
        &format!("{text}\n"),
    )
}

fn too_small(run_dir: &RunDir, id: &str, metadata: Metadata) -> Step {
    let written = write_metadata(run_dir, id, &metadata)
        .and_then(|()| run_dir.write(&trimmed_prompt_name(id), ""))
        .and_then(|()| {
            run_dir
                .write(
                    &format!("gsd-review-{id}.md"),
                    &format!(
                        "{id} review skipped: prompt budget ({} tokens) too small for the minimum review set.\n",
                        metadata.budget
                    ),
                )
        });
    match written {
        Ok(()) => Step::Skip {
            refusal: Refusal::new(
                Reason::BudgetTooSmall,
                format!(
                    "prompt budget ({} tokens) too small for the minimum review set",
                    metadata.budget
                ),
            ),
            metadata: Some(metadata),
        },
        Err(failure) => tool_failed(run_dir, id, &failure.message),
    }
}

fn tool_failed(run_dir: &RunDir, id: &str, detail: &str) -> Step {
    let _ = run_dir.write(
        &format!("gsd-review-{id}.md"),
        &format!("{id} review skipped: prompt budget step failed: {detail}\n"),
    );
    Step::Skip {
        refusal: Refusal::new(Reason::BudgetToolFailed, detail.to_owned()),
        metadata: None,
    }
}

/// Runs the budget step of identity `id` (file-safe) for a phase review; the section files
/// are read once per review (`inputs`) and the trimmed prompt is written piece by piece.
pub fn phase_step(
    run_dir: &RunDir,
    id: &str,
    budget: i64,
    plan_names: &[String],
    inputs: &Inputs,
) -> Step {
    let loaded = inputs
        .sections
        .get_or_init(|| load_sections(run_dir, plan_names).map(Arc::new));
    let sections = match loaded {
        Ok(sections) => Arc::clone(sections),
        Err(err) => return tool_failed(run_dir, id, &err.to_string()),
    };
    match trim(&sections, budget) {
        Trim::TooSmall(metadata) => too_small(run_dir, id, metadata),
        Trim::Fits { prompt, metadata } => {
            let name = trimmed_prompt_name(id);
            match write_metadata(run_dir, id, &metadata)
                .and_then(|()| run_dir.write_with(&name, |file| prompt.write_to(file)))
            {
                Ok(()) => Step::Run {
                    metadata: Some(metadata),
                },
                Err(failure) => tool_failed(run_dir, id, &failure.message),
            }
        }
    }
}

/// The budget step in the `--prompt-file` form: nothing to trim, so a prompt whose estimate
/// exceeds `E` ends `budget_too_small` (never a silently truncated prompt). The prompt is read
/// once per review (`inputs`), for its estimate only.
pub fn prompt_file_step(run_dir: &RunDir, id: &str, budget: i64, inputs: &Inputs) -> Step {
    let estimate = inputs
        .prompt_estimate
        .get_or_init(|| read_section(run_dir, "gsd-review-prompt.md", true).map(|text| est(&text)));
    let estimated = match estimate {
        Ok(estimated) => *estimated,
        Err(err) => return tool_failed(run_dir, id, &err.to_string()),
    };
    let e = effective(budget);
    if estimated > e {
        return too_small(
            run_dir,
            id,
            Metadata {
                budget,
                effective_budget: e,
                estimated_tokens: estimated,
                omitted: Vec::new(),
                project_md_shrunk: false,
                plan_truncation_pct: 0.0,
                hard_failed: true,
                note_injected: false,
            },
        );
    }
    Step::Run { metadata: None }
}

/// The file the budget step of identity `id` (file-safe) writes its trimmed prompt to.
fn trimmed_prompt_name(id: &str) -> String {
    format!("gsd-review-prompt-{id}.md")
}

/// The prompt file the lane of identity `id` (file-safe) reads when its budget `B > 0`: the
/// trimmed prompt of a phase review, the run's prompt in the `--prompt-file` form. `None`
/// without a budget (the plan's default, the run's prompt).
pub fn prompt_file(run_dir: &RunDir, id: &str, budget: Option<i64>, phase: bool) -> Option<String> {
    budget.filter(|b| *b > 0)?;
    let name = if phase {
        trimmed_prompt_name(id)
    } else {
        "gsd-review-prompt.md".to_owned()
    };
    Some(run_dir.file(&name).display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_counts_utf16_units() {
        assert_eq!(est(""), 0);
        assert_eq!(est("abcd"), 1);
        assert_eq!(est("abcde"), 2);
        assert_eq!(est("😀😀"), 1); // 4 UTF-16 units
        assert_eq!(cut16("a😀b", 2), "a");
        assert_eq!(cut16("a😀b", 3), "a😀");
    }

    fn sections(plan_len: usize) -> Sections {
        Sections {
            instructions: "i".repeat(400),
            roadmap: "r".repeat(40),
            project: "p\n".repeat(100),
            plans: vec![("01-01-PLAN.md".into(), "x".repeat(plan_len))],
            context: "c".repeat(4000),
            research: "s".repeat(4000),
            requirements: "q".repeat(40),
        }
    }

    #[test]
    fn minimum_set_hard_fail() {
        match trim(&sections(2000), 200) {
            Trim::TooSmall(m) => {
                assert!(m.hard_failed);
                assert_eq!(
                    (m.budget, m.effective_budget, m.estimated_tokens),
                    (200, 180, 0)
                );
            }
            other => panic!("expected too small: {other:?}"),
        }
    }

    #[test]
    fn drops_in_order_and_notes() {
        let s = sections(2000);
        let Trim::Fits { prompt, metadata } = trim(&s, 1500) else {
            panic!("fits");
        };
        assert_eq!(metadata.omitted, vec!["context", "research"]);
        assert!(metadata.project_md_shrunk);
        assert!(metadata.note_injected);
        assert!(prompt.text().contains("<note>\nPrompt automatically trimmed to fit a 1500-token budget.\nOmitted sections: context, research.\n"));
        assert!(prompt.text().contains("## Requirements\n\nqqqq"));
        assert!(metadata.estimated_tokens <= 1350);
    }

    #[test]
    fn no_pressure_no_note() {
        let s = sections(100);
        let Trim::Fits { prompt, metadata } = trim(&s, 100_000) else {
            panic!("fits");
        };
        assert!(!metadata.qualifies());
        assert!(!prompt.text().contains("<note>"));
        assert!(prompt.text().starts_with(&"i".repeat(400)));
    }

    /// The prompt written piece by piece is the text the blocks make, joined by blank lines.
    #[test]
    fn the_prompt_is_its_blocks_in_order() {
        let s = Sections {
            instructions: "INS".into(),
            roadmap: "road".into(),
            project: "proj".into(),
            plans: vec![
                ("01-PLAN.md".into(), "one".into()),
                ("02-PLAN.md".into(), "two".into()),
            ],
            context: String::new(),
            research: "res".into(),
            requirements: "req".into(),
        };
        let Trim::Fits { prompt, metadata } = trim(&s, 100_000) else {
            panic!("fits");
        };
        let text = "INS\n\n## Roadmap\n\nroad\n\n## Project\n\nproj\n\n## Plans\n\n### 01-PLAN.md\n\none\n\n### 02-PLAN.md\n\ntwo\n\n## Research\n\nres\n\n## Requirements\n\nreq";
        assert_eq!(prompt.text(), text);
        assert_eq!(metadata.estimated_tokens, est(text));
        let mut written = Vec::new();
        prompt.write_to(&mut written).expect("write");
        assert_eq!(written, text.as_bytes());
    }

    #[test]
    fn plans_truncate_proportionally() {
        let mut s = sections(20_000);
        s.context.clear();
        s.research.clear();
        let Trim::Fits { metadata, prompt } = trim(&s, 3000) else {
            panic!("fits");
        };
        assert!(metadata.plan_truncation_pct > 0.0);
        assert!(prompt
            .text()
            .contains("Plan content truncated by approximately"));
    }
}
