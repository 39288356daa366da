/**
 * Every example in README.md and docs/*.md runs as a user would run it. Per fenced block, by its language:
 *   - ```ts / ```js: transpiled by TypeScript (types stripped, nothing checked) and run by node as an ES module in a
 *     scratch folder where `kgrank-native` and `kgrank-native/queue` resolve to this checkout (its dist/); with
 *     `typecheck` in the fence a ```ts block is first type-checked under `strict` against the package's own types, as
 *     a user's TypeScript project would compile it;
 *   - ```console: each `$ ` line runs in bash and its stdout must equal the lines below it, up to the next `$ ` line
 *     (the version / backend header and "done in" lines are machine-dependent and left out); with `nocompare` in the
 *     fence only the exit code is checked;
 *   - ```sh / ```bash: the block runs as one bash script and must exit 0.
 * In all of them `npx kgrank` is this checkout's bin/kgrank.js. The blocks of one page run in order in one folder, so
 * an example may use the files an earlier one on the same page made. A block that cannot run here says why in its
 * fence, naming the test or script that covers what it shows: ```sh norun test/queue.test.ts: needs a Redis server.
 * Other languages (text, python, yaml) are not run.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { writeFileSync } from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { describe, expect, it } from "vitest";

import { tempDir } from "./helpers/temp";

const root = path.resolve(__dirname, "..");
const pages = [
  "README.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const runnable = new Set(["ts", "js", "console", "sh", "bash"]);

interface Block {
  lang: string;
  info: string;
  body: string;
  line: number;
}

/** The fenced blocks of a markdown page, with the 1-based line of their opening fence. */
function blocks(text: string): Block[] {
  const out: Block[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
    expect(end, `unclosed fence at line ${i + 1}`).toBeGreaterThan(i);
    out.push({ lang: open[1]!, info: open[2]!.trim(), body: lines.slice(i + 1, end).join("\n"), line: i + 1 });
    i = end;
  }
  return out;
}

const scratchRoot = tempDir("docs");

/** A fresh folder for one page: kgrank-native installed as a link to this checkout, `npx kgrank` on the PATH. */
function scratch(page: string): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = path.join(scratchRoot, page.replace(/[/.]/g, "-"));
  mkdirSync(path.join(dir, "node_modules"), { recursive: true });
  symlinkSync(root, path.join(dir, "node_modules", "kgrank-native"), "dir");
  const bin = path.join(dir, ".bin");
  mkdirSync(bin);
  const realNpx = spawnSync("bash", ["-c", "command -v npx"], { encoding: "utf8" }).stdout.trim();
  writeFileSync(
    path.join(bin, "npx"),
    `#!/bin/sh\nif [ "$1" = kgrank ]; then shift; exec "${process.execPath}" "${path.join(root, "bin", "kgrank.js")}" "$@"; fi\n` +
      `exec "${realNpx}" "$@"\n`,
  );
  chmodSync(path.join(bin, "npx"), 0o755);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
  };
  delete env.NODE_OPTIONS; // vitest's own loader hooks are not the user's
  return { dir, env };
}

function run(command: string, args: string[], dir: string, env: NodeJS.ProcessEnv) {
  const r = spawnSync(command, args, { cwd: dir, env, encoding: "utf8", timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Output without the lines that depend on the machine (the header naming the backend, the elapsed time). */
function stable(lines: string[]): string[] {
  const kept = lines.map((l) => l.trimEnd()).filter((l) => !/^kgrank-native \S+: backend|^done in /.test(l));
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop();
  return kept;
}

/** Type errors of a ```ts block compiled as an ES module of a strict TypeScript project in `dir`. */
function typeErrors(b: Block, n: number, dir: string): string[] {
  const file = path.join(dir, `example-${n}.mts`);
  writeFileSync(file, b.body);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ["node"],
    typeRoots: [path.join(root, "node_modules", "@types")],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? `${path.basename(d.file.fileName)} ` : ""}${ts.flattenDiagnosticMessageText(d.messageText, " ")}`,
    );
}

function runBlock(b: Block, n: number, dir: string, env: NodeJS.ProcessEnv): void {
  const where = `line ${b.line}`;
  if (b.lang === "ts" && /\btypecheck\b/.test(b.info)) expect(typeErrors(b, n, dir), where).toEqual([]);
  if (b.lang === "ts" || b.lang === "js") {
    const js = ts.transpileModule(b.body, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const file = path.join(dir, `example-${n}.mjs`);
    writeFileSync(file, js);
    const r = run(process.execPath, [file], dir, env);
    expect(r.status, `${where}: ${r.stderr}`).toBe(0);
  } else if (b.lang === "console") {
    const lines = b.body.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith("$ ")) continue;
      let j = i + 1;
      while (j < lines.length && !lines[j]!.startsWith("$ ")) j++;
      const command = lines[i]!.slice(2);
      const r = run("bash", ["-c", command], dir, env);
      expect(r.status, `${where}: ${command}: ${r.stderr}`).toBe(0);
      if (!/\bnocompare\b/.test(b.info)) {
        expect(stable(r.stdout.split("\n")), `${where}: ${command}`).toEqual(stable(lines.slice(i + 1, j)));
      }
      i = j - 1;
    }
  } else {
    const r = run("bash", ["-euo", "pipefail", "-c", b.body], dir, env);
    expect(r.status, `${where}: ${r.stderr}`).toBe(0);
  }
}

describe.each(pages)("%s", (page) => {
  const text = readFileSync(path.join(root, page), "utf8");
  const all = blocks(text);

  it("every runnable block runs, or names the test that covers it", () => {
    const { dir, env } = scratch(page);
    all.forEach((b, n) => {
      if (!runnable.has(b.lang)) return;
      const norun = /^norun (\S+): \S/.exec(b.info);
      if (norun) {
        expect(existsSync(path.join(root, norun[1]!)), `line ${b.line}: ${norun[1]} does not exist`).toBe(true);
        return;
      }
      expect(b.info, `line ${b.line}: fence words other than nocompare / typecheck / norun FILE: REASON`).toMatch(
        b.lang === "ts" ? /^(typecheck)?$/ : /^(nocompare)?$/,
      );
      runBlock(b, n, dir, env);
    });
  });

  it("links to other pages of the repository point at files that exist", () => {
    for (const m of text.matchAll(/\]\(((?!https?:|#)[^)#\s]+)(#[^)]*)?\)/g)) {
      expect(existsSync(path.resolve(root, path.dirname(page), m[1]!)), `${page} links to ${m[1]}`).toBe(true);
    }
  });

  it("uses `npx kgrank`, never a bare `kgrank` command (it is not on a project's PATH)", () => {
    for (const b of all.filter((x) => ["console", "sh", "bash"].includes(x.lang))) {
      for (const line of b.body.split("\n")) {
        expect(line, `line ${b.line}`).not.toMatch(/(^|[$;&|(]\s*)kgrank\s/);
      }
    }
  });
});

describe("docs/cli.md", () => {
  const page = readFileSync(path.join(root, "docs", "cli.md"), "utf8");
  const help = (args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(root, "bin", "kgrank.js"), ...args, "--help"], {
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout;
  };
  /** The section whose heading names `npx kgrank COMMAND`, up to the next heading of its level. */
  const section = (command: string) => {
    const start = page.search(new RegExp(`^## .*\`npx kgrank ${command}\``, "m"));
    expect(start, `docs/cli.md has no section for ${command}`).toBeGreaterThanOrEqual(0);
    const end = page.indexOf("\n## ", start + 1);
    return page.slice(start, end < 0 ? undefined : end);
  };

  it("documents every command and every flag that --help lists", () => {
    const commands = [
      ...help([])
        .split("Commands:")[1]!
        .matchAll(/^ {2}([a-z][a-z-]*)/gm),
    ].map((m) => m[1]!);
    expect(commands.length).toBeGreaterThan(5);
    for (const command of commands.filter((c) => c !== "help")) {
      // submit takes evaluate's flags; its section says so and lists its own.
      const text = section(command) + (command === "submit" ? section("evaluate") : "");
      const flags = [...help([command]).matchAll(/^ {2}(?:-\w, )?(--[a-z0-9-]+)/gm)].map((m) => m[1]!);
      expect(flags.length, command).toBeGreaterThan(0);
      for (const flag of flags.filter((f) => f !== "--help")) {
        expect(text, `${command} ${flag}`).toMatch(new RegExp(`${flag}(?![a-z0-9-])`));
      }
    }
  });
});

describe("flags named in messages and docs", () => {
  /**
   * Every `--flag` a user reads - in a string or template literal of src/ (help texts, error messages, notes) and
   * anywhere in README.md and docs/*.md - is a flag some `kgrank` command registers (commander's options of
   * buildProgram), so no message or page sends a user to a flag that does not exist. `--scores-*` names the flags
   * it starts. The few that are other programs' flags are listed with the program.
   */
  const others: Record<string, string> = {
    "--array": "sbatch (SLURM job arrays)",
    "--cpus-per-task": "sbatch",
    "--ignore-scripts": "npm install",
    "--build-from-source": "npm install (node-gyp's convention, read by the install script)",
    "--bogus": "an unknown flag, in the examples of the error it gets",
    "--flag": "a placeholder in the format of error lines",
  };

  it("each is a flag of some kgrank command", async () => {
    const { buildProgram } = await import("../src/cli/main");
    const program = buildProgram({ stdout: () => undefined, stderr: () => undefined });
    const known = new Set(["--help", "--version"]);
    for (const c of program.commands) for (const o of c.options) if (o.long) known.add(o.long);
    expect(known.has("--save-state") && known.has("--redis") && known.has("--top-k")).toBe(true);
    // A flag, or a prefix of flags: `--scores-*` in prose, `--scores-${side}` in a template (its part ends in "-").
    const flag = /(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9](?:-\*|-$)?(?!\w)/gm;
    const unknown: string[] = [];
    const check = (text: string, where: string) => {
      for (const m of text.matchAll(flag)) {
        const f = m[0];
        const prefix = f.endsWith("-*") ? f.slice(0, -1) : f.endsWith("-") ? f : null;
        const ok = prefix ? [...known].some((k) => k.startsWith(prefix)) : known.has(f);
        if (!ok && !(f in others)) unknown.push(`${f} in ${where}`);
      }
    };
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : [],
      );
    const files = sources(path.join(root, "src"));
    expect(files.length).toBeGreaterThan(50);
    for (const file of files) {
      const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (
          ts.isStringLiteral(node) ||
          ts.isNoSubstitutionTemplateLiteral(node) ||
          ts.isTemplateHead(node) ||
          ts.isTemplateMiddle(node) ||
          ts.isTemplateTail(node)
        ) {
          const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          check(node.text, `${path.relative(root, file)}:${line}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    for (const page of pages) check(readFileSync(path.join(root, page), "utf8"), page);
    expect(unknown).toEqual([]);
  });
});
