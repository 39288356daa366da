# node-gyp build of the kgrank addon. The source lists live in native/sources.gypi (JSON, also read by
# native/CMakeLists.txt), so both builds compile the same files. ISA-specific kernels are static libraries with
# their own flags; the dispatch in native/core/simd.cpp calls them only on CPUs (and OSes) that support them.
# -ffp-contract=off: no fused multiply-add the code did not ask for (see native/CMakeLists.txt).
{
  "includes": ["native/sources.gypi"],
  "target_defaults": {
    "cflags_cc": ["-O3", "-std=c++17", "-ffp-contract=off"],
    "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
    "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
    "xcode_settings": {
      "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
      "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
      "GCC_OPTIMIZATION_LEVEL": "3",
      "MACOSX_DEPLOYMENT_TARGET": "11.0",
      "OTHER_CPLUSPLUSFLAGS": ["-ffp-contract=off"]
    },
    "msvs_settings": {
      "VCCLCompilerTool": { "ExceptionHandling": 1, "AdditionalOptions": ["/std:c++17"] }
    }
  },
  "targets": [
    {
      "target_name": "kgrank",
      "sources": ["<@(kgrank_core_sources)", "<@(kgrank_addon_sources)"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "conditions": [
        ["target_arch=='x64'", {
          "defines": ["KGRANK_HAVE_AVX2", "KGRANK_HAVE_AVX512"],
          "dependencies": ["kgrank_avx2", "kgrank_avx512"]
        }],
        ["target_arch=='arm64'", {
          "defines": ["KGRANK_HAVE_NEON"],
          "sources": ["<@(kgrank_neon_sources)"]
        }]
      ]
    }
  ],
  "conditions": [
    ["target_arch=='x64'", {
      "targets": [
        {
          "target_name": "kgrank_avx2",
          "type": "static_library",
          "sources": ["<@(kgrank_avx2_sources)"],
          "defines": ["KGRANK_HAVE_AVX2"],
          "cflags": ["-mavx2", "-mfma", "-mbmi2", "-mpopcnt"],
          "xcode_settings": { "OTHER_CFLAGS": ["-mavx2", "-mfma", "-mbmi2", "-mpopcnt"] },
          "msvs_settings": { "VCCLCompilerTool": { "EnableEnhancedInstructionSet": "5" } }
        },
        {
          "target_name": "kgrank_avx512",
          "type": "static_library",
          "sources": ["<@(kgrank_avx512_sources)"],
          "defines": ["KGRANK_HAVE_AVX512"],
          "cflags": ["-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mavx2", "-mfma", "-mbmi2", "-mpopcnt"],
          "xcode_settings": {
            "OTHER_CFLAGS": ["-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mavx2", "-mfma", "-mbmi2", "-mpopcnt"]
          },
          "msvs_settings": { "VCCLCompilerTool": { "AdditionalOptions": ["/arch:AVX512"] } }
        }
      ]
    }]
  ]
}
