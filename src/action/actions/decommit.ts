/**
 * `decommit/`: submits a decommitment-only task (POST /tasks/decommitment) for a proving query
 * whose data processor ran locally; without `dp-output` and `program-hash` the service fetches
 * both from the query. Sets `task-uuid` at once and (by default) follows the task, which starts
 * at TaskDecommitmentStarted, to its end, then reads its MMRs. `decommit()` is the same work
 * for a caller that already has a proving query (the root action after a DONE proof).
 */
import type { TaskClient } from '../../clients/tasks.ts'
import { checkTaskRequest, decommitmentBody, type DecommitmentBody } from '../../schemas/tasks.ts'
import { TASK_STAGES } from '../../schemas/tasks-constants.ts'
import { defineAction } from '../steps/define-action.ts'
import { DECOMMIT_INPUTS } from '../steps/inputs.ts'
import { ROOT_DECOMMIT_OUTPUT_NAMES } from '../steps/outputs.ts'
import { bodyProblems, followTask, readJsonInput, requireTaskService, TaskStep } from '../steps/task-step.ts'
import type { ActionIO } from '../types.ts'

export const run = defineAction({
  inputs: DECOMMIT_INPUTS,
  crossCheck: requireTaskService,
  step: (io, signal, inputs) =>
    new TaskStep(io, { action: 'Decommit', signal, timeoutMinutes: inputs?.['timeout-minutes'] }),
  async work({ io, inputs, step }) {
    const given =
      inputs['dp-output'] === undefined
        ? undefined
        : await readJsonInput('dp-output', inputs['dp-output'], 'the dp_output JSON', io.env.GITHUB_WORKSPACE)
    const checked = checkTaskRequest(decommitmentBody, {
      proving_query_id: inputs['proving-query-id'],
      destination_chain_id: inputs['destination-chain-id'],
      ...(given === undefined ? {} : { dp_output: given }),
      ...(inputs['program-hash'] === undefined ? {} : { program_hash: inputs['program-hash'] }),
      ...(inputs['webhook-url'] === undefined ? {} : { webhook_url: inputs['webhook-url'] }),
    })
    if (!checked.ok) throw bodyProblems('dp-output', checked.problems)

    const client = await step.connect(inputs['tasks-url']!, inputs['api-key'], inputs['allow-insecure-http'])
    await decommit(step, client, checked.data, { wait: inputs.wait, timeoutMs: inputs['timeout-minutes'] * 60_000 })
  },
})

/**
 * Submits the decommitment, follows it when asked, and reports. Throws what the client throws
 * (the caller's `step.run` turns it into the summary and the failure message).
 */
export async function decommit(
  step: TaskStep,
  client: TaskClient,
  body: DecommitmentBody,
  options: { wait: boolean; timeoutMs: number },
): Promise<void> {
  step.stages = TASK_STAGES.filter((entry) => entry.stage === 'decommitment')
  step.rowsBefore.push(
    ['Proving query', { code: body.proving_query_id }],
    ['Destination chain', { code: body.destination_chain_id }],
    ['dp_output', body.dp_output ? 'given' : 'fetched by the service from the proving query'],
    ['Program hash', body.program_hash ? { code: body.program_hash } : 'fetched by the service from the proving query'],
  )
  step.queued(await client.submitDecommitment(body, { signal: step.options.signal }))
  if (!options.wait) {
    await step.report({
      outcome: 'submitted',
      headline: `Submitted decommitment task ${step.uuid}; not waiting for it (\`wait: false\`).`,
      nextSteps: [followTask(step.uuid!)],
    })
    return
  }
  try {
    await step.follow(client, options.timeoutMs)
  } finally {
    if (step.record) await step.readMmrs(client)
  }
  await step.report({
    outcome: 'passed',
    headline: `Decommitment task ${step.uuid} for query ${body.proving_query_id} is TaskDecommitmentCompleted.`,
  })
}

/**
 * For the root action with `decommit-destination-chain-id`: after a DONE proof, a
 * decommitment-only task for that query, with its own summary section and outputs
 * (ROOT_DECOMMIT_OUTPUT_NAMES). Never throws; a failure fails the step (io.setFailed) and
 * resolves false.
 */
export async function decommitAfterProof(
  io: ActionIO,
  options: {
    tasksUrl: string
    apiKey: string | undefined
    allowInsecureHttp?: boolean | undefined
    provingQueryId: string
    destinationChainId: string
    wait: boolean
    timeoutMinutes: number
    signal: AbortSignal
  },
): Promise<boolean> {
  const step = new TaskStep(io, {
    action: 'Decommit',
    signal: options.signal,
    timeoutMinutes: options.timeoutMinutes,
    outputNames: ROOT_DECOMMIT_OUTPUT_NAMES,
  })
  return step.run(async () => {
    const checked = checkTaskRequest(decommitmentBody, {
      proving_query_id: options.provingQueryId,
      destination_chain_id: options.destinationChainId,
    })
    if (!checked.ok) throw bodyProblems('decommit-destination-chain-id', checked.problems)
    const client = await step.connect(options.tasksUrl, options.apiKey, options.allowInsecureHttp ?? false)
    await decommit(step, client, checked.data, { wait: options.wait, timeoutMs: options.timeoutMinutes * 60_000 })
  })
}
