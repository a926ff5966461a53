//! Issue 21 item 2: the read-only commands write nothing anywhere. Each runs against a project
//! with a config, first-party HTTP lanes pointed at a loopback server (so `doctor` probes
//! them), a third-party HTTP lane and a spawn lane; the GSD home, the project and a private
//! `TMPDIR` are snapshotted (path, type, size, mtime, content hash) before and after each
//! command and must be equal.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::http_server::{json_reply, Server};
use crate::util::{self, Scope, TestEnv};

/// One entry of a tree: its type, size, mtime and (files) content hash.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    kind: &'static str,
    size: u64,
    mtime: Option<SystemTime>,
    hash: Option<Vec<u8>>,
}

/// Every path under `root` (itself included), without following symlinks.
fn snapshot(root: &Path, into: &mut BTreeMap<PathBuf, Entry>) {
    let Ok(meta) = std::fs::symlink_metadata(root) else {
        return;
    };
    let kind = if meta.is_dir() {
        "dir"
    } else if meta.is_file() {
        "file"
    } else if meta.file_type().is_symlink() {
        "symlink"
    } else {
        "other"
    };
    let hash = meta
        .is_file()
        .then(|| {
            std::fs::read(root)
                .map(|b| Sha256::digest(&b).to_vec())
                .ok()
        })
        .flatten();
    into.insert(
        root.to_owned(),
        Entry {
            kind,
            size: if meta.is_dir() { 0 } else { meta.len() },
            mtime: meta.modified().ok(),
            hash,
        },
    );
    if meta.is_dir() {
        let mut children: Vec<PathBuf> = std::fs::read_dir(root)
            .map(|it| it.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        children.sort();
        for child in children {
            snapshot(&child, into);
        }
    }
}

struct Lab {
    env: TestEnv,
    tmp: PathBuf,
    url: String,
    _server: Server,
}

impl Lab {
    fn new() -> Lab {
        let env = TestEnv::with_planning();
        let tmp = env.root.path().join("tmp");
        std::fs::create_dir_all(&tmp).expect("tmp");
        let server = Server::start(&[(
            "GET",
            "/v1/models",
            json_reply(200, &json!({"data": [{"id": "m"}]})),
        )]);
        let url = server.url();
        std::fs::write(
            env.project.join(".planning/config.json"),
            json!({"review": {
                "ollama_host": format!("{url}/v1"),
                "lm_studio_host": url,
                "llama_cpp_host": url,
                "acme_host": url,
            }})
            .to_string(),
        )
        .expect("config");
        let mut acme = util::read_json(&util::fixture(
            "trust/http-lane/acme-reviewer/capability.json",
        ));
        acme["reviewer"]["invoke"]["defaultHost"] = json!(url);
        env.write_overlay(Scope::Global, "acme-reviewer", &acme);
        env.write_overlay_fixture(Scope::Global, "acme-review", "overlays/acme-review");
        Lab {
            env,
            tmp,
            url,
            _server: server,
        }
    }

    fn state(&self) -> BTreeMap<PathBuf, Entry> {
        let mut all = BTreeMap::new();
        for root in [
            &self.env.gsd_home,
            &self.env.home,
            &self.env.project,
            &self.tmp,
        ] {
            snapshot(root, &mut all);
        }
        all
    }

    fn command(&self, args: &[&str]) -> Command {
        // No lane program on PATH: a probe would run the lane's own program, whose writes
        // are its own; what is checked here is what gsd-lane itself writes.
        let empty = self.env.root.path().join("no-programs");
        let _ = std::fs::create_dir_all(&empty);
        let mut command = util::gsd_command(
            &self.env,
            &empty.display().to_string(),
            &self.env.project,
            args,
        );
        command.env("TMPDIR", &self.tmp);
        command
    }
}

const COMMANDS: &[&[&str]] = &[
    &["list"],
    &["list", "--json"],
    &["doctor"],
    &["doctor", "--json"],
    &["plan"],
    &["disclose"],
    &["disclose", "--json"],
    &["validate"],
    &["flags"],
    &["sections"],
    &["schema"],
    &["runs"],
    &["runs", "--json"],
    &["completions", "bash"],
    &["manpage"],
    &["trust", "list"],
    &["trust", "list", "--json"],
];

#[test]
fn read_only_commands_write_nothing_anywhere() {
    let lab = Lab::new();
    let manifest = lab
        .env
        .capabilities_dir(Scope::Global)
        .join("acme-reviewer/capability.json");
    let validate_file: Vec<&str> = vec!["validate", manifest.to_str().expect("utf8")];
    let mut commands: Vec<&[&str]> = COMMANDS.to_vec();
    commands.push(&validate_file);
    for args in commands {
        let before = lab.state();
        // Let an mtime written now differ from the snapshot's, whatever the clock resolution.
        std::thread::sleep(Duration::from_millis(20));
        let (out, _) = util::run_bounded(lab.command(args), Duration::from_secs(60));
        out.assert_no_panic();
        let after = lab.state();
        let paths: std::collections::BTreeSet<&PathBuf> =
            before.keys().chain(after.keys()).collect();
        let changed: Vec<String> = paths
            .into_iter()
            .filter(|path| before.get(*path) != after.get(*path))
            .map(|path| {
                format!(
                    "{}: {:?} -> {:?}",
                    path.display(),
                    before.get(path),
                    after.get(path)
                )
            })
            .collect();
        assert!(
            changed.is_empty(),
            "`gsd-lane {}` wrote:\n{}\nstderr:\n{}",
            args.join(" "),
            changed.join("\n"),
            out.stderr
        );
    }
}

/// `doctor` used to pin the HTTP lanes' hosts on first use, so a later host change (never
/// approved by anyone) was blocked as if it had been. Now the first run pins; a later change
/// of host is blocked, and `review` says so once (it used to print the message three times).
#[test]
fn doctor_does_not_pin_and_a_blocked_destination_is_said_once() {
    let lab = Lab::new();
    let pins = lab.env.gsd_home.join(".gsd/egress-pins.json");
    let (out, _) = util::run_bounded(lab.command(&["doctor", "ollama"]), Duration::from_secs(60));
    out.assert_no_panic();
    assert!(!pins.exists(), "doctor pinned a destination");
    // The first run pins the configured host ...
    let run_dir = lab.env.root.path().join("rd");
    std::fs::create_dir_all(&run_dir).expect("run dir");
    std::fs::set_permissions(
        &run_dir,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .expect("chmod");
    std::fs::write(run_dir.join("gsd-review-prompt.md"), "Review this.\n").expect("prompt");
    let rd = run_dir.display().to_string();
    let (out, _) = util::run_bounded(
        lab.command(&["run", "ollama", "--run-dir", &rd]),
        Duration::from_secs(60),
    );
    out.assert_no_panic();
    assert!(pins.exists(), "the first run pins: {}", out.stderr);
    // The same server without the `/v1` path (issue 21 item 3): the pin binds the origin.
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        json!({"review": {"ollama_host": lab.url}}).to_string(),
    )
    .expect("config");
    let (out, _) = util::run_bounded(
        lab.command(&["run", "ollama", "--run-dir", &rd]),
        Duration::from_secs(60),
    );
    out.assert_no_panic();
    assert!(
        !out.stderr.contains("egress_host_changed"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stdout.contains("egress_host_changed"),
        "{}",
        out.stdout
    );
    // ... and another server (another port) is an egress change, blocked and said once.
    let other = Server::start(&[]);
    std::fs::write(
        lab.env.project.join(".planning/config.json"),
        json!({"review": {"ollama_host": other.url()}}).to_string(),
    )
    .expect("config");
    let prompt = lab.env.root.path().join("doc.md");
    std::fs::write(&prompt, "A document.\n").expect("doc");
    let reviews = lab.env.root.path().join("out.md");
    let (out, _) = util::run_bounded(
        lab.command(&[
            "review",
            "--prompt-file",
            prompt.to_str().expect("utf8"),
            "--out",
            reviews.to_str().expect("utf8"),
            "--ollama",
        ]),
        Duration::from_secs(60),
    );
    out.assert_no_panic().assert_status(2);
    let said = out
        .stderr
        .matches("the destination pinned on first use is")
        .count();
    assert_eq!(said, 1, "{}", out.stderr);
    assert_eq!(
        other.connections(),
        0,
        "a blocked lane contacted its new host"
    );
}
