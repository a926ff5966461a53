//! What the human screens say: `disclose` lists the environment a lane gets, and the consent
//! screens of `install` and `trust approve` state the sandbox posture.

use crate::util::{self, Scope, TestEnv};

const POSTURE: &str =
    "sandbox: confines writes only (see posture) — the lane can read every file you can and send it anywhere";

#[test]
fn disclose_lists_the_variables_a_third_party_lane_gets() {
    let env = TestEnv::with_planning();
    env.write_overlay(Scope::Global, "acme-review", &util::acme());
    let out = env.run(&["disclose", "acme-review"]);
    out.assert_status(0);
    assert!(
        out.stdout
            .contains("listed: PATH, HOME, USERPROFILE, LANG, LANGUAGE, LC_*, TMPDIR, TMP, TEMP"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "  {}",
            POSTURE.replacen("sandbox: ", "sandbox:     ", 1)
        )),
        "{}",
        out.stdout
    );
}

#[test]
fn the_consent_screens_state_the_sandbox_posture() {
    let env = TestEnv::with_planning();
    let source = env.root.path().join("acme-review");
    std::fs::create_dir_all(&source).expect("mkdir");
    std::fs::write(
        source.join("capability.json"),
        serde_json::to_string_pretty(&util::acme()).expect("json"),
    )
    .expect("write");
    let folder = source.display().to_string();
    let out = env.run(&["install", &folder, "--project-scope", "--yes"]);
    out.assert_status(0);
    assert!(out.stdout.contains(POSTURE), "install:\n{}", out.stdout);
    let out = env.run(&["trust", "revoke", "acme-review"]);
    out.assert_status(0);
    let out = env.run(&["trust", "approve", "acme-review", "--yes"]);
    out.assert_status(0);
    assert!(out.stdout.contains(POSTURE), "approve:\n{}", out.stdout);
}
