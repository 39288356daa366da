/**
 * The one readiness wait of the suite: polls `ready` until it holds and throws, naming `what`, when it gives up. A
 * wait that times out silently lets a test run on against a component that never became ready and fail later with an
 * unrelated message (or pass for the wrong reason); the bound is generous because the suite must pass on a loaded
 * machine, and it bounds a wait, never the thing measured.
 */
export async function waitFor(
  what: string,
  ready: () => boolean | Promise<boolean>,
  { timeoutMs = 60_000, everyMs = 50 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    if (Date.now() >= deadline) throw new Error(`gave up after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
