import { expect } from 'vitest'
import { ProvingKitError } from '../../src/core/errors.ts'

/** Awaits a call that must fail with one of the toolkit's typed errors, and returns that error. */
export async function failure(promise: Promise<unknown>): Promise<ProvingKitError> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(ProvingKitError)
    return error as ProvingKitError
  }
  throw new Error('expected the call to fail')
}
