/**
 * proving-kit/schemas: the zod schemas of every record the four services answer with and of
 * every request body the clients send, and the checks that list a body's problems without
 * sending it. Behind a sub-path of its own because zod costs start-up time that a program
 * importing only a client should not pay: the clients load these on their first request.
 *
 * The response schemas are liberal (open enums, extra fields and nulls accepted); the request
 * schemas (taskBody, decommitmentBody, batchQueryBody, createApiKeyBody) are strict and list
 * every problem. The types of all of them are also exported by the main entry.
 */
export * from './account.ts'
export * from './proving.ts'
export * from './storage-proof.ts'
export * from './tasks.ts'
