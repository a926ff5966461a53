//! Arbitrary lane JSON + arbitrary config → a plan or a typed refusal; never panics, and a
//! plan never keeps a placeholder or escapes the run dir.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (lane_text, config_text) = text.split_once('\u{0}').unwrap_or((&text, "{}"));
    let Ok(lane) = serde_json::from_str::<serde_json::Value>(lane_text) else { return };
    let config = serde_json::from_str::<serde_json::Value>(config_text).unwrap_or_default();
    let config = gsd_lane::api::config::ProjectConfig::from_value(config);
    let inputs = gsd_lane::api::plan::PlanInputs {
        run_dir: "/run".into(),
        repo_root: "/repo".into(),
        ..Default::default()
    };
    if let Ok(plan) = gsd_lane::api::plan::resolve("acme", &lane, &config, &inputs) {
        assert!(plan.review_path.starts_with("/run/gsd-review-"));
        assert!(!plan.review_path[5..].contains('/'));
        if let Some(spawn) = plan.spawn() {
            for arg in &spawn.argv {
                assert!(!["{{model}}", "{{effort}}", "{{output}}", "{{prompt}}"].contains(&arg.as_str()));
            }
        }
    }
    if let Ok(spec) = gsd_lane::api::manifest::LaneSpec::from_body(&lane) {
        let _ = gsd_lane::api::plan::prompt_budget(&spec, &config);
    }
});
