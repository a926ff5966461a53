//! Resuming a code-review call (`code-review --resume [RUN_DIR]`) the way `review --resume`
//! resumes a review (decisions.md row 19: the same run machinery). The lanes of a call run as a
//! `review --prompt-file <call dir>/gsd-review-prompt.md`, which gsd-lane records in its own
//! ledger; resuming the call resumes that review run with its rules: the recorded lanes and the
//! recorded request (its hash is checked against gsd-lane's own record), finished lanes kept.
//!
//! What a lane could have written is checked here before anything is read or run: the call's
//! run dir must still be this user's private dir, its request a regular file of at most
//! [`MAX_REQUEST_BYTES`] read without following a link, and the request must name the
//! repository gsd-lane runs in (the findings are read against it).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::hygiene::{self, RepoRoot};
use super::prompt::PROMPT_FILE;
use super::reason::{Rejection, WholeReason};
use crate::context::Context;
use crate::output::neutralize;
use crate::private_fs;
use crate::review::ledger::{self, Ledger};
use crate::review::record::{RunRecord, SubjectKey};

/// Largest request a resumed call reads: what [`super::prompt::render`] can write for the
/// largest accepted list (every path at its longest), and room for the rest of the text.
pub const MAX_REQUEST_BYTES: u64 =
    (hygiene::MAX_FILES as u64) * (hygiene::MAX_PATH_BYTES as u64 + 3) + 16 * 1024;

/// Most damaged records named one by one in a refusal (the rest are counted).
const MAX_NAMED_DAMAGE: usize = 3;

/// The review run dir `--resume [RUN_DIR]` continues, found in gsd-lane's own records
/// (`$GSD_HOME/.gsd/runs`): RUN_DIR itself when it is a recorded review run dir (what `review`
/// printed as "resume with"); else the newest recorded run of the call whose run dir RUN_DIR
/// is (its `runDir`); without RUN_DIR, the newest recorded code-review call started in this
/// directory. The review stages then check that run in full (`review --resume`).
///
/// # Errors
///
/// `selection_failed`: the records cannot be used, one of them cannot be read (which run to
/// continue cannot be decided then: fail closed, naming the file, why and the fix), or no
/// recorded run matches.
pub fn lookup(context: &Context, given: &str) -> Result<String, Rejection> {
    let refuse = |detail: String| Rejection::new(WholeReason::SelectionFailed, detail);
    let root = ledger::root(&context.env).map_err(|failure| refuse(failure.message))?;
    let call_prompt = (!given.is_empty()).then(|| context.env.cwd.join(given).join(PROMPT_FILE));
    if !given.is_empty() {
        let recorded = context
            .env
            .cwd
            .join(given)
            .canonicalize()
            .is_ok_and(|real| Ledger::of(&root, &real).dir.is_dir());
        if recorded {
            return Ok(given.to_owned());
        }
    }
    if std::fs::symlink_metadata(&root).is_ok() {
        ledger::check_root(&root).map_err(|failure| refuse(failure.message))?;
    }
    let mut damaged = Vec::new();
    let mut newest: Option<RunRecord> = None;
    for entry in ledger::entries(&root) {
        let record = match RunRecord::read(&entry.record_path()) {
            Ok(record) => record,
            Err(failure) => {
                damaged.push(failure.message);
                continue;
            }
        };
        let SubjectKey::PromptFile { path } = &record.subject else {
            continue;
        };
        let matches = match &call_prompt {
            Some(prompt) => path == prompt,
            None => {
                record.cwd == context.env.cwd
                    && path.file_name().is_some_and(|name| name == PROMPT_FILE)
            }
        };
        if matches
            && newest
                .as_ref()
                .is_none_or(|n| record.created_ms > n.created_ms)
        {
            newest = Some(record);
        }
    }
    if let Some(first) = damaged.first() {
        let more = damaged.len() - 1;
        let named = damaged
            .iter()
            .skip(1)
            .take(MAX_NAMED_DAMAGE - 1)
            .map(String::as_str)
            .collect::<Vec<_>>();
        return Err(refuse(format!(
            "cannot resume: gsd-lane's own record of a run cannot be read, so which run to continue cannot be decided: {first}{}{}; nothing was run. Remove that record's folder under {} if it is not the run to continue (`gsd-lane runs` lists the readable ones), or start a new code-review",
            if named.is_empty() { String::new() } else { format!("; {}", named.join("; ")) },
            if more >= MAX_NAMED_DAMAGE {
                format!(" (and {} more)", more + 1 - MAX_NAMED_DAMAGE)
            } else {
                String::new()
            },
            root.display()
        )));
    }
    newest
        .map(|record| record.run_dir.display().to_string())
        .ok_or_else(|| {
            refuse(format!(
                "no code-review call to resume in {} for {}; `gsd-lane runs` lists past runs",
                root.display(),
                match &call_prompt {
                    Some(prompt) => neutralize(&prompt.display().to_string()),
                    None => format!(
                        "the working directory {}",
                        neutralize(&context.env.cwd.display().to_string())
                    ),
                }
            ))
        })
}

/// A resumed call, checked: its run dir, its request and the repository it reviews.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The call's run dir (the lanes' review copies go there again).
    pub run_dir: PathBuf,
    /// Its request, as recorded.
    pub prompt_path: PathBuf,
    /// The repository root the request names (the findings are read against it), which is
    /// the one gsd-lane runs in.
    pub root: RepoRoot,
}

/// Checks the request the recorded run reviewed (`prompt_file`, from gsd-lane's own record)
/// before any lane runs: it must be a code-review request in a private run dir of this user,
/// a regular file of at most [`MAX_REQUEST_BYTES`], naming `root` as its repository.
///
/// # Errors
///
/// `selection_failed` for a run that is no code-review call; `invalid_paths` for a run dir or
/// request a lane (or anyone) changed, or a request for another repository; each naming the
/// file, what is wrong and the fix.
pub fn check_call(
    context: &Context,
    prompt_file: Option<&str>,
    review_dir: &Path,
    root: &RepoRoot,
) -> Result<Call, Rejection> {
    let shown_review = neutralize(&review_dir.display().to_string());
    let prompt_path = prompt_file.map(|file| context.env.cwd.join(file));
    let Some((prompt_path, run_dir)) = prompt_path
        .filter(|path| path.file_name().is_some_and(|name| name == PROMPT_FILE))
        .and_then(|path| path.parent().map(|dir| (path.clone(), dir.to_owned())))
    else {
        return Err(Rejection::new(
            WholeReason::SelectionFailed,
            format!(
                "cannot resume {shown_review}: it is a review run, not a code-review call; continue it with `gsd-lane review --resume {shown_review}`, or name the call's run dir: `gsd-lane code-review --resume <runDir>`"
            ),
        ));
    };
    let invalid = |what: String| {
        Rejection::new(
            WholeReason::InvalidPaths,
            format!("cannot resume: {what}; nothing was run (start a new code-review)"),
        )
    };
    private_fs::check_given_dir(&run_dir, private_fs::Sharing::Private)
        .map_err(|err| invalid(err.to_string()))?;
    let text = read_request(&prompt_path).map_err(|why| {
        invalid(format!(
            "the request {} {why}",
            neutralize(&prompt_path.display().to_string())
        ))
    })?;
    let named = text
        .lines()
        .find_map(|line| line.strip_prefix("Repository root: "));
    let named_root = named.and_then(|named| RepoRoot::open(Path::new(named)).ok());
    let Some(named_root) = named_root.filter(|named| named.real == root.real) else {
        return Err(invalid(format!(
            "the request {} reviews the repository {}, and gsd-lane runs in {}; run the resume from inside that repository",
            neutralize(&prompt_path.display().to_string()),
            neutralize(named.unwrap_or("(none named)")),
            root.real.display()
        )));
    };
    Ok(Call {
        run_dir,
        prompt_path,
        root: named_root,
    })
}

/// Why a request cannot be read as one (the text after its name).
#[derive(Debug)]
enum Unreadable {
    /// Opening or reading it failed (a link, a FIFO, gone).
    Io(std::io::Error),
    /// Longer than [`MAX_REQUEST_BYTES`].
    TooLarge,
    /// Not UTF-8.
    NotText,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::Io(err) => write!(f, "cannot be read: {err}"),
            Unreadable::TooLarge => write!(
                f,
                "is larger than {MAX_REQUEST_BYTES} bytes, more than gsd-lane ever writes"
            ),
            Unreadable::NotText => f.write_str("is not UTF-8 text, which gsd-lane always writes"),
        }
    }
}

/// The request at `path`: opened without following a link or blocking on a FIFO, a regular
/// file, at most [`MAX_REQUEST_BYTES`] read.
fn read_request(path: &Path) -> Result<String, Unreadable> {
    let file = private_fs::open_run_file_read(path).map_err(Unreadable::Io)?;
    let mut bytes = Vec::new();
    file.take(MAX_REQUEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(Unreadable::Io)?;
    if bytes.len() as u64 > MAX_REQUEST_BYTES {
        return Err(Unreadable::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| Unreadable::NotText)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_read_bounded_and_never_through_a_link() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join(PROMPT_FILE);
        std::fs::write(&path, "Repository root: /r\n").expect("write");
        assert_eq!(read_request(&path).expect("read"), "Repository root: /r\n");
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&path, &link).expect("link");
        assert!(matches!(read_request(&link), Err(Unreadable::Io(_))));
        let big = std::fs::File::create(&path).expect("big");
        big.set_len(MAX_REQUEST_BYTES + 1).expect("len");
        assert!(matches!(read_request(&path), Err(Unreadable::TooLarge)));
        std::fs::write(&path, b"\xff\xfe").expect("binary");
        assert!(matches!(read_request(&path), Err(Unreadable::NotText)));
    }
}
