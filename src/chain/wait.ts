import { WaitTimeoutError } from '../core/errors.ts'
import { formatDuration, type PollSchedule, pollUntil } from '../core/poll.ts'
import { type Clock, type Logger, silentLogger, systemClock } from '../core/runtime.ts'
import type { OnchainFactCheck } from './types.ts'

/**
 * A bounded wait for a fact to be registered. Facts land some minutes after a query is DONE
 * (the registration is a later transaction), so "not yet" is an expected answer, polled with
 * the project's schedule (pollUntil: the interval grows with the time spent, 1 s to 30 s).
 *
 * The first check runs outside the poll loop so that a configuration error (wrong chain, no
 * contract at the address, unreachable RPC) fails at once instead of being retried until the
 * deadline; after that, failures marked retryable (the RPC down for a moment) do not end the wait.
 */

export type FactWaitProgress<T extends OnchainFactCheck = OnchainFactCheck> = {
  /** Checks made so far, this one included. */
  attempt: number
  elapsedMs: number
  check: T
}

/** How {@link waitForFactRegistration} waits. */
export type WaitForFactOptions<T extends OnchainFactCheck = OnchainFactCheck> = {
  /** How long to wait in all before a WaitTimeoutError. */
  timeoutMs: number
  /** Ends the wait with an AbortedError. */
  signal?: AbortSignal | undefined
  /**
   * The clock the wait is timed by.
   * @default systemClock
   */
  clock?: Clock | undefined
  /**
   * Where the wait's warnings go (a check that failed and is tried again).
   * @default silentLogger
   */
  logger?: Logger | undefined
  /**
   * How often to check.
   * @default DEFAULT_POLL_SCHEDULE
   */
  schedule?: Partial<PollSchedule> | undefined
  /**
   * The random source of the schedule's jitter, in [0, 1).
   * @default Math.random
   */
  random?: (() => number) | undefined
  /** Called after each check that found the fact not (yet) registered. */
  onProgress?: ((progress: FactWaitProgress<T>) => void) | undefined
}

/**
 * Waits for a fact to be registered: facts land some minutes after a query is DONE (the
 * registration is a later transaction), so "not yet" is polled at the usual growing interval. The
 * first check runs at once and any error of it ends the wait (a wrong chain, no contract); after
 * that, a check that fails in a way that may pass does not.
 *
 * @param check One check: `() => checkFactOnStarknet(...)` or `() => checkFactOnEthereum(...)`.
 * @param options The timeout, a signal, and a progress callback.
 * @returns The first check that found the fact registered.
 * @throws {WaitTimeoutError} When the timeout passes first (`lastSeen` is the last check).
 * @throws {ChainError} When the first check cannot be carried out.
 * @example
 * ```ts
 * import { checkFactOnStarknet, waitForFactRegistration } from 'proving-kit/chain'
 *
 * const check = await waitForFactRegistration(
 *   () => checkFactOnStarknet({ rpcUrl: process.env.STARKNET_RPC_URL!, fact: '0x2f3a...', network: 'sepolia' }),
 *   { timeoutMs: 45 * 60_000, onProgress: ({ attempt }) => console.log(`not yet (${attempt})`) },
 * )
 * ```
 */
export async function waitForFactRegistration<T extends OnchainFactCheck>(
  check: () => Promise<T>,
  options: WaitForFactOptions<T>,
): Promise<T> {
  const clock = options.clock ?? systemClock
  const logger = options.logger ?? silentLogger
  const started = clock.now()
  let attempt = 0
  let last: T | undefined
  const observe = (result: T): T => {
    attempt++
    last = result
    if (!result.registered) options.onProgress?.({ attempt, elapsedMs: clock.now() - started, check: result })
    return result
  }

  const first = observe(await check())
  if (first.registered) return first
  const what = `fact ${first.fact} to be registered on ${describeWhere(first)}`
  try {
    return await pollUntil<T>(
      async () => {
        const result = observe(await check())
        return result.registered ? { done: true, value: result } : { done: false, state: result }
      },
      {
        what,
        timeoutMs: Math.max(0, options.timeoutMs - (clock.now() - started)),
        signal: options.signal,
        clock,
        logger,
        schedule: options.schedule,
        random: options.random,
      },
    )
  } catch (error) {
    if (!(error instanceof WaitTimeoutError)) throw error
    const lastCheck = last!
    throw new WaitTimeoutError(`Timed out after ${formatDuration(options.timeoutMs)} waiting for ${what}.`, {
      metaMessages: [
        `Last checked at block ${lastCheck.blockNumber} (registry ${lastCheck.registry}, ${attempt} checks).`,
        ...(lastCheck.chain === 'starknet' && lastCheck.reason ? [`Last answer: ${lastCheck.reason}.`] : []),
      ],
      lastSeen: lastCheck,
    })
  }
}

/**
 * Where a check looked, in words: "Ethereum sepolia", "Starknet chain SN_INTEGRATION".
 *
 * @param check A fact check.
 * @returns The chain and network (or chain id).
 * @example
 * ```ts
 * import { checkFactOnEthereum, describeWhere } from 'proving-kit/chain'
 *
 * const check = await checkFactOnEthereum({ rpcUrl: process.env.SEPOLIA_RPC_URL!, fact: '0x5ab1...' })
 * console.log(`${check.registered ? 'registered' : 'not registered'} on ${describeWhere(check)}`)
 * ```
 */
export function describeWhere(check: OnchainFactCheck): string {
  const chain = check.chain === 'ethereum' ? 'Ethereum' : 'Starknet'
  return check.network ? `${chain} ${check.network}` : `${chain} chain ${check.chainId}`
}

/**
 * What a check that did not find the fact registered saw, in words: where it looked, the block,
 * and the registry's reason when it gave one (a Starknet registry's verifications).
 *
 * @param check A fact check that found the fact not registered.
 * @returns "not registered yet on Ethereum sepolia (block 7012345)", with ": <reason>" when there is one.
 * @example
 * ```ts
 * import { checkFactOnEthereum, describeNotYetRegistered } from 'proving-kit/chain'
 *
 * const check = await checkFactOnEthereum({ rpcUrl: process.env.SEPOLIA_RPC_URL!, fact: '0x5ab1...' })
 * if (!check.registered) console.log(`fact ${check.fact}: ${describeNotYetRegistered(check)}`)
 * ```
 */
export function describeNotYetRegistered(check: OnchainFactCheck): string {
  const why = check.chain === 'starknet' && check.reason ? `: ${check.reason}` : ''
  return `not registered yet on ${describeWhere(check)} (block ${check.blockNumber})${why}`
}
