/**
 * The error bodies the emulator answers with. Where the service's documentation fixes a body it is copied here
 * word for word (retry, bucket close); where it says "not shown" the choice is documented in
 * docs/emulator.md and made once, here.
 */

// Retry endpoint (interface.md, Errors).
export const PROVING_QUERY_NOT_FOUND = { message: 'PROVING_QUERY_NOT_FOUND' } as const
export const FORBIDDEN = { message: 'FORBIDDEN' } as const
export const QUERY_NOT_IN_FAILED_STATUS = { message: 'QUERY_NOT_IN_FAILED_STATUS' } as const
export const QUERY_NOT_RETRIABLE = { message: 'QUERY_NOT_RETRIABLE' } as const
export const MAX_RETRIES_REACHED = { message: 'MAX_RETRIES_REACHED' } as const
export const INTERNAL_SERVER_ERROR = { error: 'INTERNAL_SERVER_ERROR' } as const

// Bucket close (interface.md, in its order: 400, 401, 404, 500 per contract.md).
export const BUCKET_BAD_REQUEST = {} as const
export const UNAUTHORIZED = { error: 'UNAUTHORIZED' } as const
export const BUCKET_NOT_FOUND = { error: 'BUCKET_NOT_FOUND' } as const
export const BUCKET_INTERNAL_ERROR = {} as const

/**
 * The proving service's own refusals where its documentation shows no body: production's
 * `{ message: CODE }`, with a `details` line naming the field for a person.
 */
export const INVALID_API_KEY = { message: 'INVALID_API_KEY' } as const
export const DEDUP_ID_EXISTS = { message: 'PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS' } as const

export function provingRefusal(
  details: string,
  code = 'ZOD_INVALID_BODY_STRING',
): { message: string; details: string } {
  return { message: code, details }
}

/** 400 of the other services' endpoints (a choice: the spec does not show it); names the field. */
export function badRequest(message: string): { message: string; error: 'BAD_REQUEST' } {
  return { message, error: 'BAD_REQUEST' }
}

/** 409 of the control API when a query has already finished. */
export function conflict(message: string): { message: string; error: 'CONFLICT' } {
  return { message, error: 'CONFLICT' }
}
