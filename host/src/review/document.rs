//! Stage 6 of a review: the document (review-workflow.md §11-§12). REVIEWS.md from the
//! results (never replacing a real review with a run that has none), the summary, the run dir
//! removed or kept with the way to resume, and the exit.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::exit::Exit;
use super::full_review;
use super::lane_facts;
use super::notice::Notices;
use super::prepared::say_kept;
use super::preserve::{self, Kept, Placement};
use super::progress::{self, Mode, RULE};
use super::results::Results;
use super::reviews_md::{self, Doc, Entry, Fate, Overflow, Whole};
use super::rundir::{self, RunDir};
use super::runner::{Done, Job, LaneResult};
use super::subject::Subject;
use super::{conflicts_slot, coverage};
use crate::error::Failure;
use crate::output::{self, neutralize};
use crate::verdict::model::Verdict as PanelVerdict;
use crate::verdict::Panel;

/// Writes REVIEWS.md and the summary; returns how the review ended.
///
/// # Errors
///
/// REVIEWS.md cannot be written.
pub fn finish(
    subject: &Subject,
    run_dir: &RunDir,
    done: &Results,
    not_run: Vec<Entry>,
    panel: &Panel,
) -> Result<Exit, Failure> {
    let notices = &done.notices;
    // An explicitly named identity that could not run (§9): no REVIEWS.md.
    if report_explicit_failures(done) && !done.interrupted {
        say_kept(notices, run_dir);
        return Ok(Exit::ExplicitFailed);
    }
    let mut entries: Vec<Entry> = done
        .jobs
        .iter()
        .zip(&done.results)
        .map(|(job, result)| entry_of(done, job, result))
        .collect();
    entries.extend(not_run);
    let real = done
        .results
        .iter()
        .filter(|r| matches!(r.done, Done::Ran { stubbed: false }))
        .count();
    // No lane result (decisions.md row 20): no REVIEWS.md, the diagnostics saved beside it.
    if real == 0 && !done.interrupted {
        return Ok(super::no_result::finish(
            subject.output(),
            run_dir,
            done,
            &entries,
        ));
    }
    let (phase, plans) = subject.phase_and_plans();
    let reviewed_at = reviews_md::utc_now();
    // Decisions.md #14 and issue 21: no review of the earlier file is lost to this run.
    let wanted = subject.output();
    // The earlier file's plan-revision conflicts slot (upstream #3916); malformed, it blocks.
    let slot = conflicts_slot::read(wanted).inspect_err(|_| say_kept(notices, run_dir))?;
    // Read before it is replaced or set aside: which whole-review files it named (the sweep
    // below removes only those).
    let before = preserve::Previous::read(wanted);
    let (output_path, earlier) = placed(wanted, real, &entries, &reviewed_at);
    let copies = overflow(done, run_dir, &output_path, &mut entries);
    let not_run = entries
        .iter()
        .filter(|e| matches!(e.fate, Fate::NotRun { .. }))
        .count();
    let doc = Doc {
        phase,
        subject: subject.label(),
        reviewed_at,
        plans,
        entries,
        earlier,
        sandbox: Some(crate::sandbox::policy::summary(done.sandbox)),
        repository_note: done.repository_note.clone(),
    };
    // The panel verdict (issue 23), computed from the very text written, at its top.
    let grades = coverage::grade(subject, &doc, notices);
    // The panel says its own warning when it cannot read the text back: coverage comes first.
    notices.flush();
    let text = coverage::into_frontmatter(
        reviews_md::render(&doc),
        &coverage::frontmatter(&grades, reviews_md::scalar),
    );
    let (text, panel_verdict) = panel.apply(text);
    let text = conflicts_slot::place(text, &slot);
    // The whole reviews first: REVIEWS.md never names a file that is not there.
    for copy in &copies {
        full_review::place(&copy.source, &copy.sha256, &copy.spill, &copy.target)
            .inspect_err(|_| say_kept(notices, run_dir))?;
    }
    rundir::write_atomic(&output_path, &text).inspect_err(|_| say_kept(notices, run_dir))?;
    if output_path == wanted {
        let reviewed: Vec<String> = doc
            .entries
            .iter()
            .filter(|e| matches!(e.fate, Fate::Ran { stubbed: false, .. }))
            .filter(|e| {
                let file = full_review::path_for(wanted, &e.id);
                let file = file.file_name().unwrap_or_default().to_string_lossy();
                before.section_names_whole_file(&e.heading(), &file)
            })
            .map(|e| e.id.clone())
            .collect();
        for stale in full_review::sweep_stale(&output_path, &text, &reviewed) {
            notices.review(stale.to_string());
        }
    }
    let exit = panel.exit(
        Exit::written(done.interrupted, real),
        panel_verdict.as_ref(),
    );
    let mut verdict = Verdict::of(done.interrupted, real, done.jobs.len());
    if verdict == Verdict::Complete && (not_run > 0 || !doc.earlier.carried.is_empty()) {
        verdict = Verdict::Partial;
    }
    let summary = Summary {
        subject,
        run_dir,
        output: &output_path,
        count: real,
        exit,
        verdict,
        doc: &doc,
        panel: panel_verdict.as_ref(),
    };
    summary.print(done);
    if output_path != wanted {
        notices.review(format!(
            "{} was kept (it holds a review this run did not reproduce); this run's result is {}",
            wanted.display(),
            output_path.display()
        ));
    }
    close(run_dir, done, exit);
    Ok(exit)
}

/// Where this run's REVIEWS.md goes and what it keeps of the earlier one ([`preserve::place`]).
fn placed(wanted: &Path, real: usize, entries: &[Entry], stamp: &str) -> (PathBuf, Kept) {
    let reproduced: Vec<String> = entries
        .iter()
        .filter(|e| matches!(e.fate, Fate::Ran { stubbed: false, .. }))
        .map(Entry::heading)
        .collect();
    match preserve::place(wanted, real, &reproduced, stamp) {
        Placement::Replace(kept) => (wanted.to_owned(), kept),
        Placement::Beside => (preserve::failed_path(wanted), Kept::default()),
    }
}

/// A whole review to copy beside REVIEWS.md: the run dir's review file, the hash the journal
/// recorded for it, and the target.
struct FullCopy {
    source: PathBuf,
    sha256: String,
    /// The whole review as written while it was read, when it was.
    spill: super::spill::SpillSlot,
    target: PathBuf,
}

/// Marks every entry whose review is over `review.max_inline_bytes` with where the whole of
/// it goes (beside `output`), and returns the copies to make.
fn overflow(
    done: &Results,
    run_dir: &RunDir,
    output: &Path,
    entries: &mut [Entry],
) -> Vec<FullCopy> {
    let mut copies = Vec::new();
    for entry in entries.iter_mut() {
        if !matches!(entry.fate, Fate::Ran { .. } | Fate::BudgetFailed { .. }) {
            continue;
        }
        let Some(review) = done.reviews.get(&entry.id).filter(|r| r.is_cut()) else {
            continue;
        };
        let real = matches!(entry.fate, Fate::Ran { stubbed: false, .. });
        let whole = match (&review.sha256, real) {
            (_, false) => Whole::RunDir,
            (None, true) => Whole::TooLarge,
            (Some(sha256), true) => {
                let target = full_review::path_for(output, &entry.id);
                let name = target
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                copies.push(FullCopy {
                    source: super::resume::review_path(&run_dir.path, &entry.id),
                    sha256: sha256.clone(),
                    spill: review.spill.clone(),
                    target,
                });
                Whole::Beside(name)
            }
        };
        entry.full = Some(Overflow {
            total: review.total,
            shown: u64::try_from(review.shown_len()).unwrap_or(u64::MAX),
            whole,
        });
    }
    copies
}

/// Reports every explicitly named identity that could not run; true when there was one.
fn report_explicit_failures(done: &Results) -> bool {
    let mut any = false;
    for (job, result) in done.jobs.iter().zip(&done.results) {
        if let (true, Done::Budget(refusal) | Done::Unavailable(refusal)) =
            (job.explicit, &result.done)
        {
            done.notices.error(format!(
                "explicit reviewer '{}' could not run ({}: {})",
                job.identity.id,
                refusal.reason,
                neutralize(&refusal.detail)
            ));
            any = true;
        }
    }
    any
}

/// The REVIEWS.md entry of one identity's result: its review as the bytes whose hash was
/// journaled ([`Results::review_text`]), never the file read again.
fn entry_of(done: &Results, job: &Job, result: &LaneResult) -> Entry {
    let id = &job.identity.id;
    let fate = match &result.done {
        Done::Ran { stubbed } => Fate::Ran {
            stubbed: *stubbed,
            content: done.review_text(id),
        },
        Done::Budget(_) => Fate::BudgetFailed {
            content: done.review_text(id),
        },
        Done::Unavailable(refusal) => Fate::NotRun {
            reason: refusal.reason.to_string(),
        },
        Done::Cancelled => Fate::NotRun {
            reason: "cancelled".to_owned(),
        },
        Done::Interrupted => Fate::Interrupted {
            content: format!(
                "{id} review not completed: the review run was interrupted (SIGINT/SIGTERM) {}.",
                if result.started {
                    "before this reviewer finished"
                } else {
                    "before this reviewer started"
                }
            ),
        },
    };
    let mut entry = lane_facts::entry(&job.identity, &job.lane, result.metadata.clone(), fate);
    entry.model = Some(super::model_record::of_result(
        result.model.as_ref(),
        &job.cleared.plan,
        &job.lane,
    ));
    entry
}

/// A clean review removes its run dir; any other keeps it, with the way to resume.
fn close(run_dir: &RunDir, done: &Results, exit: Exit) {
    let resumable = done
        .results
        .iter()
        .any(|r| !matches!(r.done, Done::Ran { stubbed: false }));
    if exit.status() == 0 && !resumable {
        run_dir.remove();
        return;
    }
    let notices = &done.notices;
    notices.review(format!(
        "resume with: gsd-lane review --resume {}",
        run_dir.path.display()
    ));
    if done.interrupted {
        notices.review("interrupted; unfinished reviewers are marked not completed");
    }
    say_kept(notices, run_dir);
}

/// How the run went, for the banner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Every reviewer that ran produced a real review.
    Complete,
    /// Some did, some did not (stub, budget failure, unavailable at run time).
    Partial,
    /// None did.
    Failed,
    /// Ctrl-C or SIGTERM.
    Interrupted,
}

impl Verdict {
    fn of(interrupted: bool, real: usize, identities: usize) -> Verdict {
        if interrupted {
            Verdict::Interrupted
        } else if real == 0 {
            Verdict::Failed
        } else if real < identities {
            Verdict::Partial
        } else {
            Verdict::Complete
        }
    }

    fn title(self) -> &'static str {
        match self {
            Verdict::Complete => "REVIEW COMPLETE",
            Verdict::Partial => "REVIEW PARTIAL",
            Verdict::Failed => "REVIEW FAILED",
            Verdict::Interrupted => "REVIEW INTERRUPTED",
        }
    }
}

/// The closing summary of a review that wrote REVIEWS.md.
struct Summary<'a> {
    subject: &'a Subject,
    run_dir: &'a RunDir,
    output: &'a Path,
    count: usize,
    exit: Exit,
    verdict: Verdict,
    /// The document written (what was not run, what was kept of the earlier file).
    doc: &'a Doc,
    /// The panel verdict, when it could be computed.
    panel: Option<&'a PanelVerdict>,
}

impl Summary<'_> {
    /// The `complete` event (`--json`) or the banner, then where REVIEWS.md went.
    fn print(&self, done: &Results) {
        // What was said before (plan coverage) is on the terminal before the banner.
        done.notices.flush();
        if done.mode == Mode::Json {
            self.event(done.interrupted, &done.notices);
        } else {
            output::print(&self.banner());
        }
        done.notices
            .review(format!("wrote {}", self.output.display()));
    }

    /// The `complete` event (with the panel's `verdict` event before it); its `notices` are
    /// the notices printed on stderr before it.
    fn event(&self, interrupted: bool, notices: &Notices) {
        if let Some(panel) = self.panel {
            progress::event(&crate::verdict::event(panel));
        }
        let status = self.exit.status();
        progress::event(&json!({
            "event": "complete",
            "reviews": self.output,
            "count": self.count,
            "status": status,
            "interrupted": interrupted,
            "verdict": self.verdict.title().trim_start_matches("REVIEW ").to_lowercase(),
            "run_dir": (status != 0).then(|| self.run_dir.path.clone()),
            "not_run": self.not_run(),
            "kept_earlier": self.doc.earlier.carried.iter().map(|c| c.label()).collect::<Vec<_>>(),
            "earlier_file": self.doc.earlier.set_aside.as_ref().map(|(name, _)| name),
            "notices": notices.shown(),
        }));
    }

    /// `Section (reason)` of every identity that did not run.
    fn not_run(&self) -> Vec<String> {
        self.doc
            .entries
            .iter()
            .filter_map(|e| match &e.fate {
                Fate::NotRun { reason } => Some(format!("{} ({reason})", e.display())),
                _ => None,
            })
            .collect()
    }

    /// The banner's lines on what did not run and what was kept of the earlier file.
    fn caveats(&self) -> String {
        let mut text = String::new();
        let not_run = self.not_run();
        if !not_run.is_empty() {
            text.push_str(&format!("Not run: {}\n", neutralize(&not_run.join(", "))));
        }
        let kept = &self.doc.earlier;
        if !kept.carried.is_empty() {
            let labels: Vec<String> = kept.carried.iter().map(|c| c.label()).collect();
            text.push_str(&format!(
                "Kept from the earlier run (not reproduced by this one): {}\n",
                neutralize(&labels.join(", "))
            ));
        }
        if let Some((name, _)) = &kept.set_aside {
            text.push_str(&format!(
                "The earlier review file is kept whole as {name}.\n"
            ));
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text
    }

    fn banner(&self) -> String {
        let title = self.verdict.title();
        let mut text = format!("{RULE}\n GSD ► {title}\n{RULE}\n\n");
        if let Some(line) = self.panel.and_then(crate::verdict::degraded_line) {
            text.push_str(&line);
        }
        text.push_str(&self.caveats());
        let reviewers = reviewers(self.count);
        match self.subject {
            Subject::Phase(p) => text.push_str(&format!(
                "Phase {} reviewed by {reviewers}.\n\nFull review: {}\n\nTo incorporate feedback into planning:\n  /gsd:plan-phase {} --reviews\n",
                p.arg,
                self.output
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                p.arg
            )),
            Subject::PromptFile { name, .. } => text.push_str(&format!(
                "{name} reviewed by {reviewers}.\n\nFull review: {}\n",
                self.output.display()
            )),
        }
        text
    }
}

/// `1 reviewer`, `2 reviewers`: lanes are not all AI (the example lane, coderabbit's diff
/// checks), so the summary counts reviewers, not "AI systems".
fn reviewers(count: usize) -> String {
    if count == 1 {
        "1 reviewer".to_owned()
    } else {
        format!("{count} reviewers")
    }
}
