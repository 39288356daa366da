/** z -> one-sided p-value P(Z >= z) for a standard normal Z (src/numeric/normal.ts normalUpperTail). */
import { KgrankInputError } from "../checks/errors";
import { normalUpperTail } from "../numeric";
import { describe } from "../checks/validate";

/** @internal The upper-tail p-value P(Z > z) of a z-score, as the CLI prints it. */
export function zToPValue(z: number): number {
  if (typeof z !== "number" || Number.isNaN(z)) {
    throw new KgrankInputError("z", `must be a number (a z-score), got ${describe(z)}`);
  }
  return normalUpperTail(z);
}
