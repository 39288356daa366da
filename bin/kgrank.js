#!/usr/bin/env node
// The `kgrank` command: evaluate, metrics, adjust, expectations, info. The implementation is src/cli/main.ts
// (compiled to dist/cjs/cli/main.js); `kgrank --help` lists the commands, `kgrank COMMAND --help` their options.
"use strict";
require("../dist/cjs/cli/main.js").runCli();
