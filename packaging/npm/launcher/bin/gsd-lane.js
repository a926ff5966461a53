#!/usr/bin/env node
'use strict';
// The `gsd-lane` command of the npm package: finds the binary of this platform's package
// (an optional dependency) or GSD_LANE_BIN, runs it with the same arguments and stdio, and ends
// the way it ended: its exit status, or its signal raised again on this process.

const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const { candidates, packageName, binaryName } = require('../lib/platforms');
const { version } = require('../package.json');

/** True when `file` is this launcher (a GSD_LANE_BIN naming it would start itself forever). */
function isLauncher(file) {
  try {
    return fs.realpathSync(file) === fs.realpathSync(__filename);
  } catch (_) {
    return false;
  }
}

function binary() {
  const override = process.env.GSD_LANE_BIN;
  if (override && isLauncher(override)) {
    process.stderr.write(`gsd-lane: GSD_LANE_BIN=${override} is this npm launcher, not the gsd-lane binary; point it at the binary or unset it\n`);
    process.exit(1);
  }
  if (override) {
    return override;
  }
  const wanted = candidates();
  for (const platform of wanted) {
    try {
      const manifest = require.resolve(`${packageName(platform.key)}/package.json`);
      return path.join(path.dirname(manifest), 'bin', binaryName(platform));
    } catch (_) {
      // Not installed: try the next candidate.
    }
  }
  const here = `${process.platform} ${process.arch}`;
  process.stderr.write(wanted.length === 0
    ? `gsd-lane: no prebuilt binary for ${here}; build one (cargo install --locked gsd-lane) and set GSD_LANE_BIN=/path/to/gsd-lane\n`
    : `gsd-lane: the binary for ${here} is not installed: install ${packageName(wanted[0].key)}@${version} (npm leaves optional dependencies out under --omit=optional or --no-optional), or set GSD_LANE_BIN=/path/to/gsd-lane\n`);
  process.exit(1);
}

const program = binary();
const child = spawn(program, process.argv.slice(2), { stdio: 'inherit' });
const forwarded = process.platform === 'win32'
  ? ['SIGINT', 'SIGBREAK']
  : ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
const forward = (signal) => child.kill(signal);
for (const signal of forwarded) {
  process.on(signal, forward);
}
child.on('error', (err) => {
  process.stderr.write(`gsd-lane: cannot run ${program}: ${err.message} (GSD_LANE_BIN overrides the binary)\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal === null) {
    process.exit(code);
  }
  for (const name of forwarded) {
    process.removeListener(name, forward);
  }
  process.kill(process.pid, signal);
  // Still here (a signal this process cannot take by default): the shell's convention.
  process.exit(128 + (require('os').constants.signals[signal] || 0));
});
