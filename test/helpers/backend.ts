/** The backend this test project runs on, as a label for test names: "native/avx512/t2" or "ts". */
import { backendInfo } from "../../src/backend/backend";

const info = backendInfo();

export const backendLabel = `${info.backend}${info.backend === "native" ? `/${info.simd}/t${info.threads}` : ""}`;
