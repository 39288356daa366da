/**
 * docs/metrics.md's catalogue table is metricsMarkdownTable() over listMetrics(): this test keeps them in step.
 * `KGRANK_UPDATE_DOCS=1 npx vitest run test/metrics-docs.test.ts --project once` rewrites the table between the markers
 * from the catalogue (then review the diff and commit it).
 */
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";

import { describe, expect, it } from "vitest";

import { metricsMarkdownTable } from "../src/metrics/catalogue";

const page = path.resolve(__dirname, "..", "docs", "metrics.md");
const markers = /(<!-- metrics-table:begin -->\n)([\s\S]*?)(\n<!-- metrics-table:end -->)/;

describe("docs/metrics.md catalogue table", () => {
  it("equals the table generated from listMetrics()", () => {
    let text = readFileSync(page, "utf8");
    expect(markers.test(text), "docs/metrics.md lacks the metrics-table markers").toBe(true);
    if (process.env.KGRANK_UPDATE_DOCS === "1") {
      text = text.replace(
        markers,
        (_, begin: string, _old: string, end: string) => begin + metricsMarkdownTable() + end,
      );
      writeFileSync(page, text);
    }
    expect(markers.exec(text)![2], "regenerate with KGRANK_UPDATE_DOCS=1 (see this file's header)").toBe(
      metricsMarkdownTable(),
    );
  });
});
