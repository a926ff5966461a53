'use strict';
// The platforms gsd-lane publishes a binary package for: one source for the launcher (which
// package to look for here), packaging/npm/pack.sh (package names, os/cpu/libc fields) and the
// release workflow's matrix (packaging/npm/test.sh checks that the two agree).

const SCOPE = '@gsd-lane';

/** Every supported platform: npm's os/cpu/libc values and the Rust target it is built for. */
const PLATFORMS = [
  { key: 'linux-x64-gnu', os: 'linux', cpu: 'x64', libc: 'glibc', target: 'x86_64-unknown-linux-gnu' },
  { key: 'linux-x64-musl', os: 'linux', cpu: 'x64', libc: 'musl', target: 'x86_64-unknown-linux-musl' },
  { key: 'linux-arm64-gnu', os: 'linux', cpu: 'arm64', libc: 'glibc', target: 'aarch64-unknown-linux-gnu' },
  { key: 'linux-arm64-musl', os: 'linux', cpu: 'arm64', libc: 'musl', target: 'aarch64-unknown-linux-musl' },
  { key: 'darwin-x64', os: 'darwin', cpu: 'x64', libc: null, target: 'x86_64-apple-darwin' },
  { key: 'darwin-arm64', os: 'darwin', cpu: 'arm64', libc: null, target: 'aarch64-apple-darwin' },
  { key: 'win32-x64-msvc', os: 'win32', cpu: 'x64', libc: null, target: 'x86_64-pc-windows-msvc' },
];

/** The npm package that carries the binary of platform `key`. */
function packageName(key) {
  return `${SCOPE}/cli-${key}`;
}

/** The binary's file name inside a platform package. */
function binaryName(platform) {
  return platform.os === 'win32' ? 'gsd-lane.exe' : 'gsd-lane';
}

/** The C library of this Linux process: 'glibc' or 'musl' (what Node itself was built on). */
function hostLibc() {
  const header = process.report && process.report.getReport
    ? process.report.getReport().header
    : {};
  return header && header.glibcVersionRuntime ? 'glibc' : 'musl';
}

/**
 * The platforms that can run here, best first. On glibc Linux the musl build (statically
 * linked) runs too, so it comes second; everywhere else there is at most one.
 */
function candidates(os = process.platform, cpu = process.arch, libc = null) {
  const matching = PLATFORMS.filter((p) => p.os === os && p.cpu === cpu);
  if (os !== 'linux') {
    return matching;
  }
  const own = libc || hostLibc();
  return matching
    .filter((p) => own === 'glibc' || p.libc === own)
    .sort((a, b) => (a.libc === own ? 0 : 1) - (b.libc === own ? 0 : 1));
}

module.exports = { SCOPE, PLATFORMS, packageName, binaryName, candidates, hostLibc };
