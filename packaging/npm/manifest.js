'use strict';
// Writes the package.json of an npm package gsd-lane publishes (called by pack.sh):
//   node manifest.js launcher <version> <dir>
//   node manifest.js platform <key> <version> <dir>
// No package gets a `scripts` member: nothing runs at install time, so --ignore-scripts,
// proxies and offline mirrors install exactly what was packed.

const fs = require('fs');
const path = require('path');
const { PLATFORMS, packageName, binaryName } = require('./launcher/lib/platforms');

// The workspace's `[workspace.package]` values, so npm and crates.io say the same.
const cargo = fs.readFileSync(path.join(__dirname, '..', '..', 'Cargo.toml'), 'utf8');
const field = (name) => (cargo.match(new RegExp(`^${name} = "([^"]*)"`, 'm')) || [])[1];

const common = {
  license: field('license'),
  homepage: field('repository'),
  repository: { type: 'git', url: field('repository') },
  engines: { node: '>=18' },
};

function launcher(version) {
  return {
    name: '@gsd-lane/cli',
    version,
    description: "gsd-lane, the plugin host behind GSD's cross-AI plan review (prebuilt binaries)",
    ...common,
    bin: { 'gsd-lane': 'bin/gsd-lane.js' },
    files: ['bin/gsd-lane.js', 'lib/platforms.js', 'README.md'],
    optionalDependencies: Object.fromEntries(
      PLATFORMS.map((p) => [packageName(p.key), version]),
    ),
  };
}

function platform(key, version) {
  const found = PLATFORMS.find((p) => p.key === key);
  if (!found) {
    throw new Error(`unknown platform ${key}; known: ${PLATFORMS.map((p) => p.key).join(', ')}`);
  }
  const manifest = {
    name: packageName(key),
    version,
    description: `The gsd-lane binary for ${key} (${found.target}); installed by @gsd-lane/cli`,
    ...common,
    os: [found.os],
    cpu: [found.cpu],
    files: [`bin/${binaryName(found)}`, 'README.md'],
    preferUnplugged: true,
  };
  if (found.libc) {
    manifest.libc = [found.libc];
  }
  return manifest;
}

const [kind, ...rest] = process.argv.slice(2);
let manifest;
let dir;
if (kind === 'launcher') {
  manifest = launcher(rest[0]);
  dir = rest[1];
} else if (kind === 'platform') {
  manifest = platform(rest[0], rest[1]);
  dir = rest[2];
} else {
  process.stderr.write('usage: node manifest.js launcher <version> <dir> | platform <key> <version> <dir>\n');
  process.exit(2);
}
fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
