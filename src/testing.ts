/**
 * proving-kit/testing: what tests of code built on proving-kit use with the emulator
 * (proving-kit/emulator). Clocks: `simulatedClock()` stands still until advanced (the emulator's
 * `clock` option), `clientClockFor(clock)` is a client `Clock` whose sleeps advance it, so an
 * hours-long wait completes in milliseconds; `realClock()` is the emulator's default. And a
 * logger that drops everything. Loads neither the emulator's server nor any HTTP code.
 */
export { clientClockFor, type EmulatorClock, realClock, simulatedClock } from './emulator/clock.ts'
export { type Clock, type Logger, silentLogger } from './core/runtime.ts'
