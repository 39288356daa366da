/**
 * `kgrank build-native`: the native addon's build (scripts/build-native.js) inside the installed package, for the
 * platforms no prebuild fits (macOS, Windows, FreeBSD) or a build from source. The package has no install-time
 * script, so no install runs it: this command is how a user asks for it. The script's own messages, exit status and
 * environment (KGRANK_REQUIRE_NATIVE, KGRANK_SKIP_BUILD, ...) are kept; its output goes straight to the terminal,
 * the compiler's as it comes with --verbose.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import * as path from "node:path";

import { packageRoot } from "../backend/backend";
import { KgrankBackendError } from "../checks/errors";

interface BuildNativeOptions {
  fromSource?: boolean;
  verbose?: boolean;
}

export function buildNativeCommand(opts: BuildNativeOptions): void {
  const script = path.join(packageRoot, "scripts", "build-native.js");
  if (!existsSync(script)) {
    throw new KgrankBackendError(
      `build-native: ${script} is missing: reinstall kgrank-native (a release that ships it), or build in its repository with \`npm ci\``,
    );
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (opts.fromSource) env.KGRANK_BUILD_FROM_SOURCE = "1";
  if (opts.verbose) env.KGRANK_VERBOSE_BUILD = "1";
  const r = spawnSync(process.execPath, [script], { cwd: packageRoot, env, stdio: "inherit" });
  if (r.error) throw new KgrankBackendError(`build-native: could not run ${script}: ${r.error.message}`);
  if (r.status !== 0) {
    // The script printed why (the compiler's output, then the warning); this line makes the exit status the CLI's.
    throw new KgrankBackendError(
      `build-native: the native addon was not built (see above) and KGRANK_REQUIRE_NATIVE=1 makes that an error; ` +
        `unset it to run on the WebAssembly core or the fallback instead`,
    );
  }
}
