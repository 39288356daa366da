// Writes dist/browser/kgrank.mjs: src/browser.ts (the public surface plus loadWasm) bundled into one ES module for
// browsers, with src/backend/browser-backend.ts in place of src/backend/backend.ts (no addon, no file system; the
// WebAssembly core once loadWasm has it). Node's modules become stand-ins whose functions throw a KGRANK_BROWSER error
// naming the function: reading files is what the browser build does not do. A few values the library reads when a
// module loads or on the browser's own paths are real: buffer.constants (typed-array limits), os.availableParallelism.
// Run by `npm run build:ts` after tsc. docs/browser.md.
import { mkdirSync, readFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
const backend = join(root, "src", "backend", "backend.ts");
const browserBackend = join(root, "src", "backend", "browser-backend.ts");

/** What a stand-in keeps real: module name -> source of an object whose properties replace the throwing ones. */
const REAL = {
  buffer: "{ constants: { MAX_LENGTH: Number.MAX_SAFE_INTEGER, MAX_STRING_LENGTH: 2 ** 29 - 24 } }",
  os: "{ availableParallelism: () => globalThis.navigator?.hardwareConcurrency ?? 1 }",
};

/**
 * A CommonJS stand-in for Node's module `name`: every export of the real one, a function that throws when called (or,
 * for a value, a property that throws when read), then REAL's properties over them.
 */
function standIn(name) {
  const real = require(`node:${name}`);
  const keys = Object.keys(real).filter((k) => k !== "default" && /^[A-Za-z_$][\w$]*$/.test(k));
  const functions = keys.filter((k) => typeof real[k] === "function");
  const values = keys.filter((k) => typeof real[k] !== "function");
  return `const unavailable = (what) => {
  const e = new Error(what + " is not available in kgrank-native's browser build (no file system, no Node): " +
    "pass bytes or text instead of paths (e.g. parseNpy, splitTsvTriples); see docs/browser.md");
  e.code = "KGRANK_BROWSER";
  throw e;
};
const stand = {};
for (const k of ${JSON.stringify(functions)}) stand[k] = () => unavailable("node:${name} " + k + "()");
for (const k of ${JSON.stringify(values)})
  Object.defineProperty(stand, k, { enumerable: true, configurable: true, get: () => unavailable("node:${name} " + k) });
for (const [k, v] of Object.entries(${REAL[name] ?? "{}"}))
  Object.defineProperty(stand, k, { enumerable: true, configurable: true, value: v });
module.exports = stand;
`;
}

const browserPlugin = {
  name: "kgrank-browser",
  setup(b) {
    b.onResolve({ filter: /(^|\/)backend$/ }, (args) => {
      const resolved = join(args.resolveDir, `${args.path}.ts`);
      if (resolved === backend && args.importer !== browserBackend) return { path: browserBackend };
      return undefined;
    });
    b.onResolve({ filter: new RegExp(`^(node:)?(${builtinModules.join("|").replace(/[/]/g, "\\/")})$`) }, (args) => ({
      path: args.path.replace(/^node:/, ""),
      namespace: "node-stand-in",
    }));
    b.onLoad({ filter: /.*/, namespace: "node-stand-in" }, (args) => ({
      contents: standIn(args.path),
      loader: "js",
    }));
  },
};

mkdirSync(join(root, "dist", "browser"), { recursive: true });
const result = await build({
  entryPoints: [join(root, "src", "browser.ts")],
  outfile: join(root, "dist", "browser", "kgrank.mjs"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  // Where a module asks for its own folder (the bundled datasets), path.resolve is a stand-in and says why it fails.
  define: { KGRANK_VERSION: JSON.stringify(version), __dirname: JSON.stringify("") },
  plugins: [browserPlugin],
  banner: { js: `// kgrank-native ${version}, browser build (scripts/build-browser.mjs): see docs/browser.md.` },
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});
const bytes = Object.values(result.metafile.outputs)[0].bytes;
console.log(`dist/browser/kgrank.mjs: ${(bytes / 1024).toFixed(0)} kB`);
