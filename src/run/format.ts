/** Output formatting for the CLI: CSV, JSON and p-values here; tables and numbers from src/text/table. */
export { fmt, table } from "../text/table";

export type Format = "table" | "json" | "csv" | "markdown";
export const FORMATS: readonly Format[] = ["table", "json", "csv", "markdown"];

/** A one-sided p-value: exponent notation when small, "< 1e-300" when it underflows. */
export function fmtP(p: number): string {
  if (Number.isNaN(p)) return "";
  if (p < 1e-300) return "< 1e-300";
  return p < 1e-4 ? p.toExponential(2) : p.toFixed(4);
}

function csvCell(c: string | number | undefined): string {
  if (c === undefined) return "";
  const s = typeof c === "number" ? (Number.isNaN(c) ? "NaN" : String(c)) : c;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csv(header: string[], rows: (string | number | undefined)[][]): string {
  return [header, ...rows].map((r) => r.map(csvCell).join(",")).join("\n") + "\n";
}

/** JSON with NaN and ±Infinity as null (JSON has no such numbers). */
export function json(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v), 2) + "\n";
}
