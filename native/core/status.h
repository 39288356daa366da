// The one status convention from the core to JavaScript. A core function that can reject its input returns a Status;
// the addon turns a failed one into a thrown JavaScript error (common.h, throw_status) whose `code` is
// "KGRANK_INPUT" and whose `status` and `index` properties carry the kind and the position below, and the
// TypeScript facade turns that into its own typed error (KgrankInputError etc., src/backend/native-call.ts statusOf()).
// No core function reports a problem any other way (no bool + message, no packed numbers).
#pragma once
#include <cstddef>
#include <string>
#include <utility>

namespace kgrank {

// Mirrored value for value by src/contract/kernels.ts StatusCode (test/status.test.ts reads this enum and compares).
enum class StatusCode : int {
  Ok = 0,
  InvalidInput = 1,  // the input was rejected; `message` says why (parsers: without the "<argument>: " prefix)
  IdOutOfRange = 2,  // an id is outside its range; `index` is the flat index of the id
  NanTrueScore = 3,  // the true answer's score is NaN; `index` is the row
  NotInIndex = 4,    // an evaluated triple is not among the filter triples; `index` is the row
};

struct Status {
  StatusCode code = StatusCode::Ok;
  std::string message;
  size_t index = 0;

  bool ok() const { return code == StatusCode::Ok; }
  static Status success() { return Status{}; }
  static Status invalid(std::string message) { return Status{StatusCode::InvalidInput, std::move(message), 0}; }
  static Status at(StatusCode code, size_t index, std::string message = std::string()) {
    return Status{code, std::move(message), index};
  }
};

}  // namespace kgrank
