/**
 * The interactions, one descriptor each: everything outside the kernels that depends on which interaction a model
 * uses (its code shared with native/core/interaction.h, the relation widths it takes, complex rows, PairRE's entity
 * normalisation, the names model directories give it, what the memory planners count per row, how to rescale an
 * overflowing model). The code reads these fields, never an interaction's name, so a new interaction is one entry
 * here plus its formula in native/core/interaction.cpp and its twin src/fallback/interaction.ts.
 */

export interface InteractionDescriptor {
  /** Code shared with native/core/interaction.h Interaction (test/enums.test.ts compares the two). */
  readonly code: number;
  /** Rows are complex numbers (an even width; complexLayout required). */
  readonly complex: boolean;
  /** Relations may be phases (angle = value x phaseScale; a model directory's config gives the scale). */
  readonly phases: boolean;
  /** The relation widths taken with entity width d, and how an error says them. */
  relationWidths(d: number): readonly number[];
  relationWidthText(d: number): string;
  /** Entity rows are divided by their L2 norm by default (normalizeEntities), each row's factor kept beside it. */
  readonly normalizesEntities: boolean;
  /**
   * What the memory planners count beyond the query vector and a table row: vectors of the entity width the kernel
   * keeps per query row (PairRE: its coefficient vector), and whether each table row carries a factor (PairRE's
   * 1 / ||e||).
   */
  readonly memory: { readonly queryVectors: number; readonly rowFactor: boolean };
  /**
   * Model names (lower case) in the config of a directory saved by OGB's KnowledgeGraphEmbedding code and by DGL-KE;
   * PyKEEN's interaction class (null: none scores it so), for the docs.
   */
  readonly savedAs: {
    readonly ogb: readonly string[];
    readonly dglke: readonly string[];
    readonly pykeen: string | null;
  };
  /** A rescaling of the embeddings that keeps the order of every row's scores (exact arithmetic). */
  readonly rescale: string;
  /**
   * The native core's int8 screen certifies its float32 scores (docs/screen.md: a dot product of query and row, or
   * a squared distance through its expanded form).
   */
  readonly screens: boolean;
}

const entityWidth = (d: number) => [d];
const entityWidthText = (d: number) => `${d} (the entity width)`;
const plain = { queryVectors: 0, rowFactor: false } as const;
/** What OGB's RotatE and PyKEEN's (rotate, rotate-l2) share: they differ only in the distance and the names. */
const rotation = {
  complex: true,
  phases: true,
  relationWidths: (d: number) => [d / 2, d],
  relationWidthText: (d: number) => `${d / 2} (phases) or ${d} (complex numbers)`,
  normalizesEntities: false,
  memory: plain,
  rescale: "divide the entities by a constant",
} as const;

/**
 * An interaction's kgrank name. Spelled out (not derived from the table) so the public declarations name no internal
 * table; `satisfies` below refuses a table whose keys differ from it.
 */
export type InteractionName = "transe-l1" | "transe-l2" | "distmult" | "complex" | "rotate" | "rotate-l2" | "pairre";

/** Every interaction by its kgrank name, in the order INTERACTIONS lists them. */
export const INTERACTION_TABLE = {
  "transe-l1": {
    code: 0,
    complex: false,
    phases: false,
    relationWidths: entityWidth,
    relationWidthText: entityWidthText,
    normalizesEntities: false,
    memory: plain,
    // Plain "TransE" is the L1 distance in OGB's code (examples/linkproppred/wikikg2/model.py: torch.norm(score, p=1)).
    savedAs: { ogb: ["transe", "transe_l1"], dglke: ["transe_l1"], pykeen: "TransE (scoring_fct_norm=1)" },
    rescale: "divide entities and relations by one constant",
    screens: false,
  },
  "transe-l2": {
    code: 1,
    complex: false,
    phases: false,
    relationWidths: entityWidth,
    relationWidthText: entityWidthText,
    normalizesEntities: false,
    memory: plain,
    // and the L2 distance in DGL-KE's (general_models.py: model_name == 'TransE' or 'TransE_l2': TransEScore(gamma, 'l2')).
    savedAs: { ogb: ["transe_l2"], dglke: ["transe", "transe_l2"], pykeen: "TransE (scoring_fct_norm=2)" },
    rescale: "divide entities and relations by one constant",
    screens: true,
  },
  distmult: {
    code: 2,
    complex: false,
    phases: false,
    relationWidths: entityWidth,
    relationWidthText: entityWidthText,
    normalizesEntities: false,
    memory: plain,
    savedAs: { ogb: ["distmult"], dglke: ["distmult"], pykeen: "DistMult" },
    rescale: "divide entities or relations by a constant",
    screens: true,
  },
  complex: {
    code: 3,
    complex: true,
    phases: false,
    relationWidths: entityWidth,
    relationWidthText: entityWidthText,
    normalizesEntities: false,
    memory: plain,
    savedAs: { ogb: ["complex"], dglke: ["complex"], pykeen: "ComplEx" },
    rescale: "divide entities or relations by a constant",
    screens: true,
  },
  rotate: {
    code: 4,
    ...rotation,
    savedAs: { ogb: ["rotate"], dglke: ["rotate"], pykeen: null },
    screens: false,
  },
  "rotate-l2": {
    code: 6,
    ...rotation,
    savedAs: { ogb: [], dglke: [], pykeen: "RotatE" },
    // The sum of squared moduli: TransE-L2's op over the [re | im] elements.
    screens: true,
  },
  pairre: {
    code: 5,
    complex: false,
    phases: false,
    relationWidths: (d: number) => [2 * d],
    relationWidthText: (d: number) => `2 x ${d} = ${2 * d} ([head factor | tail factor])`,
    normalizesEntities: true,
    memory: { queryVectors: 1, rowFactor: true },
    savedAs: { ogb: ["pairre"], dglke: ["pairre"], pykeen: "PairRE" },
    rescale: "divide the relations by a constant",
    screens: false,
  },
} as const satisfies Record<InteractionName, InteractionDescriptor>;

/** The interactions' names: transe-l1, transe-l2, distmult, complex, rotate (OGB's), rotate-l2 (PyKEEN's), pairre. */
export const INTERACTIONS: readonly InteractionName[] = Object.keys(INTERACTION_TABLE) as InteractionName[];

/** The descriptor of an interaction. */
export function interactionOf(name: InteractionName): InteractionDescriptor {
  return INTERACTION_TABLE[name];
}

/** Interaction codes shared with native/core/interaction.h Interaction (test/enums.test.ts compares the two). */
export const INTERACTION_CODES: Readonly<Record<InteractionName, number>> = Object.fromEntries(
  INTERACTIONS.map((name) => [name, INTERACTION_TABLE[name].code]),
) as Record<InteractionName, number>;

/**
 * The interactions a model directory's config names `model` (lower case) in the code that saved it (`writer`), or in
 * either when unknown: one, several (plain "transe" when the writer is unknown) or none.
 */
export function interactionsSavedAs(model: string, writer: "ogb" | "dglke" | null): InteractionName[] {
  return INTERACTIONS.filter((name) => {
    const saved = interactionOf(name).savedAs;
    return (writer ? saved[writer] : [...saved.ogb, ...saved.dglke]).includes(model);
  });
}
