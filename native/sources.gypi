# Source lists shared by binding.gyp (node-gyp) and native/CMakeLists.txt (cmake-js, ctest). Paths are relative
# to the repository root. Keep it JSON apart from these comment lines (CMake drops lines that start with a hash).
{
  "variables": {
    "kgrank_core_sources": [
      "native/core/simd.cpp",
      "native/core/thread_pool.cpp",
      "native/core/count.cpp",
      "native/core/constrained.cpp",
      "native/core/filter_index.cpp",
      "native/core/kernels_scalar.cpp",
      "native/core/harmonic.cpp",
      "native/core/aggregate.cpp",
      "native/core/expectation.cpp",
      "native/core/median_moments.cpp",
      "native/core/power_sums.cpp",
      "native/core/sampling.cpp",
      "native/core/resample.cpp",
      "native/core/parse.cpp",
      "native/core/intern.cpp",
      "native/core/interaction.cpp",
      "native/core/screen.cpp",
      "native/core/pbg.cpp"
    ],
    "kgrank_avx2_sources": ["native/core/kernels_avx2.cpp", "native/core/interaction_avx2.cpp", "native/core/screen_avx2.cpp", "native/core/pbg_avx2.cpp"],
    "kgrank_avx512_sources": ["native/core/kernels_avx512.cpp", "native/core/interaction_avx512.cpp", "native/core/screen_avx512.cpp", "native/core/pbg_avx512.cpp"],
    "kgrank_neon_sources": ["native/core/kernels_neon.cpp", "native/core/interaction_neon.cpp", "native/core/screen_neon.cpp"],
    "kgrank_addon_sources": [
      "native/addon/addon.cpp",
      "native/addon/count_bindings.cpp",
      "native/addon/filter_bindings.cpp",
      "native/addon/metrics_bindings.cpp",
      "native/addon/parse_bindings.cpp",
      "native/addon/pbg_bindings.cpp",
      "native/addon/score_bindings.cpp"
    ]
  }
}
