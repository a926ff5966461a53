//! A capability that ships its own program (`"binary": "./bin/<name>"`, manifest.md §2.3,
//! trust.md §7.5): resolved against a global install, disclosed and signed as that absolute
//! path, and never run from a project folder (the repository under review), consent or not.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{self, Scope, TestEnv};

/// Writes the capability folder `shipper` (slug `shipper`) into `dir`: its program
/// `bin/shipper-review` touches `marker` and prints a review with the prompt's first line.
fn write_folder(dir: &Path, marker: &Path) -> PathBuf {
    let mut manifest = util::acme_as("shipper");
    manifest["reviewer"]["slug"] = json!("shipper");
    manifest["reviewer"]["flags"] = json!(["--shipper"]);
    manifest["reviewer"]["reviewsSection"] = json!("Shipper");
    manifest["reviewer"]["probe"]["binary"] = json!("./bin/shipper-review");
    manifest["reviewer"]["invoke"]["binary"] = json!("./bin/shipper-review");
    manifest["reviewer"]["invoke"]["args"] = json!(["-"]);
    manifest["reviewer"]["invoke"]["modelArg"] = Value::Null;
    manifest["reviewer"]["modelConfigKey"] = Value::Null;
    manifest.as_object_mut().expect("object").remove("config");
    std::fs::create_dir_all(dir.join("bin")).expect("bin");
    std::fs::write(
        dir.join("capability.json"),
        serde_json::to_string_pretty(&manifest).expect("json"),
    )
    .expect("manifest");
    let program = dir.join("bin/shipper-review");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\n: > '{}'\nread -r first\nprintf '# Shipped review\\n\\nfirst line: %s\\n' \"$first\"\n",
            marker.display()
        ),
    )
    .expect("program");
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    dir.to_path_buf()
}

/// Where the program leaves its mark: a folder beside the project (the sandbox refuses a new
/// entry directly in an ancestor of the repository).
fn marker(env: &TestEnv) -> PathBuf {
    let dir = env.root.path().join("marks");
    std::fs::create_dir_all(&dir).expect("marks");
    dir.join("ran")
}

fn prompt(env: &TestEnv) -> PathBuf {
    let path = env.root.path().join("prompt.md");
    std::fs::write(&path, "Review plan 7\nmore\n").expect("prompt");
    path
}

#[test]
fn a_global_install_runs_the_program_its_folder_ships() {
    let env = TestEnv::with_planning();
    let marker = marker(&env);
    let source = write_folder(&env.root.path().join("src/shipper"), &marker);
    let out = env.run(&[
        "install",
        "--global",
        "--yes",
        "--json",
        source.to_str().expect("utf8"),
    ]);
    out.assert_status(0);
    let installed = std::fs::canonicalize(env.capabilities_dir(Scope::Global).join("shipper"))
        .expect("installed folder");
    let program = installed.join("bin/shipper-review").display().to_string();
    // The install disclosed the path the program runs from, not `./bin/…`.
    let disclosed = out.json()["disclosure"].to_string();
    assert!(disclosed.contains(&program), "{disclosed}");
    assert!(!disclosed.contains("./bin/"), "{disclosed}");

    // list: active, and the program found where it was installed (PATH does not hold it).
    let rows = env.list(&[]);
    let row = util::row(&rows, "global", "shipper");
    assert_eq!(row["status"], "active", "{row}");
    assert_eq!(
        row["here"],
        json!(format!("{program} found at {program}")),
        "{row}"
    );
    // disclose shows and signs the absolute path.
    let disclose = env.run(&["disclose", "shipper", "--json"]);
    disclose.assert_status(0);
    let text = disclose.stdout.clone();
    assert!(
        text.contains(&format!("\"binary\": \"{program}\""))
            || text.contains(&format!("\"binary\":\"{program}\"")),
        "{text}"
    );

    // A real run, from the project, with no PATH entry for the program.
    let prompt = prompt(&env);
    let run = env.run(&[
        "run",
        "shipper",
        "--json",
        "--prompt-file",
        prompt.to_str().expect("utf8"),
    ]);
    run.assert_status(0);
    assert_eq!(run.json()["ok"], true, "{}", run.stdout);
    let run_dir = PathBuf::from(run.json()["runDir"].as_str().unwrap_or_default());
    let review = util::read_text(&run_dir.join("gsd-review-shipper.md"));
    assert!(review.contains("first line: Review plan 7"), "{review}");
    assert!(marker.exists());

    // The program removed after install: not found, and the run says so; nothing else runs.
    std::fs::remove_file(installed.join("bin/shipper-review")).expect("remove");
    let rows = env.list(&[]);
    let row = util::row(&rows, "global", "shipper");
    assert_eq!(row["here"], json!(format!("{program} not found")), "{row}");
}

#[test]
fn a_project_folder_never_runs_the_program_it_ships_approved_or_not() {
    let env = TestEnv::with_planning();
    let marker = marker(&env);
    let folder = write_folder(
        &env.capabilities_dir(Scope::Project).join("shipper"),
        &marker,
    );

    // Skipped at load with its reason and fix; not "active".
    let rows = env.list(&[]);
    let row = util::row(&rows, "project", "shipper");
    assert_eq!(row["code"], "LD-PROGRAM-IN-REPOSITORY", "{row}");
    assert_eq!(row["active"], false, "{row}");
    assert!(
        row["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("--global"),
        "{row}"
    );

    // Approval refuses it: consent cannot make the repository a place to run from.
    let approve = env.run(&["trust", "approve", "shipper", "--yes", "--json"]);
    approve.assert_status(1);
    assert!(
        approve.stdout.contains("TR-BINARY-PATH"),
        "{}",
        approve.stdout
    );

    // So does a project-scope install of the same folder.
    let source = write_folder(&env.root.path().join("src/shipper"), &marker);
    let install = env.run(&[
        "install",
        "--project-scope",
        "--yes",
        "--json",
        source.to_str().expect("utf8"),
    ]);
    install.assert_status(1);
    assert!(
        install.stdout.contains("TR-BINARY-PATH"),
        "{}",
        install.stdout
    );

    // And a run names the reason; the program never ran.
    let prompt = prompt(&env);
    let run = env.run(&[
        "run",
        "shipper",
        "--prompt-file",
        prompt.to_str().expect("utf8"),
    ]);
    run.assert_status(2);
    assert!(
        run.stderr.contains("repository under review"),
        "{}",
        run.stderr
    );
    assert!(!marker.exists(), "a program shipped in the repository ran");
    assert!(folder.join("bin/shipper-review").exists());
}

#[test]
fn an_absolute_path_into_a_project_folder_is_refused_too() {
    let env = TestEnv::with_planning();
    let marker = marker(&env);
    let folder = write_folder(
        &env.capabilities_dir(Scope::Project).join("shipper"),
        &marker,
    );
    let manifest_path = folder.join("capability.json");
    let mut manifest = util::read_json(&manifest_path);
    let absolute = folder.join("bin/shipper-review").display().to_string();
    manifest["reviewer"]["probe"]["binary"] = json!(absolute);
    manifest["reviewer"]["invoke"]["binary"] = json!(absolute);
    std::fs::write(&manifest_path, manifest.to_string()).expect("manifest");
    let approve = env.run(&["trust", "approve", "shipper", "--yes", "--json"]);
    approve.assert_status(1);
    assert!(
        approve.stdout.contains("TR-BINARY-PATH"),
        "{}",
        approve.stdout
    );
    assert!(!marker.exists());
}
