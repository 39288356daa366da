// Lint: typescript-eslint's recommended rules on the sources, tests, benchmarks and scripts. Formatting is
// prettier's (`npm run format`; `npm run lint` checks it); unused locals and parameters are the compiler's (tsconfig.json).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "build/", "build-*/", "node_modules/", "prebuilds/", "coverage/", "bench/results/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        __dirname: "readonly",
        require: "readonly",
        module: "writable",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setImmediate: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        URL: "readonly",
        TextDecoder: "readonly",
        TextEncoder: "readonly",
        SharedArrayBuffer: "readonly",
        Atomics: "readonly",
        queueMicrotask: "readonly",
        MessageChannel: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        performance: "readonly",
        structuredClone: "readonly",
      },
    },
    rules: {
      // Constants are written with the digits of their source (Cody-Waite splits, fixture values), more than a double keeps.
      "no-loss-of-precision": "off",
      // A getter object that reads its creator's fields names it `self`.
      "@typescript-eslint/no-this-alias": ["error", { allowedNames: ["self"] }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
    },
  },
  {
    // The example pages run in a browser.
    files: ["examples/browser/main.mjs", "test/fixtures/browser/*.mjs"],
    languageOptions: { globals: { document: "readonly", fetch: "readonly" } },
  },
  {
    files: ["**/*.cjs", "scripts/**/*.js", "bin/**/*.js"],
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
