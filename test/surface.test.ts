/**
 * The published surface as a user reaches it: `kgrank-native/queue` resolves through package.json "exports" to an
 * entry that exports exactly what docs/scale-out.md imports from it, and every runtime value of either entry point
 * has a page in the checked-in API reference (docs/api/, which `npm run check:api` keeps equal to the sources).
 * Backend-independent: runs once.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";

import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..");
// Resolved by the package's own name, as an installed copy resolves it (the compiled dist/, rebuilt by the global setup).
const requireSelf = createRequire(path.join(root, "package.json"));

/** The runtime names a module exports. */
const valueNames = (mod: object) => Object.keys(mod).filter((k) => k !== "__esModule" && k !== "default");

/** The names a markdown page imports from `specifier` in its code blocks. */
function importedNames(file: string, specifier: string): string[] {
  const text = readFileSync(path.join(root, file), "utf8");
  const names: string[] = [];
  const from = new RegExp(`import\\s*\\{([^}]*)\\}\\s*from\\s*"${specifier.replace("/", "\\/")}"`, "g");
  for (const m of text.matchAll(from)) names.push(...m[1]!.split(",").map((n) => n.trim()));
  return names.filter((n) => n !== "").sort();
}

describe("kgrank-native/queue", () => {
  const queue = requireSelf("kgrank-native/queue") as object;

  it("resolves to the queue entry point, not to the CLI's module", () => {
    expect(path.relative(root, requireSelf.resolve("kgrank-native/queue"))).toBe(path.join("dist", "cjs", "queue.js"));
  });

  it("exports exactly what docs/scale-out.md imports from it", () => {
    const documented = importedNames("docs/scale-out.md", "kgrank-native/queue");
    expect(documented).toEqual(["startShardWorker", "submitRun"]);
    expect(valueNames(queue).sort()).toEqual(documented);
  });

  it("has a reference page for each export", () => {
    for (const name of valueNames(queue)) {
      expect(existsSync(path.join(root, "docs", "api", "queue", `kgrank-native.${name.toLowerCase()}.md`)), name).toBe(
        true,
      );
    }
  });
});

describe("kgrank-native", () => {
  const main = requireSelf("kgrank-native") as object;

  it("has a reference page for every runtime value it exports", () => {
    const names = valueNames(main);
    expect(names.length).toBeGreaterThan(50);
    const missing = names.filter(
      (n) => !existsSync(path.join(root, "docs", "api", `kgrank-native.${n.toLowerCase()}.md`)),
    );
    expect(missing).toEqual([]);
  });

  it("does not export the CLI's queue helpers or names only tests use", () => {
    const names = new Set(valueNames(main));
    for (const n of ["workerCommand", "runArgs", "redisConnection", "metricSelection", "parseNpyHeader", "zToPValue"]) {
      expect(names.has(n), n).toBe(false);
    }
  });
});
