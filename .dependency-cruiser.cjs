/**
 * The layers of src/ (ARCHITECTURE.md, "Layers"), checked by `npm run check:layers` (part of `npm run lint`).
 * Bottom to top; a folder imports only folders below it (never its own layer's neighbours or one above), so no
 * folder-level cycle can exist; inside a folder no file-level cycle may exist either.
 */
const LAYERS = [
  "numeric",
  "contract",
  "text",
  "fallback",
  "checks",
  "backend",
  "metrics",
  "ranking",
  "scoring",
  "io",
  "evaluation",
  "compare",
  "report",
  "run",
  "cli",
];

/** One rule per layer: it imports nothing above it (index.ts, the public surface, stands above every layer). */
const layerRules = LAYERS.map((layer, i) => {
  const above = LAYERS.slice(i + 1);
  return {
    name: `layer-${layer}`,
    comment: `src/${layer} is below ${above.join(", ") || "src/index.ts"}: it imports none of them`,
    severity: "error",
    from: { path: `^src/${layer}/` },
    to: { path: `^src/(${above.map((l) => `${l}/`).join("|")}${above.length ? "|" : ""}index\\.ts$)` },
  };
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "no import cycle between files (the layer rules rule out cycles between folders)",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-loose-files",
      comment: "every module lives in its layer's folder; src/index.ts alone (the public surface) sits at the root",
      severity: "error",
      from: { path: "^src/[^/]+$", pathNot: "^src/index\\.ts$" },
      to: {},
    },
    {
      name: "no-loose-imports",
      comment: "nothing imports a module at the src/ root but src/index.ts (which nothing inside src/ imports)",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^src/[^/]+$" },
    },
    ...layerRules,
    {
      name: "fallback-only-contract-and-numerics",
      comment: "the fallback imports only the kernel contract and the shared numerics (and its own files)",
      severity: "error",
      from: { path: "^src/fallback/" },
      to: { path: "^src/", pathNot: "^src/(fallback|contract|numeric)/" },
    },
    {
      name: "fallback-only-from-backend",
      comment: "only the backend switch loads the fallback",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(fallback/|backend/backend\\.ts$)" },
      to: { path: "^src/fallback/" },
    },
    {
      name: "addon-only-in-backend",
      comment: "only the backend layer loads the addon (a .node file, node-gyp-build or the bindings' loader)",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/backend/" },
      to: { path: "(\\.node$|node-gyp-build)" },
    },
    {
      name: "not-to-unresolvable",
      comment: "every import resolves",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
  },
};
