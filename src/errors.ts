/**
 * Typed errors. Every error kgrank throws on purpose is a `KgrankError`; its `code` says which kind, and input
 * errors name the offending argument and say what is accepted.
 */
export class KgrankError extends Error {
  readonly code: string;
  constructor(message: string, code = "KGRANK_ERROR") {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A public function was called with an argument it cannot accept. `argument` names it. */
export class KgrankInputError extends KgrankError {
  readonly argument: string;
  constructor(argument: string, message: string) {
    super(`${argument}: ${message}`, "KGRANK_INPUT");
    this.argument = argument;
  }
}

/** The backend could not be loaded or configured as asked (KGRANK_BACKEND, KGRANK_SIMD, KGRANK_THREADS). */
export class KgrankBackendError extends KgrankError {
  constructor(message: string) {
    super(message, "KGRANK_BACKEND");
  }
}

/** An object was used in a state that does not allow the call (e.g. adding to a finished accumulator). */
export class KgrankStateError extends KgrankError {
  constructor(message: string) {
    super(message, "KGRANK_STATE");
  }
}

/** A metric has no closed-form expectation or variance (use `estimate()`), or cannot be derived for that reason. */
export class NoClosedFormError extends KgrankError {
  readonly metric: string;
  constructor(metric: string, message: string) {
    super(`${metric}: ${message}`, "KGRANK_NO_CLOSED_FORM");
    this.metric = metric;
  }
}

/** getMetric() did not recognise the query; `suggestions` holds the closest known names. */
export class UnknownMetricError extends KgrankError {
  readonly query: string;
  readonly suggestions: readonly string[];
  constructor(query: string, suggestions: readonly string[]) {
    super(
      `unknown metric ${JSON.stringify(query)}; closest known names: ${suggestions.join(", ")} ` +
        `(listMetrics() prints the catalogue)`,
      "KGRANK_UNKNOWN_METRIC",
    );
    this.query = query;
    this.suggestions = suggestions;
  }
}
