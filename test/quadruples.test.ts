/**
 * Temporal quadruples as TSV: labels as the triple reader's, timestamps as integers or ISO dates in time order,
 * errors naming the file and line.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { KgrankInputError, parseQuadruples, readQuadruples } from "../src/index";
import { backendLabel } from "./helpers/backend";

const SAMPLE = join(__dirname, "fixtures", "icews-sample");
const samplePaths = {
  train: join(SAMPLE, "train.txt"),
  valid: join(SAMPLE, "valid.txt"),
  test: join(SAMPLE, "test.txt"),
};

describe(`quadruple TSV on ${backendLabel}`, () => {
  it("maps the ICEWS-style sample: sorted training labels, dates in time order, unknown labels dropped", () => {
    const d = readQuadruples(samplePaths);
    const rows = (f: string) =>
      readFileSync(f, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split("\t"));
    const train = rows(samplePaths.train);
    const all = [...train, ...rows(samplePaths.valid), ...rows(samplePaths.test)];
    const entities = [...new Set(train.flatMap((r) => [r[0]!, r[2]!]))].sort();
    const relations = [...new Set(train.map((r) => r[1]!))].sort();
    expect(d.entityLabels).toEqual(entities);
    expect(d.relationLabels).toEqual(relations);
    const known = (r: string[]) => entities.includes(r[0]!) && entities.includes(r[2]!) && relations.includes(r[1]!);
    expect(d.timestamps).toEqual([...new Set(all.filter(known).map((r) => r[3]!))].sort());
    expect(d.dropped).toEqual([0, 0, 1]);
    expect(d.train.length).toBe(train.length * 4);
    for (let i = 0; i < train.length; i++) {
      const [h, r, t, tau] = train[i]!;
      expect([...d.train.subarray(4 * i, 4 * i + 4)]).toEqual([
        entities.indexOf(h!),
        relations.indexOf(r!),
        entities.indexOf(t!),
        d.timestamps.indexOf(tau!),
      ]);
    }
  });

  it("orders integer timestamps by value across splits (day offsets; 007 is 7)", () => {
    const d = parseQuadruples({ train: "a\tr\tb\t10\nb\tr\ta\t9\r\n\n", test: "\uFEFFa\tr\tb\t007\na\tr\tb\t-1\n" });
    expect(d.timestamps).toEqual(["-1", "7", "9", "10"]);
    expect([...d.train]).toEqual([0, 0, 1, 3, 1, 0, 0, 2]);
    expect([...d.test]).toEqual([0, 0, 1, 1, 0, 0, 1, 0]);
    expect(d.valid.length).toBe(0);
  });

  it("refuses a timestamp that does not parse, another column count, mixed kinds: file and line named", () => {
    const cases: [() => unknown, RegExp][] = [
      [
        () => parseQuadruples({ train: "a\tr\tb\t2014-01-01\na\tr\tb\t2014-02-30\n" }),
        /^train: line 2 has timestamp "2014-02-30", which does not parse: write an integer/,
      ],
      [
        () => parseQuadruples({ train: "a\tr\tb\t2014/01/01\n" }),
        /^train: line 1 has timestamp "2014\/01\/01", which does not parse/,
      ],
      [
        () => parseQuadruples({ train: "a\tr\tb\t1\n", test: "a\tr\tb\n" }),
        /^test: line 1 has 3 tab-separated fields, expected 4 \(head<TAB>relation<TAB>tail<TAB>timestamp\)/,
      ],
      [
        () => parseQuadruples({ train: "a\tr\tb\t1\t0\n" }),
        /^train: line 1 has 5 tab-separated fields, expected 4 .*cut -f1-4/,
      ],
      [
        () => parseQuadruples({ train: "a\tr\tb\t1\n", valid: "\na\tr\tb\t2014-01-01\n" }),
        /^valid: line 2 has an ISO date timestamp but train line 1 has an integer/,
      ],
      [() => parseQuadruples({ train: "a\t\tb\t1\n" }), /^train: line 1 has an empty field/],
    ];
    for (const [call, message] of cases) {
      expect(call).toThrow(KgrankInputError);
      expect(call).toThrow(message);
    }
    expect(() => readQuadruples({ train: samplePaths.train, test: join(SAMPLE, "missing.txt") })).toThrow(
      KgrankInputError,
    );
  });

  it("on any text, returns ids in range and timestamps in time order, or a KgrankInputError naming a line", () => {
    const label = fc.constantFrom("a", "b", "r", "q", "", " x");
    const stamp = fc.constantFrom("7", "007", "-3", "24", "2014-01-01", "2016-02-29", "2014-02-29", "x");
    const line = fc.oneof(
      { weight: 6, arbitrary: fc.tuple(label, label, label, stamp).map((f) => f.join("\t")) },
      { weight: 1, arbitrary: fc.array(fc.oneof(label, stamp), { maxLength: 5 }).map((f) => f.join("\t")) },
    );
    const text = fc
      .tuple(fc.constantFrom("", "\uFEFF"), fc.array(line, { maxLength: 4 }), fc.constantFrom("\n", "\r\n"))
      .map(([bom, lines, end]) => bom + lines.join(end));
    let parsed = 0;
    fc.assert(
      fc.property(text, text, (train, test) => {
        let d;
        try {
          d = parseQuadruples({ train, test });
        } catch (e) {
          expect(e).toBeInstanceOf(KgrankInputError);
          expect((e as Error).message).toMatch(/^(train|test): line \d+ /);
          return;
        }
        parsed += d.train.length > 0 ? 1 : 0;
        const sizes = [d.entityLabels.length, d.relationLabels.length, d.entityLabels.length, d.timestamps.length];
        for (const q of [d.train, d.test]) q.forEach((v, i) => expect(v >= 0 && v < sizes[i % 4]!).toBe(true));
        const order = d.timestamps.map((t) => (/^-?\d+$/.test(t) ? Number(t) : Date.parse(t)));
        for (let i = 1; i < order.length; i++) expect(order[i]!).toBeGreaterThan(order[i - 1]!);
      }),
      { numRuns: 400, seed: 27 },
    );
    expect(parsed).toBeGreaterThan(10);
  });
});
