/**
 * The TypeScript mirror of the core's status codes (src/contract/kernels.ts StatusCode) has exactly the names and values of
 * native/core/status.h StatusCode: read from the header, so a code added or renumbered on one side fails here.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { StatusCode } from "../src/contract/kernels";

describe("StatusCode", () => {
  it("has the names and values of native/core/status.h, no more and no fewer", () => {
    const header = readFileSync(path.join(__dirname, "..", "native", "core", "status.h"), "utf8");
    const body = /enum class StatusCode : int \{([^}]*)\}/.exec(header)?.[1];
    expect(body).toBeDefined();
    const native = Object.fromEntries(
      [...body!.matchAll(/^\s*(\w+)\s*=\s*(\d+)\s*,/gm)].map((m) => [m[1]!, Number(m[2])]),
    );
    expect(Object.keys(native).length).toBeGreaterThanOrEqual(5);
    const ts = Object.fromEntries(
      Object.entries(StatusCode).filter((entry): entry is [string, number] => typeof entry[1] === "number"),
    );
    expect(ts).toEqual(native);
  });
});
