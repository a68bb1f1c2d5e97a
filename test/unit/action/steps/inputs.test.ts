import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import {
  BUCKET_CLOSE_INPUTS,
  feltValue,
  optional,
  InputProblemsError,
  MAIN_INPUTS,
  mainCrossCheck,
  PACK_INPUTS,
  parseInputs,
  requireService,
  VERIFY_PROOF_INPUTS,
  WAIT_INPUTS,
} from '../../../../src/action/steps/inputs.ts'
import { NODE, REPO_ROOT } from '../../../helpers/cli.ts'

const io = (inputs: Record<string, string>) => ({ getInput: (name: string) => inputs[name] ?? '' })

function problemsOf(run: () => unknown): { input: string; message: string }[] {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(InputProblemsError)
    return [...(error as InputProblemsError).problems]
  }
  throw new Error('no problem reported')
}

const SERVICE = { 'api-key': 'pk_live_unit_7f3a9c', 'base-url': 'https://proving.example.com/' }

describe('root inputs', () => {
  it('applies the defaults of action.yml and types every value', () => {
    const values = parseInputs(io({ pie: 'pie.zip', ...SERVICE }), MAIN_INPUTS, mainCrossCheck)
    expect(values).toMatchObject({
      pie: 'pie.zip',
      'api-key': SERVICE['api-key'],
      'base-url': 'https://proving.example.com',
      emulator: false,
      layout: 'auto',
      prover: 'svc_sharp',
      'mock-fact-hash': false,
      wait: true,
      'timeout-minutes': 120,
      'allow-mocked-fact': false,
      'verify-facts': true,
      'upload-artifacts': false,
      'artifact-name': 'proof',
    })
    expect(values['expected-program-hash']).toBeUndefined()
  })

  it('accepts the YAML booleans @actions/core accepts, and fractional minutes', () => {
    const values = parseInputs(
      io({
        pie: 'p',
        ...SERVICE,
        wait: 'False',
        'mock-fact-hash': 'TRUE',
        'allow-mocked-fact': 'True',
        'timeout-minutes': '0.5',
      }),
      MAIN_INPUTS,
      mainCrossCheck,
    )
    expect(values.wait).toBe(false)
    expect(values['mock-fact-hash']).toBe(true)
    expect(values['allow-mocked-fact']).toBe(true)
    expect(values['timeout-minutes']).toBe(0.5)
  })

  it('reports every problem at once, each naming its input, in declaration order', () => {
    const problems = problemsOf(() =>
      parseInputs(
        io({
          emulator: 'false',
          layout: 'fancy layout',
          wait: 'yes',
          'timeout-minutes': '-3',
          'expected-program-hash': 'abc',
          'artifact-name': 'a/b',
        }),
        MAIN_INPUTS,
        mainCrossCheck,
      ),
    )
    // Field checks first, then the cross-checks (the layout against the endpoint's list; what to
    // prove: `pie`, `program` or `program-hash`).
    expect(problems.map((problem) => problem.input)).toEqual([
      'wait',
      'timeout-minutes',
      'expected-program-hash',
      'artifact-name',
      'layout',
      'pie',
      'api-key',
      'base-url',
    ])
    for (const problem of problems) expect(problem.message).toContain(`\`${problem.input}\``)
    expect(problems.find((p) => p.input === 'layout')!.message).toMatch(
      /must be one of auto, recursive, recursive_with_poseidon, small, dex, starknet, starknet_with_keccak, dynamic; got "fancy layout"/,
    )
    expect(problems.find((p) => p.input === 'wait')!.message).toMatch(/must be true or false; got "yes"/)
  })

  it('max-requests-per-second (issue 35): 10 by default, decimals allowed, 0.1 to 1000, every waiting action takes it', () => {
    expect(parseInputs(io({ pie: 'p', ...SERVICE }), MAIN_INPUTS, mainCrossCheck)['max-requests-per-second']).toBe(10)
    expect(
      parseInputs(io({ pie: 'p', ...SERVICE, 'max-requests-per-second': '2.5' }), MAIN_INPUTS, mainCrossCheck)[
        'max-requests-per-second'
      ],
    ).toBe(2.5)
    for (const text of ['0', '0.05', '1001', 'fast', '-1']) {
      const problems = problemsOf(() =>
        parseInputs(io({ pie: 'p', ...SERVICE, 'max-requests-per-second': text }), MAIN_INPUTS, mainCrossCheck),
      )
      expect(
        problems.map((problem) => problem.input),
        text,
      ).toEqual(['max-requests-per-second'])
      expect(problems[0]!.message).toContain('`max-requests-per-second`')
    }
    for (const inputs of [WAIT_INPUTS, VERIFY_PROOF_INPUTS, BUCKET_CLOSE_INPUTS])
      expect(Object.keys(inputs)).toContain('max-requests-per-second')
  })

  it('api-key and base-url are required unless emulator is true', () => {
    const problems = problemsOf(() => parseInputs(io({ pie: 'p' }), MAIN_INPUTS, mainCrossCheck))
    expect(problems.map((problem) => problem.input)).toEqual(['api-key', 'base-url'])
    expect(problems[0]!.message).toMatch(/required unless `emulator` is true/)
    expect(parseInputs(io({ pie: 'p', emulator: 'true' }), MAIN_INPUTS, mainCrossCheck).emulator).toBe(true)
  })

  it('refuses base-url with emulator: true', () => {
    const problems = problemsOf(() =>
      parseInputs(io({ pie: 'p', emulator: 'true', 'base-url': 'https://x.example' }), MAIN_INPUTS, mainCrossCheck),
    )
    expect(problems).toEqual([{ input: 'base-url', message: expect.stringMatching(/exclude each other/) }])
  })

  it('does not second-guess the service inputs when emulator itself is invalid', () => {
    const problems = problemsOf(() => parseInputs(io({ pie: 'p', emulator: 'maybe' }), MAIN_INPUTS, mainCrossCheck))
    expect(problems.map((problem) => problem.input)).toEqual(['emulator'])
  })

  it('never echoes the value of a secret input', () => {
    const specs = { token: optional(feltValue, { secret: true }), hash: optional(feltValue) }
    const problems = problemsOf(() => parseInputs(io({ token: 'sk_unit_9d2e_secret', hash: 'nothex' }), specs))
    expect(problems.map((problem) => problem.input)).toEqual(['token', 'hash'])
    expect(problems[0]!.message).toBe('`token` must be a 0x-prefixed hexadecimal hash, such as 0x4f028ea2....')
    expect(problems[1]!.message).toMatch(/got "nothex"/)
  })

  it('an API key of blanks counts as missing; a bad URL is quoted', () => {
    const problems = problemsOf(() =>
      parseInputs(io({ pie: 'p', 'api-key': '   ', 'base-url': 'ftp://nope' }), MAIN_INPUTS, mainCrossCheck),
    )
    expect(problems.map((problem) => problem.input)).toEqual(['base-url', 'api-key'])
    expect(problems[0]!.message).toMatch(/absolute http\(s\) URL.*; got "ftp:\/\/nope"/)
  })

  it('decommit-destination-chain-id: 0x hex, and tasks-url is required with it unless emulator is true', () => {
    const problems = problemsOf(() =>
      parseInputs(
        io({ pie: 'p', ...SERVICE, 'decommit-destination-chain-id': '11155111' }),
        MAIN_INPUTS,
        mainCrossCheck,
      ),
    )
    expect(problems).toEqual([
      {
        input: 'decommit-destination-chain-id',
        message: '`decommit-destination-chain-id` must be 0x-prefixed hex, such as 0xaa36a7; got "11155111".',
      },
      {
        input: 'tasks-url',
        message: expect.stringMatching(
          /^`tasks-url` is required with `decommit-destination-chain-id` unless `emulator` is true/,
        ),
      },
    ])
    const values = parseInputs(
      io({
        pie: 'p',
        ...SERVICE,
        'decommit-destination-chain-id': '0xaa36a7',
        'tasks-url': 'https://tasks.example.com/',
      }),
      MAIN_INPUTS,
      mainCrossCheck,
    )
    expect(values).toMatchObject({
      'decommit-destination-chain-id': '0xaa36a7',
      'tasks-url': 'https://tasks.example.com',
    })
    // The emulator serves the task service: no address needed, and none allowed.
    expect(
      parseInputs(
        io({ pie: 'p', emulator: 'true', 'decommit-destination-chain-id': '0xaa36a7' }),
        MAIN_INPUTS,
        mainCrossCheck,
      )['tasks-url'],
    ).toBeUndefined()
    const both = problemsOf(() =>
      parseInputs(
        io({
          pie: 'p',
          emulator: 'true',
          'decommit-destination-chain-id': '0xaa36a7',
          'tasks-url': 'https://t.example',
        }),
        MAIN_INPUTS,
        mainCrossCheck,
      ),
    )
    expect(both).toEqual([{ input: 'tasks-url', message: expect.stringMatching(/exclude each other/) }])
  })

  it('the error message lists every problem', () => {
    try {
      parseInputs(io({ emulator: 'true', layout: 'x y' }), MAIN_INPUTS, mainCrossCheck)
      expect.unreachable()
    } catch (error) {
      expect((error as Error).message).toMatch(
        /^2 inputs need fixing; nothing was packed or sent:\n- `layout` must be one of.*\n- `pie` is required \(or `program`, or `program-hash`\)/,
      )
      expect((error as InputProblemsError).input).toBe('layout')
    }
  })
})

describe('sub-action inputs', () => {
  it('wait: query-id, api-key and base-url are required', () => {
    const problems = problemsOf(() => parseInputs(io({}), WAIT_INPUTS, requireService))
    expect(problems.map((problem) => problem.input)).toEqual(['query-id', 'api-key', 'base-url'])
  })

  it('wait: pie is optional', () => {
    expect(parseInputs(io({ 'query-id': 'q', ...SERVICE }), WAIT_INPUTS, requireService).pie).toBeUndefined()
    expect(
      parseInputs(io({ 'query-id': 'q', pie: 'build/pie.zip', ...SERVICE }), WAIT_INPUTS, requireService).pie,
    ).toBe('build/pie.zip')
  })

  it('wait: an identifier with a slash or a space is refused', () => {
    const problems = problemsOf(() => parseInputs(io({ 'query-id': 'a/b c', ...SERVICE }), WAIT_INPUTS, requireService))
    expect(problems[0]).toMatchObject({ input: 'query-id', message: expect.stringMatching(/not a valid identifier/) })
  })

  it('verify-proof: stone6 and relaxed by default, other values refused by name', () => {
    const values = parseInputs(io({ proof: 'proof.json', ...SERVICE }), VERIFY_PROOF_INPUTS, requireService)
    expect(values['stone-version']).toBe('stone6')
    expect(values['memory-verification']).toBe('relaxed')
    const problems = problemsOf(() =>
      parseInputs(
        io({ proof: 'p', 'stone-version': 'stone7', 'memory-verification': 'loose', ...SERVICE }),
        VERIFY_PROOF_INPUTS,
        requireService,
      ),
    )
    expect(problems.map((problem) => problem.input)).toEqual(['stone-version', 'memory-verification'])
  })

  it('pack: output defaults to pie.zip', () => {
    expect(parseInputs(io({ 'pie-dir': 'pie' }), PACK_INPUTS)).toEqual({ 'pie-dir': 'pie', output: 'pie.zip' })
  })

  it('bucket-close: bucket-id is required', () => {
    const problems = problemsOf(() => parseInputs(io(SERVICE), BUCKET_CLOSE_INPUTS, requireService))
    expect(problems).toEqual([{ input: 'bucket-id', message: '`bucket-id` is required and was not given.' }])
  })
})

describe('what parsing inputs loads', () => {
  it("never reaches the chain code, the task schemas or the clients: only the root action's on-chain path imports them", () => {
    // Every module reachable by static imports from inputs.ts, the way ncc follows them.
    const script = `
      import { registerHooks } from 'node:module'
      const seen = []
      registerHooks({ resolve(specifier, context, next) {
        const result = next(specifier, context)
        if (result.url.startsWith('file:') && !result.url.includes('/node_modules/')) seen.push(result.url.replace(/^.*\\/src\\//, ''))
        return result
      } })
      await import('./src/action/steps/inputs.ts')
      console.log(JSON.stringify(seen))
    `
    const output = execFileSync(NODE, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' })
    const modules = JSON.parse(output.trim().split('\n').at(-1)!) as string[]
    expect(modules).toContain('action/steps/onchain-inputs.ts')
    expect(
      modules.filter((path) => /^(chain\/(?!rpc\.ts)|clients\/|schemas\/tasks|action\/steps\/onchain\.ts)/.test(path)),
    ).toEqual([])
  })
})
