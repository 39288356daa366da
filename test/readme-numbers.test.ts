/**
 * The README's speed numbers are BENCHMARKS.md's. bench/results/readme.json holds the README's speed table (each row
 * with the BENCHMARKS.md sections and the text its numbers are quoted from) and the README's other speed claims; the
 * README's table must be what `node bench/readme-table.mjs` generates from it, every claim must be in the README
 * word for word, every quote must be in its section (whitespace aside), and every number of a result, a comparison
 * or a claim must be in its quotes (a task's numbers in its sections). The sizes of the built WebAssembly core and
 * browser bundle that the pages state must be within 10 % of the files as built here (the core only where
 * `npm run build:wasm` has run). Nothing is timed here.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

interface Source {
  section: string;
  quote: string;
}
interface Row {
  task: string;
  result: string;
  compared: string;
  sources: Source[];
}
interface Claim {
  where: string;
  text: string;
  sources: Source[];
}
interface Size {
  file: string;
  bytes: number;
  text: string;
  pages: string[];
}
interface ReadmeResults {
  intro: string;
  header: string[];
  rows: Row[];
  claims: Claim[];
  sizes: Size[];
}

const results = JSON.parse(read("bench/results/readme.json")) as ReadmeResults;
const benchmarks = read("BENCHMARKS.md");

/** Runs of whitespace (line breaks included) as one space: BENCHMARKS.md wraps its prose. */
const flat = (s: string) => s.replace(/\s+/g, " ").trim();

/** The text of the BENCHMARKS.md section whose `## ` heading is `title`, up to the next `## ` heading. */
function section(title: string): string {
  const lines = benchmarks.split("\n");
  const start = lines.findIndex((l) => l === `## ${title}`);
  expect(start, `BENCHMARKS.md has no section "## ${title}"`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  return flat(lines.slice(start + 1, end < 0 ? undefined : end).join("\n"));
}

/** The numbers a text states: digits with their thousands separators and decimals, commas dropped. */
function numbers(text: string): string[] {
  return [...text.matchAll(/\d[\d,]*(?:\.\d+)?/g)].map((m) => m[0].replace(/,+$/, "").replace(/,/g, ""));
}

/** Each number of `text` that none of `haystacks` states. */
function missing(text: string, haystacks: string[]): string[] {
  const known = new Set(haystacks.flatMap(numbers));
  return numbers(text).filter((n) => !known.has(n));
}

function checkSources(what: string, sources: Source[]): void {
  expect(sources.length, `${what}: no source`).toBeGreaterThan(0);
  for (const s of sources) {
    expect(section(s.section), `${what}: the quote is not in "## ${s.section}"`).toContain(flat(s.quote));
  }
}

describe("README.md's speed numbers", () => {
  it("the speed table is the one `node bench/readme-table.mjs` generates from bench/results/readme.json", () => {
    const r = spawnSync(process.execPath, [path.join(root, "bench", "readme-table.mjs"), "--check"], {
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const printed = spawnSync(process.execPath, [path.join(root, "bench", "readme-table.mjs"), "--print"], {
      encoding: "utf8",
    });
    expect(printed.status, printed.stderr).toBe(0);
    expect(read("README.md")).toContain(printed.stdout);
    expect(printed.stdout.split("\n").filter((l) => l.startsWith("| ")).length).toBe(results.rows.length + 2);
  });

  it("every row's numbers are in the BENCHMARKS.md text it quotes", () => {
    expect(results.rows.length).toBeGreaterThan(0);
    for (const row of results.rows) {
      checkSources(row.task, row.sources);
      const quotes = row.sources.map((s) => s.quote);
      expect(missing(`${row.result} ${row.compared}`, quotes), `${row.task}: numbers not in its quotes`).toEqual([]);
      const sections = [...new Set(row.sources.map((s) => s.section))].map(section);
      expect(missing(row.task, sections), `${row.task}: numbers not in its sections`).toEqual([]);
    }
  });

  it("every other speed claim is in its page word for word, and its numbers are in the BENCHMARKS.md text it quotes", () => {
    for (const claim of results.claims) {
      expect(flat(read(claim.where)), `${claim.where} no longer says: ${claim.text}`).toContain(flat(claim.text));
      checkSources(claim.text, claim.sources);
      const quotes = claim.sources.map((s) => s.quote);
      expect(missing(claim.text, quotes), `${claim.text}: numbers not in its quotes`).toEqual([]);
    }
  });

  for (const size of results.sizes) {
    const built = existsSync(path.join(root, size.file));
    it(`the pages state ${size.file}'s size as built, within 10 %${built ? "" : " (the file itself: not built here, skipped)"}`, () => {
      expect(numbers(size.text)).toEqual([String(size.bytes)]);
      for (const page of size.pages) {
        expect(flat(read(page)), `${page} does not state ${size.file}'s size as ${size.text}`).toContain(size.text);
      }
      if (!built) return;
      const bytes = statSync(path.join(root, size.file)).size;
      expect(
        Math.abs(bytes - size.bytes) / size.bytes,
        `${size.file} is ${bytes} bytes, the pages say ${size.text}: measure it again and update bench/results/readme.json and the pages`,
      ).toBeLessThanOrEqual(0.1);
    });
  }

  it("a number that BENCHMARKS.md does not state is caught", () => {
    const quote = "| ranks, dense 512 MiB float32 | 7.87 ms |";
    expect(missing("7.87 ms", [quote])).toEqual([]);
    expect(missing("7.9 ms, 1,024 MiB", [quote])).toEqual(["7.9", "1024"]);
    expect(missing("4,309.3 s", ["| 4,309.3 s (1.2 h) |"])).toEqual([]);
  });
});
