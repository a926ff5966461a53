//! The panel verdict of a 10 MB REVIEWS.md with 1,000 citations (issue 23: under 100 ms, bounded
//! memory). Five reviewer sections of prose, bullet lists, fenced code holding look-alike
//! tokens, a table every 20 blocks, and concern bullets; the citations point into a generated repository of 100 files.
//! Prints the median, min and max of repeated computations and the peak RSS growth of one
//! (Linux: `/proc/self/clear_refs` and `VmHWM`; skipped elsewhere).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, missing_docs)]

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use gsd_lane::api::verdict::{compute, Repo};

const REVIEWERS: usize = 5;
const CITATIONS: usize = 1_000;
const TARGET_BYTES: usize = 10 << 20;
const FILES: usize = 100;
const FILE_LINES: usize = 500;

fn repository(root: &Path) {
    for f in 0..FILES {
        let dir = root.join(format!("src/mod{}", f % 10));
        std::fs::create_dir_all(&dir).expect("dir");
        let body: String = (1..=FILE_LINES).map(|i| format!("// line {i}\n")).collect();
        std::fs::write(dir.join(format!("file{f}.rs")), body).expect("file");
    }
}

fn document() -> String {
    let ids: Vec<String> = (0..REVIEWERS).map(|r| format!("lane-{r}")).collect();
    let mut doc = format!(
        "---\nphase: 3\nreviewers: [{}]\nreviewed_at: 2026-12-04T00:00:00.000Z\nplans_reviewed: [03-01-PLAN.md]\n---\n\n# Cross-AI Plan Review — Phase 3\n\n",
        ids.join(", ")
    );
    let per_reviewer = CITATIONS / REVIEWERS;
    let filler_target = TARGET_BYTES / REVIEWERS;
    for (r, id) in ids.iter().enumerate() {
        let start = doc.len();
        writeln!(doc, "## Lane{r} Review\n\n### Summary\n").unwrap();
        writeln!(doc, "### Concerns\n").unwrap();
        for c in 0..per_reviewer {
            let f = (c * 7 + r) % FILES;
            let line = (c * 13) % (FILE_LINES - 5) + 1;
            let level = ["HIGH", "MEDIUM", "LOW"][c % 3];
            writeln!(
                doc,
                "- **{level}** — concern {c} of {id}: the guard at `src/mod{}/file{f}.rs:{line}-{}` is bypassed.",
                f % 10,
                line + 3
            )
            .unwrap();
        }
        writeln!(doc, "\n### Risk Assessment\n\n**MEDIUM** — see above.\n").unwrap();
        let mut n = 0;
        while doc.len() - start < filler_target {
            n += 1;
            // The mix of a long review: mostly prose and bullet lists, some fenced code holding
            // look-alike tokens, a table now and then.
            match n % 20 {
                0 => writeln!(doc, "| Plan | Note |\n|---|---|\n| 03-0{} | plain words about plan line {n} at 12:30 |\n", n % 9).unwrap(),
                1 | 7 | 13 => writeln!(doc, "```rust\n// - HIGH src/fake.rs:{n} **Risk Assessment:** HIGH\nfn f{n}() {{}}\n```\n").unwrap(),
                2 | 5 | 9 | 15 => writeln!(doc, "- point {n}: the plan's step restated\n  - a nested detail with `code`\n- another point, *emphasised*\n").unwrap(),
                _ => writeln!(doc, "Paragraph {n} restates the plan's intent in ordinary prose without any citation, the way long reviews do, with *emphasis* and `code` here and there.\n").unwrap(),
            }
        }
        doc.push_str("---\n\n");
    }
    doc.push_str("## Consensus Summary\n\n### Agreed Concerns\n");
    doc
}

/// CPU time of this thread (what the computation used, whatever else the machine runs).
#[allow(unsafe_code)]
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

fn status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    repository(dir.path());
    let text = document();
    let repo = Repo::new(dir.path());
    let check = compute(&text, &repo, 2).expect("a REVIEWS.md");
    let found: usize = check
        .verdict
        .reviewers
        .iter()
        .map(|r| r.citations.found)
        .sum();
    let verified: usize = check
        .verdict
        .reviewers
        .iter()
        .map(|r| r.citations.verified)
        .sum();
    assert_eq!(found, CITATIONS, "citations found");
    assert_eq!(verified, CITATIONS, "citations verified");
    let runs = 20;
    let (mut wall, mut cpu): (Vec<Duration>, Vec<Duration>) = (0..runs)
        .map(|_| {
            let repo = Repo::new(dir.path());
            let (start, start_cpu) = (Instant::now(), thread_cpu());
            let computed = compute(&text, &repo, 2).expect("verdict");
            let times = (start.elapsed(), thread_cpu().saturating_sub(start_cpu));
            assert!(computed.verdict.quorum.met);
            times
        })
        .unzip();
    wall.sort();
    cpu.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let label = format!(
        "verdict, {:.1} MB REVIEWS.md, {REVIEWERS} reviewers, {CITATIONS} citations into {FILES} files",
        text.len() as f64 / 1e6
    );
    println!(
        "{label}, wall         median {:>7.1} ms   min {:>7.1} ms   max {:>7.1} ms   ({runs} runs)",
        ms(wall[runs / 2]),
        ms(wall[0]),
        ms(wall[runs - 1]),
    );
    println!(
        "{label}, thread CPU   median {:>7.1} ms   min {:>7.1} ms   max {:>7.1} ms   ({runs} runs)",
        ms(cpu[runs / 2]),
        ms(cpu[0]),
        ms(cpu[runs - 1]),
    );
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("verdict bench machine load average: {}", load.trim());
    }
    if std::fs::write("/proc/self/clear_refs", "5").is_ok() {
        let before = status_kib("VmRSS:").unwrap_or(0);
        let computed = compute(&text, &Repo::new(dir.path()), 2).expect("verdict");
        let peak = status_kib("VmHWM:").unwrap_or(0);
        drop(computed);
        println!(
            "verdict peak RSS growth for one computation: {:.1} MiB (the document itself: {:.1} MiB)",
            peak.saturating_sub(before) as f64 / 1024.0,
            text.len() as f64 / f64::from(1 << 20)
        );
    }
}
