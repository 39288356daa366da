/** The flags of the commands about the installation: `kgrank info` and `kgrank build-native`. */
import { type Command, Option } from "commander";

export function infoFlags(program: Command): Command {
  return program
    .command("info")
    .description("backend, SIMD level, threads, version")
    .addOption(new Option("--format <format>", "output format").choices(["table", "json"]).default("table"));
}

export function buildNativeFlags(program: Command): Command {
  return program
    .command("build-native")
    .description(
      "build the native addon inside the installed package: where no prebuild fits (macOS, Windows, FreeBSD), " +
        "or from source with --from-source (a C++17 compiler, make and Python 3)",
    )
    .option("--from-source", "compile even where a prebuild fits, and load that build before the prebuild")
    .option("--verbose", "show the compiler's output as it comes (else only when the build fails)");
}
