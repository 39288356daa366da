// Checks that the C++ sources under native/ are formatted as .clang-format says (`npm run check:format-cpp`, part of
// `npm run lint`); with --fix (`npm run format:cpp`) rewrites them instead. The style is pinned to Debian's
// clang-format 14 (another version may lay out a few lines differently). The files are the tracked ones
// (git ls-files), so build folders and generated files are never read.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const fix = process.argv.includes("--fix");

// CLANG_FORMAT names another binary; otherwise clang-format, then Debian's versioned name.
const candidates = process.env.CLANG_FORMAT ? [process.env.CLANG_FORMAT] : ["clang-format", "clang-format-14"];
let tool = null;
let version = "";
for (const name of candidates) {
  const probe = spawnSync(name, ["--version"], { encoding: "utf8" });
  if (probe.status === 0) {
    tool = name;
    version = probe.stdout.trim();
    break;
  }
}
if (tool === null) {
  console.error(
    `check:format-cpp: ${candidates.join(" / ")} not found; install clang-format 14 ` +
      "(Debian/Ubuntu: apt-get install clang-format) or set CLANG_FORMAT to its path",
  );
  process.exit(1);
}

const listed = spawnSync("git", ["ls-files", "-z", "--", "native/*.cpp", "native/*.h"], {
  cwd: root,
  encoding: "utf8",
});
if (listed.status !== 0) {
  console.error(`check:format-cpp: git ls-files failed (run it in a git checkout): ${listed.stderr.trim()}`);
  process.exit(1);
}
const files = listed.stdout.split("\0").filter(Boolean);

const args = fix ? ["-i", "--style=file", ...files] : ["--dry-run", "--Werror", "--style=file", ...files];
const run = spawnSync(tool, args, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
if (run.error) {
  console.error(`check:format-cpp: ${tool} failed to run: ${run.error.message}`);
  process.exit(1);
}
if (run.status !== 0) {
  process.stderr.write(run.stderr);
  const bad = new Set();
  for (const m of run.stderr.matchAll(/^(.+?):\d+:\d+: error:/gm)) bad.add(m[1]);
  if (!fix) {
    console.error(
      `check:format-cpp: ${bad.size} of ${files.length} C++ files are not formatted as .clang-format says ` +
        `(checked with ${version}); fix with: npm run format:cpp`,
    );
  }
  process.exit(1);
}
console.log(`check:format-cpp: ${files.length} C++ files ${fix ? "formatted" : "formatted as .clang-format says"}`);
