/** Expected errors: the typed error class, the argument it names and a fragment of its message, in one assertion. */
import { expect } from "vitest";

import { KgrankInputError } from "../../src/checks/errors";

type ErrorClass<E extends Error> = abstract new (...args: never[]) => E;

/** What a call threw (or its promise rejected with); fails the test when it returned normally. */
export async function caughtFrom(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (e) {
    return e;
  }
  expect.fail("no error was raised");
}

/** What a synchronous call threw; fails the test when it returned normally. */
export function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (e) {
    return e;
  }
  expect.fail("no error was raised");
}

/**
 * Asserts `error` is an instance of `errorClass`, a KgrankInputError naming `argument` when one is given, and that
 * its message matches `message` when one is given; returns it, typed.
 */
export function expectError<E extends Error>(
  error: unknown,
  errorClass: ErrorClass<E>,
  argument?: string,
  message?: RegExp,
): E {
  expect(error, "the error class").toBeInstanceOf(errorClass);
  if (argument !== undefined) {
    expect(error, "an argument is named only by a KgrankInputError").toBeInstanceOf(KgrankInputError);
    expect((error as KgrankInputError).argument).toBe(argument);
  }
  if (message !== undefined) expect((error as Error).message).toMatch(message);
  return error as E;
}

/** A synchronous call that must throw a KgrankInputError naming `argument` (and matching `message`). */
export function expectInputError(call: () => unknown, argument: string, message?: RegExp): KgrankInputError {
  return expectError(thrownBy(call), KgrankInputError, argument, message);
}
