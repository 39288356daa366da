#!/usr/bin/env node
// The `kgrank` command: evaluate, metrics, adjust, expectations, info. The implementation is src/cli/main.ts
// (compiled to dist/cjs/cli/main.js); `kgrank --help` lists the commands, `kgrank COMMAND --help` their options.
"use strict";
let cli;
try {
  cli = require("../dist/cjs/cli/main.js");
} catch (e) {
  if (e && e.code === "MODULE_NOT_FOUND" && String(e.message).includes("dist/cjs/cli/main.js")) {
    process.stderr.write(
      "kgrank: the compiled CLI (dist/) is missing; run `npm run build:ts` in the package directory\n",
    );
    process.exit(1);
  }
  throw e;
}
cli.runCli();
