/** Output formatting for the CLI: aligned text tables, markdown, CSV, numbers. */

export type Format = "table" | "json" | "csv" | "markdown";
export const FORMATS: readonly Format[] = ["table", "json", "csv", "markdown"];

/** A number as the tables print it: integers plainly, others with `digits` decimals; NaN as "NaN"; none as "". */
export function fmt(v: number | undefined | null, digits = 4): string {
  if (v === undefined || v === null) return "";
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  if (Number.isInteger(v)) return String(v);
  // Small values (variances, expectations over 10^4+ candidates) keep their significant digits.
  if (Math.abs(v) < 10 ** -(digits - 1)) return v.toExponential(3);
  return v.toFixed(digits);
}

/** A one-sided p-value: exponent notation when small, "< 1e-300" when it underflows. */
export function fmtP(p: number): string {
  if (Number.isNaN(p)) return "";
  if (p < 1e-300) return "< 1e-300";
  return p < 1e-4 ? p.toExponential(2) : p.toFixed(4);
}

/** Columns whose header starts with one of these are left-aligned; the rest (numbers) right-aligned. */
export function textTable(header: string[], rows: string[][], leftColumns = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

export function markdownTable(header: string[], rows: string[][], leftColumns = 1): string {
  const esc = (c: string) => c.replace(/\|/g, "\\|");
  return [
    `| ${header.map(esc).join(" | ")} |`,
    `| ${header.map((_, i) => (i < leftColumns ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(esc).join(" | ")} |`),
  ].join("\n");
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

export function table(format: "table" | "markdown", header: string[], rows: string[][], leftColumns = 1): string {
  return format === "markdown" ? markdownTable(header, rows, leftColumns) : textTable(header, rows, leftColumns);
}
