/**
 * kgrank-native in a browser (or any JavaScript runtime without Node's modules): the public surface of src/index.ts,
 * bundled by scripts/build-browser.mjs into dist/browser/kgrank.mjs with src/backend/browser-backend.ts as the
 * backend, plus `loadWasm` to run the WebAssembly core. What reads or writes files (readNpy, loadDataset, openEntityTable,
 * writeFileAtomic, ...) throws there: give bytes and text instead (parseNpy, splitTsvTriples). docs/browser.md.
 */
export * from "./index";
export { loadWasm } from "./backend/browser-backend";
export type { WasmSource } from "./backend/browser-backend";
