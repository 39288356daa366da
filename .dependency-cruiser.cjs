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
      comment:
        "every module lives in its layer's folder; the public surfaces alone sit at the root: src/index.ts, " +
        "src/browser.ts (the same surface for the browser build) and src/queue.ts (kgrank-native/queue)",
      severity: "error",
      from: { path: "^src/[^/]+$", pathNot: "^src/(index|browser|queue)\\.ts$" },
      to: {},
    },
    {
      name: "no-loose-imports",
      comment: "nothing inside src/ imports a module at the src/ root (src/browser.ts re-exports src/index.ts)",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/browser\\.ts$" },
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
      comment: "only the backend switches load the fallback (Node's, and the browser build's)",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(fallback/|backend/(browser-)?backend\\.ts$)" },
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
