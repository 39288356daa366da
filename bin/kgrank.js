#!/usr/bin/env node
// The `kgrank` command. For now it answers `kgrank info`; the evaluation commands come with the CLI issue.
"use strict";
const args = process.argv.slice(2);
if (args[0] === "info" || args[0] === undefined) {
  const { backendInfo } = require("../dist/cjs/index.js");
  const info = backendInfo();
  for (const [k, v] of Object.entries(info)) console.log(`${k.padEnd(16)} ${Array.isArray(v) ? v.join(",") : v}`);
} else if (args[0] === "--help" || args[0] === "-h") {
  console.log("usage: kgrank info    show backend, SIMD level, threads and version");
} else {
  console.error(`kgrank: unknown command '${args[0]}' (try: kgrank info)`);
  process.exit(2);
}
