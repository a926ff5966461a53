//! `antigravity`: the `agy` CLI with three output layers and a stale-response watermark
//! (invocation.md §11.2).
//!
//! Order of one run: take the workspace lock, take the watermark, adjust argv (antigravity
//! prompt variant, `--add-dir` when `agy --help` mentions it), spawn the lane, then recover the
//! review from stdout (exit 0 only), else from the transcript lines written after the watermark,
//! stamp a blind review, and, when nothing is left, return the handler's own diagnostic stub.
//! The lock is held until the transcript fallback has been read, so concurrent reviews of one
//! repository never read each other's responses.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gsd_lane_sdk::{
    Effects, FileRead, Handler, HandlerError, HandlerName, HandlerOutput, LaneRequest, SpawnPlan,
    SpawnReport, SpawnRequest, StdoutSink, Transport,
};
use serde_json::Value;

/// Largest stdout kept in memory (the §8 capture cap).
const STDOUT_CAP: usize = 64 << 20;
/// Largest `agy --help` output kept.
const HELP_CAP: usize = 1 << 20;
/// Bound of the `agy --help` run.
const HELP_TIMEOUT: Duration = Duration::from_millis(5000);
/// Largest transcript read.
const TRANSCRIPT_CAP: u64 = 64 << 20;
/// Largest conversation cache read.
const CACHE_CAP: u64 = 8 << 20;
/// Largest CLI log read.
const LOG_CAP: u64 = 8 << 20;
/// Largest stderr sidecar read back for the stub (the §8 cap plus the spawn-error line).
const SIDECAR_CAP: u64 = (64 << 20) + 4096;
/// Lines of stderr shown in the stub.
const STDERR_TAIL: usize = 20;
/// Matching log lines shown in the stub.
const LOG_TAIL: usize = 3;

/// The self-report marker a blind reviewer is asked to print.
const SELF_REPORT: &str = "REVIEWED-WITHOUT-REPO-ACCESS";
/// The stamp prepended to a blind review (then an empty line).
const STAMP_LINE: &str = "> [reviewed-without-repo-access] This reviewer ran without visibility into the repo under review \u{2014} down-weight its verdict in the Consensus Summary.";
/// The path the scratch-dir tell looks for.
const SCRATCH: &[u8] = b"antigravity-cli/scratch";
/// Most characters between the workspace phrase and the scratch path.
const SCRATCH_GAP: usize = 40;

/// First line of the diagnostic stub.
const STUB_HEAD: &str = "Antigravity review failed or returned empty output.";
/// Header of the log hint.
const LOG_HINT_HEAD: &str = "agy log hint (pinned model may be unavailable \u{2014} run 'agy models' and set review.models.agy):";
/// Header of the stderr tail (a gsd-lane addition).
const STDERR_HEAD: &str = "stderr (last 20 lines):";
/// Last line of the diagnostic stub when no session started ([`FailureMode::PreSessionStall`]).
const STUB_TAIL: &str = "If no agy run started, that is the pre-session-stall case: check whether a new ~/.gemini/antigravity-cli/brain/<conv-id>/ dir appeared within ~30s of launch.";
/// Last line of the diagnostic stub when a session started ([`FailureMode::SessionStarted`]).
const STUB_TAIL_STARTED: &str = "An agy session started (the workspace's conversation changed, its transcript grew, or it could not be checked) but left no review: the model may have ended its turn without a final message, or a pinned model may be unavailable \u{2014} check the log hint above and 'agy models'.";
/// Keys never looked into for a transcript entry's `model` (upstream #3649).
const PROTO_KEYS: [&str; 3] = ["__proto__", "constructor", "prototype"];

/// Why the diagnostic stub was written (upstream #4184, §10.6): it picks the stub's last line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureMode {
    /// The conversation id changed, the transcript grew past the watermark, or the transcript
    /// could not be read (a stall is never claimed over a file that could not be checked).
    SessionStarted,
    /// Otherwise: agy never got a session going.
    PreSessionStall,
}
/// Case-insensitive needles of the log hint.
const LOG_NEEDLES: [&[u8]; 3] = [b"agent executor error", b"NOT_FOUND", b"Publisher model"];

/// The `antigravity` handler: lock, watermark, argv adjustment, three output layers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Antigravity;

/// How much of the workspace's transcript existed before the run (§11.2.2).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Watermark {
    /// Conversation id of the workspace, empty when there was none.
    pub conv_id: String,
    /// Non-blank transcript lines that existed before the run.
    pub lines: usize,
    /// The transcript existed but could not be read.
    pub unreadable: bool,
}

impl Handler for Antigravity {
    fn name(&self) -> HandlerName {
        HandlerName::new("antigravity")
    }

    fn describe(&self) -> &'static str {
        "runs agy with a workspace lock, recovers the review from stdout or post-watermark \
         transcript lines, and stamps blind reviews"
    }

    fn transport(&self) -> Transport {
        Transport::Spawn
    }

    fn run(
        &self,
        effects: &dyn Effects,
        request: &LaneRequest,
    ) -> Result<HandlerOutput, HandlerError> {
        let plan = &request.plan;
        let spawn = plan
            .spawn()
            .ok_or_else(|| HandlerError::malformed("antigravity: the lane is not a spawn lane"))?;
        let repo_root = request.repo_root.as_str();
        let mut out = HandlerOutput::default();

        let lock = effects.lock(&lock_key(repo_root), effects.remaining())?;
        let home = effects.home_dir();
        let mark = take_watermark(effects, home.as_deref(), repo_root);
        out.notes.push(watermark_note(&mark));

        let args = invocation_args(effects, spawn, &plan.prompt_path, repo_root, &mut out.notes);
        let report = effects.spawn(
            &SpawnRequest::new(
                spawn.binary.clone(),
                args,
                StdoutSink::Memory(STDOUT_CAP),
                effects.remaining(),
            )
            .with_stdin(spawn.stdin.as_ref().map(PathBuf::from))
            .with_stderr_path(Some(PathBuf::from(&plan.err_path))),
        );

        // Layer 1: stdout, only from a clean exit.
        let mut review = stdout_layer(report, &mut out);
        // Layer 2: transcript fallback, still under the lock.
        if is_empty(&review) {
            if let Some(text) =
                transcript_layer(effects, home.as_deref(), repo_root, &mark, &mut out)
            {
                review = text;
            }
        }
        drop(lock);

        // Layer 3: blind-review stamp.
        if is_blind(&review) {
            review = stamped(&review);
            out.blind = true;
            out.notes
                .push("stamped as reviewed without repo access".into());
        }

        out.model = transcript_model_of(effects, home.as_deref(), repo_root, &mark);
        if is_empty(&review) {
            out.source = None;
            let mode = failure_mode_of(effects, home.as_deref(), repo_root, &mark);
            out.own_stub = Some(own_stub(effects, home.as_deref(), &plan.err_path, mode));
            out.notes
                .push("layer 3: nothing from stdout or the transcript; diagnostic stub".into());
        } else {
            out.review = review;
        }
        Ok(out)
    }
}

/// The run report's note on the watermark taken before the run.
fn watermark_note(mark: &Watermark) -> String {
    format!(
        "watermark conv={} lines={}{}",
        if mark.conv_id.is_empty() {
            "-"
        } else {
            &mark.conv_id
        },
        mark.lines,
        if mark.unreadable { " unreadable" } else { "" }
    )
}

/// The argument vector agy runs with: the plan's, with the antigravity prompt variant and, when
/// `agy --help` mentions it, `--add-dir <repo_root>`; each change noted in `notes`.
fn invocation_args(
    effects: &dyn Effects,
    spawn: &SpawnPlan,
    prompt_path: &str,
    repo_root: &str,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let (mut args, replaced) = adjust_prompt(&spawn.argv, prompt_path, repo_root);
    if replaced > 0 {
        notes.push(format!(
            "replaced {replaced} file-ref prompt element(s) with the antigravity variant"
        ));
    }
    if help_mentions_add_dir(effects, &spawn.binary) {
        insert_add_dir(&mut args, repo_root);
        notes.push(format!(
            "agy --help mentions --add-dir: inserted --add-dir {repo_root}"
        ));
    } else {
        notes.push("agy --help does not mention --add-dir (or failed): nothing inserted".into());
    }
    args
}

/// Layer 1: the stdout of a clean exit (source `stdout` when not empty); otherwise empty, with
/// a note saying why stdout was discarded.
fn stdout_layer(report: SpawnReport, out: &mut HandlerOutput) -> String {
    if report.succeeded() {
        if !is_empty(&report.stdout) {
            out.source = Some("stdout".into());
        }
        return report.stdout;
    }
    let how = match (&report.error, report.exit_code) {
        (Some(error), _) => format!("spawn error {}", error.code()),
        (None, Some(code)) => format!("exit {code}"),
        (None, None) => "no exit status".to_owned(),
    };
    out.notes.push(format!("stdout discarded ({how})"));
    String::new()
}

/// Layer 2: the workspace's transcript response written after the watermark (source
/// `transcript`), or `None`, each noted in `out`.
fn transcript_layer(
    effects: &dyn Effects,
    home: Option<&Path>,
    repo_root: &str,
    mark: &Watermark,
    out: &mut HandlerOutput,
) -> Option<String> {
    let (current, transcript) = current_transcript(effects, home, repo_root);
    match fallback(mark, current.as_deref(), &transcript) {
        Some(text) if !is_empty(&text) => {
            out.notes.push(format!(
                "review from transcript conv={}",
                current.as_deref().unwrap_or("-")
            ));
            out.source = Some("transcript".into());
            Some(text)
        }
        _ => {
            out.notes
                .push("no post-watermark transcript response".into());
            None
        }
    }
}

/// The workspace's conversation after the run and its transcript as read now.
fn current_transcript(
    effects: &dyn Effects,
    home: Option<&Path>,
    repo_root: &str,
) -> (Option<String>, FileRead) {
    let current = lookup_conversation(effects, home, repo_root);
    let transcript = match (&current, home) {
        (Some(id), Some(home)) => effects.read_text(&transcript_path(home, id), TRANSCRIPT_CAP),
        _ => FileRead::Missing,
    };
    (current, transcript)
}

/// The model of the run from the workspace's transcript (upstream #3649, §3.6).
fn transcript_model_of(
    effects: &dyn Effects,
    home: Option<&Path>,
    repo_root: &str,
    mark: &Watermark,
) -> Option<String> {
    let (current, transcript) = current_transcript(effects, home, repo_root);
    run_model(mark, current.as_deref(), &transcript)
}

/// The transcript model rule (§3.6): with the watermark's conversation, the lines after the
/// watermark first, else the whole file (the same session's model); with another
/// conversation, the whole file; a transcript the watermark found unreadable for the same id,
/// or one unreadable now → `None`.
pub fn run_model(mark: &Watermark, current: Option<&str>, transcript: &FileRead) -> Option<String> {
    let current = current?;
    let same = current == mark.conv_id;
    if mark.unreadable && same {
        return None;
    }
    let FileRead::Text(text) = transcript else {
        return None;
    };
    let fresh = if same { mark.lines } else { 0 };
    transcript_model(text, fresh).or_else(|| transcript_model(text, 0))
}

/// The `model` of the LAST non-blank line (after skipping the first `skip_lines`) that parses
/// as a JSON object with its own string `model`, at the top level or one level down under any
/// key but `__proto__`, `constructor` or `prototype`; nothing deeper is searched.
pub fn transcript_model(text: &str, skip_lines: usize) -> Option<String> {
    last_entry(text, skip_lines, entry_model)
}

/// The first `Some` that `read` gives for the non-blank lines after the first `skip_lines`,
/// read from the last line back.
fn last_entry(
    text: &str,
    skip_lines: usize,
    read: impl FnMut(&str) -> Option<String>,
) -> Option<String> {
    let remaining = count_lines(text).saturating_sub(skip_lines);
    text.rsplit('\n')
        .filter(|line| !is_empty(line))
        .take(remaining)
        .find_map(read)
}

/// The model one transcript line names, if any.
fn entry_model(line: &str) -> Option<String> {
    let Ok(Value::Object(entry)) = serde_json::from_str::<Value>(trim(line)) else {
        return None;
    };
    if let Some(Value::String(model)) = entry.get("model") {
        return Some(model.clone());
    }
    entry
        .iter()
        .filter(|(key, _)| !PROTO_KEYS.contains(&key.as_str()))
        .find_map(|(_, value)| match value.get("model") {
            Some(Value::String(model)) if value.is_object() => Some(model.clone()),
            _ => None,
        })
}

/// Whether agy got a session going (upstream #4184): the conversation id changed, or its
/// transcript grew past the watermark, or it could not be read.
fn failure_mode_of(
    effects: &dyn Effects,
    home: Option<&Path>,
    repo_root: &str,
    mark: &Watermark,
) -> FailureMode {
    let (current, transcript) = current_transcript(effects, home, repo_root);
    failure_mode(mark, current.as_deref(), &transcript)
}

/// [`FailureMode`] of a run from the watermark, the conversation after it and its transcript.
pub fn failure_mode(mark: &Watermark, current: Option<&str>, transcript: &FileRead) -> FailureMode {
    if current.unwrap_or("") != mark.conv_id {
        return FailureMode::SessionStarted;
    }
    match transcript {
        FileRead::Unreadable(_) => FailureMode::SessionStarted,
        _ if mark.unreadable => FailureMode::SessionStarted,
        FileRead::Text(text) if count_lines(text) > mark.lines => FailureMode::SessionStarted,
        FileRead::Text(_) | FileRead::Missing => FailureMode::PreSessionStall,
    }
}

/// The handler's own diagnostic stub: the last lines of agy's log and the stderr sidecar, and
/// the closing hint of its failure mode.
fn own_stub(effects: &dyn Effects, home: Option<&Path>, err_path: &str, mode: FailureMode) -> String {
    let log = match home {
        Some(home) => effects.read_text(&agy_dir(home).join("cli.log"), LOG_CAP),
        None => FileRead::Missing,
    };
    let log_hint = match &log {
        FileRead::Text(text) => log_hint(text),
        FileRead::Missing | FileRead::Unreadable(_) => None,
    };
    let stderr = match effects.read_text(Path::new(err_path), SIDECAR_CAP) {
        FileRead::Text(text) => text,
        FileRead::Missing | FileRead::Unreadable(_) => String::new(),
    };
    diagnostic_stub(log_hint.as_deref(), &stderr, mode)
}

/// The lock key of a workspace: `antigravity:` + the lower-cased repo root.
fn lock_key(repo_root: &str) -> String {
    format!("antigravity:{}", repo_root.to_lowercase())
}

/// `<home>/.gemini/antigravity-cli`.
fn agy_dir(home: &Path) -> PathBuf {
    home.join(".gemini").join("antigravity-cli")
}

/// The transcript of conversation `conv_id` (a single, already vetted path component).
fn transcript_path(home: &Path, conv_id: &str) -> PathBuf {
    agy_dir(home)
        .join("brain")
        .join(conv_id)
        .join(".system_generated")
        .join("logs")
        .join("transcript.jsonl")
}

/// Reads the cache and looks the workspace up (§11.2.1).
fn lookup_conversation(
    effects: &dyn Effects,
    home: Option<&Path>,
    repo_root: &str,
) -> Option<String> {
    let home = home?;
    let cache = agy_dir(home).join("cache").join("last_conversations.json");
    match effects.read_text(&cache, CACHE_CAP) {
        FileRead::Text(text) => conversation_for(&text, repo_root),
        FileRead::Missing | FileRead::Unreadable(_) => None,
    }
}

/// Takes the watermark of the workspace's transcript (§11.2.2).
fn take_watermark(effects: &dyn Effects, home: Option<&Path>, repo_root: &str) -> Watermark {
    let (Some(conv_id), Some(home)) = (lookup_conversation(effects, home, repo_root), home) else {
        return Watermark::default();
    };
    let read = effects.read_text(&transcript_path(home, &conv_id), TRANSCRIPT_CAP);
    watermark(Some(&conv_id), &read)
}

/// The watermark for conversation `conv` whose transcript read as `transcript` (§11.2.2).
///
/// No conversation → `{"", 0}`; transcript missing → `{conv, 0}`; readable → `{conv, non-blank
/// lines}`; exists but unreadable → `{conv, 0, unreadable}`.
pub fn watermark(conv: Option<&str>, transcript: &FileRead) -> Watermark {
    let Some(conv) = conv else {
        return Watermark::default();
    };
    let conv_id = conv.to_owned();
    match transcript {
        FileRead::Missing => Watermark {
            conv_id,
            lines: 0,
            unreadable: false,
        },
        FileRead::Text(text) => Watermark {
            conv_id,
            lines: count_lines(text),
            unreadable: false,
        },
        FileRead::Unreadable(_) => Watermark {
            conv_id,
            lines: 0,
            unreadable: true,
        },
    }
}

/// Finds the workspace's conversation id in the conversation cache text (§11.2.1).
///
/// The cache must be a JSON object. An exact key equal to `repo_root` with a non-empty string
/// value wins; otherwise the first key equal to it case-insensitively (lower-cased) with a
/// non-empty string value. An id that is not a single safe path component (contains `/`, `\`,
/// `..`, `:` or NUL, or is `.`) is refused: no conversation.
pub fn conversation_for(cache_text: &str, repo_root: &str) -> Option<String> {
    let Ok(Value::Object(cache)) = serde_json::from_str::<Value>(cache_text) else {
        return None;
    };
    let non_empty = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let id = cache.get(repo_root).and_then(non_empty).or_else(|| {
        let wanted = repo_root.to_lowercase();
        cache
            .iter()
            .filter(|(key, _)| key.to_lowercase() == wanted)
            .find_map(|(_, value)| non_empty(value))
    })?;
    is_safe_component(&id).then_some(id)
}

/// True when `id` can only ever name one directory below `brain/`.
fn is_safe_component(id: &str) -> bool {
    id != "." && !id.contains(['/', '\\', ':', '\0']) && !id.contains("..")
}

/// Counts non-blank lines (split on `\n` / `\r\n`; whitespace-only lines are not counted).
pub fn count_lines(text: &str) -> usize {
    text.split('\n').filter(|line| !is_empty(line)).count()
}

/// The review in a transcript after skipping its first `skip_lines` non-blank lines.
///
/// Among the remaining non-blank lines, the `content` of the LAST one that parses as a JSON
/// object with `source == "MODEL"`, `status == "DONE"`, `type == "PLANNER_RESPONSE"` and a
/// string `content` (possibly empty); `None` when no line qualifies.
pub fn transcript_review(text: &str, skip_lines: usize) -> Option<String> {
    last_entry(text, skip_lines, planner_response)
}

/// The `content` of one finished model response line, if it is one.
fn planner_response(line: &str) -> Option<String> {
    let Ok(Value::Object(entry)) = serde_json::from_str::<Value>(trim(line)) else {
        return None;
    };
    let is = |key: &str, want: &str| entry.get(key).and_then(Value::as_str) == Some(want);
    if is("source", "MODEL") && is("status", "DONE") && is("type", "PLANNER_RESPONSE") {
        entry
            .get("content")
            .and_then(Value::as_str)
            .map(str::to_owned)
    } else {
        None
    }
}

/// The layer-2 decision (§11.2.5): what the transcript contributes after the run.
///
/// `current` is the conversation the cache names now and `transcript` the read of its
/// transcript (ignored when `current` is `None`). No conversation → `None`; the mark was
/// unreadable and the id is unchanged → `None` (fail closed, never replay); a missing or
/// unreadable transcript → `None`; otherwise [`transcript_review`] skipping `mark.lines` when
/// the id is unchanged, nothing when it is new (a fresh session).
pub fn fallback(mark: &Watermark, current: Option<&str>, transcript: &FileRead) -> Option<String> {
    let current = current?;
    let same = current == mark.conv_id;
    if mark.unreadable && same {
        return None;
    }
    let FileRead::Text(text) = transcript else {
        return None;
    };
    transcript_review(text, if same { mark.lines } else { 0 })
}

/// True when a non-empty review shows either blind-review tell (§11.2.7).
///
/// Self-report: `REVIEWED-WITHOUT-REPO-ACCESS` within the first five lines. Scratch-dir tell:
/// `(workspace|working) (directory|dir)` followed within 0–40 characters (any, newlines
/// included) by `antigravity-cli/scratch`, ASCII case-insensitively.
pub fn is_blind(review: &str) -> bool {
    if is_empty(review) {
        return false;
    }
    review
        .split('\n')
        .take(5)
        .any(|line| line.contains(SELF_REPORT))
        || scratch_tell(review.as_bytes())
}

/// Prepends the blind-review stamp and an empty line when [`is_blind`] holds; else unchanged.
pub fn stamp(review: &str) -> String {
    if is_blind(review) {
        stamped(review)
    } else {
        review.to_owned()
    }
}

/// `review` with the stamp line and an empty line in front.
fn stamped(review: &str) -> String {
    format!("{STAMP_LINE}\n\n{review}")
}

/// The scratch-dir tell, by hand: at every `workspace `/`working ` + `dir`/`directory`, look
/// for the scratch path at each of the next 41 character boundaries. Linear in the input.
fn scratch_tell(text: &[u8]) -> bool {
    let mut at = 0;
    while let Some(offset) = find_ci(&text[at..], b"work") {
        let start = at + offset;
        for first in [&b"workspace "[..], b"working "] {
            if !starts_with_ci(text, start, first) {
                continue;
            }
            for second in [&b"directory"[..], b"dir"] {
                let end = start + first.len() + second.len();
                if starts_with_ci(text, start + first.len(), second) && scratch_within(text, end) {
                    return true;
                }
            }
        }
        at = start + 1;
    }
    false
}

/// True when the scratch path starts within [`SCRATCH_GAP`] characters of byte `from`.
fn scratch_within(text: &[u8], from: usize) -> bool {
    let mut pos = from;
    let mut gap = 0;
    loop {
        if starts_with_ci(text, pos, SCRATCH) {
            return true;
        }
        if gap == SCRATCH_GAP || pos >= text.len() {
            return false;
        }
        // Step over one UTF-8 character.
        pos += 1;
        while pos < text.len() && (text[pos] & 0xC0) == 0x80 {
            pos += 1;
        }
        gap += 1;
    }
}

/// ASCII case-insensitive `text[at..].starts_with(needle)`.
fn starts_with_ci(text: &[u8], at: usize, needle: &[u8]) -> bool {
    text.get(at..at.saturating_add(needle.len()))
        .is_some_and(|window| window.eq_ignore_ascii_case(needle))
}

/// Offset of the first ASCII case-insensitive occurrence of `needle` in `text`.
fn find_ci(text: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    text.windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

/// The log hint of the stub (§11.2.6 line 2), from the CLI log text.
///
/// `None` when no line (split on `\n` / `\r\n`) contains, ASCII case-insensitively,
/// `agent executor error`, `NOT_FOUND` or `Publisher model`; otherwise the hint header followed
/// by the last three matching lines, one per line.
pub fn log_hint(log_text: &str) -> Option<String> {
    let mut last: Vec<&str> = Vec::with_capacity(LOG_TAIL);
    for line in split_lines(log_text) {
        let bytes = line.as_bytes();
        if LOG_NEEDLES
            .iter()
            .any(|needle| find_ci(bytes, needle).is_some())
        {
            if last.len() == LOG_TAIL {
                last.remove(0);
            }
            last.push(line);
        }
    }
    if last.is_empty() {
        return None;
    }
    let mut hint = String::from(LOG_HINT_HEAD);
    for line in last {
        hint.push('\n');
        hint.push_str(line);
    }
    Some(hint)
}

/// The handler's own stub (§11.2.6), plus the stderr tail when stderr is non-empty, closed by
/// the hint of its failure mode (upstream #4184).
fn diagnostic_stub(log_hint: Option<&str>, stderr: &str, mode: FailureMode) -> String {
    let mut lines: Vec<String> = vec![STUB_HEAD.to_owned()];
    if let Some(hint) = log_hint {
        lines.push(hint.to_owned());
    }
    if !is_empty(stderr) {
        lines.push(STDERR_HEAD.to_owned());
        lines.extend(tail_lines(stderr, STDERR_TAIL));
    }
    lines.push(
        match mode {
            FailureMode::SessionStarted => STUB_TAIL_STARTED,
            FailureMode::PreSessionStall => STUB_TAIL,
        }
        .to_owned(),
    );
    let mut stub = lines.join("\n");
    stub.push('\n');
    stub
}

/// The last `count` lines of `text`, ignoring the line break(s) that end it.
fn tail_lines(text: &str, count: usize) -> Vec<String> {
    let body = text.trim_end_matches(['\n', '\r']);
    let mut tail: Vec<String> = body
        .rsplit('\n')
        .take(count)
        .map(|line| line.strip_suffix('\r').unwrap_or(line).to_owned())
        .collect();
    tail.reverse();
    tail
}

/// Lines split on `\n` or `\r\n`.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
}

/// The standard argv-file-ref prompt (§4.5).
fn file_ref(prompt_path: &str, repo_root: &str) -> String {
    format!(
        "Read the file at {prompt_path} in full and carry out the review request it contains. \
         The repository under review is at {repo_root} \u{2014} resolve every relative file path \
         in the review request against that absolute root. Output only the resulting markdown \
         review. Do not edit any files."
    )
}

/// The antigravity variant of the file-ref prompt (§11.2.3).
fn antigravity_ref(prompt_path: &str, repo_root: &str) -> String {
    format!(
        "Read the file at {prompt_path} in full and carry out the review request it contains. \
         The repository under review is at {repo_root} \u{2014} resolve every relative file path \
         in the review request against that absolute root and verify claims against those \
         files. If you cannot read files under {repo_root}, begin your output with the exact \
         line REVIEWED-WITHOUT-REPO-ACCESS before the review. Output only the resulting \
         markdown review. Do not edit any files."
    )
}

/// Replaces every standard file-ref element with the variant; returns the argv and the count.
fn adjust_prompt(argv: &[String], prompt_path: &str, repo_root: &str) -> (Vec<String>, usize) {
    let standard = file_ref(prompt_path, repo_root);
    let variant = antigravity_ref(prompt_path, repo_root);
    let mut replaced = 0;
    let args = argv
        .iter()
        .map(|arg| {
            if *arg == standard {
                replaced += 1;
                variant.clone()
            } else {
                arg.clone()
            }
        })
        .collect();
    (args, replaced)
}

/// Runs `<binary> --help` (5 s, never longer than the time left) and looks for `--add-dir`.
///
/// A run that could not start, timed out or overflowed adds nothing; the exit status is not
/// consulted (as for `command-capability` probes).
fn help_mentions_add_dir(effects: &dyn Effects, binary: &str) -> bool {
    let report = effects.spawn(&SpawnRequest::new(
        binary.to_owned(),
        vec!["--help".to_owned()],
        StdoutSink::Memory(HELP_CAP),
        HELP_TIMEOUT.min(effects.remaining()),
    ));
    report.error.is_none() && format!("{}\n{}", report.stdout, report.stderr).contains("--add-dir")
}

/// Inserts `--add-dir <repo_root>` before the last `-p`, or appends it when there is none.
fn insert_add_dir(args: &mut Vec<String>, repo_root: &str) {
    let at = args
        .iter()
        .rposition(|arg| arg == "-p")
        .unwrap_or(args.len());
    args.splice(at..at, ["--add-dir".to_owned(), repo_root.to_owned()]);
}

/// Trims like JavaScript's `String.prototype.trim` (Unicode White_Space plus U+FEFF).
fn trim(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}')
}

/// True when nothing is left after trimming (invocation.md §10).
fn is_empty(text: &str) -> bool {
    trim(text).is_empty()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use gsd_lane_sdk::testing::request_spawn;
    use gsd_lane_sdk::testing::{FakeEffects, FakeProcess};
    use gsd_lane_sdk::{OutputTarget, PlanShape, SpawnPlan};
    use proptest::prelude::*;

    const HOME: &str = "/home/u";
    const CACHE: &str = "/home/u/.gemini/antigravity-cli/cache/last_conversations.json";
    const LOG: &str = "/home/u/.gemini/antigravity-cli/cli.log";
    const HELP_WITH: &str = "Usage: agy [flags]\n  --add-dir <dir>  extra workspace dir\n";
    const HELP_WITHOUT: &str = "Usage: agy [flags]\n  -p <prompt>\n";

    fn transcript(conv: &str) -> String {
        format!(
            "{HOME}/.gemini/antigravity-cli/brain/{conv}/.system_generated/logs/transcript.jsonl"
        )
    }

    fn done(content: &str) -> String {
        serde_json::json!({"source": "MODEL", "status": "DONE", "type": "PLANNER_RESPONSE", "content": content})
            .to_string()
    }

    fn user(content: &str) -> String {
        serde_json::json!({"source": "USER", "status": "DONE", "type": "USER_INPUT", "content": content})
            .to_string()
    }

    /// The shipped antigravity plan (§15, config model `A`), sidecar in a fresh temp dir.
    fn request(tag: &str, repo_root: &str) -> LaneRequest {
        let dir =
            gsd_lane_sdk::testing::scratch_dir(&format!("antigravity-{tag}")).expect("temp dir");
        let mut req = request_spawn("antigravity", "agy");
        req.repo_root = repo_root.to_owned();
        req.plan.err_path = dir.join("gsd-review-antigravity.err").display().to_string();
        let mut argv: Vec<String> = ["--print-timeout", "540s", "--model", "A", "-p"]
            .map(String::from)
            .to_vec();
        argv.push(file_ref(&req.plan.prompt_path, repo_root));
        req.plan.shape = PlanShape::Spawn(SpawnPlan {
            binary: "agy".into(),
            argv,
            stdin: None,
            output_target: OutputTarget::Stdout,
        });
        req
    }

    fn cache(repo: &str, conv: &str) -> String {
        serde_json::json!({ repo: conv }).to_string()
    }

    /// The lane's own run is the second spawn (after `agy --help`): files it writes are staged
    /// to appear from then on.
    const LANE_SPAWN: usize = 2;

    fn text(t: &str) -> FileRead {
        FileRead::Text(t.to_owned())
    }

    #[test]
    fn wire_texts_are_exact() {
        assert_eq!(
            file_ref("/run/gsd-review-prompt.md", "/repo"),
            "Read the file at /run/gsd-review-prompt.md in full and carry out the review request it contains. The repository under review is at /repo \u{2014} resolve every relative file path in the review request against that absolute root. Output only the resulting markdown review. Do not edit any files."
        );
        assert_eq!(
            antigravity_ref("/run/gsd-review-prompt.md", "/repo"),
            "Read the file at /run/gsd-review-prompt.md in full and carry out the review request it contains. The repository under review is at /repo \u{2014} resolve every relative file path in the review request against that absolute root and verify claims against those files. If you cannot read files under /repo, begin your output with the exact line REVIEWED-WITHOUT-REPO-ACCESS before the review. Output only the resulting markdown review. Do not edit any files."
        );
        assert_eq!(stamp("REVIEWED-WITHOUT-REPO-ACCESS\nok"), "> [reviewed-without-repo-access] This reviewer ran without visibility into the repo under review \u{2014} down-weight its verdict in the Consensus Summary.\n\nREVIEWED-WITHOUT-REPO-ACCESS\nok");
    }

    #[test]
    fn layer1_stdout_review_with_add_dir() {
        let fx = FakeEffects::new()
            .home(HOME)
            .process(FakeProcess::prints("").stderr(HELP_WITH))
            .process(FakeProcess::prints("## Review\nAll good.\n"));
        let req = request("layer1", "/repo");
        let out = Antigravity.run(&fx, &req).expect("runs");
        assert_eq!(out.review, "## Review\nAll good.\n");
        assert_eq!(out.source.as_deref(), Some("stdout"));
        assert!(!out.blind);
        assert_eq!(out.own_stub, None);
        let calls = fx.spawn_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].args, ["--help"]);
        assert_eq!(calls[0].stdout, StdoutSink::Memory(1 << 20));
        assert_eq!(calls[0].stderr_path, None);
        assert_eq!(calls[0].timeout, Duration::from_millis(5000));
        let variant = antigravity_ref("/run/gsd-review-prompt.md", "/repo");
        let want: Vec<String> = [
            "--print-timeout",
            "540s",
            "--model",
            "A",
            "--add-dir",
            "/repo",
            "-p",
        ]
        .map(String::from)
        .into_iter()
        .chain([variant])
        .collect();
        assert_eq!(calls[1].program, "agy");
        assert_eq!(calls[1].args, want, "§15 run-time argv");
        assert_eq!(calls[1].stdin, None);
        assert_eq!(
            calls[1].stderr_path,
            Some(PathBuf::from(&req.plan.err_path))
        );
        assert!(out
            .notes
            .iter()
            .any(|n| n == "agy --help mentions --add-dir: inserted --add-dir /repo"));
    }

    #[test]
    fn help_without_add_dir_adds_nothing() {
        let fx = FakeEffects::new()
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints("review"));
        Antigravity
            .run(&fx, &request("noadd", "/repo"))
            .expect("runs");
        let args = &fx.spawn_calls()[1].args;
        assert!(!args.contains(&"--add-dir".to_owned()));
        assert_eq!(args[4], "-p");
        assert_eq!(
            args[5],
            antigravity_ref("/run/gsd-review-prompt.md", "/repo")
        );
    }

    #[test]
    fn help_that_times_out_adds_nothing() {
        let fx = FakeEffects::new()
            .process(FakeProcess::prints(HELP_WITH).timed_out())
            .process(FakeProcess::prints("review"));
        Antigravity
            .run(&fx, &request("helptimeout", "/repo"))
            .expect("runs");
        assert!(!fx.spawn_calls()[1].args.contains(&"--add-dir".to_owned()));
    }

    #[test]
    fn add_dir_goes_before_the_last_p_or_at_the_end() {
        let mut args: Vec<String> = ["-p", "x", "-p", "y"].map(String::from).to_vec();
        insert_add_dir(&mut args, "/r");
        assert_eq!(args, ["-p", "x", "--add-dir", "/r", "-p", "y"]);
        let mut args: Vec<String> = ["--model", "A"].map(String::from).to_vec();
        insert_add_dir(&mut args, "/r");
        assert_eq!(args, ["--model", "A", "--add-dir", "/r"]);
    }

    #[test]
    fn every_file_ref_element_is_replaced_and_nothing_else() {
        let standard = file_ref("/p", "/r");
        let argv = vec![
            standard.clone(),
            "x".into(),
            standard,
            file_ref("/other", "/r"),
        ];
        let (args, replaced) = adjust_prompt(&argv, "/p", "/r");
        assert_eq!(replaced, 2);
        assert_eq!(args[0], antigravity_ref("/p", "/r"));
        assert_eq!(args[1], "x");
        assert_eq!(args[2], antigravity_ref("/p", "/r"));
        assert_eq!(args[3], file_ref("/other", "/r"));
    }

    #[test]
    fn empty_stdout_uses_a_post_watermark_transcript_entry() {
        let before = [user("old prompt"), done("OLD review")].join("\n");
        let after = [
            before.clone(),
            user("new prompt"),
            String::new(),
            done("## Fresh review"),
        ]
        .join("\r\n");
        let fx = FakeEffects::new()
            .home(HOME)
            .file(CACHE, &cache("/repo", "c1"))
            .file(transcript("c1"), &before)
            .after_spawn(LANE_SPAWN, transcript("c1"), text(&after))
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints(" \n"));
        let out = Antigravity
            .run(&fx, &request("post", "/repo"))
            .expect("runs");
        assert_eq!(out.review, "## Fresh review");
        assert_eq!(out.source.as_deref(), Some("transcript"));
        assert_eq!(out.own_stub, None);
        assert!(out.notes.iter().any(|n| n == "watermark conv=c1 lines=2"));
        assert!(out
            .notes
            .iter()
            .any(|n| n == "review from transcript conv=c1"));
    }

    #[test]
    fn nonzero_exit_discards_stdout_and_falls_to_the_transcript() {
        let before = user("p");
        let fx = FakeEffects::new()
            .home(HOME)
            .file(CACHE, &cache("/repo", "c1"))
            .file(transcript("c1"), &before)
            .after_spawn(
                LANE_SPAWN,
                transcript("c1"),
                text(&[before.clone(), done("from transcript")].join("\n")),
            )
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints("half a review, then a crash").exit(1));
        let out = Antigravity
            .run(&fx, &request("nonzero", "/repo"))
            .expect("runs");
        assert_eq!(out.review, "from transcript");
        assert_eq!(out.source.as_deref(), Some("transcript"));
        assert!(out.notes.iter().any(|n| n == "stdout discarded (exit 1)"));
    }

    #[test]
    fn timed_out_run_with_stdout_is_discarded_and_stale_entries_are_never_replayed() {
        let before = [user("old prompt"), done("OLD review")].join("\n");
        let fx = FakeEffects::new()
            .home(HOME)
            .file(CACHE, &cache("/repo", "c1"))
            .file(transcript("c1"), &before)
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints("partial").timed_out());
        let out = Antigravity
            .run(&fx, &request("stale", "/repo"))
            .expect("runs");
        assert_eq!(out.review, "");
        assert_eq!(out.source, None);
        assert!(out.own_stub.is_some());
        assert!(out
            .notes
            .iter()
            .any(|n| n == "stdout discarded (spawn error ETIMEDOUT)"));
    }

    #[test]
    fn conversation_id_changed_after_the_run_reads_the_new_transcript_from_the_top() {
        let fx = FakeEffects::new()
            .home(HOME)
            .file(CACHE, &cache("/repo", "c1"))
            .file(
                transcript("c1"),
                &[user("a"), user("b"), user("c")].join("\n"),
            )
            .after_spawn(LANE_SPAWN, CACHE, text(&cache("/repo", "c2")))
            .after_spawn(LANE_SPAWN, transcript("c2"), text(&done("new session")))
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints(""));
        let out = Antigravity
            .run(&fx, &request("newid", "/repo"))
            .expect("runs");
        assert_eq!(
            out.review, "new session",
            "a 3-line mark must not be applied to c2"
        );
        assert_eq!(out.source.as_deref(), Some("transcript"));
    }

    #[test]
    fn post_watermark_entry_pure() {
        let mark = watermark(Some("c1"), &FileRead::Text(user("p")));
        assert_eq!(
            mark,
            Watermark {
                conv_id: "c1".into(),
                lines: 1,
                unreadable: false
            }
        );
        let after =
            FileRead::Text([user("p"), String::new(), "  ".into(), done("fresh")].join("\r\n"));
        assert_eq!(
            fallback(&mark, Some("c1"), &after).as_deref(),
            Some("fresh")
        );
    }

    #[test]
    fn only_pre_watermark_entries_give_the_stub() {
        let mark = watermark(
            Some("c1"),
            &FileRead::Text([user("p"), done("old")].join("\n")),
        );
        let same = FileRead::Text([user("p"), done("old")].join("\n"));
        assert_eq!(fallback(&mark, Some("c1"), &same), None);
    }

    #[test]
    fn a_new_conversation_id_skips_nothing() {
        let mark = watermark(
            Some("c1"),
            &FileRead::Text([user("p"), done("old")].join("\n")),
        );
        let fresh = FileRead::Text(done("new session"));
        assert_eq!(
            fallback(&mark, Some("c2"), &fresh).as_deref(),
            Some("new session")
        );
        // A fresh id whose transcript is longer than the old mark is still read from the top.
        let fresh = FileRead::Text([done("first"), user("x"), done("second")].join("\n"));
        assert_eq!(
            fallback(&mark, Some("c2"), &fresh).as_deref(),
            Some("second")
        );
    }

    #[test]
    fn unreadable_transcript_with_the_same_id_fails_closed() {
        let mark = watermark(Some("c1"), &FileRead::Unreadable("too large".into()));
        assert!(mark.unreadable);
        let now = FileRead::Text(done("maybe stale"));
        assert_eq!(fallback(&mark, Some("c1"), &now), None);
        // A different id is a fresh session and may be read.
        assert_eq!(
            fallback(&mark, Some("c2"), &now).as_deref(),
            Some("maybe stale")
        );
        // Unreadable or missing now → nothing; no conversation → nothing.
        let fine = Watermark {
            conv_id: "c1".into(),
            ..Watermark::default()
        };
        assert_eq!(
            fallback(&fine, Some("c1"), &FileRead::Unreadable("x".into())),
            None
        );
        assert_eq!(fallback(&fine, Some("c1"), &FileRead::Missing), None);
        assert_eq!(fallback(&fine, None, &now), None);

        let fx = FakeEffects::new()
            .home(HOME)
            .file(CACHE, &cache("/repo", "c1"))
            .unreadable_file(transcript("c1"))
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints(""));
        let out = Antigravity
            .run(&fx, &request("unreadable", "/repo"))
            .expect("runs");
        assert_eq!(out.review, "");
        assert!(out.own_stub.is_some());
        assert!(out
            .notes
            .iter()
            .any(|n| n == "watermark conv=c1 lines=0 unreadable"));
    }

    #[test]
    fn watermark_table() {
        assert_eq!(
            watermark(None, &FileRead::Text("x".into())),
            Watermark::default()
        );
        assert_eq!(
            watermark(Some("c"), &FileRead::Missing),
            Watermark {
                conv_id: "c".into(),
                lines: 0,
                unreadable: false
            }
        );
        assert_eq!(
            watermark(Some("c"), &FileRead::Text("a\r\n\r\n  \nb\n\t\n".into())).lines,
            2
        );
    }

    #[test]
    fn transcript_review_takes_the_last_qualifying_line_after_the_skip() {
        let lines = [
            done("one"),
            "garbage".to_owned(),
            done("two"),
            serde_json::json!({"source":"MODEL","status":"RUNNING","type":"PLANNER_RESPONSE","content":"partial"}).to_string(),
            serde_json::json!({"source":"MODEL","status":"DONE","type":"PLANNER_RESPONSE","content":5}).to_string(),
            "[1]".to_owned(),
        ]
        .join("\n");
        assert_eq!(transcript_review(&lines, 0).as_deref(), Some("two"));
        assert_eq!(transcript_review(&lines, 2).as_deref(), Some("two"));
        assert_eq!(transcript_review(&lines, 3), None);
        assert_eq!(transcript_review(&lines, 100), None);
        assert_eq!(transcript_review(&done(""), 0).as_deref(), Some(""));
    }

    #[test]
    fn conversation_lookup() {
        assert_eq!(
            conversation_for(&cache("/repo", "c1"), "/repo").as_deref(),
            Some("c1")
        );
        // Case-insensitive workspace key.
        assert_eq!(
            conversation_for(&cache("/Repo", "c1"), "/REPO").as_deref(),
            Some("c1")
        );
        // Exact key wins over an earlier case-insensitive one.
        assert_eq!(
            conversation_for(r#"{"/REPO":"a","/repo":"b"}"#, "/repo").as_deref(),
            Some("b")
        );
        // Exact key with an empty or non-string id falls to the case-insensitive entries.
        assert_eq!(
            conversation_for(r#"{"/repo":"","/Repo":7,"/REPO":"c"}"#, "/repo").as_deref(),
            Some("c")
        );
        for bad in [
            "",
            "null",
            "[]",
            "\"s\"",
            "3",
            "true",
            "{",
            r#"{"/other":"x"}"#,
        ] {
            assert_eq!(conversation_for(bad, "/repo"), None, "cache {bad:?}");
        }
        for unsafe_id in ["../x", "a/b", "a\\b", "..", ".", "a\u{0}b", "C:x"] {
            assert_eq!(
                conversation_for(&cache("/repo", unsafe_id), "/repo"),
                None,
                "id {unsafe_id:?}"
            );
        }
    }

    #[test]
    fn lock_is_taken_with_the_lower_cased_workspace_key_and_the_cache_case_insensitively() {
        let fx = FakeEffects::new()
            .home(HOME)
            .file(CACHE, &cache("/work/MyRepo", "c1"))
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints("ok"));
        let out = Antigravity
            .run(&fx, &request("lock", "/Work/myrepo"))
            .expect("runs");
        assert_eq!(fx.locks(), ["antigravity:/work/myrepo"]);
        assert!(out.notes.iter().any(|n| n == "watermark conv=c1 lines=0"));
    }

    #[test]
    fn blind_stamp() {
        let third = "# Review\n\nREVIEWED-WITHOUT-REPO-ACCESS\nbody";
        assert!(is_blind(third));
        let ninth = "1\n2\n3\n4\n5\n6\n7\n8\nREVIEWED-WITHOUT-REPO-ACCESS";
        assert!(!is_blind(ninth));
        assert_eq!(stamp(ninth), ninth);
        let fifth_crlf = "1\r\n2\r\n3\r\n4\r\nREVIEWED-WITHOUT-REPO-ACCESS\r\n";
        assert!(is_blind(fifth_crlf));
        assert!(!is_blind(""));
        assert!(!is_blind("  \n"));
        assert_eq!(stamp(" \n"), " \n");

        assert!(is_blind(
            "My working directory is /home/u/.gemini/antigravity-cli/scratch/abc."
        ));
        assert!(is_blind(
            "WORKSPACE DIR:\n\n  ~/.gemini/Antigravity-CLI/Scratch"
        ));
        assert!(is_blind(&format!(
            "working dir{}antigravity-cli/scratch",
            "x".repeat(40)
        )));
        assert!(!is_blind(&format!(
            "working dir{}antigravity-cli/scratch",
            "x".repeat(41)
        )));
        assert!(is_blind(&format!(
            "working dir{}antigravity-cli/scratch",
            "é".repeat(40)
        )));
        // "directory" + 36 chars reads as "dir" + 42 via the short alternative: no match, but
        // the long alternative leaves a gap of 36: match.
        assert!(is_blind(&format!(
            "workspace directory{}antigravity-cli/scratch",
            "y".repeat(36)
        )));
        // A bare mention of the path is not stamped.
        assert!(!is_blind(
            "Files were copied to ~/.gemini/antigravity-cli/scratch/x for analysis."
        ));
        assert!(!is_blind("workspacedirectory antigravity-cli/scratch"));
        assert!(!is_blind("working  dir antigravity-cli/scratch"));
    }

    #[test]
    fn blind_stdout_review_is_stamped() {
        let fx = FakeEffects::new()
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints(
                "REVIEWED-WITHOUT-REPO-ACCESS\n\nLooks ok.",
            ));
        let out = Antigravity
            .run(&fx, &request("blind", "/repo"))
            .expect("runs");
        assert!(out.blind);
        assert!(out
            .review
            .starts_with(&format!("{STAMP_LINE}\n\nREVIEWED-WITHOUT-REPO-ACCESS")));
        assert_eq!(out.source.as_deref(), Some("stdout"));
    }

    #[test]
    fn log_hint_keeps_the_last_three_matches() {
        let log = "start\r\n\
                   E1 agent executor error: boom\r\n\
                   E2 model NOT_FOUND\n\
                   info\n\
                   E3 publisher MODEL gone\n\
                   E4 AGENT EXECUTOR ERROR again\n\
                   E5 not_found lower\n\
                   done\n";
        let hint = log_hint(log).expect("matches");
        assert_eq!(
            hint,
            "agy log hint (pinned model may be unavailable \u{2014} run 'agy models' and set review.models.agy):\n\
             E3 publisher MODEL gone\nE4 AGENT EXECUTOR ERROR again\nE5 not_found lower"
        );
        assert_eq!(
            log_hint("E1 agent executor error\n").map(|h| h.lines().count()),
            Some(2)
        );
        assert_eq!(log_hint("all quiet\n"), None);
        assert_eq!(log_hint(""), None);
    }

    #[test]
    fn stub_with_log_hint_and_stderr_tail() {
        let req = request("stub", "/repo");
        let stderr: String = (1..=25).map(|i| format!("err {i}\n")).collect::<String>()
            + "\n[spawn error: ETIMEDOUT]\n";
        let fx = FakeEffects::new()
            .home(HOME)
            .file(LOG, "x\nPublisher model projects/p not found\n")
            .file(&req.plan.err_path, &stderr)
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints("").timed_out());
        let out = Antigravity.run(&fx, &req).expect("runs");
        assert_eq!(out.review, "");
        assert_eq!(out.source, None);
        let mut want = vec![
            "Antigravity review failed or returned empty output.".to_owned(),
            "agy log hint (pinned model may be unavailable \u{2014} run 'agy models' and set review.models.agy):".to_owned(),
            "Publisher model projects/p not found".to_owned(),
            "stderr (last 20 lines):".to_owned(),
        ];
        // The sidecar is `<stderr>\n[spawn error: C]\n` (§8): its last 20 lines end with an
        // empty line and the error line.
        want.extend((8..=25).map(|i| format!("err {i}")));
        want.push(String::new());
        want.push("[spawn error: ETIMEDOUT]".to_owned());
        want.push("If no agy run started, that is the pre-session-stall case: check whether a new ~/.gemini/antigravity-cli/brain/<conv-id>/ dir appeared within ~30s of launch.".to_owned());
        assert_eq!(out.own_stub, Some(want.join("\n") + "\n"));
    }

    #[test]
    fn bare_stub_without_log_or_stderr() {
        let fx = FakeEffects::new()
            .home(HOME)
            .unreadable_file(LOG)
            .process(FakeProcess::prints(HELP_WITHOUT))
            .process(FakeProcess::prints(""));
        let out = Antigravity
            .run(&fx, &request("bare", "/repo"))
            .expect("runs");
        assert_eq!(
            out.own_stub.as_deref(),
            Some(
                "Antigravity review failed or returned empty output.\nIf no agy run started, that is \
                 the pre-session-stall case: check whether a new ~/.gemini/antigravity-cli/brain/<conv-id>/ \
                 dir appeared within ~30s of launch.\n"
            )
        );
    }

    proptest! {
        #[test]
        fn pure_helpers_never_panic(text in any::<String>(), skip in any::<usize>(), root in any::<String>()) {
            let _ = conversation_for(&text, &root);
            let _ = count_lines(&text);
            let _ = transcript_review(&text, skip);
            let _ = is_blind(&text);
            let _ = stamp(&text);
            let _ = log_hint(&text);
            let _ = tail_lines(&text, 20);
        }

        #[test]
        fn skip_never_yields_a_pre_mark_entry(old in prop::collection::vec("[a-z]{1,8}", 0..6), new in prop::collection::vec("[A-Z]{1,8}", 0..6)) {
            let before: Vec<String> = old.iter().map(|c| done(c)).collect();
            let mark = watermark(Some("c"), &FileRead::Text(before.join("\n")));
            let after: Vec<String> = before.iter().cloned().chain(new.iter().map(|c| done(c))).collect();
            let got = fallback(&mark, Some("c"), &FileRead::Text(after.join("\n")));
            prop_assert_eq!(got, new.last().cloned());
        }

        #[test]
        fn scratch_tell_matches_a_reference_scan(gap in "[ a-z\n\u{e9}]{0,45}", upper in any::<bool>()) {
            let phrase = if upper { "WORKING DIR" } else { "working dir" };
            let text = format!("{phrase}{gap}antigravity-cli/scratch");
            prop_assert_eq!(is_blind(&text), gap.chars().count() <= 40 || text.to_lowercase().contains("working directory"));
        }
    }

    #[test]
    fn transcript_model_last_entry_wins_within_depth_two() {
        let text = "{\"model\":\"first\"}\nnull\nnot json\n{\"meta\":{\"model\":\"nested\"}}\n";
        assert_eq!(transcript_model(text, 0).as_deref(), Some("nested"));
        // Deeper than one level, a non-string, or a prototype-named wrapper: not a model.
        let text = "{\"model\":\"kept\"}\n{\"a\":{\"b\":{\"model\":\"deep\"}}}\n\
                    {\"model\":7}\n{\"__proto__\":{\"model\":\"p\"}}\n\
                    {\"constructor\":{\"model\":\"c\"}}\n{\"prototype\":{\"model\":\"q\"}}\n";
        assert_eq!(transcript_model(text, 0).as_deref(), Some("kept"));
        assert_eq!(transcript_model("", 0), None);
    }

    #[test]
    fn transcript_model_prefers_lines_after_the_watermark_and_fails_closed() {
        let text = "{\"model\":\"old\"}\n{\"model\":\"new\"}\n";
        let mark = Watermark {
            conv_id: "c1".into(),
            lines: 1,
            unreadable: false,
        };
        let read = FileRead::Text(text.into());
        assert_eq!(run_model(&mark, Some("c1"), &read).as_deref(), Some("new"));
        // Nothing after the watermark: the same session's model from the whole file.
        let only_old = FileRead::Text("{\"model\":\"old\"}\n{\"x\":1}\n".into());
        assert_eq!(run_model(&mark, Some("c1"), &only_old).as_deref(), Some("old"));
        let unreadable = Watermark {
            unreadable: true,
            ..mark.clone()
        };
        assert_eq!(run_model(&unreadable, Some("c1"), &read), None);
        assert_eq!(
            run_model(&unreadable, Some("c2"), &read).as_deref(),
            Some("new"),
            "another conversation: the whole file"
        );
        assert_eq!(run_model(&mark, None, &read), None);
    }

    #[test]
    fn failure_mode_follows_upstream_4184() {
        let mark = Watermark {
            conv_id: "c1".into(),
            lines: 2,
            unreadable: false,
        };
        let two = FileRead::Text("a\nb\n".into());
        let three = FileRead::Text("a\nb\nc\n".into());
        assert_eq!(failure_mode(&mark, Some("c1"), &two), FailureMode::PreSessionStall);
        assert_eq!(failure_mode(&mark, Some("c1"), &three), FailureMode::SessionStarted);
        assert_eq!(failure_mode(&mark, Some("c2"), &two), FailureMode::SessionStarted);
        assert_eq!(
            failure_mode(&mark, Some("c1"), &FileRead::Unreadable("EACCES".into())),
            FailureMode::SessionStarted,
            "an unreadable transcript is never called a stall"
        );
        let none = Watermark::default();
        assert_eq!(failure_mode(&none, None, &FileRead::Missing), FailureMode::PreSessionStall);
        assert!(diagnostic_stub(None, "", FailureMode::SessionStarted).ends_with(&format!("{STUB_TAIL_STARTED}\n")));
        assert!(diagnostic_stub(None, "", FailureMode::PreSessionStall).ends_with(&format!("{STUB_TAIL}\n")));
    }
}
