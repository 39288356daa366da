/** Temporary folders of the tests: one per call, removed with everything in it after the enclosing suite. */
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll } from "vitest";

/**
 * A fresh folder `kgrank-<prefix>-XXXXXX` under the OS temp dir, removed in `afterAll` of the suite (file or
 * describe block) that calls it; call it at the top level of a file or describe block.
 */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `kgrank-${prefix}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
