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

/// Largest request a resumed call reads: what [`super::prompt::render`] can write for the
/// largest accepted list (every path at its longest), and room for the rest of the text.
pub const MAX_REQUEST_BYTES: u64 =
    (hygiene::MAX_FILES as u64) * (hygiene::MAX_PATH_BYTES as u64 + 3) + 16 * 1024;

/// How the review stages find the run to continue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// `ReviewArgs::resume`: a review run dir, or empty (the newest matching run).
    pub resume: String,
    /// `ReviewArgs::prompt_file`: the request of a named call dir (the run recorded with it).
    pub prompt_file: Option<String>,
}

/// Where `--resume [RUN_DIR]` points: nothing (the newest run started in this directory), a
/// review run dir gsd-lane recorded (what `review` printed as "resume with"), or the call's run
/// dir (its `runDir`), whose request names the recorded run.
pub fn lookup(context: &Context, given: &str) -> Lookup {
    if given.is_empty() {
        return Lookup {
            resume: String::new(),
            prompt_file: None,
        };
    }
    let dir = context.env.cwd.join(given);
    let recorded = crate::review::ledger::root(&context.env)
        .ok()
        .zip(dir.canonicalize().ok())
        .is_some_and(|(root, real)| {
            crate::review::ledger::Ledger::of(&root, &real)
                .dir
                .symlink_metadata()
                .is_ok_and(|meta| meta.is_dir())
        });
    if recorded {
        Lookup {
            resume: given.to_owned(),
            prompt_file: None,
        }
    } else {
        Lookup {
            resume: String::new(),
            prompt_file: Some(dir.join(PROMPT_FILE).display().to_string()),
        }
    }
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
    private_fs::check_given_dir(&run_dir, private_fs::Sharing::Private).map_err(&invalid)?;
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
