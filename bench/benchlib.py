"""What every bench script shares: a benchmark lane declared as a global capability, and the CPU
time of finished children."""

import json
import os
import resource


def write_lane(home, bindir, slug, script="cat >/dev/null; echo ok", timeout_ms=900000):
    """A spawn lane `slug` whose program runs `script` (default: reads its prompt and prints
    one line), declared in `home`'s global capabilities; returns the program's path."""
    path = os.path.join(bindir, slug)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + script + "\n")
    os.chmod(path, 0o755)
    cap = os.path.join(home, ".gsd", "capabilities", slug)
    os.makedirs(cap, exist_ok=True)
    manifest = {
        "id": slug, "role": "reviewer", "version": "1.0.0", "title": slug,
        "description": "Benchmark lane.", "tier": "full", "requires": [],
        "reviewer": {
            "slug": slug, "flags": ["--" + slug], "transport": "spawn",
            "probe": {"kind": "command-exists", "binary": slug},
            "invoke": {"binary": slug, "args": ["-"], "promptChannel": "stdin",
                       "outputChannel": "stdout", "modelArg": None, "effortChannel": "none"},
            "timeoutFloorMs": timeout_ms, "emptyOutput": "stub-with-stderr",
            "reviewsSection": slug.title(), "evidenceClass": "source-grounded",
            "requiresBinaries": [], "promptBudgetKey": None, "handler": None,
        },
    }
    with open(os.path.join(cap, "capability.json"), "w") as f:
        json.dump(manifest, f)
    return path


def cpu():
    """User + system time of every finished descendant (the measured command's whole tree)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
