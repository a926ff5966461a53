//! Consent-store cases of trust.md §9.3 that need no binary (C4-C10, C13) and crash safety.

use super::*;

fn store() -> (tempfile::TempDir, ConsentStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = ConsentStore::new(dir.path());
    (dir, store)
}

fn record(root: &str, id: &str, host: Option<&str>) -> Record {
    Record::new(NewRecord {
        project_root: root.into(),
        id: id.into(),
        integrity: "sha512-i".into(),
        disclosure_signature: "[[],[],[]]".into(),
        content_hash: format!("sha512-{id}"),
        consented_at: "2026-07-30T12:34:56.789Z".into(),
        reviewer_host: host.map(str::to_owned),
        lane_binding_v2: None,
    })
}

fn write_raw(store: &ConsentStore, value: &Value) {
    fs::create_dir_all(store.dir()).expect("mkdir");
    fs::write(store.path(), value.to_string()).expect("write store");
}

fn raw_record(root: &str, id: &str) -> Value {
    record(root, id, None).to_json()
}

#[test]
fn c04_mistyped_reviewer_host_drops_only_that_record() {
    let (_dir, store) = store();
    let mut bad = raw_record("/p", "bad");
    bad["reviewerHost"] = json!(42);
    write_raw(
        &store,
        &json!({"version": "1", "records": {"k1": bad, "k2": raw_record("/p", "good")}}),
    );
    let records = store.read();
    assert!(records.get("/p", "bad").is_none());
    assert!(records.get("/p", "good").is_some());
    assert!(!store.has_project_consent("/p", "bad", "sha512-bad"));
    assert!(store.has_project_consent("/p", "good", "sha512-good"));
}

#[test]
fn c05_record_without_host_is_valid_and_has_no_host() {
    let (_dir, store) = store();
    store.record(record("/p", "legacy", None)).expect("record");
    assert!(store.has_project_consent("/p", "legacy", "sha512-legacy"));
    assert_eq!(store.read_consented_reviewer_host("/p", "legacy"), None);
    let mut empty = raw_record("/p", "blank");
    empty["reviewerHost"] = json!("");
    write_raw(&store, &json!({"records": {"x": empty}}));
    assert!(store.read().get("/p", "blank").is_some());
    assert_eq!(store.read_consented_reviewer_host("/p", "blank"), None);
}

#[test]
fn c06_hostile_stores_are_empty() {
    let (_dir, store) = store();
    let valid = json!({"version": "1", "records": {"k": raw_record("/p", "a")}});
    // Invalid JSON.
    fs::create_dir_all(store.dir()).expect("mkdir");
    fs::write(store.path(), "{not json").expect("write");
    assert!(store.read().all().is_empty());
    // 9 MiB.
    let mut big = valid.to_string();
    big.push_str(&" ".repeat(9 * 1024 * 1024));
    fs::write(store.path(), big).expect("write");
    assert!(store.read().all().is_empty());
    assert!(!store.has_project_consent("/p", "a", "sha512-a"));
    // 4097 records.
    let mut records = Map::new();
    for i in 0..=MAX_RECORDS {
        records.insert(format!("k{i}"), raw_record("/p", &format!("id-{i}")));
    }
    write_raw(&store, &json!({"records": records}));
    assert!(store.read().all().is_empty());
    assert_eq!(store.read_consented_reviewer_host("/p", "id-1"), None);
    // Root or records of the wrong type; poison keys; a directory in place of the file.
    write_raw(&store, &json!([1]));
    assert!(store.read().all().is_empty());
    write_raw(&store, &json!({"records": []}));
    assert!(store.read().all().is_empty());
    write_raw(
        &store,
        &json!({"records": {"__proto__": raw_record("/p", "a")}}),
    );
    assert!(store.read().all().is_empty());
    fs::remove_file(store.path()).expect("rm");
    fs::create_dir(store.path()).expect("dir");
    assert!(store.read().all().is_empty());
}

#[cfg(unix)]
#[test]
fn damaged_stores_are_reported_for_decisions_and_a_missing_one_is_empty() {
    let (_dir, store) = store();
    assert_eq!(store.load(), Ok(Records::default()));
    fs::create_dir_all(store.dir()).expect("dir");
    for (text, why) in [
        ("{\"records\": {", "invalid JSON"),
        ("", "empty"),
        ("  \n", "empty"),
        ("[]", "not an object"),
        ("{\"version\": \"2\", \"records\": {}}", "version"),
        (
            "{\"version\": \"1\", \"records\": []}",
            "records is not an object",
        ),
    ] {
        fs::write(store.path(), text).expect("write");
        let damage = store.load().expect_err(why);
        assert!(damage.why.contains(why), "{why}: {}", damage.why);
        assert!(store.read().all().is_empty(), "read() stays lenient");
    }
    // One mistyped record: the others decide, but not the pair it claims.
    let mut bad = raw_record("/p", "ollama");
    bad["reviewerHost"] = json!(5);
    write_raw(
        &store,
        &json!({"version": "1", "records": {"a": bad, "b": raw_record("/p", "other")}}),
    );
    let records = store.load().expect("readable");
    assert!(records.has_damaged_entry_for("/p", "ollama"));
    assert!(!records.has_damaged_entry_for("/p", "other"));
    assert!(!records.has_damaged_entry_for("/q", "ollama"));
    assert!(records.get("/p", "other").is_some());
}

#[test]
fn c06_fifo_store_is_empty_without_blocking() {
    let (_dir, store) = store();
    fs::create_dir_all(store.dir()).expect("mkdir");
    let status = std::process::Command::new("mkfifo")
        .arg(store.path())
        .status()
        .expect("mkfifo");
    assert!(status.success());
    assert!(store.read().all().is_empty());
    assert!(matches!(
        store.record(record("/p", "a", None)),
        Err(StoreError::Unreadable { .. })
    ));
}

#[test]
fn c07_file_format_is_byte_exact() {
    let (_dir, store) = store();
    store
        .record(record(
            "/home/u/src/app",
            "example-llm",
            Some("http://localhost:8000"),
        ))
        .expect("record");
    let text = fs::read_to_string(store.path()).expect("read");
    let expected = concat!(
        "{\n",
        "  \"version\": \"1\",\n",
        "  \"records\": {\n",
        "    \"{\\\"r\\\":\\\"/home/u/src/app\\\",\\\"i\\\":\\\"example-llm\\\"}\": {\n",
        "      \"projectRoot\": \"/home/u/src/app\",\n",
        "      \"id\": \"example-llm\",\n",
        "      \"scope\": \"project\",\n",
        "      \"integrity\": \"sha512-i\",\n",
        "      \"disclosureSignature\": \"[[],[],[]]\",\n",
        "      \"contentHash\": \"sha512-example-llm\",\n",
        "      \"consentedAt\": \"2026-07-30T12:34:56.789Z\",\n",
        "      \"reviewerHost\": \"http://localhost:8000\"\n",
        "    }\n",
        "  }\n",
        "}\n"
    );
    assert_eq!(text, expected);
}

#[test]
fn c08_disk_key_is_ignored() {
    let (_dir, store) = store();
    write_raw(
        &store,
        &json!({"records": {"{\"r\":\"/elsewhere\",\"i\":\"other\"}": raw_record("/p", "real")}}),
    );
    let records = store.read();
    assert!(records.get("/p", "real").is_some());
    assert!(records.get("/elsewhere", "other").is_none());
    // Two records claiming one pair: the later one in file order wins.
    let mut later = raw_record("/p", "dup");
    later["contentHash"] = json!("sha512-later");
    write_raw(
        &store,
        &json!({"records": {"a": raw_record("/p", "dup"), "b": later}}),
    );
    assert_eq!(
        store.read().get("/p", "dup").map(Record::content_hash),
        Some("sha512-later")
    );
}

/// C9 worker: records 50 capabilities into the store named by the environment.
#[test]
fn c09_worker() {
    let (Some(home), Ok(prefix)) = (
        std::env::var_os("GSD_LANE_C09_HOME"),
        std::env::var("GSD_LANE_C09_PREFIX"),
    ) else {
        return;
    };
    let store = ConsentStore::new(Path::new(&home));
    for i in 0..50 {
        store
            .record(record("/p", &format!("{prefix}-{i}"), None))
            .expect("record under contention");
    }
}

#[test]
fn c09_two_processes_record_concurrently() {
    let (dir, store) = store();
    let exe = std::env::current_exe().expect("test executable");
    let spawn = |prefix: &str| {
        std::process::Command::new(&exe)
            .args([
                "--exact",
                "trust::consent::tests::c09_worker",
                "--test-threads=1",
            ])
            .env("GSD_LANE_C09_HOME", dir.path())
            .env("GSD_LANE_C09_PREFIX", prefix)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("spawn worker")
    };
    let mut a = spawn("alpha");
    let mut b = spawn("beta");
    assert!(a.wait().expect("wait a").success());
    assert!(b.wait().expect("wait b").success());
    let records = store.read();
    assert_eq!(records.all().len(), 100);
    for prefix in ["alpha", "beta"] {
        for i in 0..50 {
            assert!(records.get("/p", &format!("{prefix}-{i}")).is_some());
        }
    }
    let leftovers: Vec<_> = fs::read_dir(store.dir())
        .expect("list")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "consent.json")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn c10_revoke_reports_whether_anything_was_removed() {
    let (_dir, store) = store();
    store.record(record("/p", "a", None)).expect("record");
    store.record(record("/p", "b", None)).expect("record");
    assert!(store.revoke("/p", "a").expect("revoke"));
    assert!(store.read().get("/p", "a").is_none());
    assert!(store.read().get("/p", "b").is_some());
    assert!(!store.revoke("/p", "a").expect("revoke"));
    assert!(!store.revoke("/p", "Not_An_Id").expect("revoke"));
    assert!(!store.revoke("/other", "b").expect("revoke"));
}

#[test]
fn c13_full_store_refuses_new_keys_only() {
    let (_dir, store) = store();
    let mut records = Map::new();
    for i in 0..MAX_RECORDS {
        let r = raw_record("/p", &format!("id-{i}"));
        records.insert(store_key("/p", &format!("id-{i}")), r);
    }
    write_raw(&store, &json!({"version": "1", "records": records}));
    assert_eq!(store.read().all().len(), MAX_RECORDS);
    let err = store
        .record(record("/p", "new-one", None))
        .expect_err("full");
    assert!(matches!(err, StoreError::Full { .. }));
    assert!(err.to_string().starts_with("consent store full"));
    store
        .record(record("/p", "id-7", Some("http://localhost:1")))
        .expect("re-recording an existing key");
    assert_eq!(
        store.read_consented_reviewer_host("/p", "id-7").as_deref(),
        Some("http://localhost:1")
    );
}

#[test]
fn unknown_fields_and_other_records_are_kept_exactly() {
    let (_dir, store) = store();
    let mut other = raw_record("/q", "other");
    other["futureField"] = json!({"nested": [1, 2.5]});
    write_raw(
        &store,
        &json!({"version": "1", "records": {store_key("/q", "other"): other.clone()}}),
    );
    store.record(record("/p", "mine", None)).expect("record");
    let records = store.read();
    assert_eq!(records.get("/q", "other").map(Record::to_json), Some(other));
}

#[test]
fn unreadable_store_is_never_overwritten() {
    let (_dir, store) = store();
    fs::create_dir_all(store.dir()).expect("mkdir");
    fs::write(store.path(), "{ corrupt").expect("write");
    assert!(matches!(
        store.record(record("/p", "a", None)),
        Err(StoreError::Unreadable { .. })
    ));
    assert_eq!(fs::read_to_string(store.path()).expect("read"), "{ corrupt");
}

/// Crash worker: records until killed, printing each id once its write has returned.
#[test]
fn crash_worker() {
    let Some(home) = std::env::var_os("GSD_LANE_CRASH_HOME") else {
        return;
    };
    let store = ConsentStore::new(Path::new(&home));
    for i in 0..10_000 {
        let id = format!("crash-{i}");
        store.record(record("/p", &id, None)).expect("record");
        println!("done {id}");
    }
}

#[cfg(unix)]
#[test]
fn crash_mid_write_never_loses_or_corrupts_records() {
    use std::io::BufRead;
    let (dir, store) = store();
    store
        .record(record("/p", "before-crash", None))
        .expect("seed");
    let exe = std::env::current_exe().expect("test executable");
    let mut child = std::process::Command::new(&exe)
        .args([
            "--exact",
            "trust::consent::tests::crash_worker",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("GSD_LANE_CRASH_HOME", dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn worker");
    let stdout = child.stdout.take().expect("stdout");
    let mut done = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.expect("line");
        if let Some(id) = line.strip_prefix("done ") {
            done.push(id.to_owned());
            if done.len() == 40 {
                // SIGKILL at an arbitrary point of the next write.
                child.kill().expect("kill");
                break;
            }
        }
    }
    let _ = child.wait();
    let text = fs::read_to_string(store.path()).expect("store still there");
    let records = Records::decode(&text).expect("store still parses");
    assert!(records.get("/p", "before-crash").is_some());
    for id in &done {
        assert!(records.get("/p", id).is_some(), "{id} lost");
    }
}

#[test]
fn iso_timestamps() {
    assert_eq!(crate::clock::iso_utc(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(
        crate::clock::iso_utc(1_785_414_896_789),
        "2026-07-30T12:34:56.789Z"
    );
    assert_eq!(
        crate::clock::iso_utc(951_782_400_000),
        "2000-02-29T00:00:00.000Z"
    );
}
