/** Numerics shared by the fallback backend and the facade; neither imports the other for them. */
export { CompensatedSum } from "./compensated";
export { lowerHalfKeyed, streamKey, uniform01, uniform01Keyed } from "./random";
export { normalUpperTail } from "./normal";
export { quantile } from "./quantile";
