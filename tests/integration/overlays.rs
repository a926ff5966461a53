//! Overlay discovery and the candidate pipeline (manifest.md §6), observed through
//! `list --json`, `flags` and `sections`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{
    acme, acme_as, assert_first_party_intact, has_row, row, row_diagnostic_codes, str_of, Scope,
    TestEnv,
};

/// The first-party `flags` output, from the manifests.
fn default_flags() -> String {
    crate::util::default_flags()
}

/// The number of first-party lanes (their rows lead every listing).
fn first_party_count() -> usize {
    crate::util::first_party().len()
}

/// Asserts a skipped row: not active, with `status` and `code`.
fn assert_skipped(row: &Value, status: &str, code: &str) {
    assert_eq!(row["active"], json!(false), "row should be inactive: {row}");
    assert_eq!(str_of(row, "status"), status, "status of {row}");
    assert_eq!(str_of(row, "code"), code, "code of {row}");
    let expected_kind = if code == "LD-UNCONSENTED" {
        json!("unconsented")
    } else {
        Value::Null
    };
    assert_eq!(row["kind"], expected_kind, "kind of {row}");
    assert!(
        row["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "skipped row has no reason: {row}"
    );
}

fn flags_out(env: &TestEnv, extra: &[&str]) -> String {
    let mut args = vec!["flags"];
    args.extend_from_slice(extra);
    let out = env.run(&args);
    out.assert_status(0);
    out.stdout
}

fn sections_out(env: &TestEnv, extra: &[&str]) -> String {
    let mut args = vec!["sections"];
    args.extend_from_slice(extra);
    let out = env.run(&args);
    out.assert_status(0);
    out.stdout
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[test]
fn global_third_party_lane_is_active_after_first_party() {
    let env = TestEnv::new();
    env.write_overlay_fixture(Scope::Global, "acme-review", "overlays/acme-review");
    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    let acme_row = rows
        .get(first_party_count())
        .expect("a row after the first-party ones");
    assert_eq!(str_of(acme_row, "id"), "acme-review");
    assert_eq!(str_of(acme_row, "scope"), "global");
    assert_eq!(str_of(acme_row, "slug"), "acme");
    assert_eq!(acme_row["flags"], json!(["--acme"]));
    assert_eq!(acme_row["active"], json!(true));
    assert_eq!(str_of(acme_row, "status"), "active");
    assert_eq!(acme_row["code"], Value::Null);
    assert_eq!(acme_row["kind"], Value::Null);
    assert_eq!(
        rows.len(),
        first_party_count() + 1,
        "exactly one overlay row"
    );

    assert_eq!(flags_out(&env, &[]), format!("{}--acme\n", default_flags()));
    let sections = sections_out(&env, &[]);
    assert_eq!(sections.lines().count(), first_party_count() + 1);
    assert_eq!(sections.lines().last(), Some("acme\tAcme"));
}

#[test]
fn project_lane_is_listed_inactive_until_consent_exists() {
    let env = TestEnv::with_planning();
    env.write_overlay_fixture(Scope::Project, "acme-review", "overlays/acme-review");
    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    let acme_row = row(&rows, "project", "acme-review");
    assert_skipped(acme_row, "inactive", "LD-UNCONSENTED");
    assert!(!has_row(&rows, "global", "acme-review"));

    assert_eq!(flags_out(&env, &[]), default_flags());
    assert!(!sections_out(&env, &[]).contains("acme"));
}

/// Writes a global acme overlay changed by `edit`, and checks it is skipped as LD-CROSS with
/// `code`/`field` among its diagnostics and a reason naming both ids.
fn assert_collision(edit: impl FnOnce(&mut Value), code: &str, field: &str, other_id: &str) {
    let env = TestEnv::new();
    let mut manifest = acme();
    edit(&mut manifest);
    env.write_overlay(Scope::Global, "acme-review", &manifest);
    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    let acme_row = row(&rows, "global", "acme-review");
    assert_skipped(acme_row, "skipped", "LD-CROSS");
    let codes = row_diagnostic_codes(acme_row);
    assert!(
        codes.iter().any(|(c, f)| c == code && f == field),
        "expected {code} at {field} among {codes:?}"
    );
    let reason = str_of(acme_row, "reason");
    assert!(
        reason.contains("\"acme-review\"") && reason.contains(&format!("\"{other_id}\"")),
        "reason should name both capability ids (acme-review, {other_id}): {reason}"
    );
    assert_eq!(flags_out(&env, &[]), default_flags());
    assert_eq!(sections_out(&env, &[]).lines().count(), first_party_count());
}

#[test]
fn overlay_colliding_with_first_party_slug_is_skipped() {
    assert_collision(
        |m| m["reviewer"]["slug"] = json!("claude"),
        "X-SLUG-DUP",
        "reviewer.slug",
        "claude",
    );
}

#[test]
fn overlay_colliding_with_first_party_flag_is_skipped() {
    assert_collision(
        |m| m["reviewer"]["flags"] = json!(["--acme", "--agy"]),
        "X-FLAG-DUP",
        "reviewer.flags",
        "antigravity",
    );
}

#[test]
fn overlay_colliding_with_first_party_section_is_skipped() {
    assert_collision(
        |m| m["reviewer"]["reviewsSection"] = json!("Claude"),
        "X-SECTION-DUP",
        "reviewer.reviewsSection",
        "claude",
    );
}

#[test]
fn unsatisfied_engines_range_is_incompatible_unless_compat_version_overrides() {
    let env = TestEnv::new();
    let mut manifest = acme();
    manifest["engines"]["gsd"] = json!(">=99.0.0");
    env.write_overlay(Scope::Global, "acme-review", &manifest);

    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    let acme_row = row(&rows, "global", "acme-review");
    assert_skipped(acme_row, "incompatible", "LD-ENGINES");
    let reason = str_of(acme_row, "reason");
    assert!(
        reason.contains(">=99.0.0") && reason.contains("1.12.0"),
        "reason should quote the range and the host version: {reason}"
    );
    assert_eq!(flags_out(&env, &[]), default_flags());

    // The hidden global option works before and after the subcommand.
    for args in [
        vec!["--compat-version", "99.1.0", "list", "--json"],
        vec!["list", "--json", "--compat-version", "99.1.0"],
    ] {
        let out = env.run(&args);
        out.assert_status(0);
        let rows: Vec<Value> = out.json().as_array().cloned().expect("rows");
        assert_first_party_intact(&rows);
        let acme_row = row(&rows, "global", "acme-review");
        assert_eq!(acme_row["active"], json!(true), "{args:?}: {acme_row}");
        assert_eq!(str_of(acme_row, "status"), "active");
    }
    assert_eq!(
        flags_out(&env, &["--compat-version", "99.1.0"]),
        format!("{}--acme\n", default_flags())
    );
}

/// Version truth (issue 22 item 5): `--version` names the GSD lane-vocabulary version
/// `engines.gsd` is checked against, and `validate` warns, in `list`'s words, about a range that
/// excludes it, instead of accepting what `list` then shows as incompatible.
#[test]
fn version_names_the_gsd_vocabulary_and_validate_warns_as_list_refuses() {
    let env = TestEnv::new();
    let out = env.run(&["--version"]);
    out.assert_status(0);
    let version = out.stdout.trim_end().to_owned();
    let host = version
        .split("GSD lane vocabulary ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("--version names no GSD vocabulary: {version}"))
        .to_owned();
    assert!(version.starts_with("gsd-lane "), "{version}");
    assert!(version.contains("engines.gsd"), "{version}");
    // The vocabulary of upstream 1.12.0 (spec/upstream-since-2026-08.md §10.5), not the
    // 1.10.0 the baseline spec was written against.
    assert_eq!(host, "1.12.0", "{version}");

    let mut manifest = acme();
    manifest["engines"]["gsd"] = json!(">=1.42.0");
    let path = env.write_overlay(Scope::Global, "acme-review", &manifest);
    let (out, report) = crate::util::validate(&env, std::slice::from_ref(&path));
    out.assert_status(0);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let warning = report
        .warnings
        .iter()
        .find(|w| w["code"] == "LD-ENGINES")
        .unwrap_or_else(|| panic!("no LD-ENGINES warning: {:?}", report.warnings));
    assert_eq!(str_of(warning, "field"), "engines.gsd");
    let rows = env.list(&[]);
    let listed = str_of(row(&rows, "global", "acme-review"), "reason");
    assert_eq!(
        listed,
        format!("engines.gsd \">=1.42.0\" is not satisfied by host version {host}")
    );
    let words = listed
        .strip_prefix("engines.gsd ")
        .expect("list names the field");
    assert!(
        str_of(warning, "message").starts_with(&format!("engines.gsd: {words}; ")),
        "validate must use list's words: {warning} vs {listed}"
    );

    // A range that admits the host version: no warning; with --compat-version, checked
    // against that version instead.
    manifest["engines"]["gsd"] = json!(format!(">={host}"));
    let path = env.write_overlay(Scope::Global, "acme-review", &manifest);
    let (_, report) = crate::util::validate(&env, std::slice::from_ref(&path));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let out = env.run(&[
        "--compat-version",
        "0.9.0",
        "validate",
        "--json",
        path.to_str().expect("utf-8"),
    ]);
    let report = crate::util::Report::of(&out.json());
    assert!(
        report.warnings.iter().any(|w| w["code"] == "LD-ENGINES"),
        "{:?}",
        report.warnings
    );
}

#[test]
fn reserved_id_prefixes_are_skipped() {
    let env = TestEnv::new();
    for (index, id) in ["gsd-acme", "gsd-core-x", "anthropic-y"].iter().enumerate() {
        let mut manifest = acme_as(id);
        manifest["reviewer"]["slug"] = json!(format!("acme{index}"));
        manifest["reviewer"]["flags"] = json!([format!("--acme{index}")]);
        manifest["reviewer"]["reviewsSection"] = json!(format!("Acme {index}"));
        manifest["reviewer"]["modelConfigKey"] = Value::Null;
        manifest["reviewer"]["invoke"]["modelArg"] = Value::Null;
        manifest["reviewer"]["invoke"]["args"] = json!(["review", "-p", "-"]);
        manifest.as_object_mut().expect("object").remove("config");
        env.write_overlay(Scope::Global, id, &manifest);
    }
    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    for id in ["gsd-acme", "gsd-core-x", "anthropic-y"] {
        assert_skipped(row(&rows, "global", id), "skipped", "LD-RESERVED");
    }
    assert_eq!(flags_out(&env, &[]), default_flags());
}

#[test]
fn pending_ledger_entry_is_skipped() {
    let env = TestEnv::new();
    env.write_overlay_fixture(Scope::Global, "acme-review", "overlays/acme-review");
    std::fs::write(
        env.gsd_home.join(".gsd-capabilities.json"),
        r#"{"entries":{"acme-review":{"_pending":true}}}"#,
    )
    .expect("write ledger");
    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    assert_skipped(row(&rows, "global", "acme-review"), "skipped", "LD-PENDING");
    assert_eq!(flags_out(&env, &[]), default_flags());
}

/// A valid acme manifest padded with trailing whitespace to 9 MiB (valid JSON, too large).
fn nine_mib_manifest(id: &str) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(&acme_as(id)).expect("serialize");
    bytes.resize(9 * 1024 * 1024, b' ');
    bytes
}

#[test]
fn missing_oversized_and_special_manifests_are_skipped_without_hanging() {
    let env = TestEnv::new();
    let mut expected = vec!["acme-absent", "acme-big"];
    env.overlay_dir(Scope::Global, "acme-absent");
    env.write_overlay_bytes(Scope::Global, "acme-big", &nine_mib_manifest("acme-big"));
    #[cfg(unix)]
    {
        let fifo = env
            .overlay_dir(Scope::Global, "acme-fifo")
            .join("capability.json");
        match std::process::Command::new("mkfifo").arg(&fifo).status() {
            Ok(status) if status.success() => expected.push("acme-fifo"),
            other => eprintln!("SKIP: mkfifo unavailable ({other:?}); FIFO case not run"),
        }
    }
    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    for id in expected {
        assert_skipped(row(&rows, "global", id), "skipped", "LD-MISSING");
    }
    assert_eq!(flags_out(&env, &[]), default_flags());
}

#[test]
fn unparseable_manifests_are_skipped() {
    let env = TestEnv::new();
    env.write_overlay_bytes(Scope::Global, "acme-empty", b"");
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend(serde_json::to_vec(&acme_as("acme-bom")).expect("serialize"));
    env.write_overlay_bytes(Scope::Global, "acme-bom", &bom);
    env.write_overlay_bytes(Scope::Global, "acme-truncated", b"{ \"id\": ");
    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    for id in ["acme-bom", "acme-empty", "acme-truncated"] {
        assert_skipped(row(&rows, "global", id), "skipped", "LD-PARSE");
    }
    assert_eq!(flags_out(&env, &[]), default_flags());
}

#[test]
fn invalid_manifest_is_skipped_and_first_party_unaffected() {
    let env = TestEnv::new();
    let mut manifest = acme();
    manifest["reviewer"]["transport"] = json!("grpc");
    env.write_overlay(Scope::Global, "acme-review", &manifest);
    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    let acme_row = row(&rows, "global", "acme-review");
    assert_skipped(acme_row, "skipped", "LD-INVALID");
    let codes = row_diagnostic_codes(acme_row);
    assert!(
        codes
            .iter()
            .any(|(c, f)| c == "RB-TRANSPORT" && f == "reviewer.transport"),
        "expected RB-TRANSPORT at reviewer.transport among {codes:?}"
    );
    assert_eq!(flags_out(&env, &[]), default_flags());
    assert_eq!(sections_out(&env, &[]).lines().count(), first_party_count());
}

/// A lane `id` with its own slug and section and the given flags, no config.
fn lane(id: &str, slug: &str, section: &str, flags: Value) -> Value {
    let mut manifest = acme_as(id);
    manifest["reviewer"]["slug"] = json!(slug);
    manifest["reviewer"]["flags"] = flags;
    manifest["reviewer"]["reviewsSection"] = json!(section);
    manifest["reviewer"]["modelConfigKey"] = Value::Null;
    manifest["reviewer"]["invoke"]["modelArg"] = Value::Null;
    manifest["reviewer"]["invoke"]["args"] = json!(["review", "-p", "-"]);
    manifest.as_object_mut().expect("object").remove("config");
    manifest
}

#[test]
fn earlier_folder_in_byte_order_wins_a_flag_collision() {
    let env = TestEnv::new();
    // Created in the opposite order; "acme-x" < "acme2" in byte order ('-' < '2'), although
    // an order that ignores punctuation would put "acme2" first.
    env.write_overlay(
        Scope::Global,
        "acme2",
        &lane("acme2", "acme_two", "Acme Two", json!(["--acme"])),
    );
    env.write_overlay(
        Scope::Global,
        "acme-x",
        &lane("acme-x", "acme_x", "Acme X", json!(["--acme"])),
    );
    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    let winner = row(&rows, "global", "acme-x");
    assert_eq!(winner["active"], json!(true), "{winner}");
    assert_eq!(str_of(&rows[first_party_count()], "id"), "acme-x");
    let loser = row(&rows, "global", "acme2");
    assert_skipped(loser, "skipped", "LD-CROSS");
    let codes = row_diagnostic_codes(loser);
    assert!(
        codes
            .iter()
            .any(|(c, f)| c == "X-FLAG-DUP" && f.starts_with("reviewer.flags")),
        "expected X-FLAG-DUP among {codes:?}"
    );
    assert_eq!(flags_out(&env, &[]), format!("{}--acme\n", default_flags()));
    assert_eq!(
        sections_out(&env, &[]).lines().last(),
        Some("acme_x\tAcme X")
    );
}

/// Writes a project-scope-style overlay under `root/.gsd/capabilities/<id>`.
fn write_project_overlay(root: &Path, id: &str, slug: &str) -> PathBuf {
    let dir = root.join(".gsd").join("capabilities").join(id);
    std::fs::create_dir_all(&dir).expect("create overlay dir");
    let path = dir.join("capability.json");
    let text = serde_json::to_vec_pretty(&lane(
        id,
        slug,
        &format!("Section {slug}"),
        json!([format!("--{slug}")]),
    ))
    .expect("serialize");
    std::fs::write(&path, text).expect("write overlay");
    path
}

#[test]
fn project_option_overrides_project_discovery() {
    // The working directory is itself a project (it holds `.planning/`), so discovery alone
    // would pick it; `--project` must win.
    let env = TestEnv::with_planning();
    let other = env.root.path().join("other");
    std::fs::create_dir_all(other.join(".planning")).expect("create other/.planning");
    let here = write_project_overlay(&env.project, "acme-here", "here");
    let there = write_project_overlay(&other, "acme-there", "there");

    let rows = env.list(&[]);
    assert_first_party_intact(&rows);
    let here_row = row(&rows, "project", "acme-here");
    assert_skipped(here_row, "inactive", "LD-UNCONSENTED");
    assert!(same_path(Path::new(&str_of(here_row, "path")), &here));
    assert!(!has_row(&rows, "project", "acme-there"));

    let other_arg = other.to_string_lossy().into_owned();
    let rows = env.list(&["--project", &other_arg]);
    assert_first_party_intact(&rows);
    let there_row = row(&rows, "project", "acme-there");
    assert_skipped(there_row, "inactive", "LD-UNCONSENTED");
    assert!(same_path(Path::new(&str_of(there_row, "path")), &there));
    assert!(!has_row(&rows, "project", "acme-here"));

    // A relative --project is resolved against the working directory.
    let rows = env.list(&["--project", "../other"]);
    assert!(has_row(&rows, "project", "acme-there"));
    assert!(!has_row(&rows, "project", "acme-here"));
}

#[test]
fn project_root_is_found_from_a_subdirectory() {
    let env = TestEnv::with_planning();
    let manifest = write_project_overlay(&env.project, "acme-review", "acme");
    let deep = env.project.join("src").join("deep").join("er");
    std::fs::create_dir_all(&deep).expect("create subdirectory");
    let out = env.cmd(&["list", "--json"]).current_dir(&deep).run();
    out.assert_status(0);
    let rows: Vec<Value> = out.json().as_array().cloned().expect("rows");
    assert_first_party_intact(&rows);
    let acme_row = row(&rows, "project", "acme-review");
    assert_skipped(acme_row, "inactive", "LD-UNCONSENTED");
    assert!(
        same_path(Path::new(&str_of(acme_row, "path")), &manifest),
        "path {} is not {}",
        acme_row["path"],
        manifest.display()
    );
}
