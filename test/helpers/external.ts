/**
 * Tests that need something outside the repository (a benchmark dataset from ../shared/datasets, NumPy, util-linux
 * `script`) go through `external()`. Where the thing is missing the test is skipped, and the skip says why in the
 * test's own name, so a fresh clone with nothing beside it passes and shows what it did not run. CI sets
 * KGRANK_REQUIRE_EXTERNAL=1 after installing everything: there a missing dependency is an error, so a skip cannot
 * hide behind a green run.
 */
import { spawnSync } from "node:child_process";

import { describe, it } from "vitest";

export interface External {
  /** True when the test must be skipped. */
  readonly missing: boolean;
  /** The test's name, with the reason appended when it is skipped. */
  name(title: string): string;
}

const required = process.env.KGRANK_REQUIRE_EXTERNAL === "1";

/** `what` is present (`available`), else skip with `how` (what to install or set) as the visible reason. */
export function external(what: string, available: boolean, how: string): External {
  if (!available && required) {
    throw new Error(`KGRANK_REQUIRE_EXTERNAL=1 but ${what} is missing: ${how}`);
  }
  if (!available) console.warn(`skipping tests that need ${what}: ${how}`);
  return {
    missing: !available,
    name: (title) => (available ? title : `${title} [skipped: ${what} is missing; ${how}]`),
  };
}

/** True when `command args` runs and exits 0 (e.g. `python3 -c "import numpy"`). */
export function runs(command: string, args: string[]): boolean {
  return spawnSync(command, args, { encoding: "utf8", stdio: "ignore" }).status === 0;
}

/**
 * `describe(title, () => body(value))` when `value` is there; otherwise a skipped suite whose one test carries the
 * reason. The body never runs without its value (vitest runs the body of a skipped `describe` to collect tests).
 */
export function describeWith<T>(title: string, value: T | null, ext: External, body: (value: T) => void): void {
  if (value !== null && !ext.missing) describe(title, () => body(value));
  else describe.skip(ext.name(title), () => it("needs its external dependency", () => undefined));
}

/** The first of python3 and Debian's /usr/bin/python3 that imports every module, or null. */
export function pythonWith(...modules: string[]): string | null {
  for (const py of ["python3", "/usr/bin/python3"]) {
    if (runs(py, ["-c", modules.map((m) => `import ${m}`).join("; ") || "pass"])) return py;
  }
  return null;
}
