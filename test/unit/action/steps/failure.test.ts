import { describe, expect, it } from 'vitest'
import {
  SubmissionOutcomeUnknownError,
  InvalidInputError,
  NetworkError,
  ProvingKitError,
  ServiceError,
} from '../../../../src/core/errors.ts'
import { EarlierUploadOutcomeUnknownError } from '../../../../src/pipeline/journal.ts'
import { describeServiceFailure, type ServiceText } from '../../../../src/action/steps/failure.ts'
import { describeFailure } from '../../../../src/action/steps/query-step.ts'
import { describeTaskFailure } from '../../../../src/action/steps/task-step.ts'

const signal = new AbortController().signal
const queryStep = (queryId?: string) => ({
  queryId,
  io: { env: {} } as never,
  options: { action: 'Prove', signal, emulated: false, baseUrl: 'https://svc', timeoutMinutes: 30 },
})
const taskStep = (uuid?: string) => ({ uuid, options: { action: 'Task', signal, timeoutMinutes: 30 } })

describe('the next step for an HTTP error status', () => {
  const statuses = [401, 403, 404, 429, 503, 400, undefined]

  it('proving steps: api-key, the identifier on base-url, later, docs/action.md', () => {
    expect(
      statuses.map((status) => describeFailure(new ServiceError('No.', { status }), queryStep()).nextSteps),
    ).toEqual([
      ['Check `api-key`: the service refused it (is the secret set for this repository, and still valid?).'],
      ['Check `api-key`: the service refused it (is the secret set for this repository, and still valid?).'],
      ['Check the identifier: the service does not know it (is `base-url` the service it was created on?).'],
      ['The service is failing or busy: run the step again later.'],
      ['The service is failing or busy: run the step again later.'],
      ['Check the inputs against docs/action.md.'],
      ['Check the inputs against docs/action.md.'],
    ])
  })

  it('task steps: the same readings, naming the task service, tasks-url and docs/tasks.md', () => {
    expect(
      statuses.map((status) => describeTaskFailure(new ServiceError('No.', { status }), taskStep()).nextSteps),
    ).toEqual([
      ['Check `api-key`: the task service refused it (is the secret set for this repository, and still valid?).'],
      ['Check `api-key`: the task service refused it (is the secret set for this repository, and still valid?).'],
      ['Check the identifier: the service does not know it (is `tasks-url` the right deployment?).'],
      ['The task service is failing or busy: run the step again later.'],
      ['The task service is failing or busy: run the step again later.'],
      ['Check the inputs against docs/tasks.md.'],
      ['Check the inputs against docs/tasks.md.'],
    ])
  })

  it("a service's own reading comes first; without a 404 hint or a docs page, the rest reads as try later", () => {
    const text: ServiceText = {
      service: 'example service',
      urlInput: 'example-url',
      statusAdvice: (status) => (status === 400 ? 'Fix the body.' : undefined),
      networkDetails: false,
    }
    expect(
      [400, 401, 404, 409].map((status) => describeServiceFailure(new ServiceError('No.', { status }), text).nextSteps),
    ).toEqual([
      ['Fix the body.'],
      ['Check `api-key`: the example service refused it (is the secret set for this repository, and still valid?).'],
      ['The example service is failing or busy: run the step again later.'],
      ['The example service is failing or busy: run the step again later.'],
    ])
  })
})

describe('once the job is submitted', () => {
  it('proving steps: an error status, no answer and anything else say how to follow the query, with the resume snippet', () => {
    const service = describeFailure(new ServiceError('HTTP 500.', { status: 500, details: 'down' }), queryStep('q-1'))
    expect(service).toMatchObject({
      headline: 'HTTP 500.',
      problems: ['down'],
      nextSteps: [
        'The service is failing or busy: run the step again later.',
        'Query q-1 was submitted; follow it with the `wait` sub-action.',
      ],
      failure: 'HTTP 500. down',
    })
    expect(service.snippet?.yaml).toContain('q-1')
    expect(
      describeFailure(new NetworkError('No connection.', { details: 'ECONNRESET' }), queryStep('q-1')),
    ).toMatchObject({
      problems: ['ECONNRESET'],
      nextSteps: [
        'Check `base-url`, and that the runner can reach the service.',
        'Query q-1 was submitted; follow it with the `wait` sub-action once the service is reachable.',
      ],
    })
    expect(describeFailure(new Error('odd'), queryStep('q-1'))).toMatchObject({
      headline: 'The step failed: odd',
      nextSteps: ['Query q-1 was submitted; follow it with the `wait` sub-action.'],
      failure: 'odd',
    })
  })

  it('a refused value is no longer an input, and nothing is said to be unsent', () => {
    const error = new InvalidInputError('Bad id.', { input: 'internalId' })
    expect(describeServiceFailure(error, { service: 's', urlInput: 'u', networkDetails: true }).headline).toBe(
      'An input was refused; nothing was sent.',
    )
    expect(
      describeServiceFailure(error, { service: 's', urlInput: 'u', networkDetails: true }, { follow: () => [] })
        .headline,
    ).toBe('A value was refused.')
  })

  it('an ambiguous submission says where to look, and is never sent again', () => {
    expect(
      describeTaskFailure(
        new SubmissionOutcomeUnknownError('Maybe queued.', { details: 'reset after the body' }),
        taskStep(),
      ),
    ).toEqual({
      outcome: 'failed',
      headline: 'The task may or may not have been queued; it was not sent again, to avoid running it twice.',
      problems: ['reset after the body'],
      nextSteps: ["Check the service's task list (`proving task list`) for a new task before running this step again."],
      failure: 'Maybe queued.',
    })
  })

  it('without an ambiguity text, an ambiguous submission is an unexpected failure; no follow lines means no next steps', () => {
    expect(
      describeServiceFailure(
        new SubmissionOutcomeUnknownError('Maybe.'),
        { service: 's', urlInput: 'u', networkDetails: false },
        { follow: () => [] },
      ),
    ).toEqual({
      outcome: 'failed',
      headline: 'The step failed: Maybe.',
      failure: 'Maybe.',
    })
  })
})

describe("an error's explanation (its metaMessages)", () => {
  const text: ServiceText = { service: 'proving service', urlInput: 'base-url', networkDetails: true }

  it('goes under "What failed"; the failure message (error-reason, the annotation) is the short line alone', () => {
    const error = new ProvingKitError('The bucket listing could not be judged.', {
      metaMessages: ['It lists q-1 twice.', 'Nothing was judged.'],
    })
    expect(describeServiceFailure(error, text)).toEqual({
      outcome: 'failed',
      headline: 'The step failed: The bucket listing could not be judged.',
      problems: ['It lists q-1 twice.', 'Nothing was judged.'],
      failure: 'The bucket listing could not be judged.',
    })
  })

  it("an error status and a network failure show it before the service's details", () => {
    const page = new ServiceError('The proving service answered 502 to submit.', {
      status: 502,
      details: '<html>',
      metaMessages: ['A proxy or gateway answered.'],
    })
    expect(describeServiceFailure(page, text)).toMatchObject({
      problems: ['A proxy or gateway answered.', '<html>'],
      failure: 'The proving service answered 502 to submit. <html>',
    })
    const reset = new NetworkError('No connection.', {
      details: 'ECONNRESET',
      metaMessages: ['Gave up after 3 attempts over 2.0 s.'],
    })
    expect(describeServiceFailure(reset, text)).toMatchObject({
      problems: ['Gave up after 3 attempts over 2.0 s.', 'ECONNRESET'],
      failure: 'No connection.',
    })
    const quiet = new NetworkError('No connection.', {
      details: 'ECONNRESET',
      metaMessages: ['Gave up after 3 attempts over 2.0 s.'],
    })
    expect(describeServiceFailure(quiet, { ...text, networkDetails: false }).problems).toEqual([
      'Gave up after 3 attempts over 2.0 s.',
    ])
  })

  it("an earlier upload's unknown outcome (the journal's) is told in its own lines, not as this step's submission", () => {
    const error = new EarlierUploadOutcomeUnknownError(
      'An earlier upload of this PIE did not finish, and a query since may be its own: nothing was sent.',
      {
        metaMessages: [
          "Your key has 1 query since the upload began that this journal did not record (q-a); one may be this PIE's.",
        ],
        nextStep: { kind: 'follow-candidates', ids: ['q-a'], key: 'k' },
      },
    )
    const ending = describeServiceFailure(error, {
      ...text,
      ambiguous: { headline: 'The submission may or may not have reached the service.', nextStep: 'Look.' },
    })
    expect(ending).toEqual({
      outcome: 'failed',
      headline:
        'The step failed: An earlier upload of this PIE did not finish, and a query since may be its own: nothing was sent.',
      problems: [
        "Your key has 1 query since the upload began that this journal did not record (q-a); one may be this PIE's.",
      ],
      nextSteps: ['Follow `q-a` with the `wait` sub-action before submitting this PIE again.'],
      failure: 'An earlier upload of this PIE did not finish, and a query since may be its own: nothing was sent.',
    })
  })
})
