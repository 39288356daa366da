// Writes dist/vendor/vega.mjs: the part of Vega and Vega-Lite that `kgrank report` and `kgrank plot` use (Vega-Lite's
// compile, Vega's parse and View, rendered to SVG headlessly), bundled into one ES module and tree-shaken, so that an
// install of the package pulls neither vega nor vega-lite (with their dependencies about 75 packages, 20 MB): they
// stay devDependencies.
// The code is theirs, unchanged: the report and the plots are the bytes the packages themselves render
// (test/report.test.ts compares the two). Their licences (Vega's BSD-3-Clause, d3's ISC, ...) must travel with the
// bundled code: dist/vendor/vega.LICENSES.txt holds each bundled package's name, version and licence text. Vega's
// optional node-canvas (text measured by a real canvas when installed) stays a run-time import, as in Vega itself.
// Run by `npm run build:ts` after tsc.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "vendor");
const pkgOf = (name) => JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8"));

mkdirSync(out, { recursive: true });
const result = await build({
  stdin: {
    contents: 'export { parse, View } from "vega";\nexport { compile } from "vega-lite";\n',
    resolveDir: root,
    sourcefile: "kgrank-vega-entry.mjs",
    loader: "js",
  },
  outfile: join(out, "vega.mjs"),
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["canvas"],
  minify: true,
  legalComments: "none",
  banner: {
    js:
      `// Vega ${pkgOf("vega").version} and Vega-Lite ${pkgOf("vega-lite").version}, the parts kgrank-native's report ` +
      `uses, bundled by scripts/build-vega.mjs; licences: vega.LICENSES.txt beside this file.`,
  },
  metafile: true,
  logLevel: "warning",
});

// Every package whose code is in the bundle, with its licence text.
const packages = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const parts = input.split(/[\\/]/);
  const at = parts.lastIndexOf("node_modules");
  if (at < 0) continue;
  const name = parts[at + 1].startsWith("@") ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1];
  const dir = join(root, ...parts.slice(0, at + 1), ...name.split("/"));
  if (!packages.has(name)) packages.set(name, dir);
}
const sections = [...packages.entries()]
  .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  .map(([name, dir]) => {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
    if (!file) throw new Error(`${name} (${relative(root, dir).split(sep).join("/")}) has no licence file to ship`);
    const text = readFileSync(join(dir, file), "utf8").trim();
    return `${name} ${pkg.version} (${pkg.license})\n${"-".repeat(60)}\n${text}\n`;
  });
writeFileSync(
  join(out, "vega.LICENSES.txt"),
  `dist/vendor/vega.mjs bundles code of these packages, under these licences:\n\n${sections.join("\n")}`,
);
const bytes = Object.values(result.metafile.outputs)[0].bytes;
console.log(`dist/vendor/vega.mjs: ${(bytes / 1024).toFixed(0)} kB from ${packages.size} packages`);
