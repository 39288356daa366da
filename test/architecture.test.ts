/**
 * ARCHITECTURE.md kept true: every path it names exists, its layer map lists exactly the folders of src/, the layer
 * order it states is the order .dependency-cruiser.cjs enforces, and each twin pair of its table ("Where each formula
 * and its twin live") names the other in its header comment, both ways. Backend-independent: runs once.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";

import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..");
const doc = readFileSync(path.join(root, "ARCHITECTURE.md"), "utf8");

/** `a/{x,y}.cpp` -> `a/x.cpp a/y.cpp`, nested braces too. */
function expandBraces(text: string): string {
  for (let prev = ""; prev !== text;) {
    prev = text;
    text = text.replace(/([\w./*-]*)\{([^{}]*)\}([\w./*-]*)/g, (_m, a: string, list: string, b: string) =>
      list
        .split(",")
        .map((x) => a + x + b)
        .join(" "),
    );
  }
  return text;
}

/** Repository paths a backticked span names: under src/, native/, test/, bench/ or scripts/ (braces expanded). */
function namedPaths(markdown: string): string[] {
  const spans = [...markdown.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  return spans
    .flatMap((s) => expandBraces(s).split(" "))
    .filter((s) => /^(src|native|test|bench|scripts)\/[\w./*-]*$/.test(s));
}

/** Whether a named path exists: a file, a folder (`dir/`, `dir/*`), or a `*` pattern matching a file of its folder. */
function pathExists(named: string): boolean {
  const p = named.replace(/\/\*?$/, "");
  if (!p.includes("*")) return existsSync(path.join(root, p));
  const dir = path.join(root, path.dirname(p));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
  const pattern = new RegExp(`^${path.basename(p).replace(/[.]/g, "\\.").replace(/\*/g, "[^/]*")}$`);
  return readdirSync(dir).some((f) => pattern.test(f));
}

/** The leading comment of a source file (// lines and /* blocks before the first line of code), braces expanded. */
function headerComment(text: string): string {
  const out: string[] = [];
  let inBlock = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (inBlock) {
      out.push(line);
      if (line.includes("*/")) inBlock = false;
    } else if (line.startsWith("//")) {
      out.push(line);
    } else if (line.startsWith("/*")) {
      out.push(line);
      inBlock = !line.includes("*/");
    } else if (line !== "" && line !== "#pragma once" && !line.startsWith('"use strict"')) {
      break;
    }
  }
  return expandBraces(out.join("\n"));
}

/** The twin pairs of the table: per row, native files and their twins, paired by position or all with the first. */
function twinPairs(markdown: string): [string, string][] {
  const start = markdown.indexOf("## Where each formula and its twin live");
  const end = markdown.indexOf("\n## ", start + 1);
  const rows = markdown
    .slice(start, end)
    .split("\n")
    .filter((l) => l.startsWith("|") && !l.startsWith("| ---") && !l.startsWith("| concept"));
  const pairs: [string, string][] = [];
  for (const row of rows) {
    const cells = row.split("|").map((c) => c.trim());
    const files = (cell: string) =>
      [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((p) => /^(src|native)\/[\w./-]+$/.test(p));
    const natives = files(cells[2] ?? "");
    const twins = files(cells[3] ?? "");
    if (natives.length === 0 || twins.length === 0) throw new Error(`twin table row without files: ${row}`);
    if (natives.length === twins.length) natives.forEach((n, i) => pairs.push([n, twins[i]!]));
    else if (natives.length === 1) twins.forEach((t) => pairs.push([natives[0]!, t]));
    else pairs.push([natives[0]!, twins[0]!]);
  }
  return pairs;
}

/** Entries of the `src/` part of the layer map (the code block under "## Layers"), at the first indentation. */
function mappedSrcEntries(markdown: string): string[] {
  const block = /## Layers\n\n```\n([\s\S]*?)```/.exec(markdown)?.[1] ?? "";
  const lines = block.split("\n");
  const from = lines.findIndex((l) => l.startsWith("src/"));
  const entries: string[] = [];
  for (const line of lines.slice(from + 1)) {
    if (/^\S/.test(line)) break;
    const m = /^ {2}(\S+)/.exec(line);
    if (m) entries.push(m[1]!.replace(/\/$/, ""));
  }
  return entries;
}

describe("ARCHITECTURE.md names only what exists", () => {
  const named = [...new Set(namedPaths(doc))];

  it("names at least the files of its one-batch walk and its twin table", () => {
    expect(named.length).toBeGreaterThan(40);
    expect(named).toContain("src/evaluation/evaluator.ts");
    expect(named).toContain("native/core/count.cpp");
  });

  it("every src/, native/, test/, bench/ and scripts/ path it names exists", () => {
    expect(named.filter((p) => !pathExists(p))).toEqual([]);
  });

  it("a path that does not exist is caught", () => {
    const missing = namedPaths("see `src/no-such-layer/file.ts` and `native/core/kernels_*.cpp`");
    expect(missing).toEqual(["src/no-such-layer/file.ts", "native/core/kernels_*.cpp"]);
    expect(missing.map(pathExists)).toEqual([false, true]);
  });

  it("its layer map lists exactly the folders (and the one root module) of src/", () => {
    const actual = readdirSync(path.join(root, "src")).sort();
    expect(mappedSrcEntries(doc).sort()).toEqual(actual);
  });

  it("the layer order it states is the order .dependency-cruiser.cjs enforces", () => {
    const sentence = /in this order of the folders of `src\/` \(bottom first\):([\s\S]*?)then `src\/index\.ts`/.exec(
      doc,
    );
    expect(sentence).not.toBeNull();
    const stated = [...sentence![1]!.matchAll(/`([\w-]+)`/g)].map((m) => m[1]);
    const config = createRequire(__filename)(path.join(root, ".dependency-cruiser.cjs")) as {
      forbidden: { name: string }[];
    };
    const enforced = config.forbidden.map((r) => /^layer-(.+)$/.exec(r.name)?.[1]).filter(Boolean);
    expect(stated).toEqual(enforced);
    expect(enforced.sort()).toEqual(
      readdirSync(path.join(root, "src"))
        .filter((f) => statSync(path.join(root, "src", f)).isDirectory())
        .sort(),
    );
  });
});

describe("each twin pair's header comment names the other, both ways", () => {
  const pairs = twinPairs(doc);

  it("the twin table has a pair per formula row", () => {
    expect(pairs.length).toBeGreaterThanOrEqual(10);
  });

  for (const [native, twin] of pairs) {
    it(`${native} <-> ${twin}`, () => {
      const problems: string[] = [];
      for (const [file, other] of [
        [native, twin],
        [twin, native],
      ] as const) {
        const header = headerComment(readFileSync(path.join(root, file), "utf8"));
        if (!header.includes(other)) problems.push(`${file}'s header does not name ${other}`);
      }
      expect(problems).toEqual([]);
    });
  }

  it("a header that does not name its twin is caught", () => {
    const header = headerComment("// Row-wise counting. Twin: src/fallback/count.{ts}\n#pragma once\n// not header\n");
    expect(header.includes("src/fallback/count.ts")).toBe(true);
    expect(headerComment("#include <x>\n// Twin: src/fallback/count.ts\n").includes("src/fallback/count.ts")).toBe(
      false,
    );
  });
});

describe("only the backend layer loads the addon", () => {
  /**
   * What loads native code or reaches the addon: nativeAddon(), process.dlopen, a `.node` path, node-gyp-build, or a
   * require() of a computed path (how the addon and the prebuilds are found). dependency-cruiser sees none of these
   * (they are not static imports), so this test is their rule.
   */
  const ADDON_ACCESS = [
    /\bnativeAddon\b/,
    /process\.dlopen/,
    /["'`][^"'`]*\.node["'`]/,
    /node-gyp-build/,
    /\brequire\((?!\s*["'])/,
  ];
  const offenders = (files: Record<string, string>) =>
    Object.entries(files)
      .filter(([, text]) => ADDON_ACCESS.some((re) => re.test(text)))
      .map(([file]) => file);

  it("no module outside src/backend/ calls nativeAddon(), dlopen, requires a computed path or names a .node file", () => {
    const files: Record<string, string> = {};
    const walk = (dir: string) => {
      for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
        const rel = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (rel !== path.join("src", "backend")) walk(rel);
        } else {
          files[rel] = readFileSync(path.join(root, rel), "utf8");
        }
      }
    };
    walk("src");
    expect(Object.keys(files).length).toBeGreaterThan(50);
    expect(offenders(files)).toEqual([]);
  });

  it("each way in is caught", () => {
    expect(
      offenders({
        a: "nativeAddon()",
        b: "process.dlopen(m, f)",
        c: 'load("build/Release/kgrank.node")',
        d: 'require("node-gyp-build")',
        e: "require(candidate)",
        f: 'require("bullmq")',
      }),
    ).toEqual(["a", "b", "c", "d", "e"]);
  });
});
