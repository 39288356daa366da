// try / catch / throw that also compile without C++ exceptions (the WebAssembly build, -fno-exceptions, one thread:
// native/wasm/). There a failed allocation aborts the instance - a trap the JavaScript caller turns into an error and
// answers by starting a fresh instance - so a handler below never runs and a throw is an abort.
#pragma once
#include <cstdlib>

#if defined(__cpp_exceptions)
#define KGRANK_TRY try
#define KGRANK_CATCH(declaration) catch (declaration)
#define KGRANK_THROW(expression) throw expression
#else
#define KGRANK_TRY if (true)
#define KGRANK_CATCH(declaration) else
#define KGRANK_THROW(expression) std::abort()
#endif
