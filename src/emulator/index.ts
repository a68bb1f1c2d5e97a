/** The emulator: one HTTP server for the proving service and the other services added beside it. */
export { startEmulator, type EmulatorOptions, type RunningEmulator } from './server.ts'
export type { EmulatorShape } from './context.ts'
export { realClock, simulatedClock, clientClockFor, type EmulatorClock } from './clock.ts'
export { DEFAULT_TIMING, type Timing } from './proving/lifecycle.ts'
export type { EmulatorState, Fault, NextQueryPlan, StoredBucket, StoredQuery } from './state.ts'
export type { LoggedRequest } from './request-log.ts'
export { computePieFacts, type PieFacts } from './proving/facts.ts'
