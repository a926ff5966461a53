#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

/// A walk of `root` leaving out `skip`, under `bounds`.
fn take(root: &Path, skip: &[PathBuf], bounds: Bounds) -> Snapshot {
    let skip = Skip {
        exact: skip.to_vec(),
        prefixed: Vec::new(),
    };
    Snapshot::take(root, &skip, "", bounds)
}

fn changes(before: &Snapshot, after: &Snapshot) -> Comparison {
    changes_of(std::slice::from_ref(before), std::slice::from_ref(after))
}

/// A resolved temporary directory.
fn tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

#[test]
fn every_kind_of_change_is_listed_and_an_untouched_tree_has_none() {
    let (_dir, root) = tempdir();
    let root = root.as_path();
    fs::create_dir_all(root.join(".git/refs")).unwrap();
    for name in ["a", "b", "c", "d"] {
        fs::write(root.join(name), name).unwrap();
    }
    fs::write(root.join(".git/HEAD"), "ref").unwrap();
    fs::create_dir(root.join("moved")).unwrap();
    let run = root.join("run");
    fs::create_dir(&run).unwrap();
    let skip = std::slice::from_ref(&run);
    let before = take(root, skip, Bounds::default());
    let same = changes(&before, &take(root, skip, Bounds::default()));
    assert_eq!(
        same,
        Comparison {
            compared: 8,
            ..Comparison::default()
        }
    );

    fs::write(root.join("a"), "changed!").unwrap();
    fs::remove_file(root.join("b")).unwrap();
    fs::write(root.join("new"), "n").unwrap();
    fs::write(root.join(".git/HEAD"), "moved").unwrap();
    fs::write(run.join("review.md"), "ok").unwrap();
    fs::set_permissions(root.join("c"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::rename(root.join("moved"), root.join("renamed")).unwrap();
    fs::set_permissions(root, fs::Permissions::from_mode(0o750)).unwrap();
    fs::create_dir_all(root.join(".git/hooks")).unwrap();
    fs::write(root.join(".git/hooks/pre-commit"), "evil").unwrap();
    let found = changes(&before, &take(root, skip, Bounds::default()));
    for expected in [
        "modified a",
        "removed b",
        "created new",
        "modified .git/HEAD",
        "mode changed c",
        "removed moved",
        "created renamed",
        "mode changed .",
        "created .git/hooks",
        "created .git/hooks/pre-commit",
    ] {
        assert!(
            found.changes.contains(&expected.to_owned()),
            "{expected}: {found:?}"
        );
    }
    assert!(!found
        .changes
        .iter()
        .any(|c| c.contains("review.md") || c.contains("run")));
    assert_eq!(found.partial, None);
}

#[test]
fn a_chmod_back_a_utime_and_an_extended_attribute_are_seen() {
    let (_dir, root) = tempdir();
    for name in ["chmod", "utime", "xattr", "calm"] {
        fs::write(root.join(name), name).unwrap();
    }
    let before = take(&root, &[], Bounds::default());
    // The status-change time has a granularity of the kernel's clock tick.
    std::thread::sleep(Duration::from_millis(20));
    let chmod = root.join("chmod");
    fs::set_permissions(&chmod, fs::Permissions::from_mode(0o600)).unwrap();
    fs::set_permissions(&chmod, fs::Permissions::from_mode(0o644)).unwrap();
    let file = fs::File::options()
        .write(true)
        .open(root.join("utime"))
        .unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH)
        .unwrap();
    drop(file);
    // A file system without user extended attributes refuses; the rest is checked anyway.
    #[cfg(target_os = "linux")]
    let xattr = rustix::fs::setxattr(
        root.join("xattr").as_path(),
        "user.gsd",
        b"x",
        rustix::fs::XattrFlags::empty(),
    )
    .is_ok();
    #[cfg(not(target_os = "linux"))]
    let xattr = false;
    let found = changes(&before, &take(&root, &[], Bounds::default()));
    assert!(
        found.changes.contains(&"touched chmod".to_owned()),
        "{found:?}"
    );
    assert!(
        found.changes.contains(&"modified utime".to_owned()),
        "{found:?}"
    );
    if xattr {
        assert!(
            found.changes.contains(&"touched xattr".to_owned()),
            "{found:?}"
        );
    }
    assert!(
        !found.changes.iter().any(|c| c.contains("calm")),
        "{found:?}"
    );
}

#[test]
fn the_list_is_bounded() {
    let (_dir, root) = tempdir();
    let before = take(&root, &[], Bounds::default());
    for i in 0..(MAX_LISTED + 5) {
        fs::write(root.join(format!("f{i:03}")), "x").unwrap();
    }
    let found = changes(&before, &take(&root, &[], Bounds::default()));
    assert_eq!(found.changes.len(), MAX_LISTED + 1);
    assert_eq!(found.changes.last().map(String::as_str), Some("and 5 more"));
}

/// 300 files `f000`… at the root, and a subdirectory `z` with 20 more.
fn wide_tree() -> (tempfile::TempDir, PathBuf) {
    let (dir, root) = tempdir();
    for i in 0..300 {
        fs::write(root.join(format!("f{i:03}")), "x").unwrap();
    }
    fs::create_dir(root.join("z")).unwrap();
    for i in 0..20 {
        fs::write(root.join(format!("z/g{i:02}")), "x").unwrap();
    }
    (dir, root)
}

#[test]
fn past_the_entry_bound_nothing_unobserved_is_reported_and_the_covered_part_is() {
    let (_dir, root) = wide_tree();
    let bounds = Bounds {
        entries: 100,
        time: MAX_WALK,
    };
    let before = take(&root, &[], bounds);
    // Untouched: no change, and a note of what was covered.
    let found = changes(&before, &take(&root, &[], bounds));
    assert!(found.changes.is_empty(), "{found:?}");
    let partial = found.partial.clone().expect("partial");
    assert!(
        partial.contains("100 entries") && partial.contains(ENTRIES_VAR),
        "{partial}"
    );
    assert!(found.partial_sentence().unwrap().contains("partial"));

    // Inside the covered part (the first 100 names in sorted order): each change is seen.
    fs::set_permissions(root.join("f010"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::remove_file(root.join("f020")).unwrap();
    fs::rename(root.join("f030"), root.join("f030x")).unwrap();
    // Outside it: nothing is said, neither of these nor of the names the bound left out.
    fs::remove_file(root.join("f250")).unwrap();
    fs::write(root.join("z/g05"), "changed").unwrap();
    let found = changes(&before, &take(&root, &[], bounds));
    for expected in [
        "mode changed f010",
        "removed f020",
        "removed f030",
        "created f030x",
    ] {
        assert!(
            found.changes.contains(&expected.to_owned()),
            "{expected}: {found:?}"
        );
    }
    assert_eq!(found.changes.len(), 4, "{found:?}");
    assert!(found.partial.is_some());
}

#[test]
fn past_the_time_bound_nothing_unobserved_is_reported() {
    let (_dir, root) = wide_tree();
    let bounds = Bounds {
        entries: MAX_ENTRIES,
        time: Duration::from_nanos(1),
    };
    let before = take(&root, &[], bounds);
    let found = changes(&before, &take(&root, &[], bounds));
    assert!(found.changes.is_empty(), "{found:?}");
    assert!(
        found
            .partial
            .as_deref()
            .is_some_and(|p| p.contains(WALK_MS_VAR)),
        "{found:?}"
    );
    // The root was read whole before the clock was looked at: a change there is seen; the
    // subdirectory was never read, so nothing is said of it.
    fs::remove_file(root.join("f250")).unwrap();
    fs::remove_file(root.join("z/g05")).unwrap();
    let found = changes(&before, &take(&root, &[], bounds));
    assert_eq!(found.changes, ["removed f250"], "{found:?}");
}

#[test]
fn a_directory_swapped_for_a_link_is_reported_not_followed() {
    let (_dir, root) = tempdir();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), "s").unwrap();
    fs::create_dir(root.join("sub")).unwrap();
    fs::write(root.join("sub/file"), "f").unwrap();
    let before = take(&root, &[], Bounds::default());
    fs::rename(root.join("sub"), root.join("gone")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("sub")).unwrap();
    let found = changes(&before, &take(&root, &[], Bounds::default()));
    assert!(
        found.changes.contains(&"replaced sub".to_owned()),
        "{found:?}"
    );
    assert!(
        !found.changes.iter().any(|c| c.contains("secret")),
        "{found:?}"
    );
}

#[test]
fn an_unreadable_directory_makes_the_check_partial_not_a_removal() {
    let (_dir, root) = tempdir();
    fs::create_dir(root.join("locked")).unwrap();
    fs::write(root.join("locked/inside"), "x").unwrap();
    let before = take(&root, &[], Bounds::default());
    fs::set_permissions(root.join("locked"), fs::Permissions::from_mode(0o000)).unwrap();
    let after = take(&root, &[], Bounds::default());
    fs::set_permissions(root.join("locked"), fs::Permissions::from_mode(0o755)).unwrap();
    let found = changes(&before, &after);
    assert!(
        found.changes.contains(&"mode changed locked".to_owned()),
        "{found:?}"
    );
    // Root can read anything: only an unprivileged walk finds the directory unreadable.
    if !after.is_whole() {
        assert!(
            !found.changes.iter().any(|c| c.contains("inside")),
            "{found:?}"
        );
        assert!(found.partial.is_some());
    }
}

#[test]
fn bounds_come_from_the_environment_only_when_positive() {
    // Read in a child process's view: the variables are this test's own.
    assert_eq!(Bounds::default().entries, MAX_ENTRIES);
    let skip = Skip {
        exact: vec![PathBuf::from("/r/run")],
        prefixed: vec![PathBuf::from("/r/tmp/gsd-lane-lane-tmp-1-")],
    };
    let rel = skip.relative_to(Path::new("/r"));
    assert!(rel.skips(b"", b"run"));
    assert!(rel.skips(b"tmp", b"gsd-lane-lane-tmp-1-5-0"));
    assert!(!rel.skips(b"", b"runner"));
    assert!(!rel.skips(b"tmp", b"gsd-lane-lane-tmp-2-5"));
}

#[test]
fn an_exact_skip_matches_only_its_own_path_at_any_depth() {
    let skip = Skip {
        exact: vec![PathBuf::from("/r/a/b/run"), PathBuf::from("/r/top")],
        prefixed: Vec::new(),
    };
    let rel = skip.relative_to(Path::new("/r"));
    assert!(rel.skips(b"a/b", b"run"));
    assert!(rel.skips(b"", b"top"));
    for (dir, name) in [
        (&b"a/b"[..], &b"runs"[..]),
        (b"a/b", b"ru"),
        (b"a/bb", b"run"),
        (b"x/b", b"run"),
        (b"a", b"b"),
        (b"", b"run"),
        (b"a", b"top"),
        (b"a/b/run", b"top"),
    ] {
        assert!(!rel.skips(dir, name), "{dir:?} {name:?}");
    }
}

#[test]
fn a_directory_larger_than_one_read_of_entries_is_listed_whole() {
    // 3,000 names of 120 bytes: several times the walk's `getdents64` buffer.
    let (_dir, root) = tempdir();
    let names: Vec<String> = (0..3000)
        .map(|i| format!("{i:05}{}", "n".repeat(115)))
        .collect();
    for name in &names {
        fs::write(root.join(name), "x").unwrap();
    }
    let before = take(&root, &[], Bounds::default());
    assert!(before.is_whole());
    assert_eq!(before.entries, 3000);
    let same = changes(&before, &take(&root, &[], Bounds::default()));
    assert_eq!((same.compared, same.changes.len()), (3000, 0), "{same:?}");
    fs::set_permissions(root.join(&names[2999]), fs::Permissions::from_mode(0o600)).unwrap();
    fs::remove_file(root.join(&names[0])).unwrap();
    let found = changes(&before, &take(&root, &[], Bounds::default()));
    assert_eq!(
        found.changes,
        [
            format!("removed {}", names[0]),
            format!("mode changed {}", names[2999])
        ]
    );
}
