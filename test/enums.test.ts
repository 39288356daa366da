/**
 * The codes C++ and TypeScript share have the same names and values on both sides: each native enum is read from its
 * header and compared with its TypeScript mirror, so a code added, removed or renumbered on one side fails here (the
 * status codes: test/status.test.ts). Names are compared after the spelling each side uses (kSumWeights = sumWeights,
 * TransEL1 = "transe-l1"). The addon's own tables (native/addon/enums.h, reported by info().enums), which bound every
 * code it reads, are compared with the headers too; the fallback's score ops (a const enum, inlined) are read from
 * its source.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

import { describe, expect, it } from "vitest";

import {
  AGGREGATE_FLAGS,
  AGGREGATE_SLOTS,
  ClosedMetricCode,
  PBG_COMPARATORS,
  PBG_OPERATORS,
  ResamplingKind,
  SCREEN_MODES,
  StatisticCode,
} from "../src/contract/kernels";
import { nativeAddon, SIMD_CODES } from "../src/backend/backend";
import type { AddonEnums } from "../src/contract/addon";
import { INTERACTION_CODES } from "../src/scoring/embedding-model";

const native = (file: string) => readFileSync(path.join(__dirname, "..", "native", file), "utf8");
const source = (file: string) => readFileSync(path.join(__dirname, "..", "src", file), "utf8");

/** `NAME = value` entries of the enum `name` in `header` (comments and a trailing comma allowed). */
function cppEnum(header: string, name: string): Record<string, number> {
  const body = new RegExp(`enum (?:class )?${name}\\s*:\\s*\\w+\\s*\\{([^}]*)\\}`).exec(header)?.[1];
  return entriesOf(body, `enum ${name}`);
}

/** The `NAME = value` entries of an enum's body. */
function entriesOf(body: string | undefined, what: string): Record<string, number> {
  expect(body, what).toBeDefined();
  const entries = [...body!.replace(/\/\/[^\n]*/g, "").matchAll(/(\w+)\s*=\s*(\d+)/g)].map(
    (m) => [m[1]!, Number(m[2])] as const,
  );
  expect(entries.length, `entries of ${what}`).toBeGreaterThanOrEqual(2);
  return Object.fromEntries(entries);
}

/** The numeric members of a TypeScript enum (a numeric enum also maps values back to names). */
function tsEnum(e: Record<string, string | number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(e).filter((entry): entry is [string, number] => typeof entry[1] === "number"),
  );
}

/** Both sides' entries with their names spelt alike by `key`, for one comparison. */
function keyed(entries: Record<string, number>, key: (name: string) => string): Record<string, number> {
  return Object.fromEntries(Object.entries(entries).map(([k, v]) => [key(k), v]));
}

const plain = (name: string) => name.replace(/[^A-Za-z0-9]/g, "").toLowerCase();

describe("codes shared by the C++ core and TypeScript", () => {
  it("ClosedMetric (expectation.h) = ClosedMetricCode", () => {
    expect(tsEnum(ClosedMetricCode)).toEqual(cppEnum(native("core/expectation.h"), "ClosedMetric"));
  });

  it("Statistic (sampling.h) = StatisticCode", () => {
    expect(tsEnum(StatisticCode)).toEqual(cppEnum(native("core/sampling.h"), "Statistic"));
  });

  it("Resampling (resample.h) = ResamplingKind", () => {
    expect(tsEnum(ResamplingKind)).toEqual(cppEnum(native("core/resample.h"), "Resampling"));
  });

  it("Interaction (interaction.h) = the interaction codes of EmbeddingModel", () => {
    expect(keyed(INTERACTION_CODES, plain)).toEqual(keyed(cppEnum(native("core/interaction.h"), "Interaction"), plain));
  });

  it("AggregateSlot (aggregate.h) = AGGREGATE_SLOTS", () => {
    // The two sides name a slot differently; this table pairs them, and every slot of either side must be in it.
    const names: Record<string, string> = {
      kSumWeights: "sumWeights",
      kSumRanks: "sumRanks",
      kSumLogRanks: "sumLogRanks",
      kSumInverseRanks: "sumInverseRanks",
      kSumSquaredDev: "sumSquaredDeviations",
      kMedian: "median",
      kMad: "mad",
      kInvalidRanks: "invalid",
      kAggregateFixedSlots: "fixed",
    };
    const cpp = cppEnum(native("core/aggregate.h"), "AggregateSlot");
    expect(Object.keys(cpp).sort()).toEqual(Object.keys(names).sort());
    expect({ ...AGGREGATE_SLOTS }).toEqual(keyed(cpp, (k) => names[k]!));
  });

  it("aggregateRanks' flags (metrics_bindings.cpp) = AGGREGATE_FLAGS", () => {
    const binding = native("addon/metrics_bindings.cpp");
    const bits = Object.fromEntries(
      [...binding.matchAll(/request\.(\w+) = \(flags & (\d+)\) != 0;/g)].map((m) => [m[1]!, Number(m[2])]),
    );
    expect({ ...AGGREGATE_FLAGS }).toEqual(bits);
  });

  it("ScoreOp (interaction.h) = the fallback's Op (src/fallback/interaction.ts)", () => {
    const body = /const enum Op \{([^}]*)\}/.exec(source("fallback/interaction.ts"))?.[1];
    expect(entriesOf(body, "the fallback's Op")).toEqual(cppEnum(native("core/interaction.h"), "ScoreOp"));
  });

  it("ScreenMode (screen.h) = SCREEN_MODES", () => {
    expect(keyed({ ...SCREEN_MODES }, plain)).toEqual(keyed(cppEnum(native("core/screen.h"), "ScreenMode"), plain));
  });

  it("PbgComparator and PbgOperator (pbg.h) = PBG_COMPARATORS and PBG_OPERATORS", () => {
    const pbg = native("core/pbg.h");
    expect(keyed({ ...PBG_COMPARATORS }, plain)).toEqual(keyed(cppEnum(pbg, "PbgComparator"), plain));
    expect(keyed({ ...PBG_OPERATORS }, plain)).toEqual(keyed(cppEnum(pbg, "PbgOperator"), plain));
  });

  it("SimdLevel (simd.h) = SIMD_CODES of the backend", () => {
    expect(keyed({ ...SIMD_CODES }, plain)).toEqual(keyed(cppEnum(native("core/simd.h"), "SimdLevel"), plain));
  });
});

describe.skipIf(nativeAddon() === null)("the addon's enum tables (native/addon/enums.h, info().enums)", () => {
  /** Each table and the header that holds its enum. */
  const headers: Record<keyof AddonEnums, string> = {
    Interaction: "core/interaction.h",
    ComplexLayout: "core/interaction.h",
    ScoreOp: "core/interaction.h",
    ClosedMetric: "core/expectation.h",
    Statistic: "core/sampling.h",
    Resampling: "core/resample.h",
    AggregateSlot: "core/aggregate.h",
    StatusCode: "core/status.h",
    ScreenMode: "core/screen.h",
    PbgComparator: "core/pbg.h",
    PbgOperator: "core/pbg.h",
    SimdLevel: "core/simd.h",
  };
  const enums = nativeAddon()?.info().enums;

  it("are exactly the tables listed here", () => {
    expect(Object.keys(enums!).sort()).toEqual(Object.keys(headers).sort());
  });

  for (const [table, header] of Object.entries(headers) as [keyof AddonEnums, string][]) {
    it(`${table}: the table the addon checks codes against has every member of the header's enum`, () => {
      expect({ ...enums![table] }).toEqual(cppEnum(native(header), table));
    });
  }
});
