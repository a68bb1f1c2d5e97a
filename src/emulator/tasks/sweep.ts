import type { EmulatorContext } from '../context.ts'
import type { Route } from '../router.ts'
import { endsAt, positionOf } from './pipeline.ts'
import { type StoredTask, taskState } from './store.ts'
import { deliverWebhook } from './webhooks.ts'
import { deriveTransactionHash } from './derive.ts'

/**
 * Task progress is computed on read, but a webhook must go out when a task ends whether or not
 * anyone reads it. The sweeper finds tasks that have ended with a webhook still pending and
 * delivers them. It runs on every request to the task service and its control routes, and,
 * under real time, on one timer set for the next task due to end (unref'd: it never holds the
 * process open). Under a simulated clock there is no instant to set a timer for: webhooks go
 * out on the next request that touches the task service.
 */
export class TaskSweeper {
  readonly #emulator: EmulatorContext
  #timer: NodeJS.Timeout | undefined
  #timerAt = Number.POSITIVE_INFINITY

  constructor(emulator: EmulatorContext) {
    this.#emulator = emulator
  }

  /**
   * A route whose handler first brings every task up to date (stages passed, webhooks due), so
   * a read or a control call never sees a task behind the clock. `extra`: the route's other
   * settings (a control route, the body of a 500).
   */
  route(
    method: Route['method'],
    pattern: string,
    handler: Route['handler'],
    extra: Omit<Route, 'method' | 'pattern' | 'handler'>,
  ): Route {
    return {
      method,
      pattern,
      handler: (ctx) => {
        this.sweep()
        return handler(ctx)
      },
      ...extra,
    }
  }

  /**
   * On start: a delivery cut off by the previous stop goes on where it stopped (its attempts so
   * far count towards the 3).
   */
  resume(): void {
    for (const task of Object.values(taskState(this.#emulator).tasks)) {
      if (task.webhook?.state !== 'sending') continue
      task.webhook.state = 'pending'
      this.#emulator.store.touch('tasks', task.uuid)
    }
    this.#emulator.store.save()
    this.sweep()
  }

  sweep(): void {
    const { clock, logger } = this.#emulator
    const now = clock.now()
    let next = Number.POSITIVE_INFINITY
    let started = false
    for (const task of Object.values(taskState(this.#emulator).tasks)) {
      if (task.webhook?.state !== 'pending') continue
      const end = endsAt(task.run)
      if (end > now) {
        next = Math.min(next, end)
        continue
      }
      started = true
      this.#emulator.store.touch('tasks', task.uuid)
      void deliverWebhook(task.webhook, webhookPayload(task, now), {
        logger,
        allowedHosts: this.#emulator.webhookHosts,
        onAttempt: () => {
          this.#emulator.store.touch('tasks', task.uuid)
          this.#emulator.store.save()
        },
      }).catch((error: unknown) => logger.error(`emulator: webhook of task ${task.uuid} failed: ${String(error)}`))
    }
    // Written only when a delivery started (its state is now 'sending').
    if (started) this.#emulator.store.save()
    if (!clock.simulated) this.#schedule(next, now)
  }

  #schedule(at: number, now: number): void {
    if (at === this.#timerAt) return
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#timerAt = at
    if (!Number.isFinite(at)) return
    // setTimeout takes at most 2^31-1 ms; a later task is picked up by a later sweep.
    const delay = Math.min(Math.max(0, at - now), 2 ** 31 - 1)
    this.#timer = setTimeout(() => {
      this.#timerAt = Number.POSITIVE_INFINITY
      this.sweep()
    }, delay)
    this.#timer.unref()
  }
}

/** `{ status, task_id, timestamp, transaction_hash }` or `{ status, task_id, timestamp, error }`. */
export function webhookPayload(task: StoredTask, now: number): Record<string, string> {
  const position = positionOf(task.run, now)
  const common = { status: position.status, task_id: task.uuid, timestamp: new Date(position.since).toISOString() }
  return position.status === 'TaskDecommitmentCompleted'
    ? { ...common, transaction_hash: task.transactionHash || deriveTransactionHash(task.uuid) }
    : { ...common, error: position.errorMessage ?? 'Task failed' }
}
