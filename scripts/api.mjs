// The public surface, checked and documented. Emits the declarations of src/ into build-api/dts (never the possibly
// stale dist/), runs API Extractor over each entry point of package.json "exports" (etc/api-extractor*.json) and
// API Documenter over its doc model, then:
//   node scripts/api.mjs check    (`npm run check:api`, part of `npm run lint`): fails while etc/*.api.md or docs/api/
//                                 differs from what the sources export, naming the files; writes nothing tracked;
//   node scripts/api.mjs update   (`npm run api:update`): rewrites etc/*.api.md and docs/api/ to match.
// A changed export, signature or doc comment of a public name therefore shows up in review as a diff of the report
// (etc/) and of the reference (docs/api/), and one that was not meant to fails lint.
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const mode = process.argv[2];
if (mode !== "check" && mode !== "update") {
  console.error("usage: node scripts/api.mjs check|update");
  process.exit(2);
}
const require = createRequire(import.meta.url);
const { Extractor, ExtractorConfig } = require("@microsoft/api-extractor");

// Each entry point: its API Extractor config, its report, and where its reference goes under docs/api/.
// API Documenter names pages after the package; `title` is what the queue's pages call their entry point instead.
const ENTRIES = [
  { config: "etc/api-extractor.json", report: "etc/kgrank-native.api.md", docs: "" },
  {
    config: "etc/api-extractor-queue.json",
    report: "etc/kgrank-native-queue.api.md",
    docs: "queue",
    title: "kgrank-native/queue",
  },
];
const out = join(root, "build-api");
const docsDir = join(root, "docs", "api");

/** A package's bin script (by its package.json, which every package exports). */
const bin = (pkg, file) => join(dirname(require.resolve(`${pkg}/package.json`)), file);

function run(cmd, args) {
  const r = spawnSync(process.execPath, [cmd, ...args], { cwd: root, encoding: "utf8" });
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    console.error(`check:api: ${relative(root, cmd)} ${args.join(" ")} failed`);
    process.exit(1);
  }
}

rmSync(out, { recursive: true, force: true });
run(bin("typescript", "bin/tsc"), [
  "-p",
  "tsconfig.json",
  "--emitDeclarationOnly",
  "--sourceMap",
  "false",
  "--outDir",
  "build-api/dts",
]);

const stale = [];
const internal = [];
const staged = join(out, "md");
for (const e of ENTRIES) {
  const config = ExtractorConfig.loadFileAndPrepare(join(root, e.config));
  // localBuild writes the report into etc/; check mode leaves etc/ alone and compares instead.
  const result = Extractor.invoke(config, { localBuild: mode === "update", showVerboseMessages: false });
  if (result.errorCount > 0) {
    console.error(`check:api: API Extractor found ${result.errorCount} error(s) in ${e.config} (above)`);
    process.exit(1);
  }
  if (mode === "check" && result.apiReportChanged) stale.push(e.report);
  // A name tagged @internal is for the library, its tests and its CLI: an entry point that exports it publishes it.
  const report = readFileSync(
    mode === "check" ? join(out, "report", basename(e.report)) : join(root, e.report),
    "utf8",
  );
  for (const m of report.matchAll(/^\/\/ @internal\n(?:\/\/.*\n)*export (?:declare )?(?:abstract )?\w+ (\w+)/gm)) {
    internal.push(`${m[1]} (${e.report})`);
  }
  run(bin("@microsoft/api-documenter", "bin/api-documenter"), [
    "markdown",
    "-i",
    dirname(config.apiJsonFilePath),
    "-o",
    join(staged, e.docs),
  ]);
}

// The queue's pages say which entry point they document, and the reference's home page links to them.
for (const e of ENTRIES.filter((x) => x.title)) {
  const dir = join(staged, e.docs);
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".md"))) {
    const page = readFileSync(join(dir, f), "utf8")
      .replaceAll("[kgrank-native](./kgrank-native.md)", `[${e.title}](./kgrank-native.md)`)
      .replace("## kgrank-native package", `## ${e.title} entry point`);
    writeFileSync(join(dir, f), page);
  }
  appendFileSync(
    join(staged, "index.md"),
    `\n## Entry points\n\n- [kgrank-native](./kgrank-native.md): \`import ... from "kgrank-native"\`\n` +
      `- [${e.title}](./${e.docs}/kgrank-native.md): \`import ... from "${e.title}"\`\n`,
  );
}

if (internal.length > 0) {
  console.error(
    `check:api: exported by an entry point though tagged @internal: ${internal.join(", ")}. ` +
      "Stop exporting it from src/index.ts or src/queue.ts (tests import it from its module), or drop the tag.",
  );
  process.exit(1);
}

/** Every file under a folder, as relative paths, sorted. */
const files = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((d) => d.isFile())
        .map((d) => relative(dir, join(d.parentPath, d.name)))
        .sort()
    : [];

if (mode === "update") {
  rmSync(docsDir, { recursive: true, force: true });
  mkdirSync(docsDir, { recursive: true });
  cpSync(staged, docsDir, { recursive: true });
  console.log(`api:update: ${ENTRIES.map((e) => e.report).join(", ")} and docs/api/ (${files(docsDir).length} pages)`);
} else {
  const want = files(staged);
  const have = files(docsDir);
  const differ = [...new Set([...want, ...have])].filter(
    (f) =>
      !want.includes(f) || !have.includes(f) || !readFileSync(join(staged, f)).equals(readFileSync(join(docsDir, f))),
  );
  for (const f of differ.slice(0, 10)) stale.push(`docs/api/${f}`);
  if (differ.length > 10) stale.push(`... and ${differ.length - 10} more pages of docs/api/`);
  if (stale.length > 0) {
    console.error(
      "check:api: the exported surface differs from its checked-in report and reference:\n" +
        stale.map((s) => `  ${s}\n`).join("") +
        "Review what changed (an export that was not meant to be public? mark it @internal or stop exporting it), " +
        "then run `npm run api:update` and commit etc/ and docs/api/.",
    );
    process.exit(1);
  }
  console.log(`check:api: etc/*.api.md and docs/api/ (${want.length} pages) match the sources`);
}
