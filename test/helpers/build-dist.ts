/**
 * vitest globalSetup: the CLI, loader and determinism tests run the compiled package (dist/) in subprocesses, as a
 * user would. So that they never test a stale build, dist/ is rebuilt (`npm run build:ts`, about 4 s) when any file
 * under src/ is newer than it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import * as path from "node:path";

const root = path.resolve(__dirname, "..", "..");

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

export default function setup(): void {
  const built = path.join(root, "dist", "cjs", "index.js");
  if (existsSync(built) && statSync(built).mtimeMs >= newest(path.join(root, "src"))) return;
  execFileSync("npm", ["run", "build:ts"], { cwd: root, stdio: "inherit" });
}
