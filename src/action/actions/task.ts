/**
 * `task/`: schedules a data-processor task (POST /tasks) from a JSON body given as a path or
 * inline, sets `task-uuid` at once, and (by default) follows it through the pipeline to
 * TaskDecommitmentCompleted, then reads the MMRs it used. Any `*Failed` status fails the step
 * with the service's error message. Never throws: every ending writes the outputs known so far
 * and the job summary.
 */
import { checkTaskRequest, taskBody } from '../../schemas/tasks.ts'
import { defineAction } from '../steps/define-action.ts'
import { TASK_INPUTS } from '../steps/inputs.ts'
import { bodyProblems, followTask, readJsonInput, requireTaskService, TaskStep } from '../steps/task-step.ts'

export const run = defineAction({
  inputs: TASK_INPUTS,
  crossCheck: requireTaskService,
  step: (io, signal, inputs) =>
    new TaskStep(io, { action: 'Task', signal, timeoutMinutes: inputs?.['timeout-minutes'] }),
  async work({ io, signal, inputs, step }) {
    const checked = checkTaskRequest(
      taskBody,
      await readJsonInput('task', inputs.task, 'the task body (POST /tasks)', io.env.GITHUB_WORKSPACE),
    )
    if (!checked.ok) throw bodyProblems('task', checked.problems)
    step.rowsBefore.push(
      ['Destination chain', { code: checked.data.destination_chain_id }],
      ['Program hash', { code: checked.data.program_hash }],
    )

    const client = await step.connect(inputs['tasks-url']!, inputs['api-key'], inputs['allow-insecure-http'])
    step.queued(await client.scheduleTask(checked.data, { signal }))

    if (!inputs.wait) {
      await step.report({
        outcome: 'submitted',
        headline: `Scheduled task ${step.uuid}; not waiting for it (\`wait: false\`).`,
        nextSteps: [followTask(step.uuid!)],
      })
      return
    }
    try {
      await step.follow(client, inputs['timeout-minutes'] * 60_000)
    } finally {
      // A failed task may have used MMRs too: the output and the table say which.
      if (step.record) await step.readMmrs(client)
    }
    await step.report({
      outcome: 'passed',
      headline: `Task ${step.uuid} went through every stage: TaskDecommitmentCompleted.`,
    })
  },
})
