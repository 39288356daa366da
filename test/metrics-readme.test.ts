/** The README's "Metrics" table is metricsMarkdownTable() over listMetrics(): this test keeps them in step. */
import { readFileSync } from "node:fs";
import * as path from "node:path";

import { describe, expect, it } from "vitest";

import { metricsMarkdownTable } from "../src/metrics/catalogue";

describe("README metrics table", () => {
  it("equals the table generated from listMetrics()", () => {
    const readme = readFileSync(path.resolve(__dirname, "..", "README.md"), "utf8");
    const m = /<!-- metrics-table:begin -->\n([\s\S]*?)\n<!-- metrics-table:end -->/.exec(readme);
    expect(m, "README.md lacks the metrics-table markers").not.toBeNull();
    expect(m![1]).toBe(metricsMarkdownTable());
  });
});
